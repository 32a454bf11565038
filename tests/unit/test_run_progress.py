"""dpviz.run's progress hook and cancellation token: the hook hears PUBLIC stage names only, in
the order `dpviz.registry.stages` states from public inputs; a set token stops the run at the
next stage boundary with RunCancelledError, and nothing of the run is returned."""

from __future__ import annotations

import dataclasses
import threading

import numpy as np
import pytest

import dpviz
from dpviz.data import fig6_blobs
from dpviz.registry import (
    STAGE_COUNT,
    STAGE_NONPRIVATE,
    STAGE_PLAN,
    STAGE_PRIVATE,
    STAGES,
    RunCancelledError,
    get,
    register,
    stages,
    unregister,
)

EPS, DELTA = 3.0, 1e-6
N = 6000


@pytest.fixture(scope="module")
def rows():
    return fig6_blobs(N, rng=11).X


@pytest.mark.parametrize(("name", "declared", "expected"), [
    ("friendlycore", True, (STAGE_PLAN, STAGE_NONPRIVATE, STAGE_PRIVATE)),
    ("friendlycore", False, (STAGE_COUNT, STAGE_PLAN, STAGE_NONPRIVATE, STAGE_PRIVATE)),
    ("dp_lloyd", True, (STAGE_PLAN, STAGE_PRIVATE)),
    ("dp_lloyd", False, (STAGE_COUNT, STAGE_PLAN, STAGE_PRIVATE)),
])
def test_progress_hears_the_public_stages_in_order_and_changes_nothing(rows, name, declared, expected):
    heard: list[str] = []
    n_declared = N if declared else None
    res = dpviz.run(name, rows, 4, epsilon=EPS, delta=DELTA, radius=1.0, rng=7, n_declared=n_declared,
                    progress=heard.append)
    assert tuple(heard) == expected == stages(name, n_declared=n_declared)
    assert set(heard) <= set(STAGES)
    assert not any(ch.isdigit() for ch in "".join(heard))  # no counts in a stage name
    same = dpviz.run(name, rows, 4, epsilon=EPS, delta=DELTA, radius=1.0, rng=7, n_declared=n_declared)
    assert (res.centers is None) == (same.centers is None)
    if res.centers is not None:
        np.testing.assert_array_equal(res.centers, same.centers)  # the hook is not a draw
    assert res.ledger.total() == same.ledger.total()


def test_a_handed_in_stage_is_not_announced(rows):
    spec = get("friendlycore")
    p = spec.make_params()
    pub = dpviz.registry.Public(n_declared=N, d=2, k=4, radius=1.0)
    st = spec.stage(rows, 4, radius=1.0, rng=np.random.default_rng(3), pub=pub, params=p)
    heard: list[str] = []
    dpviz.run("friendlycore", rows, 4, epsilon=EPS, delta=DELTA, radius=1.0, rng=7, n_declared=N,
              stage=st, progress=heard.append)
    assert tuple(heard) == (STAGE_PLAN, STAGE_PRIVATE) == stages("friendlycore", n_declared=N, stage=st)


@pytest.mark.parametrize(("name", "at"), [
    ("friendlycore", STAGE_PLAN), ("friendlycore", STAGE_NONPRIVATE), ("friendlycore", STAGE_PRIVATE),
    ("dp_lloyd", STAGE_PLAN), ("dp_lloyd", STAGE_PRIVATE),  # dp_lloyd has no non-private stage
])
def test_a_cancel_stops_the_run_at_the_next_stage_boundary(rows, name, at):
    """The token is set while stage ``at`` runs: the run goes no further than ``at`` (no later stage
    is announced) and raises RunCancelledError instead of returning anything."""
    planned = stages(name, n_declared=N)
    token = threading.Event()
    heard: list[str] = []

    def hook(stage: str) -> None:
        heard.append(stage)
        if stage == at:
            token.set()

    with pytest.raises(RunCancelledError, match="cancelled at a stage boundary"):
        dpviz.run(name, rows, 4, epsilon=EPS, delta=DELTA, radius=1.0, rng=7, n_declared=N,
                  progress=hook, cancel=token)
    assert tuple(heard) == planned[:planned.index(at) + 1]


def test_a_cancel_set_before_the_call_stops_at_the_first_boundary(rows):
    token = threading.Event()
    token.set()
    heard: list[str] = []
    with pytest.raises(RunCancelledError):
        dpviz.run("dp_lloyd", rows, 4, epsilon=EPS, delta=DELTA, radius=1.0, rng=7, n_declared=N,
                  progress=heard.append, cancel=token)
    assert heard == []


def test_a_cancel_during_the_private_stage_returns_nothing(rows):
    """The library cannot stop inside a stage: a cancel pressed during the private stage takes
    effect at the boundary after it, and the finished result is dropped (RunCancelledError)."""
    token = threading.Event()
    base = get("dp_lloyd")
    ran: list[bool] = []

    def private(*args, **kwargs):
        token.set()  # pressed while the private stage runs
        out = base.private(*args, **kwargs)
        ran.append(out.centers is not None)
        return out

    register(dataclasses.replace(base, name="dp_lloyd_cancel_probe", private=private))
    try:
        with pytest.raises(RunCancelledError):
            dpviz.run("dp_lloyd_cancel_probe", rows, 4, epsilon=EPS, delta=DELTA, radius=1.0, rng=7,
                      n_declared=N, cancel=token)
    finally:
        unregister("dp_lloyd_cancel_probe")
    assert ran == [True]  # the stage ran to its end; its result was not returned


def test_an_unset_token_changes_nothing(rows):
    res = dpviz.run("dp_lloyd", rows, 4, epsilon=EPS, delta=DELTA, radius=1.0, rng=7, n_declared=N,
                    cancel=threading.Event())
    same = dpviz.run("dp_lloyd", rows, 4, epsilon=EPS, delta=DELTA, radius=1.0, rng=7, n_declared=N)
    np.testing.assert_array_equal(res.centers, same.centers)
