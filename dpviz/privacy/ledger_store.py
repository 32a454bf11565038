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
"""

from __future__ import annotations

import contextlib
import datetime as _dt
import hashlib
import json
import math
import os
import re
import unicodedata
from collections.abc import Iterator
from pathlib import Path

try:  # POSIX advisory locks; elsewhere O_APPEND's single write is the only guard
    import fcntl
except ImportError:  # pragma: no cover - Windows
    fcntl = None  # type: ignore[assignment]

ENV = "DPVIZ_LEDGER_DIR"
OUTCOMES = ("release", "failed", "cancelled", "refused")
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
    def book(self, dataset_id: str, *, algorithm: str, epsilon: float, delta: float,
             outcome: str, surface: str) -> None:
        """Book one attempt that read the data: its row-level (ε, δ), outcome and surface.

        A first booking on an identity writes the identity line first (the identity is recorded
        as new). Raises ValueError for an unknown outcome or surface or an invalid (ε, δ).
        """
        normalized = normalize_identity(dataset_id)
        if outcome not in OUTCOMES:
            raise ValueError(f"outcome must be one of {', '.join(OUTCOMES)}; got {outcome!r}.")
        if surface not in SURFACES:
            raise ValueError(f"surface must be one of {', '.join(SURFACES)}; got {surface!r}.")
        eps, dlt = float(epsilon), float(delta)
        if not (math.isfinite(eps) and eps >= 0):
            raise ValueError(f"epsilon must be finite and ≥ 0; got {epsilon!r}.")
        if not (math.isfinite(dlt) and 0 <= dlt <= 1):
            raise ValueError(f"delta must lie in [0, 1]; got {delta!r}.")
        entry = {"kind": "attempt", "time": _now(), "algorithm": str(algorithm), "epsilon": eps,
                 "delta": dlt, "outcome": outcome, "surface": surface}
        self.directory.mkdir(parents=True, exist_ok=True)
        path = self.directory / _filename(normalized)
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        try:
            with _locked(fd, exclusive=True):
                lines = []
                if os.fstat(fd).st_size == 0:  # first booking: the identity is new
                    lines.append({"kind": "identity", "time": entry["time"], "declared": dataset_id,
                                  "normalized": normalized, "note": "new dataset identity"})
                lines.append(entry)
                data = "".join(json.dumps(x, ensure_ascii=False) + "\n" for x in lines).encode("utf-8")
                os.write(fd, data)
                os.fsync(fd)
        finally:
            os.close(fd)

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
        ``algorithm``, ``epsilon``, ``delta``, ``outcome``, ``surface``)."""
        return [{k: v for k, v in r.items() if k != "kind"}
                for r in self._records(dataset_id) if r.get("kind") == "attempt"]

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
