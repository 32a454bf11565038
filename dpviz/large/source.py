"""Tables larger than memory: Parquet or CSV (one file or a directory), read in chunks by pyarrow.

A :class:`TableSource` cuts a dataset into :class:`Chunk` s, units of work that any thread or Dask
worker can read on its own (a Parquet file's row groups, a whole CSV file, or a slice of an
in-memory array). A chunk is read in *batches* of at most ``batch_rows`` rows, so a task's memory
is bounded by the batch, not the chunk. Rows come out as float64 (n, d) arrays in file order;
the order of the files is their sorted path, so every chunking yields the same rows in the same
order.

Rows with a missing or non-finite value are dropped per row (a per-row rule: one row's presence
never changes what happens to another). The number of rows is never read for anything that
shapes a release: the declared size is a public input (``--n-declared``).

A file that changes while a run reads it (truncated, rewritten, replaced) must not end in a release
mixing two tables: every file chunk carries the file's *stamp* taken when the table was opened
(size, modification time, and a Parquet file's footer) and checks it before and after reading;
a difference raises :class:`SourceChangedError` (a ``ValueError``) on whichever thread or worker reads.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

#: Default rows per chunk (a unit of scheduling) and per batch (a unit of memory).
CHUNK_ROWS = 1_000_000
BATCH_ROWS = 262_144

SUFFIXES = {".parquet": "parquet", ".pq": "parquet", ".csv": "csv"}


class SourceChangedError(ValueError):
    """A file of the table changed (size, modification time or Parquet footer) during the run."""


def file_stamp(path: str | os.PathLike, kind: str) -> tuple[int, int, str]:
    """(size, mtime in ns, digest of the Parquet footer or "") of a file: what a run checks to
    know that it reads the same file from start to end (on any machine of a shared filesystem)."""
    st = os.stat(path)
    digest = ""
    if kind == "parquet" and st.st_size >= 12:
        with open(path, "rb") as f:  # a Parquet file ends with <footer><4-byte length>PAR1
            f.seek(st.st_size - 8)
            tail = f.read(8)
            n = int.from_bytes(tail[:4], "little")
            if tail[4:] == b"PAR1" and 0 < n <= st.st_size - 12:
                f.seek(st.st_size - 8 - n)
                digest = hashlib.blake2b(f.read(n), digest_size=16).hexdigest()
    return st.st_size, st.st_mtime_ns, digest


def check_stamp(path: str, kind: str, stamp: tuple[int, int, str]) -> None:
    """Raise :class:`SourceChangedError` unless ``path`` still has ``stamp`` (a missing file too)."""
    try:
        now = file_stamp(path, kind)
    except OSError:
        now = None
    if now != stamp:
        raise SourceChangedError(f"The input file {path!r} changed or disappeared while the run was reading "
                            "it (its size, modification time or footer differ from when the run "
                            "started); nothing was released.")


def _pa():
    import pyarrow as pa

    return pa


def _to_matrix(table, columns: Sequence[str]) -> np.ndarray:
    """The named columns of a pyarrow Table or RecordBatch as float64 (n, d); nulls become NaN."""
    pa = _pa()
    cols = []
    for name in columns:
        col = table.column(name)
        try:
            col = col.cast(pa.float64())
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError) as exc:
            raise ValueError(f"Column {name!r} is not numeric ({col.type}); choose numeric columns "
                             "with --columns.") from exc
        cols.append(col.to_numpy(zero_copy_only=False))
    if not cols:
        return np.zeros((table.num_rows, 0))
    return np.column_stack(cols).astype(np.float64, copy=False)


def release_reader_memory() -> None:
    """Hand the pages pyarrow's default pool (mimalloc) keeps after a read back to the system.

    The pool keeps freed pages for reuse. Every batch's Arrow buffers are copied into numpy and
    dropped at once, so those pages only inflate the resident size: on 10⁶ rows × 10 read in
    chunks, 0.23 GB stayed resident after the first pass, 0.07 GB with this call after each chunk
    (measured with ``/proc/self/status``; issue 17). At 10⁷ rows that is the memory the driver's
    stage then stacks its match graph on."""
    _pa().default_memory_pool().release_unused()


def finite_rows(X: np.ndarray) -> np.ndarray:
    """X without its rows holding NaN or ±inf (dropped per row)."""
    ok = np.all(np.isfinite(X), axis=1)
    return X if ok.all() else X[ok]


@dataclass(frozen=True)
class Chunk:
    """One unit of work: ``kind`` "parquet" (``row_groups`` of ``path``), "csv" (all of ``path``)
    or "array" (``array``, an in-memory slice). ``index`` orders the chunks (file order)."""

    index: int
    kind: str
    columns: tuple[str, ...]
    path: str = ""
    row_groups: tuple[int, ...] = ()
    array: np.ndarray | None = None
    batch_rows: int = BATCH_ROWS
    stamp: tuple[int, int, str] | None = None

    def batches(self) -> Iterator[np.ndarray]:
        """The chunk's finite rows as float64 arrays of at most ``batch_rows`` rows, in order.

        After a file chunk, pyarrow's memory pool returns its freed pages to the system
        (:func:`release_reader_memory`). A file chunk checks the file's stamp before its first
        batch and after its last (:class:`SourceChangedError`)."""
        if self.kind == "array":
            yield from self._batches()
            return
        if self.stamp is not None:
            check_stamp(self.path, self.kind, self.stamp)
        try:
            yield from self._batches()
        finally:
            release_reader_memory()
        if self.stamp is not None:
            check_stamp(self.path, self.kind, self.stamp)

    def _batches(self) -> Iterator[np.ndarray]:
        if self.kind == "array":
            A = self.array
            for s in range(0, A.shape[0], self.batch_rows):
                yield finite_rows(np.asarray(A[s:s + self.batch_rows], dtype=np.float64))
        elif self.kind == "parquet":
            import pyarrow.parquet as pq

            with pq.ParquetFile(self.path) as f:
                for b in f.iter_batches(batch_size=self.batch_rows, row_groups=list(self.row_groups),
                                        columns=list(self.columns)):
                    yield finite_rows(_to_matrix(b, self.columns))
        elif self.kind == "csv":
            import pyarrow.csv as pcsv

            opts = pcsv.ReadOptions(block_size=max(1 << 20, 64 * self.batch_rows))
            # Every column read as float64: a type inferred from the first block (int) could not
            # hold a later block's values (1.5), and the reader would fail mid-file.
            conv = pcsv.ConvertOptions(include_columns=list(self.columns),
                                       column_types={c: _pa().float64() for c in self.columns})
            with pcsv.open_csv(self.path, read_options=opts, convert_options=conv) as reader:
                for b in reader:
                    yield finite_rows(_to_matrix(b, self.columns))
        else:  # pragma: no cover - constructed only by TableSource
            raise ValueError(f"Unknown chunk kind {self.kind!r}.")

    def read(self) -> np.ndarray:
        """All of the chunk's finite rows (float64)."""
        parts = list(self.batches())
        return np.concatenate(parts) if parts else np.zeros((0, len(self.columns)))


class TableSource:
    """A dataset on disk (Parquet or CSV file, or a directory of them) or an in-memory array.

    Parameters
    ----------
    data : str, Path or (n, d) array
        A file, a directory (every ``*.parquet``, ``*.pq`` and ``*.csv`` in it, sorted by name; one
        format per directory) or an array (tests, and the in-memory path).
    columns : sequence of str, optional
        The numeric columns to use (default: every column). Arrays use all their columns.
    chunk_rows : int
        Rows per chunk (a Parquet chunk is whole row groups: at least one). A CSV file is one chunk.
    batch_rows : int
        Rows per batch inside a chunk (bounds a task's memory).

    Raises
    ------
    ValueError
        A path that does not exist, a directory with no table, mixed formats, a missing or
        non-numeric column, or files whose columns differ.
    """

    def __init__(self, data: str | os.PathLike | np.ndarray, *, columns: Sequence[str] | None = None,
                 chunk_rows: int = CHUNK_ROWS, batch_rows: int = BATCH_ROWS) -> None:
        if chunk_rows < 1 or batch_rows < 1:
            raise ValueError(f"chunk_rows and batch_rows must be >= 1. Got {chunk_rows}, {batch_rows}.")
        self.chunk_rows, self.batch_rows = int(chunk_rows), int(batch_rows)
        if isinstance(data, np.ndarray):
            if data.ndim != 2 or data.shape[1] < 1:
                raise ValueError(f"An array source must have shape (n, d) with d >= 1. Got {data.shape}.")
            self.kind, self.files, self.array = "array", [], data
            self.columns = tuple(f"x{j}" for j in range(data.shape[1]))
            return
        self.array = None
        self.files, self.kind = _list_files(Path(data))
        self.stamps = {str(f): _stamp(f, self.kind) for f in self.files}
        self.columns = self._resolve_columns(columns)

    @property
    def d(self) -> int:
        return len(self.columns)

    def _resolve_columns(self, columns: Sequence[str] | None) -> tuple[str, ...]:
        names = None
        for f in self.files:
            here = _schema_names(f, self.kind)
            if names is not None and here != names:
                raise ValueError(f"{f} has columns {here}, but {self.files[0]} has {names}: "
                                 "every file of a directory must have the same columns.")
            names = here
        if columns is None:
            cols = tuple(names)
        else:
            cols = tuple(columns)
            missing = [c for c in cols if c not in names]
            if missing:
                raise ValueError(f"Column(s) {missing} not in the table; its columns are {list(names)}.")
        if not cols:
            raise ValueError("The table has no columns.")
        return cols

    def chunks(self) -> list[Chunk]:
        """The chunks in file order (a function of the files and ``chunk_rows`` only)."""
        out: list[Chunk] = []
        if self.kind == "array":
            for s in range(0, self.array.shape[0], self.chunk_rows):
                out.append(Chunk(len(out), "array", self.columns, array=self.array[s:s + self.chunk_rows],
                                 batch_rows=self.batch_rows))
            return out
        for f in self.files:
            if self.kind == "csv":
                out.append(Chunk(len(out), "csv", self.columns, path=str(f), batch_rows=self.batch_rows,
                                 stamp=self.stamps[str(f)]))
                continue
            import pyarrow.parquet as pq

            stamp = self.stamps[str(f)]
            check_stamp(str(f), self.kind, stamp)
            md = pq.ParquetFile(f).metadata
            group: list[int] = []
            rows = 0
            for g in range(md.num_row_groups):
                group.append(g)
                rows += md.row_group(g).num_rows
                if rows >= self.chunk_rows:
                    out.append(Chunk(len(out), "parquet", self.columns, path=str(f),
                                     row_groups=tuple(group), batch_rows=self.batch_rows, stamp=stamp))
                    group, rows = [], 0
            if group:
                out.append(Chunk(len(out), "parquet", self.columns, path=str(f), row_groups=tuple(group),
                                 batch_rows=self.batch_rows, stamp=stamp))
        return out

    def read_all(self) -> np.ndarray:
        """Every finite row in memory (float64), for the in-memory path."""
        parts = [c.read() for c in self.chunks()]
        return np.concatenate(parts) if parts else np.zeros((0, self.d))

    def __repr__(self) -> str:
        where = (f"array{self.array.shape}" if self.kind == "array"
                 else f"{len(self.files)} {self.kind} file(s)")
        return f"TableSource({where}, d={self.d})"


def _list_files(path: Path) -> tuple[list[Path], str]:
    if not path.exists():
        raise ValueError(f"No such file or directory: {str(path)!r}.")
    if path.is_dir():
        files = sorted(p for p in path.iterdir() if p.is_file() and p.suffix.lower() in SUFFIXES)
        if not files:
            raise ValueError(f"Directory {str(path)!r} holds no .parquet, .pq or .csv file.")
    else:
        if path.suffix.lower() not in SUFFIXES:
            raise ValueError(f"{str(path)!r} is not a .parquet, .pq or .csv file.")
        files = [path]
    kinds = {SUFFIXES[p.suffix.lower()] for p in files}
    if len(kinds) > 1:
        raise ValueError(f"Directory {str(path)!r} mixes Parquet and CSV files; keep one format.")
    return files, kinds.pop()


def _stamp(path: Path, kind: str) -> tuple[int, int, str]:
    try:
        return file_stamp(path, kind)
    except OSError as exc:
        raise ValueError(f"Cannot read {str(path)!r}: {exc.strerror or exc}.") from exc


def _schema_names(path: Path, kind: str) -> tuple[str, ...]:
    pa = _pa()
    try:
        if kind == "parquet":
            import pyarrow.parquet as pq

            return tuple(pq.read_schema(path).names)
        import pyarrow.csv as pcsv

        with pcsv.open_csv(path) as reader:
            return tuple(reader.schema.names)
    except (pa.ArrowInvalid, OSError) as exc:
        raise ValueError(f"Cannot read {str(path)!r} as {kind}: {str(exc).splitlines()[0]}") from exc
