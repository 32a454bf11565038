"""The Budget page's sweep, run one repetition per script run so it can be stopped.

A sweep of R repetitions runs as R chunks: each chunk is ``run_sweep(..., reps=1)`` with the
chunk's own seed stream (``SeedSequence(seed).spawn(R)[r]``), its frame is appended to the
session's partial result, and the page reruns for the next chunk. A Stop click interrupts the
current chunk (Streamlit stops a running script when a widget changes) and its callback marks the
sweep stopped, so the finished repetitions stay on screen. Results are cached per session keyed
on the dataset's content hash and the sweep settings.

Sweeps on PUBLIC data (generated from a recipe, or a built-in table) are also shared across the
server's sessions once complete (:class:`SharedSweeps`), and the synthetic presets' default
sweeps are precomputed into ``app/precomputed/budget_sweeps.json`` by
``python -m app.precompute_sweeps`` (``make precompute``): a shared link to the Budget page then
opens with its curves drawn. They are seeded simulations, so a recomputation gives the same
numbers; the file is used only while :func:`code_hash` (the library's source and the numeric
packages' versions) is the one it was made with. A sweep on an upload is never shared or stored.
"""

from __future__ import annotations

import functools
import hashlib
import io
import json
import os
import threading
from collections import OrderedDict
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass, field
from importlib import metadata
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import streamlit as st

import dpviz
import dpviz.data
import dpviz.experiments
import dpviz.viz
import dpviz.viz.sweeps
from app.components import cache, controls

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
    #: "session" (run here), "server" (a complete sweep another session ran on this server) or
    #: "precomputed" (app/precomputed/budget_sweeps.json)
    origin: str = "session"

    @property
    def done(self) -> int:
        return len(self.frames)

    @property
    def complete(self) -> bool:
        return self.done >= self.spec.reps

    def frame(self) -> pd.DataFrame:
        if not self.frames:
            return pd.DataFrame(columns=list(dpviz.experiments.FRAME_COLUMNS))
        return pd.concat(self.frames, ignore_index=True)

    def sweep(self):
        exp = dpviz.experiments
        return exp.Sweep(self.frame(), params=dict(self.spec.__dict__), complete=self.complete)


def rho_from_selection(event) -> float | None:
    """The ρ of the first clicked median point in a plotly selection event (None if none)."""
    if not event:
        return None
    selection = event.get("selection", {}) if hasattr(event, "get") else {}
    viz = dpviz.viz
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


def spec_for(ds, p: Mapping[str, Any], radius: float, algorithms: tuple[str, ...]) -> SweepSpec:
    """The Budget page's ρ sweep for the parameters ``p`` (the URL's) on ``ds``."""
    return SweepSpec(ds.content_hash, algorithms, rho_grid(p["blo"], p["bhi"], p["bpts"]),
                     int(p["breps"]), int(p["k"]), int(p["t"]), float(p["delta"]), float(radius),
                     float(p["rmin"]), p["oracle"], int(p["seed"]))


def rho_grid(lo: float, hi: float, points: int) -> tuple[float, ...]:
    """``points`` values of ρ evenly spaced in log between lo and hi (3 significant digits)."""
    lo, hi = min(lo, hi), max(lo, hi)
    vals = np.geomspace(lo, hi, int(points)) if hi > lo else np.array([lo])
    return tuple(sorted({float(f"{v:.3g}") for v in vals}))


def partial(spec: SweepSpec) -> Partial | None:
    """This session's sweep for ``spec``, else a complete one shared on this server (public data
    only: :class:`SharedSweeps` holds nothing else)."""
    part = cache.peek("sweep", spec)
    if part is None:
        shared = shared_sweeps().get(spec)
        if shared is not None:
            origin, frames = shared
            part = Partial(spec, list(frames), origin=origin)
            cache.put("sweep", spec, part)
    return part


# ----------------------------------------------------------------- shared across sessions ---

#: Where ``python -m app.precompute_sweeps`` writes the presets' sweeps.
PRECOMPUTED = Path(__file__).resolve().parents[1] / "precomputed" / "budget_sweeps.json"
#: Sources whose rows are a public recipe or a public table (never an upload).
PUBLIC_SOURCES = ("generated", "builtin")
#: The packages whose versions can change a seeded sweep's numbers.
_NUMERIC_PACKAGES = ("numpy", "scipy", "scikit-learn", "diffprivlib")


@functools.cache
def code_hash() -> str:
    """sha256 of the library's source (``dpviz/**/*.py``), of this module and of the precompute
    script (the seed streams, the reference), and of the numeric packages' versions:
    what a seeded sweep's numbers depend on besides its settings. A precomputed sweep made
    under another hash is ignored."""
    h = hashlib.sha256()
    root = Path(dpviz.__file__).resolve().parent
    app = Path(__file__).resolve().parents[1]
    files = [*sorted(root.rglob("*.py")), Path(__file__).resolve(), app / "precompute_sweeps.py"]
    for path in files:
        h.update(str(path.relative_to(root.parent)).encode() + b"\0" + path.read_bytes() + b"\0")
    for name in _NUMERIC_PACKAGES:
        try:
            h.update(f"{name}=={metadata.version(name)}\0".encode())
        except metadata.PackageNotFoundError:
            h.update(f"{name} missing\0".encode())
    return h.hexdigest()[:16]


def spec_to_json(spec: SweepSpec) -> dict:
    return asdict(spec)


def spec_from_json(d: Mapping[str, Any]) -> SweepSpec:
    d = dict(d)
    for name in ("algorithms", "rhos", "ns"):
        d[name] = tuple(d[name])
    return SweepSpec(**d)


class SharedSweeps:
    """Complete sweeps on public data, shared by every session of this server (bounded LRU,
    thread-safe), seeded with the precomputed file when its code hash matches."""

    def __init__(self, size: int = 32, path: Path = PRECOMPUTED) -> None:
        self._lock = threading.Lock()
        self._size = size
        self._items: OrderedDict[SweepSpec, tuple[str, tuple[pd.DataFrame, ...]]] = OrderedDict()
        for spec, frames in load_precomputed(path):
            self._items[spec] = ("precomputed", frames)

    def get(self, spec: SweepSpec) -> tuple[str, tuple[pd.DataFrame, ...]] | None:
        with self._lock:
            hit = self._items.get(spec)
            if hit is not None:
                self._items.move_to_end(spec)
            return hit

    def put(self, spec: SweepSpec, frames: list[pd.DataFrame]) -> None:
        with self._lock:
            if spec in self._items:
                return
            self._items[spec] = ("server", tuple(frames))
            while len(self._items) > self._size:
                self._items.popitem(last=False)


@st.cache_resource(show_spinner=False)
def shared_sweeps() -> SharedSweeps:
    return SharedSweeps()


def load_precomputed(path: Path = PRECOMPUTED) -> list[tuple[SweepSpec, tuple[pd.DataFrame, ...]]]:
    """The precomputed sweeps of ``path`` (none if it is missing, made under another
    :func:`code_hash`, or ``DPVIZ_PRECOMPUTED=0`` is set, e.g. to time the computation)."""
    if os.environ.get("DPVIZ_PRECOMPUTED", "1") == "0":
        return []
    try:
        doc = json.loads(path.read_text())
    except (OSError, ValueError):
        return []
    if doc.get("code_hash") != code_hash():
        return []
    out = []
    for entry in doc.get("sweeps", []):
        frames = tuple(pd.read_json(io.StringIO(f), orient="split") for f in entry["frames"])
        out.append((spec_from_json(entry["spec"]), frames))
    return out


def save_precomputed(entries: list[tuple[SweepSpec, list[pd.DataFrame]]], recipes: list[dict],
                     path: Path = PRECOMPUTED) -> None:
    """Write ``entries`` (complete sweeps) with the current :func:`code_hash`."""
    doc = {
        "kind": "SIMULATION: seeded Budget-page sweeps on public synthetic data (never a user's "
                "data, never a release). Made by `python -m app.precompute_sweeps`; used only "
                "while code_hash matches the running code.",
        "code_hash": code_hash(),
        "recipes": recipes,
        "sweeps": [{"spec": spec_to_json(spec),
                    "frames": [f.to_json(orient="split", double_precision=15) for f in frames]}
                   for spec, frames in entries],
    }
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(doc, indent=1) + "\n")


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
    data = dpviz.data
    if ds.source == "generated" and p["gen"] in data.GENERATORS:
        spec = data.GENERATORS[p["gen"]]
        return lambda n, rng: spec(int(n), rng=rng, **generator_kwargs)

    def subset(n: int, rng: np.random.Generator):
        idx = rng.choice(ds.n, size=min(int(n), ds.n), replace=False)
        return ds.X[np.sort(idx)]

    return subset


def run_chunk(ds, spec: SweepSpec, progress: Callable[[float, str], None],
              make_data: Callable | None = None) -> None:
    """Run the next repetition of the running sweep and append it (a complete sweep on public
    data is then shared with the server's other sessions)."""
    part = partial(spec)
    if part is None or part.complete:
        st.session_state[_RUNNING] = None
        return

    def should_stop() -> bool:
        return running() != spec

    part.frames.append(repetition(ds, spec, part.done, _reference_cost(ds, spec.k), progress,
                                  should_stop=should_stop, make_data=make_data))
    if part.complete:
        st.session_state[_RUNNING] = None
        if ds.source in PUBLIC_SOURCES:
            shared_sweeps().put(spec, part.frames)


def repetition(ds, spec: SweepSpec, r: int, reference_cost: float,
               progress: Callable[[float, str], None] | None = None, *,
               should_stop: Callable[[], bool] | None = None,
               make_data: Callable | None = None) -> pd.DataFrame:
    """Repetition ``r`` of ``spec`` (its own seed stream ``SeedSequence(seed).spawn(reps)[r]``):
    a pure function of its arguments, used by the page and by ``app.precompute_sweeps``."""
    exp = dpviz.experiments
    stream = np.random.default_rng(np.random.SeedSequence(spec.seed).spawn(spec.reps)[r])
    if spec.kind == "rho":
        sw = exp.run_sweep(ds, spec.k, algorithms=spec.algorithms, rhos=spec.rhos, reps=1,
                           delta=spec.delta, n_tuples=spec.t, radius=spec.radius,
                           r_min=spec.r_min, rng=stream, progress=progress,
                           should_stop=should_stop, oracle=spec.oracle,
                           reference_cost=reference_cost, row_level=spec.row_level)
    else:
        sw = exp.run_n_sweep(make_data, spec.ns, spec.k, algorithms=spec.algorithms,
                             rho=spec.rho, reps=1, delta=spec.delta, n_tuples=spec.t,
                             radius=spec.radius, r_min=spec.r_min, rng=stream,
                             progress=progress, should_stop=should_stop, oracle=spec.oracle,
                             row_level=spec.row_level)
    frame = sw.frame.copy()
    frame["rep"] = r
    return frame


def _reference_cost(ds, k: int) -> float:
    from app.components import run

    return run.reference(ds, k).cost


def fmt_rhos(rhos) -> str:
    return ", ".join(controls.fmt_rho(r) for r in rhos)
