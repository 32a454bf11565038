"""Issue 16, the analyst's triage on the Data page (AppTest): a verdict with its public and
non-private parts labelled apart, and a suggestion button that applies itself and says so."""

from __future__ import annotations

from apptest_helpers import container, open_app, texts

LESSON = {"src": "generate", "gen": "fig6_blobs", "n": "20000", "gk": "8", "k": "8", "t": "200"}


def _verdict_text(at) -> str:
    box = container(at, "triage_verdict")
    parts = []
    for kind in ("markdown", "caption", "warning", "success"):
        parts += [str(e.value) for e in getattr(box, kind)]
    return "\n".join(parts)


def test_verdict_at_a_small_budget_and_the_rho_suggestion_applies_itself():
    at = open_app("data", **LESSON, rho="0.3")
    text = _verdict_text(at)
    assert "Predicted: FriendlyCore's core does not form at ρ = 0.3" in text
    assert "**Public** · 100 rows per piece (n / t)" in text
    assert "**Non-private diagnostic of your data**" in text and "100% of the 200 pieces" in text
    (button,) = [b for b in at.button if b.key.startswith("triage_apply_")]
    assert "set ρ = 0.794" in button.label
    button.click().run()
    assert at.session_state["params"]["rho"] == 0.794
    text = _verdict_text(at)
    assert "Applied: ρ 0.3 → 0.794." in text
    assert "Predicted: FriendlyCore's core forms" in text
    assert not [b for b in at.button if b.key.startswith("triage_apply_")]


def test_no_verdict_without_a_declared_radius():
    at = open_app("data", src="upload")
    assert "Triage" not in texts(at)
