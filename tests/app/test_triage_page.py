"""Issue 16, the analyst's triage on the Data page (AppTest): a verdict with its public and
non-private parts labelled apart, and a suggestion button that applies itself and says so."""

from __future__ import annotations

import re

from apptest_helpers import SMALL, container, has_container, open_app, texts

LESSON = {"src": "generate", "gen": "fig6_blobs", "n": "20000", "gk": "8", "k": "8", "t": "200"}


def _verdict_text(at) -> str:
    box = container(at, "triage_verdict")
    parts = []
    for kind in ("markdown", "caption", "warning", "success"):
        parts += [str(e.value) for e in getattr(box, kind)]
    return "\n".join(parts)


def test_verdict_at_a_small_budget_and_the_rho_suggestion_in_the_apps_one_budget():
    """An old link's ρ = 0.3 opens the same run (its own budget, Explore's old-link mapping). A ρ
    suggestion is offered only as the app's one budget, a row-level ε of Explore's slider at the
    SAME δ whose plan gets the prediction (issue 33); on this lesson none does (the plan's own δ
    shrinks as ε grows), and the page says so instead of handing Explore a ρ of its own."""
    at = open_app("data", **LESSON, rho="0.3")
    text = _verdict_text(at)
    assert "Predicted: FriendlyCore's core does not form at ρ = 0.3" in text
    assert "an old link's own budget ρ = 0.3" in text
    assert "**Public** · 100 rows per piece (n / t)" in text
    assert "**Non-private diagnostic of your data**" in text and "99% of the 200 pieces" in text
    assert "set ρ = 0.794 — but at δ = 1e-06 no row-level ε up to 10 (sound territory)" in text
    assert not [b for b in at.button if b.key.startswith("triage_apply_")]  # nothing sets a ρ
    assert "rho" not in at.session_state["params"] and at.session_state["_link_rho"] == 0.3  # the link's


def test_a_rho_suggestion_becomes_the_smallest_slider_eps_with_the_same_prediction(monkeypatch):
    """The conversion itself (``triage.targets``): bisection over Explore's ε grid above the current
    target, at the same δ, on the verdict's own prediction (stubbed here: forms from ε ≥ 7)."""
    from app.components import controls
    from app.components.friendlycore import run, triage

    seen = []

    def fake_verdict(ds, cfg):
        seen.append(cfg.eps)
        return type("V", (), {"success": cfg.eps >= 7.0})()

    monkeypatch.setattr(triage, "verdict", fake_verdict)
    cfg = run.RunConfig(k=8, t=200, oracle="kmeans++", seed=0, rho=None, delta=1e-6, radius=1.0,
                        r_min=1e-3, preset="practical", eps=1.0)
    ds = type("D", (), {"n": 20_000})()  # δ = 10⁻⁶ ≤ 1/(10n): the suggestion keeps it
    assert triage.targets(ds, cfg, {"rho": 0.794, "t": 100}) == {"t": 100, "eps": 7.0}
    assert all(e in controls.EPS_GRID and 1.0 < e <= 10 for e in seen) and len(seen) <= 5
    monkeypatch.setattr(triage, "verdict", lambda ds, cfg: type("V", (), {"success": False})())
    assert triage.targets(ds, cfg, {"rho": 0.794}) is None
    assert triage.targets(ds, cfg, {"k": 4}) == {"k": 4}


def test_the_verdicts_row_level_eps_is_explores_readout():
    at = open_app("data", **LESSON, rho="1.0")
    assert "(row-level ε = 17.1, δ = 0.0017 per row" in _verdict_text(at)
    at.switch_page("views/explore.py").run()
    assert any(m.value == "ε = 17.1 · δ = 0.0017" for m in at.metric)  # Explore's own readout
    # at the default target (no link): the verdict states Explore's plan at (ε = 3, δ = 10⁻⁶)
    at = open_app("data", **LESSON)
    text = _verdict_text(at)
    m = re.search(r"\(row-level ε = ([0-9.]+), δ = ([0-9.e-]+) per row", text)
    assert m and float(m.group(1)) <= 3.0 and float(m.group(2)) <= 1e-6, text
    at.switch_page("views/explore.py").run()
    assert any(x.value == f"ε = {m.group(1)} · δ = {m.group(2)}" for x in at.metric)


def test_no_verdict_without_a_declared_radius():
    at = open_app("data", src="upload")
    assert "Triage" not in texts(at)


def customers_csv(n: int = 20_000, seed: int = 7) -> bytes:
    """A customers table: an id column, age, income in the tens of thousands, visits; 4 groups;
    ~2% of ages and ~1% of visits missing."""
    import numpy as np

    rng = np.random.default_rng(seed)
    centers = np.array([[25, 30_000, 2], [45, 60_000, 8], [60, 90_000, 4], [35, 45_000, 12]], float)
    lab = rng.integers(0, 4, n)
    raw = centers[lab] + rng.normal(size=(n, 3)) * np.array([4.0, 4_000.0, 1.0])
    lines = ["customer_id,age,income,visits"]
    for i, (a, inc, v) in enumerate(raw):
        age = "" if rng.random() < 0.02 else f"{a:.0f}"
        vis = "" if rng.random() < 0.01 else f"{v:.1f}"
        lines.append(f"{100_001 + i},{age},{inc:.0f},{vis}")
    return ("\n".join(lines) + "\n").encode()


#: Public bounds an analyst knows without looking: ages 18–90, incomes 0–150,000, 0–30 visits.
BOUNDS = {"age": (18.0, 90.0), "income": (0.0, 150_000.0), "visits": (0.0, 30.0)}


def _bound_inputs(at, which: str):
    return [w for w in at.number_input if w.key and w.key.startswith(f"csv_{which}_")]


def test_upload_customers_ids_out_preview_bounds_verdict_and_k_suggestion():
    at = open_app("data", **{"src": "generate", "n": "2000"})
    at.radio(key="source_radio").set_value("upload").run()
    at.file_uploader(key="csv_upload").upload("customers.csv", customers_csv(), "text/csv")
    at.run()
    assert not at.exception
    assert at.multiselect(key="csv_columns").value == ["age", "income", "visits"]
    ids = container(at, "csv_ids").caption[0].value
    assert "customer\\_id — its name 'customer\\_id' says it is an identifier" in ids
    preview = container(at, "csv_preview").code[0].value
    assert preview.splitlines()[0].split() == ["customer_id", "age", "income", "visits"]
    assert len(preview.splitlines()) == 6
    assert at.radio(key="csv_missing").value == "drop"
    at.radio(key="csv_scale").set_value("bounds").run()
    assert "NOT private" in texts(at)  # the prefilled range is measured on the rows
    lows, highs = _bound_inputs(at, "lo"), _bound_inputs(at, "hi")
    assert len(lows) == len(highs) == 3
    for w, (lo, _) in zip(lows, BOUNDS.values(), strict=True):
        w.set_value(lo)
    for w, (_, hi) in zip(highs, BOUNDS.values(), strict=True):
        w.set_value(hi)
    at.run()
    assert "Λ = √3 = 1.732" in texts(at)
    at.button(key="csv_use").click().run()
    assert not at.exception
    facts = container(at, "data_facts").markdown[0].value
    assert "scaled into \\[−1, 1\\] by bounds you declared \\(public\\)" in facts or \
        "scaled into [−1, 1] by bounds you declared (public)" in facts
    text = _verdict_text(at)
    assert "did not agree on 8 clusters" in text
    (button,) = [b for b in at.button if b.key.startswith("triage_apply_") and "set k = 4" in b.label]
    # its ρ part is not applied as a ρ of Explore's own (issue 33): only k and t, at the same target
    assert "the ρ part cannot be met" in button.label
    assert "this sets k (clusters) = 4, t (pieces) = 100 only" in button.label
    eps = at.session_state["params"]["eps"]
    button.click().run()
    p = at.session_state["params"]
    assert (p["k"], p["t"], p["eps"], p["delta"]) == (4, 100, eps, 1e-6)
    assert "Applied: k (clusters) 8 → 4, t (pieces) 200 → 100" in _verdict_text(at)
    assert "100% of the 100 pieces found the same 4 clusters" in _verdict_text(at)
    at.switch_page("views/explore.py").run()
    assert not at.exception


def test_mean_sd_scaling_is_labelled_not_private_on_the_page_and_in_the_description():
    at = open_app("data", **{"src": "generate", "n": "2000"})
    at.radio(key="source_radio").set_value("upload").run()
    at.file_uploader(key="csv_upload").upload("customers.csv", customers_csv(3000), "text/csv")
    at.run()
    at.radio(key="csv_missing").set_value("fill").run()
    fills = [w for w in at.number_input if w.key and w.key.startswith("csv_fill_")]
    assert len(fills) == 2  # age and visits have gaps
    at.radio(key="csv_scale").set_value("data").run()
    assert "mean and sd are statistics of *these* rows" in texts(at)
    at.number_input(key="csv_radius").set_value(5.0).run()
    at.button(key="csv_use").click().run()
    facts = container(at, "data_facts").markdown[0].value
    assert "n = 3,000" in facts  # filled, not dropped
    assert "missing values filled with declared constants" in facts
    assert "own mean and sd (NOT private" in facts


def test_iris_with_k8_is_announced_and_one_click_sets_k3():
    """Issue 16: iris reported 8 centers and showed ~6 (k stayed 8 on a 3-class dataset)."""
    at = open_app("data", src="builtin", builtin="iris", k="8", t="3")
    note = container(at, "triage_k_note").info[0].value
    assert "This dataset has 3 classes; the run asks for k = 8 centers" in note
    at.button(key="triage_k_data").click().run()
    assert at.session_state["params"]["k"] == 3
    assert "Applied: k (clusters) 8 → 3." in _verdict_text(at)
    assert not has_container(at, "triage_k_note")
    at2 = open_app(None, src="builtin", builtin="iris", k="8", t="3")
    assert "This dataset has 3 classes; the run asks for k = 8 centers" in texts(at2)


def test_no_verdict_of_the_previous_dataset_beside_a_new_or_failed_upload():
    """Issue 27: the Data page kept the previous dataset's green verdict next to a new or failed
    upload."""
    from test_hostile_app import _csv, _rows, _upload

    at = open_app("data", **SMALL)
    assert has_container(at, "triage_verdict")  # the generated dataset's verdict
    _upload(at, "broken.csv", b"a,b\n1,2\n3\n4,5,6,7\n")  # a file that fails to read
    assert not at.exception
    assert not has_container(at, "triage_verdict") and has_container(at, "data_verdict_hidden")
    _upload(at, "fine.csv", _csv(["a", "b"], _rows(seed=2)))  # readable but not used yet
    assert not has_container(at, "triage_verdict") and has_container(at, "data_verdict_hidden")
    at.number_input(key="csv_radius").set_value(50.0).run()
    at.button(key="csv_use").click().run()  # now it is the dataset in use: its verdict shows
    assert not at.exception
    assert has_container(at, "triage_verdict") and not has_container(at, "data_verdict_hidden")


def test_learns_no_clusters_example_does_not_ask_for_k_8():
    """Issue 27: Learn's "No clusters at all" example (uniform data, k = 3) said "set k = 8"."""
    at = open_app(None, src="generate", gen="null_uniform", k="3", n="3000", t="60")
    assert not at.exception
    assert "Set k = 8" not in texts(at) and "has 8 clusters" not in texts(at)
    at.switch_page("views/data.py").run()
    assert "Set k = 8" not in texts(at) and not has_container(at, "triage_k_note")
