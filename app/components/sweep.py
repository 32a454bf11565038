"""The Budget page's sweep, run one repetition per script run so it can be stopped.

A sweep of R repetitions runs as R chunks: each chunk is ``run_sweep(..., reps=1)`` with the
chunk's own seed stream (``SeedSequence(seed).spawn(R)[r]``), its frame is appended to the
session's partial result, and the page reruns for the next chunk. A Stop click interrupts the
current chunk (Streamlit stops a running script when a widget changes) and its callback marks the
sweep stopped, so the finished repetitions stay on screen. Results are cached per session keyed
on the dataset's content hash and the sweep settings.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd
import streamlit as st

from app.components import cache, controls, lib

_RUNNING = "_sweep_running"  # the key of the sweep being run, or None


@dataclass(frozen=True)
class SweepSpec:
    """Everything a budget sweep depends on (besides the rows)."""

    data_hash: str
    algorithms: tuple[str, ...]
    rhos: tuple[float, ...]
    reps: int
    k: int
    t: int
    delta: float
    radius: float
    r_min: float
    oracle: str
    seed: int
    kind: str = "rho"  # "rho" | "n"
    ns: tuple[int, ...] = ()
    rho: float = 0.0  # the budget of a loss-vs-n sweep
    row_level: bool = True  # kind "rho": the x values are row-level ε targets (issue 10, finding 6)


@dataclass
class Partial:
    """A sweep in progress or done: the finished repetitions' frames."""

    spec: SweepSpec
    frames: list[pd.DataFrame] = field(default_factory=list)
    stopped: bool = False

    @property
    def done(self) -> int:
        return len(self.frames)

    @property
    def complete(self) -> bool:
        return self.done >= self.spec.reps

    def frame(self) -> pd.DataFrame:
        if not self.frames:
            return pd.DataFrame(columns=list(lib.get("experiments").FRAME_COLUMNS))
        return pd.concat(self.frames, ignore_index=True)

    def sweep(self):
        exp = lib.get("experiments")
        return exp.Sweep(self.frame(), params=dict(self.spec.__dict__), complete=self.complete)


def rho_from_selection(event) -> float | None:
    """The ρ of the first clicked median point in a plotly selection event (None if none)."""
    if not event:
        return None
    selection = event.get("selection", {}) if hasattr(event, "get") else {}
    viz = lib.viz_modules()
    for pt in selection.get("points", []) or []:
        pt = dict(pt)
        cd = pt.get("customdata")
        if isinstance(cd, Mapping):
            # Streamlit delivers an array customdata as {"0": ..., "1": ...}.
            pt["customdata"] = [cd[k] for k in sorted(cd, key=lambda s: int(s))]
        rho = viz.sweeps.clicked_rho(pt)
        if rho is None and pt.get("customdata") is None:
            rho = viz.sweeps.clicked_rho({"customdata": pt.get("x")})
        if rho is not None:
            return float(rho)
    return None


def rho_grid(lo: float, hi: float, points: int) -> tuple[float, ...]:
    """``points`` values of ρ evenly spaced in log between lo and hi (3 significant digits)."""
    lo, hi = min(lo, hi), max(lo, hi)
    vals = np.geomspace(lo, hi, int(points)) if hi > lo else np.array([lo])
    return tuple(sorted({float(f"{v:.3g}") for v in vals}))


def partial(spec: SweepSpec) -> Partial | None:
    return cache.peek("sweep", spec)


def start(spec: SweepSpec) -> None:
    cache.put("sweep", spec, Partial(spec))
    st.session_state[_RUNNING] = spec


def stop() -> None:
    spec = st.session_state.get(_RUNNING)
    if spec is not None:
        p = partial(spec)
        if p is not None:
            p.stopped = True
    st.session_state[_RUNNING] = None


def running() -> SweepSpec | None:
    return st.session_state.get(_RUNNING)


def make_data(ds, p: Mapping[str, Any], generator_kwargs: Mapping[str, Any]) -> Callable:
    """make_data(n, rng) for a loss-vs-n sweep: the recipe for generated data, else subsets."""
    data = lib.get("data")
    if ds.source == "generated" and p["gen"] in data.GENERATORS:
        spec = data.GENERATORS[p["gen"]]
        return lambda n, rng: spec(int(n), rng=rng, **generator_kwargs)

    def subset(n: int, rng: np.random.Generator):
        idx = rng.choice(ds.n, size=min(int(n), ds.n), replace=False)
        return ds.X[np.sort(idx)]

    return subset


def run_chunk(ds, spec: SweepSpec, progress: Callable[[float, str], None],
              make_data: Callable | None = None) -> None:
    """Run the next repetition of the running sweep and append it."""
    exp = lib.get("experiments")
    part = partial(spec)
    if part is None or part.complete:
        st.session_state[_RUNNING] = None
        return
    r = part.done
    stream = np.random.default_rng(np.random.SeedSequence(spec.seed).spawn(spec.reps)[r])
    ref = _reference_cost(ds, spec.k)

    def should_stop() -> bool:
        return running() != spec

    if spec.kind == "rho":
        sw = exp.run_sweep(ds, spec.k, algorithms=spec.algorithms, rhos=spec.rhos, reps=1,
                           delta=spec.delta, n_tuples=spec.t, radius=spec.radius,
                           r_min=spec.r_min, rng=stream, progress=progress,
                           should_stop=should_stop, oracle=spec.oracle, reference_cost=ref,
                           row_level=spec.row_level)
    else:
        sw = exp.run_n_sweep(make_data, spec.ns, spec.k, algorithms=spec.algorithms,
                             rho=spec.rho, reps=1, delta=spec.delta, n_tuples=spec.t,
                             radius=spec.radius, r_min=spec.r_min, rng=stream,
                             progress=progress, should_stop=should_stop, oracle=spec.oracle,
                             row_level=spec.row_level)
    frame = sw.frame.copy()
    frame["rep"] = r
    part.frames.append(frame)
    if part.complete:
        st.session_state[_RUNNING] = None


def _reference_cost(ds, k: int) -> float:
    from app.components import run

    return run.reference(ds, k).cost


def fmt_rhos(rhos) -> str:
    return ", ".join(controls.fmt_rho(r) for r in rhos)
