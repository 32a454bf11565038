"""Sweeps on the app's pages (Budget and Compare): their specs, results and shared store.

A sweep runs as a job (:mod:`app.components.jobs`: a background thread, a progress bar, Stop,
reload-safe) over *pieces*: a Budget sweep's pieces are its repetitions, a Compare sweep's its
(repetition, algorithm) pairs. Each piece is one call of the one engine,
``dpviz.sweeps.sweep(..., only_reps=[r])``, whose seeds are keyed on (seed, repetition,
algorithm, budget): the pieces together give the same frame as one call, in any order.

Sweeps on PUBLIC data (generated from a recipe, or a built-in table) are also shared across the
server's sessions once complete (:class:`SharedSweeps`), and the synthetic presets' default
sweeps of both pages are precomputed into ``app/precomputed/budget_sweeps.json`` by
``python -m app.precompute_sweeps`` (``make precompute``): a shared link to either page then
opens with its curves drawn. They are seeded simulations, so a recomputation gives the same
numbers; the file is used only while :func:`code_hash` (the code of the library modules the
sweep imports, docstrings and comments left out, and the numeric packages' versions) is the one it
was made with. A sweep on an upload is never shared or stored.
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import io
import json
import math
import os
import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable, Mapping
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import streamlit as st

import dpviz
import dpviz.clustering.baselines
import dpviz.data
import dpviz.metrics
import dpviz.registry
import dpviz.sweeps
import dpviz.viz
import dpviz.viz.sweeps
from app.components import jobs
from app.components.friendlycore import knobs as fc_knobs

#: Explore's tuple knobs a sweep hands every algorithm that has them (FriendlyCore's t, r_min and
#: oracle, named as in its knobs' table). ``SweepSpec.algorithm_params`` spells their FCParams
#: fields itself: its source is part of the precomputed sweeps' code hash (test_fc_knobs checks
#: it agrees with the table).
_TUPLE_KNOBS = (fc_knobs.T, fc_knobs.R_MIN, fc_knobs.ORACLE)

#: Row-level ε values the pages' range sliders offer (log grid; Budget adds its own ends).
EPS_GRID: tuple[float, ...] = (0.01, 0.02, 0.05, 0.1, 0.2, 0.3, 0.5, 1.0, 2.0, 3.0, 5.0, 10.0, 20.0,
                               30.0, 50.0, 100.0)


@dataclass(frozen=True)
class SweepSpec:
    """Everything a Budget sweep depends on (besides the rows): along the row-level ε axis
    (``kind="epsilon"``, at ``epsilons``) or along n (``kind="n"``, at ``ns``, every algorithm at
    the one row-level target ``epsilon``)."""

    data_hash: str
    algorithms: tuple[str, ...]
    epsilons: tuple[float, ...]
    reps: int
    k: int
    t: int
    delta: float
    radius: float
    r_min: float
    oracle: str
    seed: int
    kind: str = "epsilon"  # "epsilon" | "n"
    ns: tuple[int, ...] = ()
    epsilon: float = 0.0  # the row-level target of a loss-vs-n sweep

    @property
    def total(self) -> int:
        """Pieces: one per repetition."""
        return self.reps

    def algorithm_params(self) -> dict[str, dict[str, Any]]:
        """Each name's parameters for ``dpviz.sweeps.sweep``: Explore's tuple knobs (t, r_min,
        oracle) to every algorithm that has them (t = 0: the spec's automatic choice)."""
        knobs = {"n_tuples": self.t, "r_min": self.r_min, "oracle": self.oracle}
        return {a: _own(a, knobs) for a in self.algorithms}


def _own(name: str, values: Mapping[str, Any]) -> dict[str, Any]:
    """The entries of ``values`` that are parameters of algorithm ``name`` (a registry name)."""
    spec, _ = dpviz.registry.resolve_name(name)
    fields = {f.name for f, _hint in dpviz.registry.param_fields(spec.params)}
    return {k: v for k, v in values.items() if k in fields}


@dataclass(frozen=True)
class CompareSpec:
    """Everything a Compare sweep depends on besides the rows (hashable: a cache key)."""

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

    @property
    def total(self) -> int:
        """Pieces: one per (repetition, algorithm)."""
        return len(self.chunks)

    def params_of(self, name: str) -> Any:
        return dict(self.algorithms)[name]


Spec = SweepSpec | CompareSpec


@dataclass
class Partial:
    """A sweep in progress or done: the finished pieces' frames."""

    spec: Spec
    frames: list[pd.DataFrame] = field(default_factory=list)
    stopped: bool = False
    #: "session" (run here), "server" (a complete sweep another session ran on this server) or
    #: "precomputed" (app/precomputed/budget_sweeps.json)
    origin: str = "session"

    @property
    def done(self) -> int:
        return len(self.frames)

    @property
    def total(self) -> int:
        return self.spec.total

    @property
    def complete(self) -> bool:
        return self.done >= self.total

    def frame(self) -> pd.DataFrame:
        if not self.frames:
            return pd.DataFrame(columns=list(dpviz.sweeps.COLUMNS))
        return pd.concat(self.frames, ignore_index=True)

    def sweep(self) -> dpviz.sweeps.Sweep:
        return dpviz.sweeps.Sweep(self.frame(), params=dict(self.spec.__dict__), complete=self.complete)


def budget_from_selection(event) -> float | None:
    """The budget (the x value: a row-level ε on the pages' axes) of the first clicked median
    point in a plotly selection event (None if none)."""
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
        value = viz.sweeps.clicked_budget(pt)
        if value is None and pt.get("customdata") is None:
            value = viz.sweeps.clicked_budget({"customdata": pt.get("x")})
        if value is not None:
            return float(value)
    return None


def explore_target(event) -> dict[str, float] | None:
    """What a click on a Budget curve hands Explore: exactly the clicked row-level ε (the sweep's δ
    is Explore's own), None when no median point was clicked. No ρ: Explore plans its own budget
    from the target, as every page does (issue 33)."""
    eps = budget_from_selection(event)
    return None if eps is None else {"eps": float(eps)}


def spec_for(ds, p: Mapping[str, Any], radius: float, algorithms: tuple[str, ...]) -> SweepSpec:
    """The Budget page's ε sweep for the parameters ``p`` (the URL's) on ``ds``."""
    return SweepSpec(ds.content_hash, algorithms, eps_grid(p["blo"], p["bhi"], p["bpts"]),
                     int(p["breps"]), int(p["k"]), delta=float(p["delta"]), radius=float(radius),
                     seed=int(p["seed"]), **tuple_knobs(p))


def tuple_knobs(p: Mapping[str, Any]) -> dict[str, Any]:
    """Explore's tuple knobs in the parameters ``p`` as a sweep's fields (t, r_min, oracle: their
    names, parameters and types from FriendlyCore's knobs' table)."""
    return {k.name: k.kind(p[k.param]) for k in _TUPLE_KNOBS}


def eps_grid(lo: float, hi: float, points: int) -> tuple[float, ...]:
    """``points`` row-level ε values evenly spaced in log between lo and hi (3 significant digits)."""
    lo, hi = min(lo, hi), max(lo, hi)
    vals = np.geomspace(lo, hi, int(points)) if hi > lo and points > 1 else np.array([hi])
    return tuple(sorted({float(f"{v:.3g}") for v in vals}))


def page_dataset():
    """The dataset a sweep page runs on and its declared Λ, or None (with the reason shown)."""
    from app.components import data_source

    choice = data_source.current()
    ds = choice.dataset
    if choice.error:
        st.error(choice.error)
    if ds is None:
        st.info(choice.notice or "No dataset yet: choose one on the Data page.")
        return None
    radius = data_source.radius_for(ds)
    if radius is None:
        st.error("Declare the public radius Λ first (Data page).")
        return None
    return ds, float(radius)


def run_button(slot: str, spec: Spec, *, noun: str, key: str, progress_key: str, stop_key: str, unit: str,
               start: Callable[[Partial | None], None], disabled: bool = False) -> Partial | None:
    """A sweep page's Run (or Continue, after a Stop) button (``key``), its job's progress panel
    (``progress_key``, with its Stop button ``stop_key``) and error; returns the sweep for ``spec``
    so far (None if there is none)."""
    part = partial(slot, spec)
    resume = part if part is not None and part.stopped and not part.complete else None
    if st.button(f"{'Continue' if resume else 'Run'} {noun}", key=key, type="primary",
                 icon=":material/play_arrow:", disabled=disabled or jobs.running(slot) is not None):
        start(resume)
        st.rerun()
    jobs.panel(slot, key=progress_key, stop_key=stop_key, unit=unit)
    job_error(slot)
    return part


def job_error(slot: str) -> None:
    """The error a finished job of ``slot`` ended with, in the app's words."""
    from app.components import run

    job = jobs.current(slot)
    if job is not None and job.error is not None and not job.running:
        st.error(run.error_text(RuntimeError(job.error)))


def range_and_runs(range_col, points_col, reps_col, *, widgets: tuple[str, str, str],
                   keys: tuple[str, str, str, str], points: tuple[int, int], max_reps: int,
                   reps_help: str) -> None:
    """A sweep page's row-level ε range slider, its number of ε values and its repetitions (widget
    keys ``widgets`` = (range, points, reps), the page's own from :mod:`app.components.keys`), bound
    to the URL parameters ``keys`` = (lo, hi, points, reps) (Budget and Compare)."""
    from app.components import state

    lo, hi, pts, reps = keys
    range_key, points_key, reps_key = widgets
    p = state.params()

    def changed() -> None:
        a, b = st.session_state[range_key]
        state.update(**{lo: float(a), hi: float(b)})

    # A range select_slider: its initial value must be passed as a pair (not seeded).
    range_col.select_slider("Row-level ε range (log scale)", options=sorted(set(EPS_GRID) | {p[lo], p[hi]}),
                            value=(p[lo], p[hi]), format_func=fmt_eps, key=range_key,
                            on_change=changed,
                            help="ε of the (ε, δ)-DP guarantee for adding or removing ONE ROW of "
                                 "your data; every algorithm is calibrated to it.")
    state.seed_widget(pts, points_key)
    points_col.number_input("ε values", min_value=points[0], max_value=points[1], step=1,
                            key=points_key, on_change=state.on_change(pts, points_key, int))
    state.seed_widget(reps, reps_key)
    reps_col.number_input("Repetitions", min_value=1, max_value=max_reps, step=1, key=reps_key,
                          on_change=state.on_change(reps, reps_key, int), help=reps_help)


def fmt_eps(v: float) -> str:
    return "∞" if math.isinf(v) else f"{v:g}"


def fmt_epsilons(values) -> str:
    return ", ".join(fmt_eps(v) for v in values)


# ------------------------------------------------------------------------ results and jobs ---


def partial(slot: str, spec: Spec) -> Partial | None:
    """The sweep for ``spec``: this session's job, else a complete one shared on this server or
    precomputed, else a job still running on public data that a reloaded page (a new session)
    left behind (attached here, so its progress and Stop work)."""
    job = jobs.current(slot)
    if job is None or job.key != spec:
        shared = shared_sweeps().get(spec)
        if shared is not None:
            origin, frames = shared
            return Partial(spec, list(frames), origin=origin)
        job = jobs.find(slot, spec)
    if job is not None:
        return Partial(spec, list(job.parts), stopped=job.stopped and not job.running)
    return None


def start(slot: str, spec: Spec,
          piece: Callable[[int, Callable[[], bool], Callable[[float, str], None]], pd.DataFrame | None],
          *, public: bool, resume: Partial | None = None) -> jobs.Job:
    """Run ``piece(i, cancel, progress)`` for every piece i of ``spec`` not in ``resume`` as
    ``slot``'s job (the engine's progress messages, e.g. "… at ε = 0.5", become the panel's text);
    a complete sweep on public data is then shared with the server's other sessions."""
    done = [] if resume is None else list(resume.frames)

    def work(job: jobs.Job) -> None:
        job.parts.extend(done)
        job.step = len(job.parts)
        for i in range(len(job.parts), spec.total):
            if job.cancel.is_set():
                return
            frame = piece(i, job.cancel.is_set, lambda f, msg: setattr(job, "message", msg))
            if frame is None:  # cancelled inside the piece
                return
            job.parts.append(frame)
            job.step = len(job.parts)
        if public:
            shared_sweeps().put(spec, job.parts)

    return jobs.start(slot, spec, work, shared=public, total=spec.total)


# ----------------------------------------------------------------- shared across sessions ---

#: Where ``python -m app.precompute_sweeps`` writes the presets' sweeps.
PRECOMPUTED = Path(__file__).resolve().parents[1] / "precomputed" / "budget_sweeps.json"
#: Sources whose rows are a public recipe or a public table (never an upload).
PUBLIC_SOURCES = ("generated", "builtin")
#: The packages whose versions can change a seeded sweep's numbers.
_NUMERIC_PACKAGES = ("numpy", "scipy", "scikit-learn", "diffprivlib")


#: The library modules a precomputed sweep runs from: the engine, the non-private reference and its
#: cost (every registered family follows from the registry the engine imports).
SWEEP_ROOTS: tuple[str, ...] = ("dpviz.sweeps", "dpviz.clustering.baselines", "dpviz.metrics")


def sweep_functions() -> tuple[Callable, ...]:
    """The app's own code that turns a spec into a precomputed sweep's frames (the rest of this
    module and of the precompute script draws pages or builds specs; a spec's data, settings and
    algorithms are its key, so they need no hash)."""
    return (repetition, compare_piece, param_values, SweepSpec.algorithm_params, _own,
            CompareSpec.chunks.fget, CompareSpec.total.fget, CompareSpec.params_of, reference_cost)


def reference_cost(ds, k: int) -> float:
    """The page's non-private reference (``run.reference``: k-means++ with rng=0, its cost), the
    loss's denominator of a precomputed sweep. Here, not in ``app.precompute_sweeps`` (which
    imports this module): the app's one import circle, opened (issue 45 item 3)."""
    res = dpviz.clustering.baselines.nonprivate_kmeans(ds.X, k, rng=0)
    return float(dpviz.metrics.kmeans_cost(ds.X, np.asarray(res.centers, dtype=float)))


@functools.cache
def code_digests() -> dict[str, str]:
    """Per source file a precomputed sweep's numbers depend on, the hash of its code (docstrings,
    comments and formatting left out: :mod:`app.components.code_fingerprint`): the library modules
    reachable by import from :data:`SWEEP_ROOTS`, the package data beside them, and the app's
    :func:`sweep_functions` (keyed ``app:<qualified name>``)."""
    import inspect
    import textwrap

    from app.components import code_fingerprint

    out = code_fingerprint.digests(code_fingerprint.module_closure(SWEEP_ROOTS))
    for fn in sweep_functions():
        code = code_fingerprint.normalized_code(textwrap.dedent(inspect.getsource(fn)))
        out[f"app:{fn.__module__}.{fn.__qualname__}"] = hashlib.sha256(code.encode()).hexdigest()[:16]
    return dict(sorted(out.items()))


def package_versions() -> tuple[str, ...]:
    """The numeric packages' versions (they can change a seeded sweep's numbers)."""
    from app.components import code_fingerprint

    return code_fingerprint.package_versions(_NUMERIC_PACKAGES)


@functools.cache
def code_hash() -> str:
    """One hash of :func:`code_digests` and :func:`package_versions`: what a seeded sweep's numbers
    depend on besides its settings (which are its key). A precomputed sweep made under another
    hash is ignored; a docstring, a comment or a module the sweep does not import (the figures,
    the CLI) changes nothing."""
    from app.components import code_fingerprint

    return code_fingerprint.combine(code_digests(), package_versions())


@functools.cache
def tree_digest() -> str:
    """The raw-bytes digest of the library and of the files of :func:`sweep_functions`, with the
    numeric packages' versions (:func:`app.components.code_fingerprint.tree_digest`)."""
    import inspect

    from app.components import code_fingerprint

    files = {Path(inspect.getsourcefile(fn)) for fn in sweep_functions()}
    return code_fingerprint.tree_digest(files, package_versions())


@functools.cache
def running_code_hash() -> str:
    """:func:`code_hash`, read from the committed precomputed file when its ``tree_digest`` shows
    that no byte of the library (or of the sweep's app code) changed since it was made; else
    computed. Equal bytes, equal code: the cold first page skips parsing ~100 modules (the
    Compare page's first open spent 2-7 s there, issue 43)."""
    try:
        doc = json.loads(PRECOMPUTED.read_text())
    except (OSError, ValueError):
        doc = {}
    if doc.get("tree_digest") and doc.get("tree_digest") == tree_digest() and doc.get("code_hash"):
        return str(doc["code_hash"])
    return code_hash()


def stale_files(doc: Mapping[str, Any]) -> list[str]:
    """The files (and package versions) whose code differs from what the precomputed ``doc`` was
    made under: what a regeneration would pick up."""
    made = dict(doc.get("code_digests", {}))
    now = code_digests()
    changed = sorted(k for k in made.keys() | now.keys() if made.get(k) != now.get(k))
    versions = set(package_versions()) ^ set(doc.get("package_versions", []))
    return changed + sorted(versions)


def spec_to_json(spec: Spec) -> dict:
    if isinstance(spec, CompareSpec):
        d = {f.name: getattr(spec, f.name) for f in dataclasses.fields(spec)}
        d["algorithms"] = [[name, param_values(params)] for name, params in spec.algorithms]
        return {"page": "compare", **d}
    return {"page": "budget", **asdict(spec)}


def spec_from_json(d: Mapping[str, Any]) -> Spec:
    d = dict(d)
    if d.pop("page", "budget") == "compare":
        d["algorithms"] = tuple((name, dpviz.registry.get(name).make_params(**values))
                                for name, values in d["algorithms"])
        d["epsilons"] = tuple(d["epsilons"])
        return CompareSpec(**d)
    for name in ("algorithms", "epsilons", "ns"):
        d[name] = tuple(d[name])
    d["algorithms"] = tuple(dpviz.registry.registry_name(a) for a in d["algorithms"])  # old names
    return SweepSpec(**d)


def param_values(params: Any) -> dict[str, Any]:
    return {f.name: getattr(params, f.name) for f in dataclasses.fields(params)}


class SharedSweeps:
    """Complete sweeps on public data, shared by every session of this server (bounded LRU,
    thread-safe), seeded with the precomputed file when its code hash matches."""

    def __init__(self, size: int = 32, path: Path | None = None) -> None:
        self._lock = threading.Lock()
        self._size = size
        self._items: OrderedDict[Hashable, tuple[str, tuple[pd.DataFrame, ...]]] = OrderedDict()
        for spec, frames in load_precomputed(path):
            self._items[spec] = ("precomputed", frames)

    def get(self, spec: Hashable) -> tuple[str, tuple[pd.DataFrame, ...]] | None:
        with self._lock:
            hit = self._items.get(spec)
            if hit is not None:
                self._items.move_to_end(spec)
            return hit

    def put(self, spec: Hashable, frames: list[pd.DataFrame]) -> None:
        with self._lock:
            if spec in self._items:
                return
            self._items[spec] = ("server", tuple(frames))
            while len(self._items) > self._size:
                self._items.popitem(last=False)


@st.cache_resource(show_spinner=False)
def shared_sweeps() -> SharedSweeps:
    return SharedSweeps()


def precomputed_path() -> Path | None:
    """The precomputed file the app loads: :data:`PRECOMPUTED`, another file named by
    ``DPVIZ_PRECOMPUTED=<path>`` (tests pin theirs), or none with ``DPVIZ_PRECOMPUTED=0`` (e.g. to
    time the computation)."""
    value = os.environ.get("DPVIZ_PRECOMPUTED", "1")
    if value == "0":
        return None
    return PRECOMPUTED if value == "1" else Path(value)


def read_precomputed(path: Path, doc: dict | None = None
                     ) -> tuple[dict, list[tuple[Spec, tuple[pd.DataFrame, ...]]]]:
    """The file's header (everything but its sweeps) and its sweeps, whatever its code hash
    (``doc``: the file already parsed)."""
    doc = dict(json.loads(path.read_text()) if doc is None else doc)
    out = []
    for entry in doc.pop("sweeps", []):
        dtypes = entry.get("dtypes") or [None] * len(entry["frames"])
        frames = tuple(_registry_names(_frame(f, t)) for f, t in zip(entry["frames"], dtypes,
                                                                      strict=True))
        out.append((spec_from_json(entry["spec"]), frames))
    return doc, out


def _frame(text: str, dtypes: list[str] | None) -> pd.DataFrame:
    """One stored frame (``to_json(orient="split")``) with the column types it was saved with.
    ``pandas.read_json`` took 3.5 s for the 316 frames of the shipped file on a busy machine,
    most of Compare's first open on a fresh server (issue 43 item 4), and guessed the types (a
    float column of whole numbers came back int64); the stdlib parser and the saved types take
    ~0.2 s. A file saved before the types were stored is read as before."""
    if dtypes is None:
        return pd.read_json(io.StringIO(text), orient="split")
    split = json.loads(text)
    frame = pd.DataFrame(split["data"], columns=split["columns"], index=split["index"])
    differ = {c: t for c, t, now in zip(frame.columns, dtypes, frame.dtypes.astype(str), strict=True)
              if t != now}  # casting only these: astype over all 23 columns cost ~3 ms a frame
    return frame.astype(differ) if differ else frame


def _registry_names(frame: pd.DataFrame) -> pd.DataFrame:
    """A stored frame with its algorithm names as registry names (files made before issue 33
    say ``"fc:practical"``, ``"nonprivate"``: :func:`dpviz.registry.registry_name`)."""
    if "algorithm" not in frame:
        return frame
    return frame.assign(algorithm=frame["algorithm"].map(dpviz.registry.registry_name))


def load_precomputed(path: Path | None = None) -> list[tuple[Spec, tuple[pd.DataFrame, ...]]]:
    """The precomputed sweeps of ``path`` (default :func:`precomputed_path`); none if it is
    missing or was made under another :func:`code_hash`. Parsed once per file version (its path,
    size and modification time) for the process: ``python -m app.launch`` reads the shipped file
    before the server listens, so Compare's first visitor does not wait for it (issue 43 item 4)."""
    path = precomputed_path() if path is None else path
    if path is None:
        return []
    try:
        stat = path.stat()
    except OSError:
        return []
    return list(_parsed_precomputed(path.resolve(), stat.st_size, stat.st_mtime_ns))


@functools.lru_cache(maxsize=4)
def _parsed_precomputed(path: Path, size: int, mtime_ns: int
                        ) -> tuple[tuple[Spec, tuple[pd.DataFrame, ...]], ...]:
    """:func:`load_precomputed`'s parse of one version of a file (``size`` and ``mtime_ns`` key
    the cache: a file rewritten by ``make precompute`` is read again)."""
    try:
        doc = json.loads(path.read_text())
    except (OSError, ValueError):
        return ()
    if doc.get("code_hash") != running_code_hash():
        return ()
    return tuple(read_precomputed(path, doc)[1])


def save_precomputed(entries: list[tuple[Spec, list[pd.DataFrame]]], recipes: list[dict],
                     path: Path = PRECOMPUTED) -> None:
    """Write ``entries`` (complete sweeps) with the current :func:`code_hash`."""
    doc = {
        "kind": "SIMULATION: seeded Budget- and Compare-page sweeps on public synthetic data (never "
                "a user's data, never a release). Made by `python -m app.precompute_sweeps`; used "
                "only while code_hash matches the running code.",
        "code_hash": code_hash(),
        "tree_digest": tree_digest(),
        "package_versions": list(package_versions()),
        "code_digests": code_digests(),
        "recipes": recipes,
        "sweeps": [{"spec": spec_to_json(spec),
                    "frames": [f.to_json(orient="split", double_precision=15) for f in frames],
                    "dtypes": [[str(t) for t in f.dtypes] for f in frames]}
                   for spec, frames in entries],
    }
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(doc, indent=1) + "\n")


# ----------------------------------------------------------------------------- the pieces ---


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


def repetition(ds, spec: SweepSpec, r: int, reference_cost: float, *,
               cancel: Callable[[], bool] | None = None,
               make_data: Callable | None = None,
               progress: Callable[[float, str], None] | None = None) -> pd.DataFrame | None:
    """Repetition ``r`` of a Budget sweep (None if cancelled): a pure function of its arguments,
    used by the page and by ``app.precompute_sweeps``."""
    common = dict(algorithms=spec.algorithm_params(), delta=spec.delta, radius=spec.radius,
                  cancel=cancel, progress=progress)
    if spec.kind == "n":
        stream = np.random.default_rng(np.random.SeedSequence(spec.seed).spawn(spec.reps)[r])
        sw = dpviz.sweeps.sweep_n(make_data, spec.ns, spec.k, epsilons=(spec.epsilon,), reps=1,
                                  rng=stream, **common)
    else:
        sw = dpviz.sweeps.sweep(ds.X, spec.k, epsilons=spec.epsilons, reps=spec.reps,
                                only_reps=[r], rng=spec.seed, reference_cost=reference_cost,
                                labels=ds.labels, true_centers=ds.true_centers, **common)
    return sw.frame if sw.complete else None


def compare_piece(ds, spec: CompareSpec, i: int, reference_cost: float, *,
                  cancel: Callable[[], bool] | None = None,
                  progress: Callable[[float, str], None] | None = None) -> pd.DataFrame | None:
    """Piece ``i`` of a Compare sweep: one (repetition, algorithm) (None if cancelled)."""
    rep, name = spec.chunks[i]
    sw = dpviz.sweeps.sweep(ds.X, spec.k, algorithms={name: param_values(spec.params_of(name))},
                            epsilons=spec.epsilons, delta=spec.delta, radius=spec.radius,
                            n_declared=spec.n_declared, reps=spec.reps, rng=spec.seed,
                            labels=ds.labels, true_centers=ds.true_centers,
                            reference_cost=reference_cost, only_reps=[rep], cancel=cancel,
                            progress=progress)
    return sw.frame if sw.complete else None
