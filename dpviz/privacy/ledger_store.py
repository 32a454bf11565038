"""A persistent ledger of release attempts, keyed by a dataset identity the user declares.

Every attempt that read the data is booked here, whatever its outcome (a release, a failure, a
cancelled run, a refusal after the data was read): each one is a run of a mechanism on the rows
and costs its full row-level (ε, δ) (an outcome the user observes is part of the output).
Attempts on one dataset compose by **basic composition**: ε and δ add (Dwork & Roth 2014,
Thm 3.16). That holds for any mix of algorithms, outcomes and adaptively chosen settings;
nothing tighter is claimed here.

The key is the dataset *identity* the user declares at release time (for example
``"customers 2026-Q1"``), normalized (Unicode NFKC, case-folded, runs of whitespace made one
space, trimmed). It is deliberately not a fingerprint of the rows: a shuffled copy, a row more or
less, reordered columns or another route to the same table (an upload, a server path, the command
line) are the same people and must not start a fresh (0, 0) total. Releases of the same table
under two different declared names do not compose: the declaration is the user's responsibility,
and the Release page says so.

Storage: one JSON-lines file per identity in a directory (``$DPVIZ_LEDGER_DIR``, else
``~/.dpviz/ledgers``), created on demand. The file's first line records the identity as new
(``"kind": "identity"``, with the declared and normalized names and the time); each attempt is
one appended line. Appends hold an exclusive ``flock`` on the file and write the line in one
``write`` call on an ``O_APPEND`` descriptor, so concurrent writers (several sessions, several
server processes, the command line) never interleave or lose a line. The files outlive the
server process. A line that cannot be read makes :meth:`LedgerStore.total` raise rather than
under-count the spend.

Write-ahead booking (issue 34, finding B): a run books its attempt with :meth:`LedgerStore.
open_attempt` at its full row-level target BEFORE the first row is read (an ``"attempt"`` line
with ``"outcome": "open"``, a random id, the process id and host), and marks it afterwards with
:meth:`LedgerStore.close_attempt` (an ``"outcome"`` line naming the attempt: released, failed,
refused or cancelled; a release may state its calibrated guarantee, never above the booked
target). An attempt never closed — its process was killed, the server stopped mid-run — stays
in the total at its full target and is shown as such (:func:`attempt_state`: "running" while its
process lives, "interrupted" once it is gone). Nothing is ever subtracted.

Native budgets (issue 38): every attempt line may also keep the budget the mechanism was run at, in
its own terms (``"native"``, :func:`native_budget`): ρ (with its own δ and the conversion's δ′) for
a zCDP mechanism, ε₀ for a pure ε-DP one, (ε, δ) otherwise, and the ε of a DP count when there was
one. A release marks it from its plan (:meth:`LedgerStore.close_attempt` with ``native=``). Nothing
composes it today (the total stays basic composition of the booked (ε, δ)); it is kept so a later,
tighter composition (e.g. summing ρ across zCDP attempts) needs no new file format. A line written
before native budgets existed reads as its booked (ε, δ) (``"kind": "approx"``).

Identities are keys, so a typo starts a new ledger: :meth:`LedgerStore.identities` lists the
known ones and :meth:`LedgerStore.near_matches` finds those a new name is close to (same letters
and digits once punctuation, dashes, a trailing dot and a ``.csv``-like extension are set aside,
or within edit distance 2), so every surface can say "did you mean …" before anything runs.
"""

from __future__ import annotations

import contextlib
import datetime as _dt
import hashlib
import json
import math
import os
import re
import socket
import unicodedata
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from dpviz.privacy.budget import ZCDP, ApproxDP
from dpviz.privacy.plan import BudgetPlan, own_budget

try:  # POSIX advisory locks; elsewhere O_APPEND's single write is the only guard
    import fcntl
except ImportError:  # pragma: no cover - Windows
    fcntl = None  # type: ignore[assignment]

ENV = "DPVIZ_LEDGER_DIR"
OUTCOMES = ("release", "failed", "cancelled", "refused")
#: The outcome of an attempt booked write-ahead and not (yet) marked: it counts at its full target.
OPEN = "open"
SURFACES = ("release-page", "server-path", "cli", "library")
#: How attempts compose (stated in every total the app shows).
COMPOSITION = "basic composition (ε and δ add; Dwork & Roth 2014, Thm 3.16)"
_MAX_ID = 200


def default_directory() -> Path:
    """``$DPVIZ_LEDGER_DIR`` if set (and non-empty), else ``~/.dpviz/ledgers``."""
    value = os.environ.get(ENV, "").strip()
    return Path(value).expanduser() if value else Path.home() / ".dpviz" / "ledgers"


def normalize_identity(dataset_id: str) -> str:
    """The declared identity as the store keys it: NFKC, case-folded, one space between words.

    Raises ValueError for an empty identity (after normalization) or one longer than 200
    characters.
    """
    if not isinstance(dataset_id, str):
        raise TypeError(f"dataset_id must be a str, got {type(dataset_id).__name__}.")
    text = unicodedata.normalize("NFKC", dataset_id).casefold()
    text = "".join(ch if ch.isprintable() else " " for ch in text)
    text = re.sub(r"\s+", " ", text).strip()
    if not text:
        raise ValueError("Declare the dataset's identity (a name for the table, e.g. 'customers 2026-Q1').")
    if len(text) > _MAX_ID:
        raise ValueError(f"The dataset identity is longer than {_MAX_ID} characters.")
    return text


def _filename(normalized: str) -> str:
    """A safe file name for a normalized identity: a readable slug and a hash (no collisions,
    no path separators, no ``..``)."""
    slug = re.sub(r"[^a-z0-9]+", "-", normalized.encode("ascii", "ignore").decode().lower()).strip("-")
    digest = hashlib.sha256(normalized.encode("utf-8")).hexdigest()[:16]
    return f"{slug[:40] or 'dataset'}-{digest}.jsonl"


#: The kinds of native budget a line may keep (:func:`native_budget`).
NATIVE_KINDS = ("zcdp", "pure", "approx")


def native_budget(budget: BudgetPlan | ZCDP | ApproxDP) -> dict[str, Any]:
    """An attempt's budget in its mechanism's own terms, as the store keeps it.

    A :class:`~dpviz.privacy.plan.BudgetPlan` gives its algorithm's own budget (a chooser's chosen
    one), the conversion's δ′ and the DP count's ε; a bare budget is taken as is. ZCDP →
    ``{"kind": "zcdp", "rho", "delta", "delta_prime"}``; pure ε-DP → ``{"kind": "pure",
    "epsilon"}``; (ε, δ)-DP → ``{"kind": "approx", "epsilon", "delta"}``; each with
    ``"count_epsilon"``. Raises ValueError for anything else (a non-private reference books no
    attempt).
    """
    delta_prime, count = 0.0, 0.0
    if isinstance(budget, BudgetPlan):
        delta_prime, count = float(budget.delta_prime), float(budget.count_eps)
        budget = own_budget(budget.budget)
    if isinstance(budget, ZCDP):
        out: dict[str, Any] = {"kind": "zcdp", "rho": float(budget.rho), "delta": float(budget.delta),
                               "delta_prime": delta_prime}
    elif isinstance(budget, ApproxDP) and budget.delta == 0.0:
        out = {"kind": "pure", "epsilon": float(budget.eps)}
    elif isinstance(budget, ApproxDP):
        out = {"kind": "approx", "epsilon": float(budget.eps), "delta": float(budget.delta)}
    else:
        raise ValueError(f"A native budget is a ZCDP or ApproxDP budget (or a plan of one); got {budget!r}.")
    return out | {"count_epsilon": count}


def _native_of(record: dict) -> dict[str, Any]:
    """The native budget a line keeps, or (an older line, or none was given) its booked (ε, δ)."""
    native = record.get("native")
    if isinstance(native, dict) and native.get("kind") in NATIVE_KINDS:
        return dict(native)
    return {"kind": "approx", "epsilon": record.get("epsilon"), "delta": record.get("delta"),
            "count_epsilon": 0.0}


def _now() -> str:
    return _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds")


@contextlib.contextmanager
def _locked(fd: int, exclusive: bool) -> Iterator[None]:
    if fcntl is None:  # pragma: no cover
        yield
        return
    fcntl.flock(fd, fcntl.LOCK_EX if exclusive else fcntl.LOCK_SH)
    try:
        yield
    finally:
        fcntl.flock(fd, fcntl.LOCK_UN)


class LedgerStore:
    """Every attempt on each declared dataset identity, on disk, composed per identity.

    Parameters
    ----------
    directory
        Where the per-identity files live; default :func:`default_directory`. Created on the
        first booking (reading an absent directory reports no attempts).
    """

    def __init__(self, directory: str | os.PathLike | None = None):
        self.directory = Path(directory).expanduser() if directory is not None else default_directory()

    def __repr__(self) -> str:
        return f"LedgerStore({str(self.directory)!r})"

    def path(self, dataset_id: str) -> Path:
        """The file holding ``dataset_id``'s attempts (it may not exist yet)."""
        return self.directory / _filename(normalize_identity(dataset_id))

    # ------------------------------------------------------------------ writing
    def ensure_writable(self) -> None:
        """Create the directory and check that bookings can be written, BEFORE a run reads the
        data (a run whose attempt cannot be booked must not start). Raises OSError otherwise."""
        self.directory.mkdir(mode=0o700, parents=True, exist_ok=True)
        if not os.access(self.directory, os.W_OK | os.X_OK):
            raise PermissionError(f"The ledger directory {self.directory} is not writable.")

    @staticmethod
    def _check(epsilon: float, delta: float, surface: str) -> tuple[float, float]:
        if surface not in SURFACES:
            raise ValueError(f"surface must be one of {', '.join(SURFACES)}; got {surface!r}.")
        eps, dlt = float(epsilon), float(delta)
        if not (math.isfinite(eps) and eps >= 0):
            raise ValueError(f"epsilon must be finite and ≥ 0; got {epsilon!r}.")
        if not (math.isfinite(dlt) and 0 <= dlt <= 1):
            raise ValueError(f"delta must lie in [0, 1]; got {delta!r}.")
        return eps, dlt

    def _append(self, dataset_id: str, lines: list[dict]) -> None:
        """Append ``lines`` to the identity's file in one locked ``write`` (the identity line
        first when the file is new), then ``fsync``."""
        normalized = normalize_identity(dataset_id)
        self.directory.mkdir(mode=0o700, parents=True, exist_ok=True)  # owner only
        path = self.directory / _filename(normalized)
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        try:
            with _locked(fd, exclusive=True):
                if os.fstat(fd).st_size == 0:  # first booking: the identity is new
                    lines = [{"kind": "identity", "time": lines[0]["time"], "declared": dataset_id,
                              "normalized": normalized, "note": "new dataset identity"}, *lines]
                data = "".join(json.dumps(x, ensure_ascii=False) + "\n" for x in lines).encode("utf-8")
                os.write(fd, data)
                os.fsync(fd)
        finally:
            os.close(fd)

    def book(self, dataset_id: str, *, algorithm: str, epsilon: float, delta: float,
             outcome: str, surface: str, native: BudgetPlan | ZCDP | ApproxDP | None = None) -> None:
        """Book one finished attempt that read the data: its row-level (ε, δ), outcome and surface.

        For a run still to start, prefer :meth:`open_attempt` (write-ahead) and
        :meth:`close_attempt`. A first booking on an identity writes the identity line first (the
        identity is recorded as new). Raises ValueError for an unknown outcome or surface or an
        invalid (ε, δ). ``native``: the budget the mechanism ran at (:func:`native_budget`).
        """
        normalize_identity(dataset_id)
        if outcome not in OUTCOMES:
            raise ValueError(f"outcome must be one of {', '.join(OUTCOMES)}; got {outcome!r}.")
        eps, dlt = self._check(epsilon, delta, surface)
        line = {"kind": "attempt", "time": _now(), "algorithm": str(algorithm), "epsilon": eps,
                "delta": dlt, "outcome": outcome, "surface": surface}
        self._append(dataset_id, [_with_native(line, native)])

    def open_attempt(self, dataset_id: str, *, algorithm: str, epsilon: float, delta: float,
                     surface: str, native: BudgetPlan | ZCDP | ApproxDP | None = None) -> str:
        """Write-ahead: book an attempt at its FULL row-level target before any row is read.

        The attempt counts in :meth:`total` from now on, whatever happens to the process; mark it
        with :meth:`close_attempt`. Returns the attempt's id. Raises ValueError (bad surface or
        (ε, δ)) or OSError (the ledger cannot be written: then nothing may be read). ``native``: the
        budget the run's plan hands the mechanism, when known before it runs (:func:`native_budget`).
        """
        normalize_identity(dataset_id)
        eps, dlt = self._check(epsilon, delta, surface)
        attempt = uuid.uuid4().hex
        line = {"kind": "attempt", "id": attempt, "time": _now(), "algorithm": str(algorithm),
                "epsilon": eps, "delta": dlt, "outcome": OPEN, "surface": surface, "pid": os.getpid(),
                "host": socket.gethostname(), "proc_start": _proc_start(os.getpid())}
        self._append(dataset_id, [_with_native(line, native)])
        return attempt

    def close_attempt(self, dataset_id: str, attempt: str, outcome: str, *,
                      epsilon: float | None = None, delta: float | None = None,
                      native: BudgetPlan | ZCDP | ApproxDP | None = None) -> None:
        """Mark an open attempt with its outcome (release, failed, refused, cancelled).

        A release may state its calibrated row-level (ε, δ) when it is within the booked target
        (the plan's guarantee); anything else keeps the full target. Raises ValueError for an
        unknown outcome or attempt, one already marked, or a cost above the booked target.
        ``native``: the budget the mechanism ran at (the release's plan, :func:`native_budget`);
        it replaces the one the opening line kept.
        """
        if outcome not in OUTCOMES:
            raise ValueError(f"outcome must be one of {', '.join(OUTCOMES)}; got {outcome!r}.")
        opened = next((r for r in self._records(dataset_id)
                       if r.get("kind") == "attempt" and r.get("id") == attempt), None)
        if opened is None:
            raise ValueError(f"No attempt {attempt!r} is booked on {dataset_id!r}.")
        if any(r.get("kind") == "outcome" and r.get("attempt") == attempt for r in self._records(dataset_id)):
            raise ValueError(f"Attempt {attempt!r} is already marked.")
        line: dict = {"kind": "outcome", "attempt": attempt, "time": _now(), "outcome": outcome}
        if epsilon is not None or delta is not None:
            eps, dlt = self._check(opened["epsilon"] if epsilon is None else epsilon,
                                   opened["delta"] if delta is None else delta, opened["surface"])
            if eps > opened["epsilon"] * (1 + 1e-12) or dlt > opened["delta"] * (1 + 1e-12):
                raise ValueError(f"The attempt's cost (ε = {eps:g}, δ = {dlt:g}) exceeds its booked "
                                 f"target (ε = {opened['epsilon']:g}, δ = {opened['delta']:g}).")
            line |= {"epsilon": eps, "delta": dlt}
        self._append(dataset_id, [_with_native(line, native)])

    # ------------------------------------------------------------------ reading
    def _records(self, dataset_id: str) -> list[dict]:
        path = self.path(dataset_id)
        try:
            fd = os.open(path, os.O_RDONLY)
        except FileNotFoundError:
            return []
        try:
            with _locked(fd, exclusive=False), os.fdopen(os.dup(fd), "rb") as f:
                raw = f.read()
        finally:
            os.close(fd)
        out = []
        for i, line in enumerate(raw.decode("utf-8").splitlines(), 1):
            if not line.strip():
                continue
            try:
                rec = json.loads(line)
            except json.JSONDecodeError as exc:
                raise ValueError(f"Ledger file {path.name}, line {i}, is not readable: refusing to "
                                 "compose a total that might leave a spend out.") from exc
            out.append(rec)
        return out

    def identity(self, dataset_id: str) -> dict | None:
        """The identity line (declared name, normalized name, when it was first booked), or None."""
        return next((r for r in self._records(dataset_id) if r.get("kind") == "identity"), None)

    def entries(self, dataset_id: str) -> list[dict]:
        """Every booked attempt on ``dataset_id``, oldest first (dicts with ``time``,
        ``algorithm``, ``epsilon``, ``delta``, ``outcome``, ``surface``, ``native`` (the budget in
        its mechanism's terms, :func:`native_budget`; a line without one reads as its booked
        (ε, δ)); a write-ahead attempt also has ``id``, its ``outcome`` once marked ("open"
        before), the marking's ``closed`` time, and ``state`` from :func:`attempt_state`)."""
        records = self._records(dataset_id)
        marks = {r.get("attempt"): r for r in records if r.get("kind") == "outcome"}
        out = []
        for r in records:
            if r.get("kind") != "attempt":
                continue
            e = {k: v for k, v in r.items() if k not in ("kind", "pid", "host", "proc_start")}
            mark = marks.get(r.get("id")) if r.get("id") else None
            if mark is not None:
                e |= {"outcome": mark["outcome"], "closed": mark.get("time")}
                e |= {k: mark[k] for k in ("epsilon", "delta") if k in mark}
            e["native"] = _native_of(mark if mark is not None and "native" in mark else e)
            if "id" in r:
                e["state"] = attempt_state(r, closed=mark is not None)
            out.append(e)
        return out

    def total(self, dataset_id: str) -> tuple[float, float]:
        """The composed row-level (ε, δ) over every booked attempt (:data:`COMPOSITION`)."""
        es = self.entries(dataset_id)
        for e in es:
            if not (isinstance(e.get("epsilon"), int | float) and isinstance(e.get("delta"), int | float)):
                raise ValueError(f"Ledger of {dataset_id!r} holds an attempt without a numeric (ε, δ).")
        return (math.fsum(e["epsilon"] for e in es), min(1.0, math.fsum(e["delta"] for e in es)))

    def known(self, dataset_id: str) -> bool:
        """True once an attempt on this identity has been booked (in any session or process)."""
        return self.path(dataset_id).is_file() and bool(self._records(dataset_id))

    def identities(self) -> list[str]:
        """The declared names of every identity in the store (as first declared), sorted by their
        normalized form. An unreadable file is skipped here (its own total still refuses)."""
        out: dict[str, str] = {}
        for path in sorted(self.directory.glob("*.jsonl")) if self.directory.is_dir() else ():
            try:
                with open(path, encoding="utf-8") as f:
                    first = json.loads(f.readline() or "{}")
            except (OSError, ValueError):
                continue
            if first.get("kind") == "identity" and isinstance(first.get("normalized"), str):
                out.setdefault(first["normalized"], str(first.get("declared") or first["normalized"]))
        return [out[k] for k in sorted(out)]

    def near_matches(self, dataset_id: str) -> list[str]:
        """Known identities a NEW name is probably a typo of (:func:`near_identities`); empty when
        the name itself is known."""
        if self.known(dataset_id):
            return []
        return near_identities(dataset_id, self.identities())


def _with_native(line: dict, native: BudgetPlan | ZCDP | ApproxDP | None) -> dict:
    """The line with its native budget (none given: the line as before, read as its (ε, δ))."""
    return line if native is None else line | {"native": native_budget(native)}


def attempt_state(record: dict, *, closed: bool) -> str:
    """"closed" for a marked attempt; for an open one "running" while the process that booked it
    lives on this host, "interrupted" once it is gone (the attempt still counts at its full
    target), "open" when that cannot be told (another host)."""
    if closed:
        return "closed"
    if record.get("host") != socket.gethostname() or not isinstance(record.get("pid"), int):
        return "open"
    pid = record["pid"]
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return "interrupted"
    except PermissionError:
        pass  # alive, another user's
    start = record.get("proc_start")
    if start is not None and _proc_start(pid) not in (None, start):
        return "interrupted"  # the pid was reused by another process
    return "running"


def _proc_start(pid: int) -> int | None:
    """The process's start time in clock ticks since boot (Linux ``/proc``), or None: with the
    pid it tells a live process from a later one that reused its pid."""
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii", errors="replace") as f:
            return int(f.read().rsplit(")", 1)[1].split()[19])
    except (OSError, ValueError, IndexError):
        return None


# ----------------------------------------------------------------------------- near matches

#: A file-name-like extension typed after the name (".csv", ".parquet", …).
_EXTENSION = re.compile(r"\.(csv|tsv|txt|parquet|pq|json|jsonl|xlsx?|zip|gz)$")


def loose_identity(dataset_id: str) -> str:
    """The normalized identity with what a typo most often changes set aside: a file extension,
    trailing dots, and every dash, punctuation mark or space (letters and digits remain)."""
    text = normalize_identity(dataset_id)
    text = _EXTENSION.sub("", text).rstrip(". ")
    return "".join(ch for ch in text if ch.isalnum())


def edit_distance(a: str, b: str, cap: int = 3) -> int:
    """Levenshtein distance of ``a`` and ``b``, computed up to ``cap`` (larger ones return cap)."""
    if abs(len(a) - len(b)) >= cap:
        return cap
    prev = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        cur = [i]
        for j, cb in enumerate(b, 1):
            cur.append(min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (ca != cb)))
        if min(cur) >= cap:
            return cap
        prev = cur
    return min(prev[-1], cap)


def near_identities(dataset_id: str, known: list[str], max_distance: int = 2) -> list[str]:
    """The names in ``known`` that ``dataset_id`` is probably a typo of: equal once punctuation,
    dashes, spaces, trailing dots and a file extension are set aside, or within ``max_distance``
    edits of that loose form (closest first). The name itself (normalized) is never returned."""
    mine, norm = loose_identity(dataset_id), normalize_identity(dataset_id)
    scored = []
    for name in known:
        if normalize_identity(name) == norm:
            continue
        dist = edit_distance(mine, loose_identity(name), cap=max_distance + 1)
        if dist <= max_distance:
            scored.append((dist, name))
    return [name for _, name in sorted(scored)]
