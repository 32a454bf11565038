"""A public dataset's tuple stage is computed once for the server (issue 33 item 2; since issue 45
by the one runner, app/components/simulation.py, for every page): a new session
on the default lesson reuses the stage object, and with it the match graph and FindDiam's levels
cached on it; an upload's stage stays in its session. Streamlit's bare mode (``st.session_state``
is one per-process dict: clearing its caches stands for a new session)."""

from __future__ import annotations

from dataclasses import replace

import pytest
import streamlit as st

import dpviz.data
from app.components import simulation
from app.components.friendlycore import run


def _new_session() -> None:
    for key in [k for k in st.session_state if str(k).startswith("_cache_")]:
        del st.session_state[key]


@pytest.fixture
def fresh(monkeypatch):
    monkeypatch.setattr(simulation, "_SHARED", type(simulation._SHARED)())
    monkeypatch.setattr(simulation, "_KEY_LOCKS", {})
    _new_session()
    yield
    _new_session()


def _cfg(ds, seed=0):
    return run.RunConfig(k=3, t=20, oracle="kmeans++", seed=seed, rho=None, delta=1e-6,
                         radius=float(ds.radius), r_min=0.001, preset="practical", eps=3.0)


def test_a_generated_datasets_stage_is_shared_by_sessions(fresh):
    ds = dpviz.data.GENERATORS["fig3_three"](2_000, rng=0)
    assert ds.source == "generated"
    first = run.tuple_stage(ds, _cfg(ds))
    _new_session()
    assert run.tuple_stage(ds, _cfg(ds)) is first
    assert run.tuple_stage(ds, _cfg(ds, seed=1)) is not first  # another run seed: another stage


def test_an_uploads_stage_stays_in_its_session(fresh):
    ds = dpviz.data.GENERATORS["fig3_three"](2_000, rng=0)
    upload = replace(ds, source="upload")
    mine = run.tuple_stage(upload, _cfg(upload))
    assert run.tuple_stage(upload, _cfg(upload)) is mine  # the session's cache
    _new_session()
    again = run.tuple_stage(upload, _cfg(upload))
    assert again is not mine and not simulation._SHARED
    assert (again.tuples == mine.tuples).all()  # the same seeded computation, not shared


def test_the_shared_stages_are_bounded(fresh):
    ds = dpviz.data.GENERATORS["fig3_three"](2_000, rng=0)
    for seed in range(simulation.SHARED_STAGES + 2):
        run.tuple_stage(ds, _cfg(ds, seed=seed))
    assert len(simulation._SHARED) == simulation.SHARED_STAGES
