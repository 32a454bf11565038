"""The Compare page's sweep: every chosen algorithm at the same row-level (ε, δ), run in chunks.

A comparison of A algorithms × R repetitions runs as A·R chunks, one (repetition, algorithm)
per script run: ``dpviz.compare.compare_sweep(..., algorithms={name: params}, only_reps=[r])``.
Its seeds are keyed on (seed, repetition, algorithm, ε), so the chunks together give the same
frame as one call, and the non-private stage is still computed once per repetition, not per ε.
A Stop click interrupts the current chunk (Streamlit stops a running script when a widget
changes) and marks the comparison stopped; the finished chunks stay on screen. Results are cached
per session, keyed on the dataset's content hash and the settings (``app/components/cache.py``).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd
import streamlit as st

import dpviz
from app.components import cache
from dpviz.compare import COLUMNS, compare_sweep

_RUNNING = "_compare_running"  # the CompareSpec being run, or None
#: Row-level ε values the range slider offers (log grid).
EPS_GRID: tuple[float, ...] = (0.1, 0.2, 0.3, 0.5, 1.0, 2.0, 3.0, 5.0, 10.0, 20.0, 30.0, 50.0, 100.0)


@dataclass(frozen=True)
class CompareSpec:
    """Everything a comparison depends on besides the rows (hashable: a cache key)."""

    data_hash: str
    algorithms: tuple[tuple[str, Any], ...]  # (name, frozen params dataclass)
    epsilons: tuple[float, ...]
    delta: float
    reps: int
    k: int
    d: int
    radius: float
    n_declared: int
    seed: int

    @property
    def chunks(self) -> list[tuple[int, str]]:
        """(repetition, algorithm) in run order: every algorithm's first repetition first."""
        return [(r, name) for r in range(self.reps) for name, _ in self.algorithms]

    def params_of(self, name: str) -> Any:
        return dict(self.algorithms)[name]


@dataclass
class Partial:
    """A comparison in progress or done: the finished chunks' frames."""

    spec: CompareSpec
    frames: list[pd.DataFrame] = field(default_factory=list)
    stopped: bool = False

    @property
    def done(self) -> int:
        return len(self.frames)

    @property
    def total(self) -> int:
        return len(self.spec.chunks)

    @property
    def complete(self) -> bool:
        return self.done >= self.total

    def frame(self) -> pd.DataFrame:
        if not self.frames:
            return pd.DataFrame(columns=list(COLUMNS))
        return pd.concat(self.frames, ignore_index=True)


def eps_grid(lo: float, hi: float, points: int) -> tuple[float, ...]:
    """``points`` row-level ε values evenly spaced in log between lo and hi (3 digits)."""
    lo, hi = min(lo, hi), max(lo, hi)
    vals = np.geomspace(lo, hi, int(points)) if hi > lo and points > 1 else np.array([hi])
    return tuple(sorted({float(f"{v:.3g}") for v in vals}))


def partial(spec: CompareSpec) -> Partial | None:
    return cache.peek("compare", spec)


def start(spec: CompareSpec) -> None:
    cache.put("compare", spec, Partial(spec))
    st.session_state[_RUNNING] = spec


def stop() -> None:
    spec = st.session_state.get(_RUNNING)
    if spec is not None:
        p = partial(spec)
        if p is not None:
            p.stopped = True
    st.session_state[_RUNNING] = None


def running() -> CompareSpec | None:
    return st.session_state.get(_RUNNING)


def run_chunk(ds, spec: CompareSpec, reference_cost: float,
              progress: Callable[[float, str], None]) -> None:
    """Run the next (repetition, algorithm) of the running comparison and append it."""
    part = partial(spec)
    if part is None or part.complete:
        st.session_state[_RUNNING] = None
        return
    rep, name = spec.chunks[part.done]

    def cancel() -> bool:
        return running() != spec

    cmp = compare_sweep(ds.X, spec.k, algorithms={name: _values(spec.params_of(name))},
                        epsilons=spec.epsilons, delta=spec.delta, radius=spec.radius,
                        n_declared=spec.n_declared, reps=spec.reps, rng=spec.seed, labels=ds.labels,
                        true_centers=ds.true_centers, reference_cost=reference_cost,
                        only_reps=[rep], progress=progress, cancel=cancel)
    if not cmp.complete:
        return
    part.frames.append(cmp.frame)
    if part.complete:
        st.session_state[_RUNNING] = None


def _values(params: Any) -> dict[str, Any]:
    import dataclasses

    return {f.name: getattr(params, f.name) for f in dataclasses.fields(params)}


def reproduce_call(name: str, eps: float, spec: CompareSpec) -> str:
    """The ``dpviz.run`` call that reproduces one algorithm's run at one ε (public inputs only)."""
    values = _values(spec.params_of(name))
    defaults = _values(dpviz.registry.get(name).make_params())
    extra = "".join(f", {k}={v!r}" for k, v in values.items() if v != defaults.get(k))
    return (f'dpviz.run("{name}", X, {spec.k}, epsilon={eps:g}, delta={spec.delta:g}, '
            f"radius={spec.radius:g}, n_declared={spec.n_declared}{extra})")


def fmt_eps(v: float) -> str:
    return "∞" if math.isinf(v) else f"{v:g}"


def explore_params(name: str, eps: float, spec: CompareSpec) -> dict[str, Any]:
    """The canonical parameters that open ``name`` at row-level ``eps`` in Explore.

    Explore shows any registered private algorithm (``alg``) at a row-level target (``eps`` and
    ``delta``), with its own parameters under ``<algorithm>.<field>`` keys. FriendlyCore's page
    reads its knobs from the flat keys: for it the comparison's t (the auto t from the declared
    size when 0), preset, oracle and r_min, so that Explore plans the same budget.
    """
    from dpviz.registry import get

    params = spec.params_of(name)
    algo = get(name)
    values = _values(params)
    defaults = _values(algo.make_params())
    out: dict[str, Any] = {"alg": name, "eps": float(eps), "k": spec.k, "seed": spec.seed}
    out |= {f"{name}.{k}": v for k, v in values.items() if v != defaults[k]}
    if name != "friendlycore":
        return out | {"delta": spec.delta}
    from dpviz.clustering.fc_spec import auto_n_tuples

    # Explore plans FriendlyCore's budget from the row-level (ε, δ) like every algorithm's: the same
    # plan as this comparison's (its ρ is Explore's readout; a ρ handed over would be kept exactly).
    return out | {"delta": spec.delta,
                  "t": params.n_tuples or auto_n_tuples(spec.n_declared, spec.k),
                  "preset": params.preset, "oracle": params.oracle,
                  "rmin": params.r_min or 1e-3 * spec.radius}
