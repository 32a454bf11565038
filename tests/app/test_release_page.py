"""The Release page (issue 10): a deliberate, seedless release booked in the session ledger."""

from __future__ import annotations

import json

import pytest
from apptest_helpers import SMALL, container, has_container, open_app, texts


def _confirm(at) -> None:
    for key in ("release_confirm_radius", "release_confirm_n", "release_confirm_budget"):
        at.checkbox(key=key).check()
    at.run()


def test_release_needs_confirmation_then_books_and_exports_without_seed():
    at = open_app("release", **SMALL)
    assert not at.exception
    assert at.button(key="release_button").disabled  # nothing is drawn before confirming
    at.selectbox(key="release_algorithm").set_value("friendlycore")
    at.number_input(key="release_eps").set_value(2.0)
    at.number_input(key="release_n").set_value(3000)
    at.run()
    preview = texts(at)
    assert "ε = 2, δ = 1e-06" in preview and "ε = 0, δ = 0 now" in preview
    _confirm(at)
    assert not at.button(key="release_button").disabled
    at.button(key="release_button").click().run()
    assert not at.exception, [e.value for e in at.exception]
    assert has_container(at, "release_output")
    sl = at.session_state["_session_ledger"]
    (h,) = sl.entries
    total = sl.total(h)
    assert total.eps <= 2.0 + 1e-9 and total.delta <= 1e-6
    res, text = at.session_state["_releases"][h][-1]
    assert not res.simulation and res.seed is None
    assert "seed" not in text.lower()
    out = json.loads(text)
    assert out["privacy"]["row_level_eps"] <= 2.0 + 1e-9
    assert out["dataset"]["n_declared"] == 3000
    # A second release on the same data shows the composed total BEFORE it is made.
    at.run()
    assert f"ε = {total.eps:.3g}" in texts(at) and "→" in texts(at)
    preview = container(at, "release_preview")
    assert preview is not None
    at.button(key="release_button").click().run()
    assert sl.total(h).eps == pytest.approx(2 * total.eps)
    # Two releases of the same configuration drew independent noise.
    (r1, _), (r2, _) = at.session_state["_releases"][h]
    assert r1.centers is None or r2.centers is None or (r1.centers != r2.centers).any()


def test_explore_is_badged_as_a_simulation():
    at = open_app(**SMALL)
    assert not at.exception
    assert has_container(at, "simulation_badge_explore")
    assert "do not publish these numbers" in texts(at)


def test_an_algorithm_without_the_secure_sampler_is_refused_and_not_booked():
    at = open_app("release", **SMALL)
    at.selectbox(key="release_algorithm").set_value("diffprivlib")
    at.number_input(key="release_n").set_value(3000)
    at.run()
    _confirm(at)
    at.button(key="release_button").click().run()
    assert not at.exception
    assert "cannot make a release here" in texts(at)
    assert not at.session_state["_session_ledger"].entries  # nothing booked
    assert not has_container(at, "release_output")
