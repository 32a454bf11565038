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

Storage: the embedded default is one JSON-lines file per identity in a directory
(``$DPVIZ_LEDGER_DIR``, else ``~/.dpviz/ledgers``), created on demand. For several hosts (app
replicas behind one address, the command line on another machine) :class:`PostgresLedgerStore`
keeps the same lines in one PostgreSQL table (``$DPVIZ_LEDGER_DSN``; :func:`open_store` picks it
when that is set; issue 46, item 2); its appends hold a per-identity transaction lock, so two
replicas compose exactly as two processes on one host do. The file's first line records the identity as new
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

Refusal across replicas (issue 46): :meth:`LedgerStore.open_attempt` with ``within=(ε, δ)`` books
only if the composed total after the attempt stays within that bound, checked and booked under the
identity's lock in one step: of two replicas racing for the last of a budget, one books and the
other gets :class:`OverBudgetError` (the Release page passes the total the user accepted, so a
booking made elsewhere since then refuses the run before a row is read).

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
import tempfile
import unicodedata
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from dpviz.privacy.accounting import compose_dp
from dpviz.privacy.budget import ZCDP, ApproxDP
from dpviz.privacy.plan import BudgetPlan, own_budget

try:  # POSIX advisory locks; elsewhere O_APPEND's single write is the only guard
    import fcntl
except ImportError:  # pragma: no cover - Windows
    fcntl = None  # type: ignore[assignment]

ENV = "DPVIZ_LEDGER_DIR"
#: A PostgreSQL connection string (``postgresql://user@host:port/db``): the store for several hosts.
DSN_ENV = "DPVIZ_LEDGER_DSN"
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


class OverBudgetError(ValueError):
    """An attempt booked ``within`` a bound would take the identity's composed total above it
    (nothing was booked)."""


def _entries_of(records: list[dict]) -> list[dict]:
    """The attempts among a ledger's lines, each with its mark applied (:meth:`LedgerStore.entries`)."""
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


def _total_of(entries: list[dict], dataset_id: str) -> tuple[float, float]:
    """Basic composition (:func:`dpviz.privacy.accounting.compose_dp`) of the attempts' (ε, δ)."""
    for e in entries:
        if not (isinstance(e.get("epsilon"), int | float) and isinstance(e.get("delta"), int | float)):
            raise ValueError(f"Ledger of {dataset_id!r} holds an attempt without a numeric (ε, δ).")
    total = compose_dp(*(ApproxDP(float(e["epsilon"]), float(e["delta"])) for e in entries))
    return total.eps, total.delta


def _within_check(dataset_id: str, eps: float, dlt: float, within: tuple[float, float] | None):
    """A check for :meth:`LedgerStore._append`: raise :class:`OverBudgetError` when booking (ε, δ)
    would take the total above ``within`` (None: no check)."""
    if within is None:
        return None
    cap_eps, cap_delta = float(within[0]), float(within[1])

    def check(records: list[dict]) -> None:
        now_eps, now_delta = _total_of(_entries_of(records), dataset_id)
        after = compose_dp(ApproxDP(now_eps, now_delta), ApproxDP(eps, dlt))
        if after.eps > cap_eps * (1 + 1e-12) or after.delta > cap_delta * (1 + 1e-12):
            raise OverBudgetError(
                f"Booking ε = {eps:g}, δ = {dlt:g} on {dataset_id!r} would take its total to ε = "
                f"{after.eps:.6g}, δ = {after.delta:.3g}, above the accepted ε = {cap_eps:.6g}, "
                f"δ = {cap_delta:.3g}: another attempt was booked since. Nothing was booked.")
    return check


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

    @property
    def location(self) -> str:
        """Where the ledgers are kept, for messages (the directory)."""
        return str(self.directory)

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
        fd, probe = tempfile.mkstemp(dir=self.directory, prefix=".probe-")  # what access() misses
        os.close(fd)
        os.unlink(probe)

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

    def _append(self, dataset_id: str, lines: list[dict], check=None) -> None:
        """Append ``lines`` to the identity's file in one locked ``write`` (the identity line
        first when the file is new), then ``fsync``. ``check(records)``, if given, sees the lines
        already there under the same lock and may raise to book nothing."""
        normalized = normalize_identity(dataset_id)
        self.directory.mkdir(mode=0o700, parents=True, exist_ok=True)  # owner only
        path = self.directory / _filename(normalized)
        fd = os.open(path, os.O_RDWR | os.O_APPEND | os.O_CREAT, 0o600)
        try:
            with _locked(fd, exclusive=True):
                if check is not None:
                    check(_parse(os.pread(fd, os.fstat(fd).st_size, 0), path.name))
                if os.fstat(fd).st_size == 0:  # first booking: the identity is new
                    lines = [_identity_line(dataset_id, normalized, lines[0]["time"]), *lines]
                os.write(fd, _encode(lines))
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
                     surface: str, native: BudgetPlan | ZCDP | ApproxDP | None = None,
                     within: tuple[float, float] | None = None) -> str:
        """Write-ahead: book an attempt at its FULL row-level target before any row is read.

        The attempt counts in :meth:`total` from now on, whatever happens to the process; mark it
        with :meth:`close_attempt`. Returns the attempt's id. Raises ValueError (bad surface or
        (ε, δ)) or OSError (the ledger cannot be written: then nothing may be read). ``native``: the
        budget the run's plan hands the mechanism, when known before it runs (:func:`native_budget`).
        ``within``: book only if the composed total after this attempt is at most this (ε, δ),
        checked under the identity's lock (every process and replica); else
        :class:`OverBudgetError` and nothing is booked.
        """
        normalize_identity(dataset_id)
        eps, dlt = self._check(epsilon, delta, surface)
        attempt = uuid.uuid4().hex
        line = {"kind": "attempt", "id": attempt, "time": _now(), "algorithm": str(algorithm),
                "epsilon": eps, "delta": dlt, "outcome": OPEN, "surface": surface, "pid": os.getpid(),
                "host": socket.gethostname(), "proc_start": _proc_start(os.getpid())}
        self._append(dataset_id, [_with_native(line, native)], _within_check(dataset_id, eps, dlt, within))
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
        return _parse(raw, path.name)

    def identity(self, dataset_id: str) -> dict | None:
        """The identity line (declared name, normalized name, when it was first booked), or None."""
        return next((r for r in self._records(dataset_id) if r.get("kind") == "identity"), None)

    def entries(self, dataset_id: str) -> list[dict]:
        """Every booked attempt on ``dataset_id``, oldest first (dicts with ``time``,
        ``algorithm``, ``epsilon``, ``delta``, ``outcome``, ``surface``, ``native`` (the budget in
        its mechanism's terms, :func:`native_budget`; a line without one reads as its booked
        (ε, δ)); a write-ahead attempt also has ``id``, its ``outcome`` once marked ("open"
        before), the marking's ``closed`` time, and ``state`` from :func:`attempt_state`)."""
        return _entries_of(self._records(dataset_id))

    def total(self, dataset_id: str) -> tuple[float, float]:
        """The composed row-level (ε, δ) over every booked attempt (:data:`COMPOSITION`, by
        :func:`dpviz.privacy.accounting.compose_dp`)."""
        return _total_of(self.entries(dataset_id), dataset_id)

    def known(self, dataset_id: str) -> bool:
        """True once an attempt on this identity has been booked (in any session or process)."""
        return bool(self._records(dataset_id))

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


class PostgresLedgerStore(LedgerStore):
    """The same ledger in one PostgreSQL table, for several hosts (issue 46, item 2).

    Every line a file would hold is one row ``(seq, identity, line)`` of table
    :data:`TABLE` (``identity`` the normalized name, ``line`` the same JSON text), read back in
    ``seq`` order, so everything above the storage (write-ahead attempts, marks, native budgets,
    totals, near matches) is :class:`LedgerStore`'s own. An append runs in one transaction that
    first takes a transaction-level advisory lock on the identity (``pg_advisory_xact_lock``):
    appends to one identity from any number of processes and hosts are serialised, the identity
    line is written exactly once, and an ``open_attempt(within=…)`` check sees every booking that
    committed before it. Reads see committed rows only. The table is created on first use.
    Needs ``psycopg`` (3.x, ``pip install "psycopg[binary]"``).

    Parameters
    ----------
    dsn
        A libpq connection string or URL (``postgresql://dpviz@db.internal:5432/dpviz``); default
        ``$DPVIZ_LEDGER_DSN``.
    """

    #: The table holding every ledger line.
    TABLE = "dpviz_ledger"
    _SCHEMA_LOCK = 0x64707669  # the advisory lock serialising CREATE TABLE IF NOT EXISTS

    def __init__(self, dsn: str | None = None):
        self.dsn = (dsn if dsn is not None else os.environ.get(DSN_ENV, "")).strip()
        if not self.dsn:
            raise ValueError(f"A PostgreSQL ledger needs a connection string (set {DSN_ENV}).")
        self._ready = False

    def __repr__(self) -> str:
        return f"PostgresLedgerStore({self.location!r})"

    @property
    def location(self) -> str:
        """The database, without its password."""
        from psycopg.conninfo import conninfo_to_dict

        info = conninfo_to_dict(self.dsn)
        user = f"{info['user']}@" if info.get("user") else ""
        where = f"{info.get('host', '')}:{info.get('port', '5432')}"
        return f"postgresql://{user}{where}/{info.get('dbname', '')}"

    def _connect(self):
        import psycopg

        conn = psycopg.connect(self.dsn, connect_timeout=10)
        if not self._ready:
            with conn.transaction(), conn.cursor() as cur:
                cur.execute("SELECT pg_advisory_xact_lock(%s)", (self._SCHEMA_LOCK,))
                cur.execute(f"CREATE TABLE IF NOT EXISTS {self.TABLE} (seq bigserial PRIMARY KEY, "
                            "identity text NOT NULL, line text NOT NULL)")
                cur.execute(f"CREATE INDEX IF NOT EXISTS {self.TABLE}_identity ON {self.TABLE} "
                            "(identity, seq)")
            self._ready = True
        return conn

    def path(self, dataset_id: str) -> Path:
        raise NotImplementedError("A PostgreSQL ledger has no files; see PostgresLedgerStore.TABLE.")

    def ensure_writable(self) -> None:
        """Connect and check that this role may insert into the table (OSError otherwise)."""
        import psycopg

        try:
            with self._connect() as conn, conn.cursor() as cur:
                cur.execute("SELECT has_table_privilege(%s, 'INSERT')", (self.TABLE,))
                if not cur.fetchone()[0]:
                    raise PermissionError(f"This role may not insert into {self.TABLE} at {self.location}.")
        except psycopg.Error as exc:
            raise OSError(f"The ledger database {self.location} cannot be reached ({exc}).") from exc

    def _append(self, dataset_id: str, lines: list[dict], check=None) -> None:
        import psycopg

        normalized = normalize_identity(dataset_id)
        key = int.from_bytes(hashlib.sha256(normalized.encode("utf-8")).digest()[:8], "big", signed=True)
        try:
            with self._connect() as conn, conn.transaction(), conn.cursor() as cur:
                cur.execute("SELECT pg_advisory_xact_lock(%s)", (key,))
                cur.execute(f"SELECT line FROM {self.TABLE} WHERE identity = %s ORDER BY seq", (normalized,))
                existing = [row[0] for row in cur.fetchall()]
                if check is not None:
                    check(_parse("\n".join(existing).encode("utf-8"), f"{self.TABLE}:{normalized}"))
                if not existing:  # first booking: the identity is new
                    lines = [_identity_line(dataset_id, normalized, lines[0]["time"]), *lines]
                cur.executemany(f"INSERT INTO {self.TABLE} (identity, line) VALUES (%s, %s)",
                                [(normalized, json.dumps(x, ensure_ascii=False)) for x in lines])
        except psycopg.Error as exc:
            raise OSError(f"The ledger database {self.location} could not book ({exc}).") from exc

    def _records(self, dataset_id: str) -> list[dict]:
        import psycopg

        normalized = normalize_identity(dataset_id)
        try:
            with self._connect() as conn, conn.cursor() as cur:
                cur.execute(f"SELECT line FROM {self.TABLE} WHERE identity = %s ORDER BY seq", (normalized,))
                rows = [row[0] for row in cur.fetchall()]
        except psycopg.Error as exc:
            raise OSError(f"The ledger database {self.location} cannot be read ({exc}).") from exc
        return _parse("\n".join(rows).encode("utf-8"), f"{self.TABLE}:{normalized}")

    def identities(self) -> list[str]:
        import psycopg

        try:
            with self._connect() as conn, conn.cursor() as cur:
                cur.execute(f"SELECT DISTINCT ON (identity) identity, line FROM {self.TABLE} "
                            "ORDER BY identity, seq")
                rows = cur.fetchall()
        except psycopg.Error as exc:
            raise OSError(f"The ledger database {self.location} cannot be read ({exc}).") from exc
        out: dict[str, str] = {}
        for normalized, line in rows:
            try:
                first = json.loads(line)
            except ValueError:
                continue
            if first.get("kind") == "identity":
                out[normalized] = str(first.get("declared") or normalized)
        return [out[k] for k in sorted(out)]


def open_store() -> LedgerStore:
    """The server's ledger store: :class:`PostgresLedgerStore` when ``$DPVIZ_LEDGER_DSN`` is set
    (several hosts share it), else the embedded :class:`LedgerStore` (``$DPVIZ_LEDGER_DIR``)."""
    return PostgresLedgerStore() if os.environ.get(DSN_ENV, "").strip() else LedgerStore()


def _identity_line(declared: str, normalized: str, time: str) -> dict:
    """The first line of an identity's ledger: it records the identity as new."""
    return {"kind": "identity", "time": time, "declared": declared, "normalized": normalized,
            "note": "new dataset identity"}


def _encode(lines: list[dict]) -> bytes:
    return "".join(json.dumps(x, ensure_ascii=False) + "\n" for x in lines).encode("utf-8")


def _parse(raw: bytes, where: str) -> list[dict]:
    """A ledger's lines; a line that cannot be read refuses (it might be a spend left out)."""
    out = []
    for i, line in enumerate(raw.decode("utf-8").splitlines(), 1):
        if not line.strip():
            continue
        try:
            out.append(json.loads(line))
        except json.JSONDecodeError as exc:
            raise ValueError(f"Ledger file {where}, line {i}, is not readable: refusing to "
                             "compose a total that might leave a spend out.") from exc
    return out


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
