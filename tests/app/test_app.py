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

from dpviz.privacy import row_level_statement

GOOD_CSV = b"height,weight,name\n" + b"".join(
    f"{1.0 + (i % 3) * 2 + (i % 7) * 0.01},{-1.0 + (i % 3) + (i % 5) * 0.01},p{i}\n".encode()
    for i in range(400)
) + b"nan,1.0,bad\ninf,2.0,bad\n"


def _centers(at):
    return at.session_state["_explore_last_result"][1].centers


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
    for key in ("rho_slider", "delta_select"):
        assert at.select_slider(key=key) is not None
    assert has_container(at, "run_status") and has_container(at, "storyboard")
    assert _centers(at).shape == (4, 2)


@pytest.mark.parametrize("page", ["data", "budget", "learn"])
def test_other_pages_load(page):
    at = open_app(page, **SMALL)
    assert not at.exception
    assert at.title[0].value.split(":")[0] in {"Data", "Budget", "Learn"}


# ----------------------------------------------------------------------------- live controls


def test_rho_move_changes_epsilon_and_centers_and_url():
    at = open_app(**SMALL)
    eps_before = paper_eps(at)
    row_before = row_guarantee(at)
    centers_before = _centers(at).copy()
    at.select_slider(key="rho_slider").set_value(0.1).run()
    assert not at.exception
    assert paper_eps(at) != eps_before
    assert row_guarantee(at) != row_before
    assert at.query_params["friendlycore.rho"] == "0.1"
    centers_after = _centers(at)
    assert centers_after.shape == centers_before.shape
    assert not (centers_after == centers_before).all()


def test_delta_move_changes_epsilon():
    at = open_app(**SMALL)
    before = paper_eps(at)
    at.select_slider(key="delta_select").set_value(1e-10).run()
    assert not at.exception
    assert paper_eps(at) > before
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
    assert (p["rho"], p["delta"], p["oracle"], p["preset"], p["k"], p["seed"], p["dseed"]) == (
        0.25, 1e-08, "pca", "paper", 3, 7, 3)
    q = at.query_params
    assert (q["friendlycore.rho"], q["delta"], q["friendlycore.oracle"], q["k"], q["seed"], q["n"]) == (
        "0.25", "1e-08", "pca", "3", "7", "3000")
    assert not {"rho", "t", "oracle", "preset", "rmin", "fb"} & set(q)  # namespaced (issue 26)
    assert at.select_slider(key="rho_slider").value == 0.25
    # A second session opened on the written URL shows the same run.
    again = open_app(**{k: v for k, v in q.items()})
    assert (_centers(again) == _centers(at)).all()

    # A link followed inside the session (e.g. Learn's "what to try") updates the parameters.
    at.query_params["friendlycore.rho"] = "0.05"
    at.run()
    assert not at.exception
    assert at.session_state["params"]["rho"] == 0.05
    assert at.select_slider(key="rho_slider").value == 0.05

    bad = open_app(**{**SMALL, "rho": "-1", "k": "many"})
    assert not bad.exception
    notices = " ".join(w.value for w in bad.warning)
    assert "rho='-1' ignored" in notices and "k='many' ignored" in notices
    assert bad.session_state["params"]["rho"] == 0.0316  # the default (issue 27: a sound budget)


# ----------------------------------------------------------------------------- budget


def test_budget_small_sweep_runs_and_point_click_loads_rho():
    at = open_app("budget", **SMALL, balg="fc:practical,nonprivate", blo="0.1", bhi="1.0",
                  bpts="2", breps="1")
    assert not at.exception
    at.button(key="budget_run").click().run()
    finish_job(at, "budget")
    assert not at.exception
    assert len(at.get("plotly_chart")) >= 2  # accuracy and success charts
    summary = at.dataframe[0].value
    assert set(summary["algorithm"]) == {"fc:practical", "nonprivate"}
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
    at.session_state["params"]["rho"] = 0.316
    at.run()
    assert not at.exception
    assert at.title[0].value.startswith("Explore")
    assert at.select_slider(key="rho_slider").value == 0.316


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
    import dpviz.clustering.friendlycore as fc

    at = open_app(**SMALL)
    centers = _centers(at).copy()

    def broken(*args, **kwargs):
        raise RuntimeError("ledger overspent")

    monkeypatch.setattr(fc, "fc_private_stage", broken)
    # a ρ of the slider not run yet (the mark's search runs a few: app/components/run.core_rho)
    from app.components.controls import RHO_GRID

    ran = {key[6] for key in at.session_state["_cache_run"]}
    at.select_slider(key="rho_slider").set_value(next(r for r in RHO_GRID if r not in ran)).run()
    assert not at.exception
    errors = [e.value for e in container(at, "explore_error").error]
    assert errors and "RuntimeError: ledger overspent" in errors[0] and "bug" in errors[0]
    assert (_centers(at) == centers).all()
    assert has_container(at, "storyboard")


def _pending(at, cache_name: str) -> dict:
    return {key: value for key, value in at.session_state[f"_cache_{cache_name}"].items()
            if isinstance(value, Future)}


def test_neighbouring_runs_and_figures_are_prefetched_and_equal_those_made_on_the_move(
        monkeypatch):
    at = open_app(**SMALL, rho="1")
    runs = _pending(at, "run")
    # one step of either slider: ρ (10 steps per decade) around 1, δ (powers of ten) around 1e-6
    steps = [(0.794, 1e-6), (1.0, 1e-7), (1.0, 1e-5), (1.26, 1e-6)]
    assert sorted(key[6:8] for key in runs) == steps
    figures = _pending(at, "live_figures")
    assert sorted(key[1][6:8] for key in figures) == steps
    for future in [*runs.values(), *figures.values()]:
        future.result(timeout=60)
    at.select_slider(key="rho_slider").set_value(1.26).run()
    assert not at.exception
    key, prefetched = at.session_state["_explore_last_result"]
    assert prefetched.params["rho"] == 1.26
    figure = at.session_state["_cache_live_figures"][("live", key, False)]
    # the next steps: 1.58 is started; ρ = 1 was shown, so it is cached, not started again
    by_step = {k[6:8]: v for k, v in at.session_state["_cache_run"].items()}
    # (or already run by the mark's search, app/components/run.core_rho)
    assert (1.58, 1e-6) in by_step and not isinstance(by_step[1.0, 1e-6], Future)

    monkeypatch.setenv("DPVIZ_PREFETCH", "0")
    cold = open_app(**SMALL, rho="1.26")
    assert not _pending(cold, "run") and not _pending(cold, "live_figures")
    cold_key, computed = cold.session_state["_explore_last_result"]
    assert cold_key == key
    np.testing.assert_array_equal(prefetched.centers, computed.centers)  # the same seeds
    assert prefetched.ledger.total() == computed.ledger.total()
    assert figure == cold.session_state["_cache_live_figures"][("live", key, False)]  # JSON


def test_a_delta_move_uses_the_prefetched_run_and_it_equals_one_made_on_the_move(monkeypatch):
    at = open_app(**SMALL, rho="1")
    runs = _pending(at, "run")
    started = next(f for k, f in runs.items() if k[6:8] == (1.0, 1e-5))
    for future in runs.values():
        future.result(timeout=60)
    at.select_slider(key="delta_select").set_value(1e-5).run()
    assert not at.exception
    key, prefetched = at.session_state["_explore_last_result"]
    assert (prefetched.params["rho"], prefetched.params["delta"]) == (1.0, 1e-5)
    assert prefetched is started.result()  # the speculated run is the one shown

    monkeypatch.setenv("DPVIZ_PREFETCH", "0")
    cold = open_app(**SMALL, rho="1", delta="1e-05")
    cold_key, computed = cold.session_state["_explore_last_result"]
    assert cold_key == key
    np.testing.assert_array_equal(prefetched.centers, computed.centers)
    assert prefetched.ledger.total() == computed.ledger.total()


def test_prefetched_statement_is_the_statement_of_the_run_shown():
    at = open_app(**SMALL, rho="1")
    pending = _pending(at, "statement")
    assert sorted(key[0][6:8] for key in pending) == [(0.794, 1e-6), (1.0, 1e-7), (1.0, 1e-5),
                                                      (1.26, 1e-6)]
    assert all(delta_prime == key[7] for key, delta_prime in pending)  # δ′ = that run's δ
    for future in pending.values():
        future.result(timeout=60)
    at.select_slider(key="rho_slider").set_value(1.26).run()
    key, result = at.session_state["_explore_last_result"]
    shown = at.session_state["_cache_statement"][(key, 1e-6)]
    fresh = row_level_statement(result.ledger, 1e-6)
    assert (shown.row.eps, shown.row.delta) == (fresh.row.eps, fresh.row.delta)
    assert row_guarantee(at)[0] == pytest.approx(fresh.row.eps, rel=5e-3)
