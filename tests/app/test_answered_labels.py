"""Labels name who answered, on the pages (issue 33, item 4), and Budget's click opens Explore at
exactly the clicked row-level (ε, δ).

On SMALL (n = 3000, k = 4) FriendlyCore's core does not form at the budgets used here: its backup
(the private grid coreset) answers, and every label must say so, not "FriendlyCore clustering: 4
private centers" (the issue's Present page).
"""

from __future__ import annotations

import io
import json

import pandas as pd
from apptest_helpers import SMALL, container, open_app, row_guarantee, texts

import dpviz
from dpviz.registry import Public, plan

BACKUP = "grid coreset (FriendlyCore clustering's backup)"


def _markdown(at, key: str) -> str:
    """The container's text: its markdown and captions (Present's sentence is its chart's caption)."""
    box = container(at, key)
    return "\n".join(str(m.value).replace("\\", "") for m in [*box.markdown, *box.caption])


def test_present_names_the_backup_on_each_side_where_it_answered():
    at = open_app("present", **SMALL, pa="0.3", pb="3.0")
    assert not at.exception, [e.value for e in at.exception]
    for side in ("a", "b"):
        text = _markdown(at, f"present_answer_{side}")
        assert f"{BACKUP}: 4 private centers" in text, text
        assert "FriendlyCore clustering: 4 private centers" not in text
    # the same run, named the same way by the library
    ds = at.session_state["_last_dataset"]
    res = dpviz.run("friendlycore", ds.X, 4, epsilon=3.0, delta=1e-6, radius=float(ds.radius),
                    n_declared=int(ds.n), rng=int(at.session_state["params"]["seed"]) + 1)
    assert dpviz.registry.answered_by(res).who == BACKUP


def test_present_names_the_algorithm_itself_when_it_has_no_backup():
    at = open_app("present", **SMALL, alg="dp_lloyd", pa="1.0", pb="3.0")
    assert not at.exception
    assert "DP-Lloyd: 4 private centers" in _markdown(at, "present_answer_b")


def test_explore_says_who_released_the_centers_as_its_status_does():
    at = open_app(**SMALL)
    assert not at.exception
    caption = " ".join(str(c.value) for c in container(at, "answered_by").caption)
    status = texts(at)
    result = at.session_state["_explore_last_result"][1]
    assert dpviz.registry.get("friendlycore").structure_ok(result) is False  # the backup answered
    assert f"by {BACKUP}" in caption, caption
    assert "backup method" in status and "answered instead" in status


def test_downloads_name_who_answered_and_carry_the_runs_plan():
    from app.components import downloads
    from app.components.friendlycore import page, run

    at = open_app(**SMALL)
    ds = at.session_state["_last_dataset"]
    result = at.session_state["_explore_last_result"][1]
    cfg = run.RunConfig.from_params(at.session_state["params"], float(ds.radius))
    doc = json.loads(page.config_json(ds, cfg, {}, result=result))
    assert doc["answered_by"] == BACKUP
    assert doc["plan"]["epsilon"] == result.plan.guarantee.eps
    frame = pd.read_csv(io.StringIO(downloads.centers_csv(result, ds.feature_names)))
    assert (frame["answered_by"] == BACKUP).all() and len(frame) == 4


def test_a_budget_click_opens_explore_at_exactly_the_clicked_target():
    from app.components.sweep import explore_target

    eps, delta = 0.0464, 1e-6  # a sweep point off Explore's ε grid (logspace 0.01..10, 7 points)
    event = {"selection": {"points": [{"curve_number": 5, "x": eps, "y": 0.4,
                                       "customdata": {"0": eps, "1": 0.3, "2": 0.5, "3": 0.0, "4": 8}}]}}
    target = explore_target(event)
    assert target == {"eps": eps}  # no ρ: Explore plans its own budget from the target
    at = open_app("budget", **SMALL, delta=str(delta))
    assert not at.exception
    at.session_state["params"].update(target)  # what the chart's selection callback does
    at.session_state["_goto_explore"] = True
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    assert at.title[0].value.startswith("Explore")
    assert at.select_slider(key="eps_slider").value == eps
    ds = at.session_state["_last_dataset"]
    p = at.session_state["params"]
    want = plan("friendlycore", eps, delta, Public(int(ds.n), int(ds.d), 4, float(ds.radius)),
                {"n_tuples": p["t"], "r_min": p["rmin"], "oracle": p["oracle"], "preset": p["preset"],
                 "fallback": p["fb"]}).guarantee
    got = row_guarantee(at)
    assert (f"{got[0]:.3g}", f"{got[1]:.2g}") == (f"{want.eps:.3g}", f"{want.delta:.2g}")
    assert want.eps <= eps * (1 + 1e-9) and want.delta <= delta * (1 + 1e-9)


def test_the_budget_page_speaks_of_an_eps_slider_not_a_rho_one():
    at = open_app("budget", **SMALL)
    assert not at.exception
    page = texts(at)
    assert "slider goes from ρ" not in page and "nearest step" not in page
    assert "at exactly that row-level ε" in page or "Run sweep" in page
    assert "Loss vs n at Explore's row-level (ε, δ)" in [str(h.value) for h in at.header]  # h2 (issue 36)
    button = at.button(key="budget_loss_n_run")
    assert f"row-level ε = {float(at.session_state['params']['eps']):.3g}, δ = 1e-06" in button.label
