"""The Generate page under AppTest: it renders, trains DPGM in the background, reports the guarantee,
and a cancelled training's account covers only the steps that ran."""

from __future__ import annotations

import time

from apptest_helpers import SMALL, has_container, metric, open_app, texts

DEADLINE = 40.0  # seconds a background training may take here (k = 2, 1 epoch is well under 5 s)


def _train(at, *, k: int, epochs: int):
    at.number_input(key="gen_k").set_value(k)
    at.number_input(key="gen_epochs").set_value(epochs)
    at.button(key="gen_train").click().run()
    assert not at.exception
    job = at.session_state["_gen_job"]
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
    assert has_container(at, "gen_simulation")
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
    assert has_container(at, "gen_epsilon")
    csv = at.get("download_button")[0].proto.url if at.get("download_button") else None
    assert csv is not None  # the download is offered
    assert "The first line of the file states it" in page


def test_generate_page_cancel_before_start_covers_no_sgd_steps():
    at = open_app("generate", **SMALL)
    at.session_state["gen_cancel_event"].set()  # as if Cancel were pressed before the first step
    job = _train(at, k=2, epochs=1)
    res = job.result
    assert res.cancelled and res.steps_run == 0
    assert res.account.setting.epochs == 0.0  # the account covers the clustering only
    page = texts(at)
    assert "cancelled" in page and "covers only the 0 steps that ran" in page
    # a new training gets a fresh (unset) event
    assert not at.session_state["gen_cancel_event"].is_set()
