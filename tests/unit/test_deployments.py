"""dpviz.privacy.deployments: published ε of real deployments, and placing a user's ε among them."""

import dataclasses
import re
from pathlib import Path

import dp_accounting
import numpy as np
import pytest
from dp_accounting.rdp import RdpAccountant

from dpviz.privacy import deployments, zcdp_to_dp
from dpviz.privacy.deployments import DEPLOYMENTS, Deployment, beside, sentence

DOCS = Path(__file__).resolve().parents[2] / "docs" / "privacy.md"

# The same dense grid of Rényi orders as tests/unit/test_accounting.py.
_ORDERS = list(np.concatenate([1 + np.geomspace(1e-4, 1, 400), np.linspace(2.01, 64, 800),
                               np.geomspace(64.1, 1e5, 400)]))


def _census() -> Deployment:
    (census,) = [d for d in DEPLOYMENTS if d.organization == "US Census Bureau"]
    return census


def test_every_entry_has_a_source_a_unit_and_a_model():
    assert len(DEPLOYMENTS) == 8
    for d in DEPLOYMENTS:
        assert d.source_url.startswith("https://"), d
        assert d.source_read and d.caveat and d.privacy_unit and d.neighbours, d
        assert d.model in ("central", "local"), d
        assert d.epsilon > 0
    # local DP is Apple's telemetry only; everything else is central
    assert {d.organization for d in DEPLOYMENTS if d.model == "local"} == {"Apple"}


def test_the_numbers_are_the_sources():
    eps = {(d.organization, d.product): (d.epsilon, d.delta) for d in DEPLOYMENTS}
    assert eps[("Apple", "QuickType suggestions")] == (16.0, None)
    assert eps[("Apple", "Emoji suggestions")] == (4.0, None)
    assert eps[("Apple", "Lookup hints")] == (8.0, None)
    assert eps[("Apple", "Health Type Usage")] == (2.0, None)
    assert eps[("Google", "COVID-19 Search Trends symptoms dataset")] == (1.68, None)
    assert eps[("Google", "COVID-19 Vaccination Search Insights")] == (2.19, 1e-5)
    assert eps[("Facebook (Meta)", "Full URLs Data Set")] == (0.45, 1e-5)


def test_census_eps_is_converted_from_the_production_rho():
    census = _census()
    assert census.rho == (542 / 339) ** 2
    assert census.delta == 1e-10
    assert census.epsilon == zcdp_to_dp((542 / 339) ** 2, 1e-10)
    assert census.epsilon == pytest.approx(17.1436, abs=5e-4)
    # dp-accounting's RdpAccountant on the same ZCDpEvent (as test_accounting.py does): ours
    # minimises over a continuum of orders, so never above its grid value, and within 0.5%.
    acc = RdpAccountant(orders=_ORDERS)
    acc.compose(dp_accounting.ZCDpEvent((542 / 339) ** 2))
    theirs = acc.get_epsilon(1e-10)
    assert census.epsilon <= theirs + 1e-9
    assert census.epsilon == pytest.approx(theirs, rel=5e-3)
    assert "housing" in census.caveat and "conversion" in census.caveat


def test_deployment_checks_itself():
    d = DEPLOYMENTS[1]
    with pytest.raises(ValueError, match=r"'model'.*'central' or 'local'"):
        dataclasses.replace(d, model="federated")
    with pytest.raises(ValueError, match="'epsilon'"):
        dataclasses.replace(d, epsilon=0.0)
    with pytest.raises(ValueError, match="'delta'"):
        dataclasses.replace(d, delta=1.0)
    with pytest.raises(dataclasses.FrozenInstanceError):
        d.epsilon = 1.0  # type: ignore[misc]


def _names(pairs):
    return [d.product for d, _ in pairs]


ORDER = ["Full URLs Data Set", "COVID-19 Search Trends symptoms dataset", "Health Type Usage",
         "COVID-19 Vaccination Search Insights", "Emoji suggestions", "Lookup hints",
         "QuickType suggestions", "2020 Census Redistricting Data (P.L. 94-171), persons file"]


def test_beside_eps_1():
    pairs = beside(1.0)
    assert _names(pairs) == ORDER
    kinds = [r.split(" ")[0] for _, r in pairs]
    assert kinds == ["below"] + ["above"] * 7
    assert pairs[0][1] == "below your ε (0.45× yours)"
    assert pairs[-1][1] == "above your ε (17.1× yours)"


def test_beside_eps_20():
    pairs = beside(20.0)
    assert _names(pairs) == ORDER
    kinds = [r.split(" ")[0] for _, r in pairs]
    # 17.14 / 20 = 0.857 is within the factor 1.2: about the same; QuickType's 16 / 20 = 0.8 is not
    assert kinds == ["below"] * 7 + ["about"]
    assert pairs[-1][1] == "about the same as your ε"


def test_beside_rejects_bad_eps():
    for bad in (0.0, -1.0, float("nan"), float("inf")):
        with pytest.raises(ValueError, match="'eps' parameter of beside"):
            beside(bad)


def test_sentence_places_eps_and_says_the_units_differ():
    one = sentence(1.0)
    assert one.startswith("Your ε = 1 per row is smaller than 7 of the 8 published ε listed here "
                          "(nearest: Google's COVID-19 Search Trends symptoms dataset (ε = 1.68 per "
                          "user-day)) and larger than 1 (nearest: Facebook (Meta)'s Full URLs Data Set "
                          "(ε = 0.45 per action)).")
    twenty = sentence(20.0)
    assert twenty.startswith("Your ε = 20 per row is about the same as US Census Bureau's 2020 Census "
                             "Redistricting Data (P.L. 94-171), persons file (ε = 17.1 per person) "
                             "and larger than 7 (nearest: Apple's QuickType suggestions (ε = 16 per "
                             "user-day)).")
    two = sentence(2.0)  # 1.68, 2 and 2.19 are within the factor 1.2 of 2
    assert two.startswith("Your ε = 2 per row is smaller than 4 of the 8 published ε listed here "
                          "(nearest: Apple's Emoji suggestions (ε = 4 per user-day)), about the same "
                          "as 3 (Google's COVID-19 Search Trends symptoms dataset (ε = 1.68 per "
                          "user-day); Apple's Health Type Usage (ε = 2 per user-day); Google's "
                          "COVID-19 Vaccination Search Insights (ε = 2.19 per user-day)) and larger "
                          "than 1 (nearest: Facebook (Meta)'s Full URLs Data Set (ε = 0.45 per action)).")
    assert "smaller than all 8" in sentence(0.1)
    assert "larger than all 8 published ε" in sentence(50.0)
    for s in (one, twenty, sentence(0.1), sentence(50.0)):
        assert "units differ" in s and "one row of your data" in s
        assert "not a like-for-like comparison" in s


def test_docs_table_matches_deployments():
    """docs/privacy.md's "ε in the wild" table lists every entry with the module's numbers."""
    text = DOCS.read_text()
    section = text[text.index("ε in the wild\n"):]
    section = section[:section.find("\n## ", 1)] if "\n## " in section else section
    table = [line for line in section.splitlines() if line.startswith("|")]
    assert table == deployments.docs_table().splitlines()
    for d in DEPLOYMENTS:
        assert d.source_url in section
    assert re.search(r"Chrome.*RAPPOR", section) and "Microsoft" in section
