"""Issue 36, the Data page without dead ends (AppTest): its own k and target-ε controls re-run
the verdicts; right after an upload the right-hand column names the file instead of asking for
it; suggestions stay in sound territory (δ ≤ 1/(10n), ε ≤ 10)."""

from __future__ import annotations

import re
from types import SimpleNamespace

from apptest_helpers import container, has_container, open_app

#: Generated blobs with 4 clusters asked for 8: the triage has a k suggestion.
FOUR = {"src": "generate", "n": "3000", "gk": "4", "k": "8", "t": "60", "seed": "1"}


def _all_text(box) -> str:
    parts = []
    for kind in ("markdown", "caption", "warning", "success", "info"):
        parts += [str(e.value) for e in getattr(box, kind)]
    return "\n".join(parts + [b.label for b in box.button])


def test_k_and_target_eps_are_set_on_the_data_page_and_the_verdicts_follow():
    at = open_app("data", **FOUR)
    assert not at.exception
    assert at.number_input(key="data_k").value == 8
    assert at.select_slider(key="data_eps").value == 3.0
    assert "At k = 8, t = 60, the row-level target ε = 3" in _all_text(container(at, "triage_verdict"))
    # Check once; from then on a change of k or ε re-runs the one-sentence verdict by itself.
    at.button(key="clustering_verdict_run").click().run()
    assert "at your target ε = 3" in _all_text(container(at, "clustering_verdict"))
    at.number_input(key="data_k").set_value(4).run()
    assert not at.exception
    assert at.session_state["params"]["k"] == 4  # the app's k: Explore, Budget, Compare read it
    assert "At k = 4, t = 60" in _all_text(container(at, "triage_verdict"))
    box = container(at, "clustering_verdict")
    assert not [b for b in box.button if b.key == "clustering_verdict_run"]
    assert "at your target ε = 3" in _all_text(box)
    assert at.session_state["_clustering_verdict_asked"]
    at.select_slider(key="data_eps").set_value(5.0).run()
    assert not at.exception
    assert at.session_state["params"]["eps"] == 5.0
    assert "the row-level target ε = 5" in _all_text(container(at, "triage_verdict"))
    assert "at your target ε = 5" in _all_text(container(at, "clustering_verdict"))


def test_right_after_an_upload_the_page_names_the_file_instead_of_asking_for_it():
    from test_hostile_app import _csv, _rows

    at = open_app("data", **FOUR)
    at.radio(key="source_radio").set_value("upload").run()
    at.file_uploader(key="csv_upload").upload("shop.csv", _csv(["a", "b"], _rows(seed=2)), "text/csv")
    at.run()
    assert not at.exception
    notice = container(at, "data_notice").info[0].value
    assert "shop.csv" in notice and "not in use yet" in notice and "Use this dataset" in notice
    assert "No uploaded dataset in this session yet" not in notice
    assert has_container(at, "data_verdict_hidden")  # the previous data's verdict is not shown


def test_suggestions_state_only_sound_budgets():
    """At δ = 10⁻³ on 3,000 rows (above 1/(10n)): the page says so, offers δ = 10⁻⁵, and every
    suggestion states δ ≤ 1/(10n) and ε ≤ 10; applying one sets a sound δ."""
    at = open_app("data", **FOUR, delta="0.001")
    assert not at.exception
    n = 3000
    assert "above 1/(10n) = 3.3e-05" in _all_text(container(at, "data_settings"))
    box = container(at, "triage_verdict")
    stated = [(float(e), float(d)) for label in [b.label for b in box.button]
              for e, d in re.findall(r"ε = ([0-9.]+) at δ = ([0-9.e-]+)", label)]
    deltas = [float(d) for b in box.button for d in re.findall(r"δ = ([0-9.e-]+)", b.label)]
    assert deltas and all(d <= 0.1 / n for d in deltas), deltas
    assert all(e <= 10 and d <= 0.1 / n for e, d in stated), stated
    at.button(key="data_sound_delta").click().run()
    assert at.session_state["params"]["delta"] == 1e-5
    assert not has_container(at, "data_sound_delta")


def test_a_suggested_eps_is_never_above_10_and_its_delta_never_above_one_tenth_of_1_over_n(monkeypatch):
    """``triage.targets`` (the ρ suggestion as a row-level ε of the slider): a core that forms only
    from ε = 15 is no suggestion at all (ε ≤ 10), and a δ above 1/(10n) is lowered to it."""
    from app.components.friendlycore import run, triage

    monkeypatch.setattr(triage, "verdict",
                        lambda ds, cfg: SimpleNamespace(success=cfg.eps >= 15.0))
    cfg = run.RunConfig(k=8, t=200, oracle="kmeans++", seed=0, rho=None, delta=1e-6, radius=1.0,
                        r_min=1e-3, preset="practical", eps=1.0)
    ds = SimpleNamespace(n=20_000)
    assert triage.targets(ds, cfg, {"rho": 5.0}) is None
    monkeypatch.setattr(triage, "verdict", lambda ds, cfg: SimpleNamespace(success=cfg.eps >= 7.0))
    assert triage.targets(ds, cfg, {"rho": 5.0}) == {"eps": 7.0}
    loose = run.RunConfig(**{**cfg.__dict__, "delta": 1e-2})
    assert triage.targets(SimpleNamespace(n=5000), loose, {"k": 4}) == {"k": 4, "delta": 2e-5}
