"""The command line: a private release of a table on disk, at a row-level (ε, δ).

    python -m dpviz run PATH --k K --epsilon E --delta D --radius R --n-declared N \\
        --out release.json [--algorithm NAME] [--scheduler ADDRESS] [--columns a,b,c]
    python -m dpviz list
    python -m dpviz ledger list
    python -m dpviz ledger show NAME
    python -m dpviz app [--port N] [--classroom]     # the web app (dpviz.serve; needs [app])

``run`` reads a Parquet or CSV file (or a directory of them), runs a registered private algorithm
so that adding or removing one row changes its output by at most (ε, δ) (the registry's
calibration), and writes the release: a JSON file (centres, the row-level statement, the ledger,
the public inputs and parameters; never a seed or anything computed from the data without
noise) and an HTML report of its figures that works offline.

Small tables run in memory through :func:`dpviz.run`; large ones (declared size × d above
:data:`IN_MEMORY_MAX_CELLS`, a public rule) or any run with ``--scheduler`` go through the
streamed path (:mod:`dpviz.large`: FriendlyCore, DP-Lloyd, and auto when its public choice is one of
them). The noise comes from :func:`_release_rng` (the
release sampler, ``dpviz.privacy.release.SecureRNG``); a run that would be a simulation is refused.

Exit codes: 0 released, 2 bad input or a failed run (one line on stderr), 130 interrupted (Ctrl-C).

Faults (issue 29): the output location is checked before any row is read (a missing directory, a
parent that is a file, a directory without write permission, an existing path that is not a
regular file such as ``/dev/full``); the release JSON and the report are written to temporary
files in the output directory and renamed only when both are complete, so a full disk or any
failure leaves no partial output. A file changed mid-read (:class:`dpviz.large.source.
SourceChangedError`), an unreachable or lost Dask scheduler (:class:`dpviz.large.engine.ClusterError`)
end in one line and exit 2; a worker lost mid-run is recomputed by Dask and changes nothing.

Booking (issue 34, findings B–D): a release needs ``--dataset-id NAME`` (the table's declared
identity), or ``--unbooked``, an explicit opt-out that the release JSON records
(``booking.booked: false``). With an identity, the attempt is written to the persistent ledger
(:class:`dpviz.privacy.ledger_store.LedgerStore`, ``$DPVIZ_LEDGER_DIR``) at its full row-level
target BEFORE the first row is read (write-ahead), then marked ``release`` (at the plan's
guarantee, before the files are renamed into place: a release that cannot be booked is not
published), ``failed`` (a bad value mid-file, a changed file, a lost cluster, a full disk),
``cancelled`` (Ctrl-C) or ``refused``. A process killed outright (SIGKILL, a power cut) leaves
the attempt open: it still counts at its full target and ``ledger show`` says "interrupted". A
new identity close to a known one (punctuation, dashes, a trailing dot, ``.csv``, or ≤ 2 edits)
is refused before anything runs ("did you mean …"), unless ``--new-identity`` says it is new.
``ledger list`` / ``ledger show NAME`` print the known identities and one identity's attempts:
the operator's view of every identity on the server (the web app shows a session only the
identities it typed or booked, issue 46). With ``$DPVIZ_LEDGER_DSN`` set, every command uses the
PostgreSQL ledger several hosts share (:class:`dpviz.privacy.ledger_store.PostgresLedgerStore`).

Test hook: when ``DPVIZ_TEST_PAUSE_AFTER_READ`` is set (seconds), an in-memory run prints one
line and sleeps for that long right after the rows are read (the write-ahead booking is then on
disk), so a test can kill the process mid-run deterministically. Unset, it does nothing.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import math
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

from dpviz.privacy.release import NOT_RELEASED, SAMPLER_TEXT, SAMPLERS  # one text for every export

#: Above this many declared cells (n_declared × d) a streamable algorithm streams (float64: 160 MB).
IN_MEMORY_MAX_CELLS = 20_000_000


EXIT_BAD_INPUT = 2
EXIT_INTERRUPTED = 130


def _release_rng() -> Any:
    """The sampler every CLI release draws its noise (and its piece key) from: the release
    sampler :class:`dpviz.privacy.release.SecureRNG` (OpenDP's floating-point-safe Gaussian,
    Laplace and noisy max on a CSPRNG; Binomial draws and other randomness from a numpy PCG64
    seeded from fresh OS entropy, ``dpviz.privacy.release.SAMPLERS``; no seed exists to store)."""
    from dpviz.privacy.release import SecureRNG

    return SecureRNG()


class _Progress:
    """Progress lines on stderr, at most one per second (and always the last of a pass)."""

    def __init__(self, quiet: bool) -> None:
        self.quiet, self.t0, self.last = quiet, time.monotonic(), -math.inf

    def __call__(self, msg: str) -> None:
        now = time.monotonic()
        parts = msg.rsplit(" ", 1)
        final = len(parts) == 2 and "/" in parts[1] and parts[1].split("/")[0] == parts[1].split("/")[1]
        if self.quiet or (now - self.last < 1.0 and not final):
            return
        self.last = now
        print(f"[dpviz {now - self.t0:7.1f}s] {msg}", file=sys.stderr, flush=True)


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="dpviz", description="Differentially private clustering releases.")
    sub = p.add_subparsers(dest="command", required=True)
    r = sub.add_parser("run", help="release private centres of a Parquet/CSV file or directory")
    r.add_argument("path", help="a .parquet/.pq/.csv file or a directory of them")
    r.add_argument("--k", type=int, required=True, help="number of centres")
    r.add_argument("--epsilon", type=float, required=True, help="row-level ε (add/remove one row)")
    r.add_argument("--delta", type=float, required=True, help="row-level δ")
    r.add_argument("--radius", type=float, required=True, help="declared ℓ2 bound Λ of the rows "
                   "(rows outside are dropped)")
    r.add_argument("--n-declared", type=int, required=True, help="declared (public) number of rows")
    r.add_argument("--out", required=True, help="the release JSON to write")
    r.add_argument("--report", help="the HTML report (default: the --out path with .html)")
    r.add_argument("--algorithm", default="auto", help="a registered algorithm (dpviz list); default "
                   "auto: chosen from the public inputs")
    r.add_argument("--columns", help="comma-separated numeric columns (default: all)")
    r.add_argument("--scheduler", help="a Dask scheduler address (tcp://host:8786): run the chunk "
                   "and piece work on that cluster")
    r.add_argument("--mode", choices=("auto", "memory", "stream"), default="auto",
                   help="in memory, streamed, or by the declared size (auto)")
    r.add_argument("--n-jobs", type=int, help="local threads (default: every core)")
    r.add_argument("--chunk-rows", type=int, help="rows per chunk when streaming")
    r.add_argument("--param", action="append", default=[], metavar="NAME=VALUE",
                   help="an algorithm parameter (repeatable), e.g. --param n_tuples=200")
    r.add_argument("--public", metavar="PATH", help="records you declare PUBLIC (same columns; e.g. a "
                   "held-out split) for an algorithm that uses them (kernel_kmeans: its k initial "
                   "centres). They get no privacy and must not be rows of PATH")
    r.add_argument("--dataset-id", metavar="NAME", help="the table's declared identity (e.g. 'customers "
                   "2026-Q1'), required unless --unbooked: the attempt is booked under it in the "
                   "persistent ledger ($DPVIZ_LEDGER_DIR) before any row is read, releases and "
                   "failures alike")
    r.add_argument("--unbooked", action="store_true", help="run WITHOUT booking the attempt in any "
                   "persistent ledger (its spend composes with nothing); the release JSON records it")
    r.add_argument("--new-identity", action="store_true", help="--dataset-id is a new table although "
                   "its name is close to a known identity (otherwise refused: did you mean …)")
    r.add_argument("--quiet", action="store_true", help="no progress on stderr")
    sub.add_parser("list", help="list the registered algorithms")
    _ledger_parser(sub)
    from dpviz import serve  # `dpviz app`: the web app (issue 37)

    serve.add_parser(sub)
    return p


def _ledger_parser(sub: Any) -> None:
    """``ledger list`` and ``ledger show NAME`` (the persistent ledger, ``$DPVIZ_LEDGER_DIR``)."""
    lg = sub.add_parser("ledger", help="the persistent release ledger: known identities, attempts")
    lsub = lg.add_subparsers(dest="ledger_command", required=True)
    lsub.add_parser("list", help="every known dataset identity with its composed total")
    show = lsub.add_parser("show", help="every attempt booked on one dataset identity")
    show.add_argument("name", help="the declared dataset identity")


def _parse_params(items: list[str], spec: Any) -> dict[str, Any]:
    """NAME=VALUE pairs cast to the type of the spec's parameter field."""
    fields = {f.name: f for f in dataclasses.fields(spec.params)}
    out: dict[str, Any] = {}
    for item in items:
        name, sep, value = item.partition("=")
        if not sep or name not in fields:
            raise ValueError(f"--param {item!r}: expected NAME=VALUE with NAME one of {sorted(fields)}.")
        default = fields[name].default
        try:
            if isinstance(default, bool):
                if value.lower() not in ("true", "false", "1", "0"):
                    raise ValueError
                out[name] = value.lower() in ("true", "1")
            elif isinstance(default, int):
                out[name] = int(value)
            elif isinstance(default, float):
                out[name] = float(value)
            else:
                out[name] = value
        except ValueError:
            kind = type(default).__name__
            raise ValueError(f"--param {item!r}: {value!r} is not a valid {kind}.") from None
    return out


def _jsonable(v: Any) -> Any:
    if isinstance(v, dict):
        return {str(k): _jsonable(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [_jsonable(x) for x in v]
    if isinstance(v, np.ndarray):
        return _jsonable(v.tolist())
    if isinstance(v, (np.integer,)):
        return int(v)
    if isinstance(v, (np.floating, float)):
        return float(v) if math.isfinite(v) else None
    if isinstance(v, (str, int, bool)) or v is None:
        return v
    return str(v)


def release_document(res: Any, spec: Any, args: argparse.Namespace, params: Any, d: int,
                     columns: tuple[str, ...], mode: str, booking: dict[str, Any] | None = None
                     ) -> dict[str, Any]:
    """The release: private output, the row-level statement, the ledger and public inputs only.

    ``booking`` says where the attempt is booked (``{"booked": True, "dataset_id": …}``) or that
    it is not (``{"booked": False, …}``, the command line's ``--unbooked``)."""
    from dpviz.privacy.release import produced_by

    the_plan = res.plan  # the run's one budget plan: the statement is its guarantee and lines
    g = the_plan.guarantee
    run_params = {k: v for k, v in dict(res.params).items() if k not in NOT_RELEASED}
    return _jsonable({
        "format": "dpviz-release/1",
        "algorithm": {"name": spec.name, "title": spec.title, "paper": spec.paper},
        "centers": res.centers,
        "failure": res.failure,
        "produced_by": produced_by(res),
        "statement": {
            "epsilon": g.eps, "delta": g.delta,
            "unit": "one row of the input table (add/remove neighbours)",
            "target": {"epsilon": args.epsilon, "delta": args.delta},
            "text": f"({g.eps:.4g}, {g.delta:.3g})-differentially private for adding or removing "
                    "one row, given the declared bounds below.",
            "delta_prime": the_plan.delta_prime,
            "lines": list(the_plan.lines),
            "plan": the_plan.as_dict(),
        },
        "public_inputs": {"k": args.k, "radius": args.radius, "n_declared": args.n_declared, "d": d,
                          "columns": list(columns)},
        # Every public input is stated on the command line (issue 25, finding 4).
        "provenance": {name: {"source": "declared", "note": "command line"}
                       for name in ("k", "radius", "n", "columns")},
        "parameters": {"algorithm": dataclasses.asdict(params), "run": run_params, "mode": mode},
        "sampler": SAMPLER_TEXT,
        "samplers": dict(SAMPLERS),
        "ledger": res.ledger.to_rows(),
        "ledger_total": {"rho": res.ledger.total().rho, "delta": res.ledger.total().delta},
        **({"booking": booking} if booking is not None else {}),
    })


def write_report(doc: dict[str, Any], res: Any, path: Path) -> None:
    """Write :func:`report_html` to ``path`` (atomically)."""
    _atomic_write(path, report_html(doc, res))


def report_html(doc: dict[str, Any], res: Any) -> str:
    """An offline HTML page (plotly.js inlined): the released centres and the ledger."""
    import plotly.graph_objects as go

    figs = []
    C = None if res.centers is None else np.asarray(res.centers)
    radius = doc["public_inputs"]["radius"]
    cols = doc["public_inputs"]["columns"]
    if C is not None:
        if C.shape[1] >= 2:
            fig = go.Figure(go.Scatter(x=C[:, 0], y=C[:, 1], mode="markers+text", text=[str(i) for i in
                                       range(len(C))], textposition="top center",
                                       marker=dict(size=12, symbol="x"), name="released centres"))
            th = np.linspace(0, 2 * np.pi, 200)
            fig.add_trace(go.Scatter(x=radius * np.cos(th), y=radius * np.sin(th), mode="lines",
                                     line=dict(dash="dot", color="grey"), name="Λ-ball"))
            fig.update_layout(title=f"Released centres ({cols[0]}, {cols[1]})", xaxis_title=cols[0],
                              yaxis_title=cols[1], yaxis_scaleanchor="x")
        else:
            fig = go.Figure(go.Scatter(x=C[:, 0], y=np.zeros(len(C)), mode="markers",
                                       marker=dict(size=12, symbol="x")))
            fig.update_layout(title=f"Released centres ({cols[0]})")
        figs.append(fig)
        if C.shape[1] > 2:
            figs.append(go.Figure(go.Heatmap(z=C, x=cols, y=[f"centre {i}" for i in range(len(C))],
                                             colorscale="RdBu", zmid=0),
                                  layout=dict(title="Released centres, every coordinate")))
    figs.append(_ledger_sunburst(doc["ledger"], doc["ledger_total"]))
    s = doc["statement"]
    head = (f"<h1>dpviz release: {doc['algorithm']['title']}</h1><p>{s['text']}</p>"
            f"<p>Public inputs: {json.dumps(doc['public_inputs'])}</p>"
            + (f"<p><b>Failure:</b> {doc['failure']}</p>" if doc["failure"] else ""))
    body = [f.to_html(full_html=False, include_plotlyjs=(i == 0)) for i, f in enumerate(figs)]
    return ("<!doctype html><html><head><meta charset='utf-8'><title>dpviz release</title></head><body>"
            + head + "".join(body) + "</body></html>")


def _ledger_sunburst(rows: list[dict[str, Any]], total: dict[str, float]) -> Any:
    """The ledger rows as a sunburst (area = share of ρ; hover: ρ, δ, σ, unit, mechanism).

    Built here from ``Ledger.to_rows()`` (the CLI sits below dpviz.viz in the import layers).
    """
    import plotly.graph_objects as go

    def fmt(v: Any) -> str:
        return "–" if v is None else f"{v:.4g}"

    custom = [[fmt(r["rho"]), fmt(r["delta"]), fmt(r["noise_scale"]), r["unit"], r["mechanism"]]
              for r in rows]
    trace = go.Sunburst(ids=[r["id"] for r in rows], labels=[r["label"] for r in rows],
                        parents=[r["parent"] for r in rows], values=[max(r["rho"] or 0.0, 0.0) for r in rows],
                        branchvalues="total", customdata=custom,
                        hovertemplate="<b>%{label}</b><br>ρ = %{customdata[0]}<br>δ = %{customdata[1]}"
                                      "<br>σ = %{customdata[2]}<br>unit: %{customdata[3]}"
                                      "<br>%{customdata[4]}<extra></extra>")
    return go.Figure(trace, layout=dict(title=f"Privacy ledger: ρ = {total['rho']:.4g}, "
                                              f"δ = {total['delta']:.3g} (area = share of ρ)"))


def _atomic_write(path: Path, text: str) -> None:
    _atomic_write_all({path: text})


def _atomic_write_all(files: dict[Path, str], before_publish: Any = None) -> None:
    """Write every file or none: each to a temporary file in its own directory, renamed over its
    path only once all of them are complete (a full disk or any error leaves no partial file).
    ``before_publish()`` runs between the two (the release's booking: if it fails, nothing is
    published)."""
    tmps: dict[Path, Path] = {}
    try:
        for path, text in files.items():
            fd, name = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".part")
            tmps[path] = Path(name)
            with os.fdopen(fd, "w", encoding="utf-8") as f:
                f.write(text)
                f.flush()
                os.fsync(f.fileno())
        if before_publish is not None:
            before_publish()
        for path, tmp in tmps.items():
            os.replace(tmp, path)
    finally:
        for tmp in tmps.values():
            tmp.unlink(missing_ok=True)


def check_output(path: Path) -> None:
    """Refuse an output location before any row is read: its directory must exist and take a new
    file, and the path itself, if it exists, must be a regular file (never a device or a
    directory: the atomic rename would replace it)."""
    parent = path.parent
    if not parent.exists():
        raise ValueError(f"The directory of {str(path)!r} does not exist.")
    if not parent.is_dir():
        raise ValueError(f"Cannot write {str(path)!r}: {str(parent)!r} is not a directory.")
    if path.exists() and not path.is_file():
        raise ValueError(f"Cannot write {str(path)!r}: it exists and is not a regular file.")
    try:  # the only reliable test of "can I create a file here" (permissions, read-only mounts)
        fd, probe = tempfile.mkstemp(dir=parent, prefix=f".{path.name}.", suffix=".probe")
        os.close(fd)
        os.unlink(probe)
    except OSError as exc:
        raise ValueError(f"Cannot write to {str(parent)!r}: {exc.strerror or exc}.") from exc


#: What an --unbooked release JSON says about its booking.
UNBOOKED = {"booked": False, "dataset_id": None,
            "note": "run with --unbooked: this attempt is booked in no persistent ledger, so its spend "
                    "composes with no other release of the same data; account for it yourself"}


def _near_match_error(name: str, near: list[str]) -> str:
    shown = ", ".join(repr(n) for n in near[:3])
    return (f"--dataset-id {name!r} is a new identity close to the known {shown}: did you mean "
            f"{near[0]!r}? A new name starts a new ledger at (0, 0). Give the known name, or add "
            "--new-identity if this really is another table. Nothing was read.")


def _native(the_plan: Any) -> Any:
    """The plan whose budget the ledger store keeps beside the booked cost (None: nothing to keep)."""
    return the_plan if the_plan is not None and the_plan.budget is not None else None


class _Attempt:
    """One run of the command line as the persistent ledger sees it: booked write-ahead at its
    full target just before the first row is read (:meth:`start`), then marked once."""

    def __init__(self) -> None:
        self.store: Any = None
        self.dataset_id: str | None = None
        self.algorithm = ""
        self.epsilon = self.delta = 0.0
        self.read = False
        self.booked = False
        self.id: str | None = None

    def open(self, args: argparse.Namespace, algorithm: str) -> None:
        """Check the identity and the ledger before anything is read (a failure here reads
        nothing, books nothing): an identity or --unbooked, no near-miss of a known identity,
        a readable and writable ledger."""
        self.algorithm, self.epsilon, self.delta = algorithm, float(args.epsilon), float(args.delta)
        if args.dataset_id is None:
            if not getattr(args, "unbooked", False):
                raise ValueError("a release needs --dataset-id NAME (the table's declared identity: the "
                                 "attempt is booked under it in the persistent ledger before any row is "
                                 "read), or --unbooked to run without booking (the release JSON then "
                                 "says so). Nothing was read.")
            return
        if getattr(args, "unbooked", False):
            raise ValueError("--unbooked and --dataset-id contradict each other: give one.")
        from dpviz.privacy.ledger_store import normalize_identity, open_store

        normalize_identity(args.dataset_id)  # ValueError: empty or too long
        store = open_store()  # $DPVIZ_LEDGER_DSN (PostgreSQL) or $DPVIZ_LEDGER_DIR (files)
        try:
            store.total(args.dataset_id)  # readable (a damaged file refuses, never under-counts)
            near = store.near_matches(args.dataset_id)
            store.ensure_writable()
        except OSError as exc:
            raise ValueError(f"The ledger {store.location!r} cannot be written "
                             f"({exc.strerror or exc}); nothing was read.") from exc
        if near and not getattr(args, "new_identity", False):
            raise ValueError(_near_match_error(args.dataset_id, near))
        self.store, self.dataset_id = store, args.dataset_id

    def start(self) -> None:
        """The rows are about to be read: book the attempt at its full target NOW (write-ahead),
        so a process killed from here on still leaves it in the ledger."""
        if self.store is not None and self.id is None:
            self.id = self.store.open_attempt(self.dataset_id, algorithm=self.algorithm,
                                              epsilon=self.epsilon, delta=self.delta, surface="cli")
        self.read = True

    def booking(self) -> dict[str, Any]:
        """What the release JSON says about the booking."""
        if self.store is None:
            return dict(UNBOOKED)
        return {"booked": True, "dataset_id": self.dataset_id, "attempt": self.id,
                "note": "booked write-ahead at the full target before any row was read, then marked "
                        "with its outcome (python -m dpviz ledger show NAME)"}

    def book(self, outcome: str, epsilon: float | None = None, delta: float | None = None,
             native: Any = None) -> bool:
        """Mark this attempt once with its outcome (if it was booked: an identity was declared);
        ``native``: a release's plan, so the store keeps its budget in the mechanism's terms."""
        if self.booked or not self.read or self.store is None or self.id is None:
            return False
        self.booked = True
        cost = {} if epsilon is None else {"epsilon": epsilon, "delta": delta}
        self.store.close_attempt(self.dataset_id, self.id, outcome, native=native, **cost)
        return True

    def book_failure(self, outcome: str) -> str:
        """Mark a failed or cancelled attempt; the words to append to the one-line message."""
        try:
            if self.book(outcome):
                return f" The attempt is booked in the ledger of {self.dataset_id!r}."
        except Exception as exc:  # the message still reaches the user; the booking error with it
            return (f" Marking the attempt FAILED ({str(exc).splitlines()[0] if str(exc) else exc!r}); "
                    "it stays booked at its full target.")
        return ""


def _pause_for_tests() -> None:
    """The documented test hook (module docstring): sleep after the rows are read, only when
    ``DPVIZ_TEST_PAUSE_AFTER_READ`` is set."""
    value = os.environ.get("DPVIZ_TEST_PAUSE_AFTER_READ", "").strip()
    if value:
        print("dpviz: test hook: rows read, pausing", file=sys.stderr, flush=True)
        time.sleep(float(value))


def _cmd_ledger(args: argparse.Namespace) -> int:
    """``ledger list`` / ``ledger show NAME`` on stdout."""
    from dpviz.privacy.ledger_store import COMPOSITION, open_store

    store = open_store()
    if args.ledger_command == "list":  # the operator's view: every identity (a session sees its own)
        names = store.identities()
        if not names:
            print(f"No dataset identity is booked in {store.location}.")
            return 0
        print(f"Dataset identities in {store.location} ({COMPOSITION}):")
        for name in names:
            es = store.entries(name)
            eps, delta = store.total(name)
            open_ = sum(e["outcome"] == "open" for e in es)
            extra = f", {open_} open or interrupted (counted in full)" if open_ else ""
            print(f"  {name}: {len(es)} attempt(s){extra}; total ε = {eps:.4g}, δ = {delta:.3g}")
        return 0
    if not store.known(args.name):
        near = store.near_matches(args.name)
        hint = f" Did you mean {near[0]!r}?" if near else ""
        raise ValueError(f"No attempt is booked on {args.name!r} in {store.location}.{hint}")
    ident = store.identity(args.name) or {}
    eps, delta = store.total(args.name)
    print(f"Dataset identity: {ident.get('declared', args.name)} (normalized: "
          f"{ident.get('normalized', '?')}; first booked {ident.get('time', '?')})")
    print(f"Total: ε = {eps:.4g}, δ = {delta:.3g} ({COMPOSITION}; an open or interrupted attempt "
          "counts at its full target)")
    for i, e in enumerate(store.entries(args.name), 1):
        state = {"running": "open: still running", "interrupted": "INTERRUPTED: its process ended "
                 "before marking it; counted as spent", "open": "open (booked on another host); "
                 "counted as spent"}.get(e.get("state", "closed"), e["outcome"])
        print(f"  {i:3d}. {e.get('time', '?')}  {e.get('surface', '?'):12s} {e.get('algorithm', '?')}: "
              f"ε = {float(e['epsilon']):.4g}, δ = {float(e['delta']):.3g} — {state}")
    return 0


def _cmd_list() -> int:
    from dpviz.large.run import STREAMED
    from dpviz.registry import algorithms

    for spec in algorithms():
        kind = ("non-private reference (no release)" if not spec.is_private
                else "private" if spec.releasable else "private, simulation only (no release)")
        streamed = (", streams" if spec.name in STREAMED
                    else ", streams when its choice does" if spec.name == "auto" else "")
        print(f"{spec.name:14s} {spec.title} [{kind}{streamed}]")
    return 0


def _big(args: argparse.Namespace, d: int) -> bool:
    """Stream when the declared table is large or a cluster is named (public inputs only)."""
    return args.n_declared * d > IN_MEMORY_MAX_CELLS or args.scheduler is not None


def _auto_sentence(args: argparse.Namespace, d: int) -> str:
    """auto's public choice and its reason (declared n, d, k, ε, δ only)."""
    from dpviz.clustering.auto import choose

    return choose(args.n_declared, d, args.k, args.epsilon, args.delta).sentence


def _cmd_run(args: argparse.Namespace, attempt: _Attempt | None = None) -> int:
    from dpviz.large.engine import make_engine
    from dpviz.large.run import STREAMED, run_stream, streamed_choice
    from dpviz.large.source import TableSource
    from dpviz.registry import get, run

    progress = _Progress(args.quiet)
    attempt = attempt if attempt is not None else _Attempt()
    spec = get(args.algorithm)
    if not spec.is_private:
        raise ValueError(f"{args.algorithm!r} is a non-private reference; a release needs a private "
                         "algorithm.")
    if not spec.releasable:
        raise ValueError(f"{args.algorithm!r} cannot draw its noise from the release sampler, so it "
                         "cannot make a release; see dpviz list.")
    params = _parse_params(args.param, spec)
    p = spec.make_params(**params)
    out = Path(args.out)
    report = Path(args.report) if args.report else out.with_suffix(".html")
    for f in (out, report):
        check_output(f)
    columns = [c.strip() for c in args.columns.split(",")] if args.columns else None
    src = TableSource(args.path, columns=columns,
                      **({"chunk_rows": args.chunk_rows} if args.chunk_rows else {}))
    mode = args.mode
    # A public rule: the declared size and d (never the file's row count); auto's choice is public too.
    streamed = streamed_choice(spec.name, args.n_declared, src.d, args.k, args.epsilon, args.delta)
    if mode == "auto":  # public records (--public) are an in-memory feature: they keep it in memory
        mode = "stream" if _big(args, src.d) and streamed is not None and not args.public else "memory"
    if mode == "stream" and streamed is None:
        raise ValueError(f"{spec.name!r} cannot stream on these inputs; streamed algorithms: "
                         f"{list(STREAMED)} (and auto when it chooses one of them).")
    if args.scheduler and mode != "stream":
        raise ValueError("--scheduler needs the streamed path (--mode stream).")
    if args.public and mode == "stream":
        raise ValueError("--public needs the in-memory path (--mode memory).")
    chosen = _auto_sentence(args, src.d) if spec.name == "auto" else None
    if chosen is not None:
        progress(chosen)
    attempt.open(args, spec.name)
    # A cluster is reached before any row is read (an unreachable scheduler reads and books nothing).
    engine = make_engine(args.scheduler) if args.scheduler else None
    attempt.start()  # write-ahead: booked at the full target before the first row is read
    progress(f"{spec.name}: {mode} run on {src!r}, row-level (ε={args.epsilon:g}, δ={args.delta:g})")
    rng = _release_rng()
    if mode == "stream":
        try:
            res = run_stream(src, args.k, epsilon=args.epsilon, delta=args.delta, radius=args.radius,
                             n_declared=args.n_declared, algorithm=spec.name, rng=rng, scheduler=engine,
                             n_jobs=args.n_jobs, progress=progress, **params)
        finally:
            if engine is not None:
                engine.close()
    else:
        X = src.read_all()
        _pause_for_tests()
        public_X = TableSource(args.public, columns=columns).read_all() if args.public else None
        progress("read into memory; running")
        res = run(spec.name, X, args.k, epsilon=args.epsilon, delta=args.delta, radius=args.radius,
                  rng=rng, n_declared=args.n_declared, public_X=public_X, **params)
    if res.simulation or res.seed is not None:  # never publish replayable noise
        attempt.book("refused")
        raise RuntimeError("dpviz run produced a simulation, not a release: a bug.")
    doc = release_document(res, spec, args, p, src.d, src.columns, mode, booking=attempt.booking())
    if chosen is not None:
        doc["parameters"]["auto_choice"] = chosen
    g = res.guarantee
    _atomic_write_all({out: json.dumps(doc, indent=1, ensure_ascii=False), report: report_html(doc, res)},
                      before_publish=lambda: attempt.book("release", g.eps, g.delta, _native(res.plan)))
    progress(f"wrote {out} and {report}")
    if attempt.store is None:  # --unbooked: said even with --quiet (never rate-limited away)
        print("dpviz: note: --unbooked: this release is booked in no persistent ledger (the release "
              "JSON says so)", file=sys.stderr, flush=True)
    if attempt.booked:
        eps, delta = attempt.store.total(attempt.dataset_id)
        progress(f"booked in the ledger of {attempt.dataset_id!r}: total ε = {eps:.4g}, δ = {delta:.3g} "
                 "(basic composition)")
    return 0


def main(argv: list[str] | None = None) -> int:
    """Run the command line; returns the exit code (0, 2 bad input, 130 interrupted)."""
    args = _parser().parse_args(argv)
    attempt = _Attempt()
    try:
        if args.command == "list":
            return _cmd_list()
        if args.command == "ledger":
            return _cmd_ledger(args)
        if args.command == "app":
            from dpviz import serve

            return serve.main(args)
        return _cmd_run(args, attempt)
    except KeyboardInterrupt:
        booked = attempt.book_failure("cancelled")
        print(f"dpviz: interrupted; nothing was released.{booked}", file=sys.stderr, flush=True)
        if argv is None:  # a program: do not wait for worker threads to finish their task
            sys.stdout.flush()
            os._exit(EXIT_INTERRUPTED)
        return EXIT_INTERRUPTED
    except (ValueError, OSError) as exc:  # bad input: one line, no traceback
        first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        booked = attempt.book_failure("failed")
        if booked and not first.endswith("."):
            first += "."
        print(f"dpviz: error: {first}{booked}", file=sys.stderr, flush=True)
        return EXIT_BAD_INPUT
    except Exception as exc:
        import pyarrow as pa

        booked = attempt.book_failure("failed") if not attempt.booked else ""
        if isinstance(exc, pa.ArrowException):  # e.g. a malformed CSV block found mid-file
            print(f"dpviz: error: cannot read the table: {str(exc).splitlines()[0]}{booked}", file=sys.stderr)
            return EXIT_BAD_INPUT
        raise
