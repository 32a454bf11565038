"""The app under Streamlit's AppTest: pages load, controls change the output, errors are shown
beside their control, the URL round-trips, a bad CSV leaves the app usable."""

from __future__ import annotations

import re
from concurrent.futures import Future

import numpy as np
import pytest
from apptest_helpers import (
    SMALL,
    container,
    finish_job,
    has_container,
    open_app,
    paper_eps,
    row_guarantee,
    texts,
)

from app.components import cache
from dpviz.privacy import row_level_statement

GOOD_CSV = b"height,weight,name\n" + b"".join(
    f"{1.0 + (i % 3) * 2 + (i % 7) * 0.01},{-1.0 + (i % 3) + (i % 5) * 0.01},p{i}\n".encode()
    for i in range(400)
) + b"nan,1.0,bad\ninf,2.0,bad\n"


def _centers(at):
    return at.session_state["_explore_last_result"][1].centers


def _own_budget(at) -> str:
    """The own-budget readout under the ε slider (FriendlyCore's ρ, from its plan)."""
    return " ".join(str(e.value) for e in container(at, "own_budget_readout").caption)


# ----------------------------------------------------------------------------- pages load


def test_explore_loads_with_private_run_and_labelled_numbers():
    at = open_app(**SMALL)
    assert not at.exception
    page = texts(at)
    assert "n = 3,000" in page
    # The ε readout and every tile are there, each tile labelled as a diagnostic or private.
    assert paper_eps(at) > 0
    assert row_guarantee(at)[0] > paper_eps(at)
    assert page.count("non-private diagnostic") >= 3
    assert "private output" in page
    for key in ("eps_slider", "delta_select"):
        assert at.select_slider(key=key) is not None
    assert has_container(at, "run_status") and has_container(at, "storyboard")
    assert _centers(at).shape == (4, 2)


@pytest.mark.parametrize("page", ["data", "budget", "learn"])
def test_other_pages_load(page):
    at = open_app(page, **SMALL)
    assert not at.exception
    assert at.title[0].value.split(":")[0] in {"Data", "Budget", "Learn"}


# ----------------------------------------------------------------------------- live controls


def test_eps_move_changes_epsilon_and_centers_and_url():
    at = open_app(**SMALL)
    eps_before = paper_eps(at)
    row_before = row_guarantee(at)
    centers_before = _centers(at).copy()
    at.select_slider(key="eps_slider").set_value(7.0).run()
    assert not at.exception
    assert paper_eps(at) != eps_before
    assert row_guarantee(at) != row_before and row_guarantee(at)[0] <= 7.0
    assert at.query_params["eps"] == "7.0" and "friendlycore.rho" not in at.query_params
    centers_after = _centers(at)
    assert centers_after.shape == centers_before.shape
    assert not (centers_after == centers_before).all()


def test_delta_move_replans_the_budget():
    """δ is the row-level target's δ: at the same ε a smaller δ plans a smaller ρ (the readout), and
    the row-level statement meets the new target."""
    at = open_app(**SMALL)
    assert f"ρ = {_plan(3.0).budget.rho:.4g} " in _own_budget(at)
    at.select_slider(key="delta_select").set_value(1e-10).run()
    assert not at.exception
    want = _plan(3.0, 1e-10).budget.rho
    assert want < _plan(3.0).budget.rho and f"ρ = {want:.4g} " in _own_budget(at)
    eps, delta = row_guarantee(at)
    assert eps <= 3.0 and delta <= 1e-10
    assert at.query_params["delta"] == "1e-10"


def test_bad_form_value_shows_error_and_keeps_previous_result():
    at = open_app(**SMALL)
    centers = _centers(at).copy()
    # t·k > n: the tuple stage refuses (each piece needs k rows); the error sits beside the form
    # and the previous run stays on screen.
    at.number_input(key="ex_t").set_value(2000)
    at.button(key="ex_apply").click().run()
    assert not at.exception
    errors = [e.value for e in container(at, "explore_error").error]
    assert errors and "2000" in errors[0]
    assert (_centers(at) == centers).all()
    assert has_container(at, "storyboard")


def test_form_apply_changes_k():
    at = open_app(**SMALL)
    at.number_input(key="ex_k").set_value(3)
    at.button(key="ex_apply").click().run()
    assert not at.exception
    assert _centers(at).shape == (3, 2)
    assert at.query_params["k"] == "3"


# ----------------------------------------------------------------------------- data page


def test_generator_change_changes_n_shown():
    at = open_app("data", **SMALL)
    assert "n = 3,000" in container(at, "data_facts").markdown[0].value
    at.number_input(key="gen_n").set_value(2500)
    at.button(key="gen_apply").click().run()
    assert not at.exception
    assert "n = 2,500" in container(at, "data_facts").markdown[0].value
    assert at.query_params["n"] == "2500"
    at.selectbox(key="gen_select").set_value("moons").run()
    assert not at.exception
    assert "Two moons" in container(at, "data_facts").markdown[0].value
    # The dataset's suggestion (k = 2) is applied to the run knobs.
    assert at.query_params["k"] == "2"


def test_regenerate_changes_data_seed():
    at = open_app("data", **SMALL)
    at.button(key="regenerate_button").click().run()
    assert not at.exception
    assert at.query_params["dseed"] == "1"


def test_builtin_dataset():
    at = open_app("data", **SMALL)
    at.radio(key="source_radio").set_value("builtin").run()
    at.selectbox(key="builtin_select").set_value("wine").run()
    assert not at.exception
    assert "Wine" in container(at, "data_facts").markdown[0].value
    assert at.query_params["src"] == "builtin" and at.query_params["builtin"] == "wine"


def test_bad_csv_gives_clear_message_and_app_stays_usable():
    at = open_app("data", **SMALL)
    at.radio(key="source_radio").set_value("upload").run()
    at.file_uploader(key="csv_upload").upload("bad.csv", b"\x00\x01\x02\xff\xfe" * 50,
                                              "text/csv")
    at.run()
    assert not at.exception
    errors = [e.value for e in container(at, "csv_error").error]
    assert errors and "bad.csv" in errors[0]
    # Still usable: switch back to generated data and change n.
    at.radio(key="source_radio").set_value("generate").run()
    at.number_input(key="gen_n").set_value(2000)
    at.button(key="gen_apply").click().run()
    assert not at.exception
    assert "n = 2,000" in container(at, "data_facts").markdown[0].value


def test_good_csv_upload_declare_radius_and_run():
    at = open_app("data", **SMALL)
    at.radio(key="source_radio").set_value("upload").run()
    at.file_uploader(key="csv_upload").upload("people.csv", GOOD_CSV, "text/csv")
    at.run()
    assert not at.exception
    msgs = " ".join(w.value for w in container(at, "csv_messages").warning)
    assert "Dropped 2 rows" in msgs
    assert at.multiselect(key="csv_columns").value == ["height", "weight"]
    assert at.button(key="csv_use").disabled  # no Λ declared yet
    # The data-derived radius is offered only behind a NOT-private warning.
    at.checkbox(key="csv_use_data_radius").check().run()
    assert "Not private" in texts(at)
    at.number_input(key="csv_radius").set_value(10.0).run()
    at.number_input(key="csv_declared_n").set_value(400).run()  # public: t = 400 // (5·4) = 20
    at.button(key="csv_use").click().run()
    assert not at.exception
    assert at.query_params["src"] == "upload" and at.query_params["friendlycore.n_tuples"] == "20"
    at.switch_page("views/explore.py").run()
    assert not at.exception
    assert "uploaded" in texts(at) and "Λ used = 10" in texts(at)
    assert _centers(at).shape[1] == 2


# ----------------------------------------------------------------------------- URL


def test_query_params_round_trip_and_bad_values_are_ignored():
    at = open_app(**{**SMALL, "rho": "0.25", "delta": "1e-08", "oracle": "pca",
                     "preset": "paper", "k": "3", "seed": "7", "dseed": "3", "bogus": "1"})
    assert not at.exception
    p = at.session_state["params"]
    assert (p["delta"], p["oracle"], p["preset"], p["k"], p["seed"], p["dseed"]) == (
        1e-08, "pca", "paper", 3, 7, 3)
    q = at.query_params
    assert (q["eps"], q["delta"], q["friendlycore.oracle"], q["k"], q["seed"], q["n"]) == (
        repr(p["eps"]), "1e-08", "pca", "3", "7", "3000")
    # namespaced (issue 26); ρ is never written back, nor kept as a parameter (issue 33)
    assert not {"rho", "friendlycore.rho", "t", "oracle", "preset", "rmin", "fb"} & set(q)
    assert "rho" not in p
    assert "ρ = 0.25 " in _own_budget(at)  # a link's ρ is kept exactly (test_one_path has the run)
    # A second session opened on the written URL shows the run at that row-level target.
    again = open_app(**{k: v for k, v in q.items()})
    assert again.session_state["params"]["eps"] == p["eps"] and not has_container(again, "rho_link_note")

    # A link followed inside the session (e.g. Learn's "what to try") updates the parameters.
    at.query_params["friendlycore.rho"] = "0.05"
    at.run()
    assert not at.exception
    assert at.session_state["_link_rho"] == 0.05
    assert "ρ = 0.05 " in _own_budget(at)

    bad = open_app(**{**SMALL, "rho": "-1", "k": "many"})
    assert not bad.exception
    notices = " ".join(w.value for w in bad.warning)
    assert "rho='-1' ignored" in notices and "k='many' ignored" in notices
    # the default: the row-level ε = 3 (issue 27: a sound budget), ρ planned from it
    assert bad.select_slider(key="eps_slider").value == 3.0 and not has_container(bad, "rho_link_note")


# ----------------------------------------------------------------------------- budget


def test_budget_small_sweep_runs_and_point_click_loads_rho():
    at = open_app("budget", **SMALL, balg="friendlycore,kmeans++", blo="0.1", bhi="1.0",
                  bpts="2", breps="1")
    assert not at.exception
    at.button(key="budget_run").click().run()
    finish_job(at, "budget")
    assert not at.exception
    assert len(at.get("plotly_chart")) >= 2  # accuracy and success charts
    summary = at.dataframe[0].value
    assert set(summary["algorithm"]) == {"friendlycore", "kmeans++"}
    # Loss vs n at the current ρ (one repetition, five sizes up to n).
    at.button(key="budget_loss_n_run").click().run()
    finish_job(at, "budget")
    assert not at.exception
    assert any(getattr(c, "key", None) == "budget_loss_n" for c in at.get("plotly_chart"))
    # A click on a median point (the chart's selection event) loads its ρ into Explore.
    from app.components.sweep import budget_from_selection as rho_from_selection

    assert rho_from_selection({"selection": {"points": [{"customdata": [0.316, 1]}]}}) == 0.316
    # What Streamlit actually delivers for an array customdata (seen in chromium):
    clicked = {"selection": {"points": [{"curve_number": 8, "x": 1, "y": 0.003,
                                         "customdata": {"0": 1, "1": 0.0025, "2": 0.0036}}]}}
    assert rho_from_selection(clicked) == 1.0
    assert rho_from_selection({"selection": {"points": []}}) is None
    at.session_state["_goto_explore"] = True
    # what the click's callback does: the clicked row-level ε (and the sweep's δ), no ρ of its own
    at.session_state["params"]["eps"] = 0.316
    at.run()
    assert not at.exception
    assert at.title[0].value.startswith("Explore")
    assert at.select_slider(key="eps_slider").value == 0.316 and not has_container(at, "rho_link_note")


# ----------------------------------------------------------------------------- explore views


def test_privacy_redraw_and_download_views():
    at = open_app(**SMALL)
    at.session_state["explore_view"] = "Privacy"
    at.run()
    assert not at.exception
    statement = " ".join(m.value for m in container(at, "privacy_statement").markdown)
    assert "For one row of your data" in statement and "e^ε" in statement
    assert "Paper's guarantee" in statement
    assert has_container(at, "feasibility")
    heading = next(m.value for m in at.markdown if m.value.startswith("**Every spend**"))
    spends = int(re.search(r"\((\d+) mechanism draws", heading).group(1))
    table = container(at, "ledger_table").markdown[0].value.splitlines()
    assert spends > 10 and len(table) == spends + 2  # header, rule, one line per spend

    at.session_state["explore_view"] = "Re-draw noise"  # a registered exploration (dpviz/viz/noise.py)
    at.run()
    at.number_input(key="explore_opt_friendlycore_n_draws").set_value(5)
    at.button(key="explore_compute_friendlycore").click().run()
    assert not at.exception
    import json

    chart = container(at, "exploration").get("plotly_chart")[0]
    title = json.loads(chart.proto.spec)["layout"]["title"]["text"]
    assert "of 5 draws released centers" in title

    at.session_state["explore_view"] = "Downloads"
    at.run()
    assert not at.exception
    labels = [d.label for d in at.get("download_button")]
    assert labels == ["Simulated centers (CSV, do not publish)", "Run configuration (JSON)",
                      "Storyboard figure (HTML)", "Privacy ledger (CSV)"]


def test_library_failure_is_reported_and_previous_result_stays(monkeypatch):
    import dpviz.clustering.friendlycore.spec as fc  # Explore runs FriendlyCore through dpviz.run

    at = open_app(**SMALL)
    centers = _centers(at).copy()

    def broken(*args, **kwargs):
        raise RuntimeError("ledger overspent")

    monkeypatch.setattr(fc, "fc_private_stage", broken)
    # an ε of the slider not run yet (the mark's search runs a few: app/components/run.core_eps)
    from app.components.controls import EPS_GRID

    ran = {key.epsilon for key in at.session_state["_cache_run"]}
    at.select_slider(key="eps_slider").set_value(next(e for e in EPS_GRID if e not in ran)).run()
    assert not at.exception
    errors = [e.value for e in container(at, "explore_error").error]
    assert errors and "RuntimeError: ledger overspent" in errors[0] and "bug" in errors[0]
    assert (_centers(at) == centers).all()
    assert has_container(at, "storyboard")


def _pending(at, cache_name: str) -> dict:
    return {key: value for key, value in at.session_state[f"_cache_{cache_name}"].items()
            if isinstance(value, Future)}


def _plan(eps: float, delta: float = 1e-6):
    """The registry's plan of FriendlyCore's run on SMALL's data (n = 3000, d = 2, k = 4, Λ = 1, t = 60)."""
    from dpviz.registry import Public, get, plan

    spec = get("friendlycore")
    return plan(spec, eps, delta, Public(3000, 2, 4, 1.0), spec.make_params(n_tuples=60, r_min=0.001))


def _step(key: tuple) -> tuple[float, float]:
    """(row-level ε, δ) of a run's cache key (``simulation.RunKey``)."""
    return key.epsilon, key.delta


#: ε = 15: its neighbours (10, 20) are not among the grid points the core mark's bisection runs.
EPS = "15"


@pytest.mark.prefetch
def test_neighbouring_runs_and_figures_are_prefetched_and_equal_those_made_on_the_move(
        monkeypatch):
    at = open_app(**SMALL, eps=EPS)
    runs = _pending(at, "run")
    # one step of either slider: ε (the grid) around 15, δ (powers of ten) around 1e-6
    steps = [(10.0, 1e-6), (15.0, 1e-7), (15.0, 1e-5), (20.0, 1e-6)]
    assert sorted(_step(key) for key in runs) == steps
    figures = _pending(at, "live_figures")
    assert sorted(_step(key[1]) for key in figures) == steps
    for future in [*runs.values(), *figures.values()]:
        future.result(timeout=60)
    at.select_slider(key="eps_slider").set_value(20.0).run()
    assert not at.exception
    key, prefetched = at.session_state["_explore_last_result"]
    assert prefetched.params["rho"] == _plan(20.0).budget.rho  # planned on the worker
    figure = at.session_state["_cache_live_figures"][("live", key, False)]
    # the next steps: 30 is started; ε = 15 was shown, so it is cached, not started again
    by_step = {_step(k): v for k, v in at.session_state["_cache_run"].items()}
    # (or already run by the mark's search, app/components/run.core_eps)
    assert (30.0, 1e-6) in by_step and not isinstance(by_step[15.0, 1e-6], Future)

    monkeypatch.setenv("DPVIZ_PREFETCH", "0")
    # a server that has computed nothing public yet (issue 46: otherwise the first session's run
    # and figure, shared with every session, would be shown, not computed on the move)
    monkeypatch.setattr(cache, "PUBLIC", cache.PublicCache(cache.PUBLIC_SIZES))
    cold = open_app(**SMALL, eps="20")
    assert not _pending(cold, "run") and not _pending(cold, "live_figures")
    cold_key, computed = cold.session_state["_explore_last_result"]
    assert cold_key == key
    np.testing.assert_array_equal(prefetched.centers, computed.centers)  # the same seeds
    assert prefetched.ledger.total() == computed.ledger.total()
    assert figure == cold.session_state["_cache_live_figures"][("live", key, False)]  # JSON


@pytest.mark.prefetch
def test_a_delta_move_uses_the_prefetched_run_and_it_equals_one_made_on_the_move(monkeypatch):
    at = open_app(**SMALL, eps=EPS)
    runs = _pending(at, "run")
    started = next(f for k, f in runs.items() if _step(k) == (15.0, 1e-5))
    for future in runs.values():
        future.result(timeout=60)
    at.select_slider(key="delta_select").set_value(1e-5).run()
    assert not at.exception
    key, prefetched = at.session_state["_explore_last_result"]
    want = _plan(15.0, 1e-5).budget
    assert (prefetched.params["rho"], prefetched.params["delta"]) == (want.rho, want.delta)
    assert prefetched is started.result()  # the speculated run is the one shown

    monkeypatch.setenv("DPVIZ_PREFETCH", "0")
    cold = open_app(**SMALL, eps=EPS, delta="1e-05")
    cold_key, computed = cold.session_state["_explore_last_result"]
    assert cold_key == key
    np.testing.assert_array_equal(prefetched.centers, computed.centers)
    assert prefetched.ledger.total() == computed.ledger.total()


@pytest.mark.prefetch
def test_prefetched_statement_is_the_statement_of_the_run_shown():
    at = open_app(**SMALL, eps=EPS)
    pending = _pending(at, "statement")
    assert sorted(_step(key) for key in pending) == [(10.0, 1e-6), (15.0, 1e-7), (15.0, 1e-5),
                                                     (20.0, 1e-6)]
    for future in pending.values():
        future.result(timeout=60)
    at.select_slider(key="eps_slider").set_value(20.0).run()
    key, result = at.session_state["_explore_last_result"]
    shown = at.session_state["_cache_statement"][key]
    fresh = row_level_statement(result.ledger, _plan(20.0).delta_prime)  # δ′ of that run's plan
    assert (shown.row.eps, shown.row.delta) == (fresh.row.eps, fresh.row.delta)
    assert row_guarantee(at)[0] == pytest.approx(fresh.row.eps, rel=5e-3)


def test_a_wide_upload_preselects_the_first_numeric_columns_and_says_so():
    """Issue 43: a 500-column upload pre-selected all 500 columns."""
    header = ",".join(f"c{j}" for j in range(500))
    rows = "\n".join(",".join(str((i * 7 + j) % 13) for j in range(500)) for i in range(60))
    at = open_app("data", **SMALL)
    at.radio(key="source_radio").set_value("upload").run()
    at.file_uploader(key="csv_upload").upload("wide.csv", f"{header}\n{rows}\n".encode(), "text/csv")
    at.run()
    assert not at.exception
    assert at.multiselect(key="csv_columns").value == [f"c{j}" for j in range(20)]
    said = container(at, "csv_columns_capped").info[0].value
    assert "500 numeric columns; the first 20 are picked to start" in said


def test_an_upload_over_the_limit_says_the_limit_in_bytes():
    """Issue 43: a 50 MB upload read "50.0MB … File must be 50.0MB or smaller" (Streamlit's
    words); the uploader now lets a file a little over the limit through and the app says it."""
    from app.components import dataset_picker

    big = (b"x\n" + b"1\n" * (dataset_picker.MAX_BYTES // 2))[:dataset_picker.MAX_BYTES + 1]
    assert len(big) == dataset_picker.MAX_BYTES + 1
    at = open_app("data", **SMALL)
    at.radio(key="source_radio").set_value("upload").run()
    at.file_uploader(key="csv_upload").upload("big.csv", big, "text/csv")
    at.run()
    assert not at.exception
    said = container(at, "csv_error").error[0].value
    assert f"is {len(big):,} bytes (50.00 MB): more than this app's limit of 50 MB = 52,428,800 bytes" in said
    assert "MB or smaller" not in said
    assert dataset_picker.UPLOAD_CEILING_MB > dataset_picker.MAX_MB
