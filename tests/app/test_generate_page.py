"""The Generate page under AppTest: it renders, trains DPGM in the background, reports the guarantee,
and a cancelled training's account covers only the steps that ran."""

from __future__ import annotations

import time

import numpy as np
from apptest_helpers import SMALL, has_container, metric, open_app, texts

from app.components.synthetic import guarantee_text, synthetic_csv

DEADLINE = 40.0  # seconds a background training may take here (k = 2, 1 epoch is well under 5 s)


def _train(at, *, k: int, epochs: int):
    at.number_input(key="dpgm_k").set_value(k)
    at.number_input(key="dpgm_epochs").set_value(epochs)
    at.button(key="dpgm_train").click().run()
    assert not at.exception
    job = at.session_state["_job_generate"]
    assert job.thread is not None and job.thread.daemon  # the real page trains in a thread
    start = time.monotonic()
    while not job.done.is_set():  # the page polls with a fragment; here we wait for the thread
        assert time.monotonic() - start < DEADLINE, "training did not finish"
        time.sleep(0.1)
    at.run()
    assert not at.exception
    return job


def test_generate_page_trains_in_the_background_and_states_its_guarantee():
    at = open_app("generate", **SMALL)
    assert not at.exception
    assert has_container(at, "dpgm_simulation")
    assert "declared size n = 1527" in texts(at)
    job = _train(at, k=2, epochs=1)
    res = job.result
    assert job.error is None and not res.cancelled
    assert res.steps_run == job.total == res.account.setting.steps_per_epoch  # one epoch ran
    acc = res.account
    assert acc.guarantee in ("pld", "rdp") and acc.eps <= 10.0 + 1e-9  # within the default target ε = 10
    assert metric(at, "ε per row (the guarantee)") == f"{acc.eps:.3g}"
    assert metric(at, "the paper's (looser) bound") == f"{acc.paper.eps:.3g}"
    page = texts(at)
    assert f"**{acc.guarantee.upper()}** account" in page
    assert "simulation (seeded)" in page
    assert has_container(at, "dpgm_epsilon")
    assert [d.label for d in at.get("download_button")] == ["Download the synthetic dataset (CSV)"]
    assert "The first line of the file states it" in page
    # the file the button serves (same function, same inputs as the page)
    text = guarantee_text(res, "simulation (seeded)")
    assert text in page.replace("\\", "")  # the caption shows it (markdown-escaped)
    lines = synthetic_csv(res, 1527, 0, text).decode().splitlines()
    assert lines[0] == f"# {text}" and f"({acc.eps:.3g}, 1e-05)-DP" in lines[0]
    assert acc.guarantee.upper() in lines[0] and len(lines) == 2 + 1527
    rows = np.loadtxt(lines[2:], delimiter=",")
    assert rows.shape == (1527, 65) and set(np.unique(rows[:, :64])) <= {0.0, 1.0}
    assert set(np.unique(rows[:, 64])) <= {0.0, 1.0}  # components of k = 2


def test_generate_page_cancel_before_start_covers_no_sgd_steps():
    at = open_app("generate", **SMALL)
    at.session_state["dpgm_cancel_event"].set()  # as if Cancel were pressed before the first step
    job = _train(at, k=2, epochs=1)
    res = job.result
    assert res.cancelled and res.steps_run == 0
    assert res.account.setting.epochs == 0.0  # the account covers the clustering only
    page = texts(at)
    assert "cancelled" in page and "after 0 of 24 DP-SGD steps" in page
    assert "covers only the 0 steps that ran" in page
    # a new training gets a fresh (unset) event
    assert not at.session_state["dpgm_cancel_event"].is_set()


def test_generate_page_cancel_button_stops_a_running_training():
    at = open_app("generate", **SMALL)
    at.number_input(key="dpgm_k").set_value(2)
    at.number_input(key="dpgm_epochs").set_value(50)  # 1,200 steps: several seconds, long enough to cancel
    at.button(key="dpgm_train").click().run()
    job = at.session_state["_job_generate"]
    assert not job.done.is_set(), "training finished before Cancel could be pressed"
    assert at.button(key="dpgm_train").disabled  # no second training while one runs
    at.button(key="dpgm_cancel").click().run()
    assert job.cancel.is_set()
    assert job.done.wait(DEADLINE)
    at.run()
    res = job.result
    assert res.cancelled and res.steps_run < 1200
    assert res.account.setting.epochs == res.steps_run / 24  # the account covers the steps run
    assert f"after {res.steps_run} of 1200 DP-SGD steps" in texts(at)


def test_the_data_page_generator_and_the_generate_page_do_not_share_widget_keys():
    # The Data page's generator form holds k = 40 (> Generate's 10), on SMALL's 3,000 rows: the keys
    # do not depend on the rows (the default lesson's 150,000 rows with 40 clusters took ~14 s).
    at = open_app("data", n=SMALL["n"], gk="40")
    assert not at.exception
    assert at.number_input(key="gen_k").value == 40
    at.switch_page("views/generate.py").run()
    assert not at.exception
    assert at.number_input(key="dpgm_k").value == 2


def test_digit_results_do_not_stay_beside_another_data_source():
    """Issue 27: after training on the digits, switching the source to the Data page's dataset
    kept the digit results (images, ε, download) on screen."""
    at = open_app("generate", **SMALL)
    _train(at, k=2, epochs=1)
    assert has_container(at, "dpgm_epsilon")
    at.radio(key="dpgm_data").set_value("data").run()
    assert not at.exception
    assert not has_container(at, "dpgm_epsilon")
    assert not any(getattr(c, "key", None) == "dpgm_samples" for c in at.get("plotly_chart"))
