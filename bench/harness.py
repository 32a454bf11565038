"""One evaluation harness for every bench that compares clustering algorithms (issue 24).

Why: the peers, auto-grid and Balcan benches gave the data generator and the algorithm the same
int seed, so DP-Lloyd's public start was the true centers and every table built from them was
contaminated. Here every stream is spawned from its own key, and scoring lives in one place:

* **Streams.** For a run (row, seed, algorithm), the data come from
  ``SeedSequence(seed, spawn_key=(key("harness:data:<row>"),))``, the algorithm from
  ``key("harness:algorithm:<label>:<row>")`` and the reference k-means from
  ``key("harness:reference:<row>")`` (``key`` = :func:`dpviz._validation.stable_int`, SHA-256).
  The harness passes Generators, so this holds whatever the library does with an int.
* **Loss.** Relative excess k-means loss ``cost(centers) / cost(reference) − 1`` on the data as
  run (clipped to the declared ball); the reference is :func:`dpviz.metrics.reference_kmeans`
  (best of 10 k-means++ restarts; issue 35).
* **⊥.** A failed run (no centers) is scored as the fallback answer *one center at the origin*
  (the trivial release, free of privacy cost) and counted in ``bottom``; a run that raises
  (infeasible budget) is scored the same way and counted in ``error``.
* **Time.** A ratio to one ``KMeans(n_init=1)`` fitted on the same data in the same process:
  median over interleaved repeats (KMeans, algorithm, KMeans, algorithm, …); the load average is
  printed beside every timing (:func:`load_text`).
* **Google.** If ``bench/google_dp.py`` exists (helper "hd"'s adapter to Google's DP clustering,
  run from its source) its ``run(X, k, epsilon, delta, radius, rng) -> centers`` is a column;
  otherwise that column says "not run".

Rows: the evaluation rows of issue 24 (``EVAL_ROWS``; never used for calibration) and the
calibration recipes (:mod:`bench.auto_calibrate`). Use::

    from bench.harness import Runner, EVAL_ROWS
    runner = Runner(epsilons=(1.0, 3.0), delta=1e-6)
    records = runner.run_row(EVAL_ROWS["unbal"], seeds=(0, 1, 2), algorithms=["auto", "dp_lloyd"])
    print(format_table(summarize(records)))
"""

from __future__ import annotations

import dataclasses
import importlib
import math
import os
import signal
import statistics
import subprocess
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from sklearn.cluster import KMeans

import dpviz
from dpviz._validation import stable_int
from dpviz.data import load_builtin
from dpviz.data.ball_mixture import ball_mixture
from dpviz.data.bounds import clip_to_ball
from dpviz.metrics import kmeans_cost, reference_kmeans

DELTA = 1e-6

# ----------------------------------------------------------------------------- streams


def stream(seed: int, *parts: str) -> np.random.Generator:
    """The Generator of one consumer: ``SeedSequence(seed, spawn_key=(key("harness:…"),))``."""
    key = ":".join(("harness", *parts))
    return np.random.default_rng(np.random.SeedSequence(int(seed), spawn_key=(stable_int(key),)))


def algorithm_stream(seed: int, label: str, row: str, eps: float, draw: int = 0) -> np.random.Generator:
    """The algorithm's stream for one draw: draw 0 is ``harness:algorithm:<label>:<row>:<ε>``,
    draw j ≥ 1 appends ``:draw<j>`` (independent of the data's and the reference's)."""
    parts = ("algorithm", label, row, f"{eps:g}") + ((f"draw{draw}",) if draw else ())
    return stream(seed, *parts)


def p90(xs: Sequence[float]) -> float:
    """The 90th percentile (numpy's linear interpolation; a stopped run's inf stays inf): the risk
    measure of issue 35."""
    a = np.asarray(list(xs), dtype=np.float64)
    if a.size == 0:
        return math.nan
    with np.errstate(invalid="ignore"):
        q = float(np.percentile(a, 90))  # linear interpolation; inf − inf (a stopped run) → inf
    return math.inf if math.isnan(q) else q


def load_text() -> str:
    """The 1/5/15-minute load average and the core count, printed beside any timing."""
    a, b, c = os.getloadavg()
    return f"load average {a:.2f} {b:.2f} {c:.2f} on {os.cpu_count()} cores"


def commit() -> str:
    """The current git commit (short), '+dirty' when the tree has changes: tables cite it."""
    try:
        head = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True,
                              check=True).stdout.strip()
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"],
                               capture_output=True, text=True, check=True).stdout.strip()
        return head + ("+dirty" if dirty else "")
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


# ----------------------------------------------------------------------------- rows


@dataclass(frozen=True)
class Row:
    """A dataset recipe: ``make(rng)`` returns (X clipped to the ball, k, Λ)."""

    name: str
    make: Callable[[np.random.Generator], tuple[np.ndarray, int, float]]
    description: str
    big: bool = False  # time it against KMeans in the goals' table

    def data(self, seed: int) -> tuple[np.ndarray, int, float]:
        X, k, radius = self.make(stream(seed, "data", self.name))
        return clip_to_ball(np.asarray(X, dtype=np.float64), radius), int(k), float(radius)


def mixture_row(name: str, n: int, d: int, k: int, *, ratio: float = 8.0,
                weights: Sequence[float] | None = None, big: bool = False) -> Row:
    """Google's synthetic recipe (:func:`dpviz.data.ball_mixture.ball_mixture`), Λ = 1."""
    def make(rng: np.random.Generator) -> tuple[np.ndarray, int, float]:
        return ball_mixture(n, d=d, k=k, ratio=ratio, weights=weights, rng=rng).X, k, 1.0
    w = "" if weights is None else f", weights {':'.join(f'{x:g}' for x in weights)}"
    return Row(name, make, f"ball mixture n={n:,} d={d} k={k} ratio={ratio:g}{w}", big)


def builtin_row(name: str, *, center: bool = False) -> Row:
    """A bundled table as the app gives it (standardized to the box, Λ = √d); ``center`` also
    subtracts the column means (a public preprocessing choice, not a private one)."""
    def make(rng: np.random.Generator) -> tuple[np.ndarray, int, float]:
        ds = load_builtin(name)
        X = ds.X - ds.X.mean(axis=0) if center else ds.X
        return X, int(ds.k), float(ds.radius)
    suffix = "_centred" if center else ""
    return Row(name + suffix, make, f"built-in {name}" + (" (centred)" if center else ""))


#: Issue 24's evaluation rows: Google's three recipe rows and the bundled tables. Never used to
#: calibrate ``auto`` (bench/auto_calibrate.py uses other recipes).
EVAL_ROWS: dict[str, Row] = {
    "google": mixture_row("google", 100_000, 100, 64, big=True),
    "unbal": mixture_row("unbal", 200_000, 10, 5, weights=(1, 10, 100, 10, 1), big=True),
    "large": mixture_row("large", 1_000_000, 20, 16, big=True),
    "iris": builtin_row("iris"),
    "digits": builtin_row("digits"),
    "breast_cancer": builtin_row("breast_cancer"),
    "wine": builtin_row("wine"),
    # held out: shapes no calibration recipe has
    "held_mid": mixture_row("held_mid", 50_000, 50, 32, ratio=6.0),
    "held_unbal": mixture_row("held_unbal", 30_000, 30, 10, ratio=10.0,
                              weights=(1, 2, 4, 8, 16, 32, 16, 8, 4, 2)),
}

#: Google's DP clustering medians on its three rows (ε = 1, ε = 3) as quoted in issue 24 (run
#: from its source by the issue's reporter, δ = 1e-6, median of 3 data seeds).
GOOGLE_QUOTED = {"google": (3.35, 1.10), "unbal": (0.154, 0.147), "large": (0.11, 0.026)}


# ----------------------------------------------------------------------------- algorithms


def parse_label(label: str) -> tuple[str, dict[str, Any]]:
    """``"dp_lloyd[iters=1]"`` → ("dp_lloyd", {"iters": 1}); values parsed as int/float/bool/str."""
    if "[" not in label:
        return label, {}
    name, rest = label.split("[", 1)
    params: dict[str, Any] = {}
    for part in rest.rstrip("]").split(","):
        if not part.strip():
            continue
        key, value = part.split("=", 1)
        params[key.strip()] = _parse_value(value.strip())
    return name, params


def _parse_value(v: str) -> Any:
    if v in ("True", "False"):
        return v == "True"
    for cast in (int, float):
        try:
            return cast(v)
        except ValueError:
            pass
    return v


def make_label(name: str, params: dict[str, Any]) -> str:
    return name if not params else name + "[" + ",".join(f"{k}={v}" for k, v in sorted(params.items())) + "]"


def google_adapter() -> Callable[..., np.ndarray] | None:
    """``bench.google_dp.run`` if helper "hd"'s adapter is present, else None ("not run")."""
    try:
        mod = importlib.import_module("bench.google_dp")
    except ImportError:
        return None
    return getattr(mod, "run", None)


# ----------------------------------------------------------------------------- scoring


def reference_cost(X: np.ndarray, k: int, rng: np.random.Generator) -> float:
    """The strong reference (:func:`dpviz.metrics.reference_kmeans`, issue 35: best of 10
    k-means++ restarts), seeded from the reference stream."""
    return reference_kmeans(X, k, rng=rng).cost


def excess_loss(X: np.ndarray, centers: np.ndarray | None, ref: float) -> float:
    """Relative excess k-means loss; ⊥ (None) scored as one center at the origin."""
    if centers is None or len(centers) == 0:
        centers = np.zeros((1, X.shape[1]))
    return float(kmeans_cost(X, centers) / ref - 1.0)


def kmeans_seconds(X: np.ndarray, k: int, seed: int = 0) -> float:
    t0 = time.perf_counter()
    KMeans(k, n_init=1, random_state=seed).fit(X)
    return time.perf_counter() - t0


class RunTimeoutError(Exception):
    """A run stopped by the harness's deadline."""


class _Deadline:
    """SIGALRM after ``seconds`` (None: no deadline); main thread only."""

    def __init__(self, seconds: float | None) -> None:
        self.seconds = seconds

    def __enter__(self) -> None:
        if self.seconds is not None:
            signal.signal(signal.SIGALRM, self._raise)
            signal.setitimer(signal.ITIMER_REAL, self.seconds)

    def __exit__(self, *exc: object) -> None:
        if self.seconds is not None:
            signal.setitimer(signal.ITIMER_REAL, 0)

    @staticmethod
    def _raise(signum: int, frame: object) -> None:
        raise RunTimeoutError


@dataclass
class Record:
    """One run: row, data seed, algorithm label, ε; loss (⊥ scored as the origin), flags, time."""

    row: str
    seed: int
    label: str
    epsilon: float
    loss: float
    bottom: bool = False
    error: str = ""
    time_ratio: float | None = None
    seconds: float | None = None
    chosen: str = ""
    extra: dict[str, Any] = field(default_factory=dict)
    draw: int = 0


@dataclass
class Runner:
    """Runs algorithms on rows with separated streams and scores them in one place."""

    epsilons: Sequence[float] = (1.0, 3.0)
    delta: float = DELTA
    n_declared_public: bool = True  # pass n as public (no ε spent on a count), as the peers do
    time_repeats: int = 0  # 0: no timing; r ≥ 1: median of r interleaved (KMeans, algorithm) pairs
    verbose: bool = True
    #: Stop a run after max(3 s, timeout_factor × one KMeans) (None: never); it is recorded with
    #: error "timeout" and loss inf (slower than that, it could not be auto's choice anyway).
    timeout_factor: float | None = None
    timed: Sequence[str] = ()  # labels timed with ``time_repeats`` (empty: all)
    #: Independent algorithm draws per (data seed, ε, label) (issue 35: medians of three hid the
    #: spread); draw j ≥ 1 takes the stream key ``…:draw<j>``, draw 0 the historical one.
    draws: int = 1
    #: The first draw's index: a later batch (``first_draw`` = the earlier batch's ``draws``) adds
    #: new independent draws to it without repeating any stream (issue 44: more draws for every label).
    first_draw: int = 0

    def run_one(self, X: np.ndarray, k: int, radius: float, label: str, eps: float,
                rng: np.random.Generator) -> tuple[np.ndarray | None, str, str]:
        """(centers or None, error text, auto's choice) of one run."""
        if label == "google":
            fn = google_adapter()
            if fn is None:
                raise RuntimeError("google adapter not present")
            return fn(X, k, epsilon=eps, delta=self.delta, radius=radius, rng=rng), "", ""
        name, params = parse_label(label)
        try:
            res = dpviz.run(name, X, k, epsilon=eps, delta=self.delta, radius=radius, rng=rng,
                            n_declared=X.shape[0] if self.n_declared_public else None, **params)
        except ValueError as exc:
            return None, str(exc)[:80], ""
        chosen = ""
        if name == "auto":
            step = res.find("auto_choice")
            chosen = make_label(step.data["algorithm"], step.data["cell"].get("params", {})) if step else ""
        return (res.centers if res.ok else None), "", chosen

    def run_row(self, row: Row, seeds: Iterable[int], algorithms: Sequence[str],
                on_record: Callable[[Record], None] | None = None) -> list[Record]:
        out: list[Record] = []
        for seed in seeds:
            X, k, radius = row.data(seed)
            ref = reference_cost(X, k, stream(seed, "reference", row.name))
            self._t_km = kmeans_seconds(X, k, seed=seed)
            for eps in self.epsilons:
                for label in algorithms:
                    if label == "google" and google_adapter() is None:
                        continue
                    for draw in range(self.first_draw, self.first_draw + self.draws):
                        rec = self._measure(row, seed, X, k, radius, ref, label, eps, draw)
                        out.append(rec)
                        if on_record is not None:
                            on_record(rec)
        return out

    def _measure(self, row: Row, seed: int, X: np.ndarray, k: int, radius: float, ref: float,
                 label: str, eps: float, draw: int = 0) -> Record:
        def rng() -> np.random.Generator:
            return algorithm_stream(seed, label, row.name, eps, draw)
        t0 = time.perf_counter()
        try:
            # Google's library is a column, never auto's candidate: it is never stopped (a stopped
            # run scores inf, which would make "auto below Google" hold for free).
            with _Deadline(None if self.timeout_factor is None or label == "google"
                           else max(3.0, self.timeout_factor * getattr(self, "_t_km", 1.0))):
                centers, err, chosen = self.run_one(X, k, radius, label, eps, rng())
        except RunTimeoutError:
            centers, err, chosen = None, "timeout", ""
        secs = time.perf_counter() - t0
        ratio = None
        if err == "timeout":
            rec = Record(row.name, seed, label, eps, math.inf, error=err, seconds=secs)
            if self.verbose:
                print(f"  {row.name:<14} seed {seed} ε={eps:g} {label:<28} stopped after {secs:.1f}s "
                      f"(> {self.timeout_factor:g}× KMeans)", flush=True)
            return rec
        if self.time_repeats > 0 and draw == 0 and (not self.timed or label in self.timed):
            km, alg = [], []
            for r in range(self.time_repeats):  # interleaved: KMeans, algorithm, KMeans, ...
                km.append(kmeans_seconds(X, k, seed=r))
                t0 = time.perf_counter()
                self.run_one(X, k, radius, label, eps, rng())
                alg.append(time.perf_counter() - t0)
            ratio = statistics.median(alg) / statistics.median(km)
            secs = statistics.median(alg)
        rec = Record(row.name, seed, label, eps, excess_loss(X, centers, ref),
                     bottom=centers is None and not err, error=err, time_ratio=ratio, seconds=secs,
                     chosen=chosen, draw=draw)
        if self.verbose:
            t = f" time {ratio:.2f}× KMeans" if ratio is not None else f" {secs:.1f}s"
            flag = " ⊥→origin" if rec.bottom else (" error→origin" if err else "")
            print(f"  {row.name:<14} seed {seed} ε={eps:g} {label:<28} loss {rec.loss:10.4g}{flag}{t}"
                  + (f" [{chosen}]" if chosen else ""), flush=True)
        return rec


# ----------------------------------------------------------------------------- summaries


def summarize(records: Sequence[Record]) -> dict[tuple[str, float, str], dict[str, Any]]:
    """(row, ε, label) → median loss over seeds, ⊥/error counts, median time ratio, choices."""
    groups: dict[tuple[str, float, str], list[Record]] = {}
    for r in records:
        groups.setdefault((r.row, r.epsilon, r.label), []).append(r)
    out = {}
    for key, rs in groups.items():
        times = [r.time_ratio for r in rs if r.time_ratio is not None]
        out[key] = dict(loss=statistics.median(r.loss for r in rs), p90=p90([r.loss for r in rs]), n=len(rs),
                        bottom=sum(r.bottom for r in rs), error=sum(bool(r.error) for r in rs),
                        time_ratio=statistics.median(times) if times else None,
                        chosen=sorted({r.chosen for r in rs if r.chosen}))
    return out


def best_of(summary: dict, row: str, eps: float,
            exclude: Iterable[str] = ("auto", "google")) -> tuple[str, float]:
    """The registered algorithm (label) with the lowest median loss on (row, ε)."""
    ex = set(exclude)
    cands = [(v["loss"], lab) for (r, e, lab), v in summary.items()
             if r == row and e == eps and parse_label(lab)[0] not in ex]
    loss, lab = min(cands)
    return lab, loss


def format_table(summary: dict) -> str:
    """Markdown: one line per (row, ε, label)."""
    lines = ["| row | ε | algorithm | median loss | ⊥ | errors | time / KMeans | auto's choice |",
             "|---|---|---|---|---|---|---|---|"]
    for (row, eps, lab), v in sorted(summary.items(), key=lambda kv: (kv[0][0], kv[0][1], kv[1]["loss"])):
        t = "" if v["time_ratio"] is None else f"{v['time_ratio']:.2f}"
        lines.append(f"| {row} | {eps:g} | {lab} | {v['loss']:.4g} | {v['bottom']}/{v['n']} | "
                     f"{v['error']} | {t} | {', '.join(v['chosen'])} |")
    return "\n".join(lines)


def records_to_json(records: Sequence[Record]) -> list[dict[str, Any]]:
    return [dataclasses.asdict(r) for r in records]


def fmt(x: float | None) -> str:
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "—"
    return f"{x:.3g}"
