"""Issue 27's smaller defects, each tested through its page (Streamlit AppTest)."""

from __future__ import annotations

import math

import pytest
from apptest_helpers import SMALL, container, open_app, texts

import dpviz
from dpviz.registry import Public, plan


def test_release_eps_zero_is_clamped_visibly_and_the_statement_uses_what_is_shown(ledger_dir):
    """ε = 0 typed on Release: the field must not keep showing 0 while the statement says another
    ε. It is clamped to the smallest ε the page accepts, with a visible note, and the preview's
    statement states that same ε."""
    at = open_app("release", **SMALL)
    at.text_input(key="release_dataset_id").input("blobs")
    at.selectbox(key="release_algorithm").set_value("dp_lloyd")
    at.number_input(key="release_n").set_value(3000)
    at.run()
    at.number_input(key="release_eps").set_value(0.0).run()
    assert not at.exception, [e.value for e in at.exception]
    shown = at.number_input(key="release_eps").value
    assert shown == pytest.approx(0.01)
    preview = "\n".join(str(m.value) for m in container(at, "release_preview").markdown)
    assert f"This release: **ε = {shown:.3g}, δ = 1e-06**" in preview
    assert any("ε must be positive" in str(w.value) for w in at.warning), texts(at)


@pytest.mark.parametrize("name", ["dp_lloyd", "balcan"])
def test_every_algorithm_gets_the_plain_words_sentence_from_its_plan(name):
    """Explore's main view states, for any algorithm (not only FriendlyCore), how much one row can
    move any outcome's probability, from the run's budget plan (``dpviz.registry.plan``)."""
    eps, delta = 1.0, 1e-6
    at = open_app(**SMALL, alg=name, eps=str(eps), delta=str(delta))
    assert not at.exception, [e.value for e in at.exception]
    ds = at.session_state["_last_dataset"]
    spec = dpviz.registry.get(name)
    want = plan(name, eps, delta, Public(n_declared=ds.n, d=ds.d, k=4, radius=float(ds.radius)),
                spec.make_params()).guarantee
    words = "\n".join(str(c.value) for c in container(at, "plain_privacy").caption)
    assert ("Adding or removing any one row changes the probability of any outcome by at most a "
            f"factor of {math.exp(want.eps):.3g} (e^ε)") in words
    assert f"{want.delta:.2g} (δ)" in words
