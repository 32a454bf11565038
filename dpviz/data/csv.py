"""Load a user's CSV into a Dataset, in memory, with messages a user can act on.

Nothing is written to disk. The upload's radius is left undeclared (``radius=None``): the user
must declare the public bound Λ (``Dataset.with_radius``); measuring it from the data is not
private (:func:`dpviz.data.bounds.data_radius`).
"""

from __future__ import annotations

import csv as _csv
import io
import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

import numpy as np
import pandas as pd

from dpviz._validation import check_scalar
from dpviz.data.dataset import Dataset

#: A column counts as numeric when at least this share of its non-empty cells parse as numbers.
NUMERIC_SHARE = 0.9

DEFAULT_MAX_ROWS = 200_000
DEFAULT_MAX_BYTES = 50 * 1024 * 1024


@dataclass(frozen=True)
class CsvLoad:
    """What :func:`load_csv` produced.

    Attributes
    ----------
    dataset : Dataset or None
        The chosen numeric columns as an upload Dataset (radius undeclared).
    numeric_columns : tuple of str
        Every column detected as numeric (the choices for a column picker).
    dropped_rows : int
        Rows dropped because a chosen column was empty, NaN, infinite or not a number.
    truncated : bool
        True if the file had more than ``max_rows`` data rows (only the first were kept).
    messages : tuple of str
        Human-readable notices (what was detected, dropped, truncated).
    """

    dataset: Dataset | None
    numeric_columns: tuple[str, ...]
    dropped_rows: int
    truncated: bool
    messages: tuple[str, ...]


def _mb(nbytes: float) -> str:
    return f"{nbytes / (1024 * 1024):.1f} MB"


def _read_bytes(source: Any, max_bytes: int) -> tuple[bytes, str]:
    """The raw bytes (at most max_bytes, else ValueError) and a display name."""
    if isinstance(source, (bytes, bytearray, memoryview)):
        data, name = bytes(source), "upload"
    elif isinstance(source, (str, os.PathLike)):
        path = Path(source)
        if not path.is_file():
            raise ValueError(f"CSV file not found: {str(path)!r}.")
        size = path.stat().st_size
        if size > max_bytes:
            raise ValueError(f"The file is {_mb(size)}; the limit is {_mb(max_bytes)}. "
                             "Upload a sample of the rows instead.")
        data, name = path.read_bytes(), path.stem
    elif hasattr(source, "read"):
        data = source.read(max_bytes + 1)
        if isinstance(data, str):
            data = data.encode("utf-8")
        name = Path(str(getattr(source, "name", "upload"))).stem or "upload"
    else:
        raise ValueError("The 'source' parameter of load_csv must be bytes, a path or a file-like "
                         f"object. Got {type(source).__name__} instead.")
    if len(data) > max_bytes:
        raise ValueError(f"The file is larger than the limit of {_mb(max_bytes)}. "
                         "Upload a sample of the rows instead.")
    return data, name


def _decode(data: bytes) -> str:
    if not data.strip():
        raise ValueError("The file is empty: no header and no rows.")
    if data.startswith((b"\xff\xfe", b"\xfe\xff")):
        try:
            return data.decode("utf-16")
        except UnicodeDecodeError as exc:
            raise ValueError("The file starts like UTF-16 text but could not be decoded.") from exc
    if b"\x00" in data[:8192]:
        raise ValueError("The file looks binary (it contains NUL bytes), not a CSV text file. "
                         "Export it as CSV (UTF-8) and try again.")
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise ValueError(
            f"The file could not be decoded as UTF-8 text (byte {exc.start}: {exc.reason}). "
            "Save it as 'CSV UTF-8' and try again.") from exc


def _sniff_delimiter(text: str) -> str:
    sample = text[:8192]
    try:
        return _csv.Sniffer().sniff(sample, delimiters=",;\t|").delimiter
    except _csv.Error:
        return ","


def _looks_numeric(name: str) -> bool:
    try:
        float(name)
    except ValueError:
        return False
    return True


def _parse(text: str, max_rows: int) -> pd.DataFrame:
    sep = _sniff_delimiter(text)
    kwargs = dict(sep=sep, nrows=max_rows + 1, skipinitialspace=True, low_memory=False)
    try:
        df = pd.read_csv(io.StringIO(text), **kwargs)
        if len(df.columns) and all(_looks_numeric(str(c)) for c in df.columns):
            # No header row: the first line is data.
            df = pd.read_csv(io.StringIO(text), header=None, **kwargs)
            df.columns = [f"x{j + 1}" for j in range(df.shape[1])]
    except pd.errors.EmptyDataError as exc:
        raise ValueError("The file is empty: no header and no rows.") from exc
    except (pd.errors.ParserError, _csv.Error, UnicodeError) as exc:
        first = str(exc).strip().splitlines()[-1] if str(exc).strip() else type(exc).__name__
        raise ValueError(f"The file could not be parsed as CSV: {first}. Check that every row "
                         "has the same number of fields as the header.") from exc
    df.columns = [str(c).strip() for c in df.columns]
    return df


def _numeric_frame(df: pd.DataFrame) -> tuple[pd.DataFrame, list[str]]:
    """Columns converted to float (non-numbers → NaN) and the names detected as numeric."""
    out = {}
    numeric = []
    for c in df.columns:
        col = df[c]
        if pd.api.types.is_bool_dtype(col):
            continue
        if pd.api.types.is_numeric_dtype(col):
            conv = pd.to_numeric(col, errors="coerce")
        else:
            stripped = col.astype("string").str.strip()
            nonempty = stripped.notna() & (stripped != "")
            if not nonempty.any():
                continue
            conv = pd.to_numeric(stripped.where(nonempty), errors="coerce")
            if conv[nonempty].notna().mean() < NUMERIC_SHARE:
                continue
        out[c] = conv.astype("float64")
        numeric.append(c)
    return pd.DataFrame(out, index=df.index), numeric


def load_csv(
    source: bytes | str | os.PathLike | IO[Any],
    *,
    columns: Sequence[str] | None = None,
    max_rows: int = DEFAULT_MAX_ROWS,
    max_bytes: int = DEFAULT_MAX_BYTES,
    name: str | None = None,
) -> CsvLoad:
    """Read a CSV (bytes, a path or a file-like object) into an upload Dataset, in memory.

    Steps: check the size limit; decode (UTF-8, BOM tolerated; UTF-16 with BOM); detect the
    delimiter (``, ; tab |``) and whether there is a header; keep the first ``max_rows`` data
    rows (deterministic truncation, with a notice); detect numeric columns (≥ 90 % of non-empty
    cells parse as numbers); keep ``columns`` (default: all numeric ones); drop rows with an
    empty, non-numeric, NaN or infinite value in a kept column and report how many.

    Parameters
    ----------
    source : bytes, str, PathLike or file-like
        The CSV content (bytes or a binary/text file object) or a path to it.
    columns : sequence of str, optional
        Which numeric columns to use (default: all detected numeric columns).
    max_rows : int, default 200 000
        Row cap; longer files are truncated to the first ``max_rows`` rows.
    max_bytes : int, default 50 MB
        Size limit; larger inputs raise ValueError.
    name : str, optional
        Dataset name (default: the file name or "upload").

    Returns
    -------
    CsvLoad

    Raises
    ------
    ValueError
        Empty file, undecodable or binary bytes, unparsable CSV, no numeric columns, unknown or
        non-numeric requested columns, fewer than 2 usable rows, or input over ``max_bytes``.

    Privacy
    -------
    Loading is not a release. The returned Dataset has ``radius=None``: declare the public
    bound Λ from domain knowledge before running a private algorithm.
    """
    max_rows = check_scalar(max_rows, "max_rows", "load_csv", low=2, integer=True)
    max_bytes = check_scalar(max_bytes, "max_bytes", "load_csv", low=1, integer=True)
    data, default_name = _read_bytes(source, max_bytes)
    text = _decode(data)
    df = _parse(text, max_rows)
    if df.shape[0] == 0:
        raise ValueError("The file has a header but no data rows.")
    messages: list[str] = []
    truncated = df.shape[0] > max_rows
    if truncated:
        df = df.iloc[:max_rows]
        messages.append(f"The file has more than {max_rows:,} rows; only the first {max_rows:,} "
                        "were loaded.")
    num, numeric = _numeric_frame(df)
    if not numeric:
        raise ValueError(
            "No numeric columns found. Columns in the file: "
            f"{', '.join(map(repr, df.columns))}. Each feature must be a column of numbers.")
    ignored = [c for c in df.columns if c not in numeric]
    messages.append(f"Detected {len(numeric)} numeric column(s): {', '.join(numeric)}."
                    + (f" Ignored non-numeric: {', '.join(ignored)}." if ignored else ""))
    if columns is None:
        chosen = list(numeric)
    else:
        chosen = [str(c) for c in columns]
        if not chosen:
            raise ValueError("The 'columns' parameter of load_csv must name at least one column.")
        missing = [c for c in chosen if c not in df.columns]
        if missing:
            raise ValueError(f"Unknown column(s) {', '.join(map(repr, missing))}. "
                             f"Numeric columns: {', '.join(numeric)}.")
        nonnum = [c for c in chosen if c not in numeric]
        if nonnum:
            raise ValueError(f"Column(s) {', '.join(map(repr, nonnum))} are not numeric. "
                             f"Numeric columns: {', '.join(numeric)}.")
        if len(set(chosen)) != len(chosen):
            raise ValueError(f"The 'columns' parameter of load_csv repeats a column: {chosen}.")
    X = num[chosen].to_numpy(dtype=np.float64, copy=True)
    finite = np.all(np.isfinite(X), axis=1)
    dropped = int(X.shape[0] - finite.sum())
    if dropped:
        X = X[finite]
        messages.append(f"Dropped {dropped:,} row(s) with a missing, non-numeric or infinite "
                        "value in the chosen columns.")
    if X.shape[0] < 2:
        raise ValueError(f"Only {X.shape[0]} usable row(s) ({dropped} dropped for missing or "
                         "non-numeric values); at least 2 are needed.")
    ds = Dataset(X=X, name=name or default_name, feature_names=tuple(chosen), source="upload",
                 params=dict(recipe="upload", columns=list(chosen), dropped_rows=dropped,
                             truncated=truncated, max_rows=max_rows))
    return CsvLoad(ds, tuple(numeric), dropped, truncated, tuple(messages))
