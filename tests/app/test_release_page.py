"""The Release page (issue 10): a deliberate, seedless release booked in the session ledger."""

from __future__ import annotations

import json

import pytest
from apptest_helpers import SMALL, click_release, container, has_container, open_app, texts

from dpviz.privacy.ledger_store import LedgerStore


def _confirm(at) -> None:
    for key in ("release_confirm_radius", "release_confirm_n", "release_confirm_budget"):
        at.checkbox(key=key).check()
    at.run()


def test_release_needs_confirmation_then_books_and_exports_without_seed(ledger_dir):
    at = open_app("release", **SMALL)
    assert not at.exception
    at.text_input(key="release_dataset_id").input("blobs")
    at.selectbox(key="release_algorithm").set_value("friendlycore")
    at.number_input(key="release_eps").set_value(2.0)
    at.number_input(key="release_n").set_value(3000)
    at.run()
    assert at.button(key="release_button").disabled  # nothing is drawn before confirming
    preview = texts(at)
    assert "ε = 2, δ = 1e-06" in preview and "ε = 0, δ = 0 now" in preview
    _confirm(at)
    assert not at.button(key="release_button").disabled
    click_release(at)
    assert not at.exception, [e.value for e in at.exception]
    assert has_container(at, "release_output")
    store = LedgerStore(ledger_dir)
    eps, delta = store.total("blobs")
    assert eps <= 2.0 + 1e-9 and delta <= 1e-6
    res, text, _ = at.session_state["_releases"]["id:blobs"][-1]
    assert not res.simulation and res.seed is None
    assert "seed" not in text.lower()
    out = json.loads(text)
    assert out["privacy"]["row_level_eps"] <= 2.0 + 1e-9
    assert out["dataset"]["n_declared"] == 3000 and out["dataset"]["identity"] == "blobs"
    # Nothing computed from the rows without noise: no fingerprint (it tells D from D ∪ {x}).
    assert "sha256" not in text
    # A second release shows the composed total BEFORE it is made, and needs a new acceptance.
    at.run()
    assert f"ε = {eps:.3g}" in texts(at) and "→" in texts(at)
    assert container(at, "release_preview") is not None
    assert at.button(key="release_button").disabled
    at.checkbox(key="release_confirm_budget").check().run()
    click_release(at)
    assert store.total("blobs")[0] == pytest.approx(2 * eps)
    # Two releases of the same configuration drew independent noise.
    (r1, _, _), (r2, _, _) = at.session_state["_releases"]["id:blobs"]
    assert r1.centers is None or r2.centers is None or (r1.centers != r2.centers).any()


def test_explore_is_badged_as_a_simulation():
    at = open_app(**SMALL)
    assert not at.exception
    assert has_container(at, "simulation_badge_explore")
    assert "do not publish these numbers" in texts(at)


def test_an_algorithm_without_the_secure_sampler_is_refused_and_booked(ledger_dir):
    at = open_app("release", **SMALL)
    at.text_input(key="release_dataset_id").input("blobs")
    at.selectbox(key="release_algorithm").set_value("diffprivlib")
    at.number_input(key="release_n").set_value(3000)
    at.run()
    _confirm(at)
    click_release(at)
    assert not at.exception
    assert "did not produce a release" in texts(at)
    # it read the data: booked at its full budget (issue 25, finding 2)
    assert [e["outcome"] for e in LedgerStore(ledger_dir).entries("blobs")] == ["refused"]
    assert not has_container(at, "release_output")
