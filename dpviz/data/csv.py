"""Load a user's CSV into a Dataset, in memory, with messages a user can act on.

Nothing is written to disk. The upload's radius is left undeclared (``radius=None``): the user
must declare the public bound Λ (``Dataset.with_radius``); measuring it from the data is not
private (:func:`dpviz.data.bounds.data_radius`).

Hostile or odd files (issue 19) are either loaded or rejected with a message that names the
problem and what to do, in time and memory bounded by the file's size and the caps below:
compressed and binary files are refused without being decompressed; UTF-8 (BOM or not),
UTF-16/32 and Windows-1252/Latin-1 are decoded; the delimiter (``, ; tab |``, or Excel's
``sep=`` line) is guessed from field counts; decimal commas are read when the delimiter is not
a comma; the column count is capped before parsing; a row with more fields than the header is
an error (never a silent shift), one with fewer is reported; empty columns are ignored;
duplicate, blank or control-character column names are made unique and printable.
"""

from __future__ import annotations

import csv as _csv
import io
import itertools
import math
import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

import numpy as np
import pandas as pd

from dpviz._validation import MAX_MAGNITUDE, check_scalar
from dpviz.data.columns import likely_id_columns
from dpviz.data.dataset import Dataset

#: A column counts as numeric when at least this share of its non-empty cells parse as numbers.
NUMERIC_SHARE = 0.9

DEFAULT_MAX_ROWS = 200_000
PREVIEW_ROWS = 5
PREVIEW_CHARS = 40
DEFAULT_MAX_BYTES = 50 * 1024 * 1024
#: Column cap, checked on the header line before anything else is parsed (a 1 MB file can hold
#: 100 000 columns; the algorithms and the 2-D preview need far fewer).
MAX_COLUMNS = 2_000
#: Column names longer than this are shortened (a name is a label, not data).
MAX_NAME_CHARS = 80

_DELIMITERS = (",", ";", "\t", "|")
_DELIMITER_NAMES = {",": "comma", ";": "semicolon", "\t": "tab", "|": "pipe"}
#: Leading bytes of formats that are not CSV text; none is ever decompressed or opened.
_MAGIC = (
    (b"\x1f\x8b", "gzip-compressed"),
    (b"PK\x03\x04", "a ZIP archive (or an .xlsx/.ods workbook)"),
    (b"BZh", "bzip2-compressed"),
    (b"\xfd7zXZ\x00", "xz-compressed"),
    (b"\x28\xb5\x2f\xfd", "zstd-compressed"),
    (b"7z\xbc\xaf\x27\x1c", "a 7-Zip archive"),
    (b"\xd0\xcf\x11\xe0", "an old Excel/Office document (.xls)"),
    (b"%PDF", "a PDF document"),
    (b"\x89PNG", "a PNG image"),
    (b"\xff\xd8\xff", "a JPEG image"),
    (b"GIF8", "a GIF image"),
    (b"\x7fELF", "an executable"),
    (b"SQLite format 3", "an SQLite database"),
    (b"PAR1", "a Parquet file"),
)
_BOMS = (
    (b"\xff\xfe\x00\x00", "utf-32-le"),
    (b"\x00\x00\xfe\xff", "utf-32-be"),
    (b"\xff\xfe", "utf-16-le"),
    (b"\xfe\xff", "utf-16-be"),
    (b"\xef\xbb\xbf", "utf-8"),
)
#: C0 control characters other than tab, LF, CR (and the Ctrl-Z some DOS tools append).
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x19\x1b-\x1f\x7f]")
_DECIMAL_COMMA = re.compile(r"^[+-]?\d*,\d+(?:[eE][+-]?\d+)?$")


@dataclass(frozen=True)
class CsvLoad:
    """What :func:`load_csv` produced.

    Attributes
    ----------
    dataset : Dataset or None
        The chosen numeric columns as an upload Dataset (radius undeclared). None when no
        ``columns`` were given and all numeric columns together leave fewer than 2 usable rows
        while a smaller choice would not: ``messages`` says so and ``missing_by_column`` shows
        which columns to leave out (a column picker).
    numeric_columns : tuple of str
        Every column detected as numeric (the choices for a column picker).
    dropped_rows : int
        Rows dropped because a chosen column was empty, NaN, infinite, not a number or beyond
        ±:data:`~dpviz._validation.MAX_MAGNITUDE`.
    truncated : bool
        True if the file had more than ``max_rows`` data rows (only the first were kept).
    messages : tuple of str
        Human-readable notices (what was detected, dropped, truncated, renamed).
    missing_by_column : tuple of (str, int)
        For each numeric column, how many of the loaded rows it would drop (empty, not a
        number, NaN, infinite or too large). A picker should offer every column whose count
        is not zero.
    likely_ids : tuple of (str, str)
        Numeric columns that look like an identifier or a class label, with the reason
        (:func:`dpviz.data.columns.likely_id_columns`): a picker should leave them out by default.
    preview : tuple of tuple of str
        The header and the first :data:`PREVIEW_ROWS` rows as text (cells cut to
        :data:`PREVIEW_CHARS` characters), every column, for a preview shown as text.
    """

    dataset: Dataset | None
    numeric_columns: tuple[str, ...]
    dropped_rows: int
    truncated: bool
    messages: tuple[str, ...]
    missing_by_column: tuple[tuple[str, int], ...] = ()
    likely_ids: tuple[tuple[str, str], ...] = ()
    preview: tuple[tuple[str, ...], ...] = ()


def _mb(nbytes: float) -> str:
    return f"{nbytes / (1024 * 1024):.1f} MB"


def _quote(name: str) -> str:
    return repr(name)


def _names(names: Sequence[str], limit: int = 12) -> str:
    shown = ", ".join(_quote(c) for c in names[:limit])
    return shown + (f" and {len(names) - limit:,} more" if len(names) > limit else "")


# ----------------------------------------------------------------------------- bytes → text


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
        if not isinstance(data, (bytes, bytearray)):
            raise ValueError("The file-like 'source' of load_csv must return bytes or str from read(). "
                             f"Got {type(data).__name__} instead.")
        name = Path(str(getattr(source, "name", "upload"))).stem or "upload"
    else:
        raise ValueError("The 'source' parameter of load_csv must be bytes, a path or a file-like "
                         f"object. Got {type(source).__name__} instead.")
    if len(data) > max_bytes:
        raise ValueError(f"The file is larger than the limit of {_mb(max_bytes)}. "
                         "Upload a sample of the rows instead.")
    return bytes(data), name


def _utf16_without_bom(head: bytes) -> str | None:
    """'utf-16-le'/'-be' if NUL bytes sit on one parity only (ASCII text in UTF-16), else None."""
    if len(head) < 4:
        return None
    even, odd = head[0::2], head[1::2]
    if odd.count(0) > 0.4 * len(odd) and even.count(0) == 0:
        return "utf-16-le"
    if even.count(0) > 0.4 * len(even) and odd.count(0) == 0:
        return "utf-16-be"
    return None


def _decode(data: bytes) -> tuple[str, str | None]:
    """The text and a notice about the encoding (None for plain UTF-8)."""
    if not data.strip():
        raise ValueError("The file is empty: no header and no rows.")
    for magic, what in _MAGIC:
        if data.startswith(magic):
            raise ValueError(f"The file is {what}, not a CSV text file; it is not opened or "
                             "decompressed. Export or extract the table as CSV (UTF-8) and upload that.")
    encoding = next((enc for bom, enc in _BOMS if data.startswith(bom)), None)
    encoding = encoding or _utf16_without_bom(data[:8192])
    notice = None
    if encoding is not None and encoding != "utf-8":
        try:
            text = data.decode(encoding)
        except UnicodeDecodeError as exc:
            raise ValueError(f"The file looks like {encoding.upper()} text but could not be decoded "
                             f"(byte {exc.start}: {exc.reason}). Save it as 'CSV UTF-8' and try "
                             "again.") from exc
        notice = f"Decoded the file as {encoding.upper()}."
    elif b"\x00" in data[:8192]:
        raise ValueError("The file looks binary (it contains NUL bytes), not a CSV text file. "
                         "Export it as CSV (UTF-8) and try again.")
    else:
        try:
            text = data.decode("utf-8-sig")
        except UnicodeDecodeError as exc:
            # Windows-1252 (a superset of Latin-1's printable range); bytes it leaves undefined
            # fall back to Latin-1 so that decoding never fails on a text file.
            try:
                text = data.decode("cp1252")
            except UnicodeDecodeError:
                text = data.decode("latin-1")
            notice = (f"The file is not UTF-8 (byte {exc.start}: {exc.reason}); it was read as "
                      "Windows-1252/Latin-1. Check that the column names look right, or save it as "
                      "'CSV UTF-8'.")
    text = text.lstrip("\ufeff").rstrip("\x1a")  # BOM; DOS end-of-file mark
    bad = _CONTROL.search(text[:65536])
    if bad is not None:
        raise ValueError("The file looks binary (it contains the control character "
                         f"U+{ord(bad.group()):04X}), not a CSV text file. Export it as CSV (UTF-8) "
                         "and try again.")
    return text, notice


# ----------------------------------------------------------------------------- structure


def _first_line(text: str) -> str:
    end = text.find("\n")
    return (text if end < 0 else text[:end]).rstrip("\r")


def _skip_blank(text: str) -> str:
    """Drop leading blank lines (pandas skips them too)."""
    return text.lstrip("\r\n \t") if text[:1] in "\r\n \t" else text


def _sample_lines(text: str, n: int = 50, chars: int = 65536) -> list[str]:
    sample = text[:chars]
    lines = [ln for ln in sample.splitlines() if ln.strip()]
    if len(text) > chars and len(lines) > 1:
        lines = lines[:-1]  # the last one may be cut
    return lines[:n]


def _field_counts(lines: list[str], sep: str) -> list[int]:
    try:
        return [len(row) for row in _csv.reader(lines, delimiter=sep)]
    except _csv.Error:
        return [ln.count(sep) + 1 for ln in lines]


def _guess_delimiter(text: str) -> str:
    """The delimiter whose field count is the same on the header and most sampled lines.

    Field counts (quotes honoured) decide, not character frequencies, so ``1,5;2,5`` under a
    header ``a;b`` is semicolon-separated with decimal commas.
    """
    lines = _sample_lines(text)
    best, best_score = ",", (-1.0,)
    for sep in _DELIMITERS:
        counts = _field_counts(lines, sep)
        if not counts:
            continue
        header = counts[0]
        rows = counts[1:] or counts
        agree = sum(c == header for c in rows) / len(rows)
        score = (float(header > 1), agree, float(header))
        if score > best_score:
            best, best_score = sep, score
    return best


def _header_width(header_line: str, sep: str) -> int:
    if '"' not in header_line:
        return header_line.count(sep) + 1
    return _field_counts([header_line], sep)[0]


def _check_width(text: str) -> None:
    """Refuse files with more than MAX_COLUMNS columns before parsing anything."""
    line = _first_line(text)
    width = max(line.count(sep) + 1 for sep in _DELIMITERS)
    if width > MAX_COLUMNS:
        raise ValueError(
            f"The file has about {width:,} columns; at most {MAX_COLUMNS:,} are supported (each "
            "column is one dimension of every row). Keep only the columns to cluster on and upload "
            "that file.")


def _row_widths(body: str, sep: str, max_rows: int) -> tuple[np.ndarray, np.ndarray]:
    """Fields per non-blank data line for the first ``max_rows`` lines, and whether each line
    ends with an empty field (a trailing delimiter). Vectorized unless the text has quotes."""
    if '"' in body:
        try:
            rows = [r for r in itertools.islice(_csv.reader(io.StringIO(body, newline=""), delimiter=sep),
                                                max_rows) if r and any(f.strip() for f in r)]
        except _csv.Error as exc:
            raise ValueError(f"The file could not be parsed as CSV ({exc}). Check the quotes: every "
                             "opening '\"' needs a closing one.") from exc
        widths = np.fromiter((len(r) for r in rows), dtype=np.int64, count=len(rows))
        trailing = np.fromiter((not r[-1].strip() for r in rows), dtype=bool, count=len(rows))
        return widths, trailing
    buf = np.frombuffer(body.encode("utf-8"), dtype=np.uint8)
    ends = np.flatnonzero(buf == ord("\n"))
    if buf.size and buf[-1] != ord("\n"):
        ends = np.append(ends, buf.size)
    ends = ends[: max_rows + 1]
    starts = np.concatenate(([0], ends[:-1] + 1))
    seps = np.flatnonzero(buf == ord(sep))
    widths = np.searchsorted(seps, ends) - np.searchsorted(seps, starts) + 1
    length = ends - starts
    last = buf[np.maximum(ends - 1, 0)]
    blank = (length == 0) | ((length == 1) & (last == ord("\r")))
    before_cr = buf[np.maximum(ends - 2, 0)]
    crlf_sep = (last == ord("\r")) & (length > 1) & (before_cr == ord(sep))
    trailing = (length > 0) & ((last == ord(sep)) | crlf_sep)
    keep = ~blank
    return widths[keep][:max_rows], trailing[keep][:max_rows]


def _check_rows(widths: np.ndarray, trailing: np.ndarray, header: int, sep: str) -> tuple[int, list[str]]:
    """Raise on rows with more fields than the header; report rows with fewer.

    Rows that are longer only by one trailing empty field (a delimiter at the end of the line,
    as some exporters write) are accepted: returns 1 so that the caller adds an empty column,
    which is then ignored. Returns the number of extra columns and notices.
    """
    notices = []
    longer = widths > header
    extra = 0
    if longer.any() and np.all(widths[longer] == header + 1) and np.all(trailing[longer]):
        extra = 1
        notices.append(f"{int(longer.sum()):,} data row(s) end with an extra empty field (a trailing "
                       "delimiter); it was ignored.")
    elif longer.any():
        bad = np.flatnonzero(longer)
        i = int(bad[0])
        raise ValueError(
            f"Data row {i + 1} has {int(widths[i])} fields but the header has {header} "
            f"({bad.size:,} row(s) are longer than the header). A value may contain the "
            f"{_DELIMITER_NAMES[sep]} delimiter without quotes (for example a decimal comma or a "
            "thousands separator), or the header is missing a name. Quote such values or fix the "
            "header, so that every row has as many fields as the header, and upload again.")
    shorter = np.flatnonzero(widths < header)
    if shorter.size:
        notices.append(f"{shorter.size:,} data row(s) have fewer fields than the header (the first "
                       f"is data row {int(shorter[0]) + 1}); their missing fields are treated as empty.")
    return extra, notices


def _clean_names(raw: Sequence[str]) -> tuple[list[str], list[str]]:
    """Printable, non-empty, unique column names and notices about what was changed."""
    notices = []
    names: list[str] = []
    changed = 0
    for j, name in enumerate(raw):
        clean = _CONTROL.sub("", str(name)).replace("\r", " ").replace("\n", " ").replace("\t", " ").strip()
        if len(clean) > MAX_NAME_CHARS:
            clean = clean[: MAX_NAME_CHARS - 1] + "…"
        if not clean:
            clean = f"column {j + 1}"
        changed += clean != str(name).strip()
        names.append(clean)
    seen: dict[str, int] = {}
    dup = []
    for j, name in enumerate(names):
        if name in seen:
            seen[name] += 1
            new = f"{name} ({seen[name]})"
            while new in seen:
                seen[name] += 1
                new = f"{name} ({seen[name]})"
            seen[new] = 1
            dup.append(name)
            names[j] = new
        else:
            seen[name] = 1
    if changed:
        notices.append(f"{changed:,} column name(s) were blank, too long or contained control "
                       "characters and were cleaned up.")
    if dup:
        notices.append(f"Repeated column name(s) {_names(sorted(set(dup)))} were numbered to keep "
                       "them apart.")
    return names, notices


def _looks_numeric(name: str) -> bool:
    try:
        float(name)
    except ValueError:
        return False
    return True


def _parse(text: str, max_rows: int) -> tuple[pd.DataFrame, str, list[str]]:
    """The raw frame (one column per header field, no index), the delimiter and notices."""
    notices: list[str] = []
    text = _skip_blank(text)
    if "\n" not in text and "\r" in text:  # classic Mac OS line ends
        text = text.replace("\r", "\n")
    sep = None
    m = re.match(r"sep=(.)\r?\n", text)
    if m:  # Excel's "sep=;" first line
        sep, text = m.group(1), text[m.end():]
    if not text.strip():
        raise ValueError("The file is empty: no header and no rows.")
    _check_width(text)
    sep = sep or _guess_delimiter(text)
    if sep != ",":
        notices.append(f"Delimiter: {_DELIMITER_NAMES.get(sep, repr(sep))}.")
    first = _first_line(text)
    width = _header_width(first, sep)
    try:
        header_fields = next(_csv.reader([first], delimiter=sep))
    except (StopIteration, _csv.Error):
        header_fields = first.split(sep)
    if len(header_fields) != width:
        header_fields = (header_fields + [""] * width)[:width]
    headerless = all(_looks_numeric(f) for f in header_fields)
    body = text if headerless else text[len(first) + 1:] if "\n" in text else ""
    widths, trailing = _row_widths(body, sep, max_rows + 1)
    extra, row_notices = _check_rows(widths, trailing, width, sep)
    notices.extend(row_notices)
    if headerless:
        names = [f"x{j + 1}" for j in range(width)]
        notices.append("The first line is all numbers, so the file is read as having no header "
                       f"(columns named x1 … x{width}).")
    else:
        names, renamed = _clean_names(header_fields)
        notices.extend(renamed)
    names += [f"column {width + j + 1}" for j in range(extra)]
    if widths.size == 0:
        raise ValueError("The file has a header but no data rows. Add the rows below the header "
                         "and upload again.")
    try:
        df = pd.read_csv(io.StringIO(body), sep=sep, header=None, names=names, index_col=False,
                         nrows=max_rows + 1, skipinitialspace=True, low_memory=False,
                         keep_default_na=True, dtype=None)
    except pd.errors.EmptyDataError as exc:
        raise ValueError("The file has a header but no data rows.") from exc
    except (pd.errors.ParserError, _csv.Error, UnicodeError, ValueError) as exc:
        first_msg = str(exc).strip().splitlines()[-1] if str(exc).strip() else type(exc).__name__
        raise ValueError(f"The file could not be parsed as CSV: {first_msg}. Check that every row "
                         "has the same number of fields as the header.") from exc
    return df, sep, notices


# ----------------------------------------------------------------------------- numbers


def _to_float(col: pd.Series, sep: str) -> tuple[pd.Series | None, bool]:
    """The column as float64 (non-numbers → NaN) if it is numeric, and whether it used
    decimal commas; (None, False) if it is not numeric."""
    if pd.api.types.is_bool_dtype(col):
        return None, False
    if pd.api.types.is_numeric_dtype(col):
        return pd.to_numeric(col, errors="coerce").astype("float64"), False
    stripped = col.astype("string").str.strip()
    nonempty = stripped.notna() & (stripped != "")
    if not nonempty.any():
        return None, False
    conv = pd.to_numeric(stripped.where(nonempty), errors="coerce")
    if conv[nonempty].notna().mean() >= NUMERIC_SHARE:
        return conv.astype("float64"), False
    if sep != ",":
        cells = stripped[nonempty]
        comma = cells.str.fullmatch(_DECIMAL_COMMA).fillna(False).astype(bool)
        if comma.any():
            conv = pd.to_numeric(stripped.where(nonempty).str.replace(",", ".", regex=False),
                                 errors="coerce")
            if conv[nonempty].notna().mean() >= NUMERIC_SHARE:
                return conv.astype("float64"), True
    return None, False


def _comma_hint(df: pd.DataFrame, names: Sequence[str]) -> str:
    """A hint when text columns look like numbers written with commas in a comma-separated file."""
    for c in names:
        col = df[c]
        if pd.api.types.is_numeric_dtype(col) or pd.api.types.is_bool_dtype(col):
            continue
        cells = col.dropna().astype("string").str.strip()
        if len(cells) and cells.str.fullmatch(r"[+-]?[\d.]*,\d+").fillna(False).mean() >= NUMERIC_SHARE:
            return (f" Column {_quote(str(c))} holds numbers written with a comma (like '1,5'); in a "
                    "comma-separated file that is ambiguous (decimal comma or thousands separator). "
                    "Save the file with '.' as the decimal mark, or with ';' as the delimiter.")
    return ""


def _numeric_frame(df: pd.DataFrame, sep: str) -> tuple[np.ndarray, list[str], list[str], list[str]]:
    """The numeric columns as one float64 array (non-numbers → NaN), their names, the names of
    empty columns and of columns read with decimal commas.

    Columns pandas already parsed as numbers are converted in one block (a file may have 2 000
    of them); only text columns are looked at one by one.
    """
    kinds = np.array([dt.kind for dt in df.dtypes.to_numpy()], dtype="U1")
    fast = np.flatnonzero(np.isin(kinds, ("i", "u", "f")))
    block = df.iloc[:, fast].to_numpy(dtype=np.float64) if fast.size else np.empty((len(df), 0))
    fast_empty = np.isnan(block).all(axis=0) if len(df) else np.ones(fast.size, dtype=bool)
    parts: dict[int, np.ndarray] = {int(j): block[:, i] for i, j in enumerate(fast) if not fast_empty[i]}
    empty = {int(j) for j in fast[fast_empty]}
    comma = []
    for j in np.flatnonzero(~np.isin(kinds, ("i", "u", "f"))):
        col = df.iloc[:, int(j)]
        if not col.notna().any():
            empty.add(int(j))
            continue
        conv, used_comma = _to_float(col, sep)
        if conv is None:
            continue
        parts[int(j)] = conv.to_numpy(dtype=np.float64)
        if used_comma:
            comma.append(str(df.columns[j]))
    order = sorted(parts)
    values = np.empty((len(df), len(order)), dtype=np.float64)
    for i, j in enumerate(order):  # a loop over columns, not rows
        values[:, i] = parts[j]
    names = [str(df.columns[j]) for j in order]
    return values, names, [str(df.columns[j]) for j in sorted(empty)], comma


def _usable(X: np.ndarray) -> np.ndarray:
    """(n, d) bool: finite and within ±MAX_MAGNITUDE (so squared norms stay finite)."""
    with np.errstate(invalid="ignore"):
        return np.isfinite(X) & (np.abs(X) <= MAX_MAGNITUDE)


def load_csv(
    source: bytes | str | os.PathLike | IO[Any],
    *,
    columns: Sequence[str] | None = None,
    max_rows: int = DEFAULT_MAX_ROWS,
    max_bytes: int = DEFAULT_MAX_BYTES,
    name: str | None = None,
    impute: Mapping[str, float] | None = None,
) -> CsvLoad:
    """Read a CSV (bytes, a path or a file-like object) into an upload Dataset, in memory.

    Steps: check the size limit; refuse compressed and binary files; decode (UTF-8 with or
    without BOM, UTF-16/32, else Windows-1252/Latin-1 with a notice); guess the delimiter
    (``, ; tab |`` by consistent field counts, or Excel's ``sep=`` line); cap the column count;
    check every row has at most as many fields as the header (no silent shift); detect a
    header; keep the first ``max_rows`` data rows (deterministic truncation, with a notice);
    detect numeric columns (≥ 90 % of non-empty cells parse as numbers; decimal commas when the
    delimiter is not a comma); ignore empty columns; keep ``columns`` (default: all numeric
    ones); drop rows with an empty, non-numeric, NaN, infinite or too large
    (> :data:`~dpviz._validation.MAX_MAGNITUDE`) value in a kept column and report how many.

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
    impute : mapping column → float, optional
        A declared constant for each listed chosen column: its missing, non-numeric, infinite or
        too large cells take that value instead of dropping the row (a per-row rule with a public
        constant). The dataset's params record it.

    Returns
    -------
    CsvLoad
        ``dataset`` is None (with a message) when the default choice of all numeric columns
        leaves fewer than 2 rows but fewer columns would not.

    Raises
    ------
    ValueError
        Empty, compressed, binary or undecodable input; too many columns; a row with more
        fields than the header; no numeric columns; unknown or non-numeric requested columns;
        fewer than 2 usable rows; input over ``max_bytes``.

    Privacy
    -------
    Loading is not a release. The returned Dataset has ``radius=None``: declare the public
    bound Λ from domain knowledge before running a private algorithm.
    """
    max_rows = check_scalar(max_rows, "max_rows", "load_csv", low=2, integer=True)
    max_bytes = check_scalar(max_bytes, "max_bytes", "load_csv", low=1, integer=True)
    if columns is not None and (isinstance(columns, (str, bytes)) or not isinstance(columns, Sequence)):
        raise ValueError("The 'columns' parameter of load_csv must be a list of column names or None. "
                         f"Got {columns!r} instead.")
    if name is not None and not isinstance(name, str):
        raise ValueError(f"The 'name' parameter of load_csv must be a str or None. Got {name!r} instead.")
    data, default_name = _read_bytes(source, max_bytes)
    text, enc_notice = _decode(data)
    del data
    df, sep, messages = _parse(text, max_rows)
    del text
    if enc_notice:
        messages.insert(0, enc_notice)
    truncated = df.shape[0] > max_rows
    if truncated:
        df = df.iloc[:max_rows]
        messages.append(f"The file has more than {max_rows:,} rows; only the first {max_rows:,} "
                        "were loaded.")
    values, numeric, empty, comma = _numeric_frame(df, sep)
    if empty:
        messages.append(f"Ignored {len(empty):,} empty column(s) (no values): {_names(empty)}.")
    if not numeric:
        raise ValueError(
            f"No numeric columns found. Columns in the file: {_names(list(df.columns))}. Each "
            "feature must be a column of numbers." + _comma_hint(df, list(df.columns)))
    if comma:
        messages.append(f"Read decimal commas (1,5 = 1.5) in column(s) {_names(comma)}.")
    ignored = [c for c in df.columns if c not in numeric and c not in empty]
    messages.append(f"Detected {len(numeric)} numeric column(s): {_names(numeric)}."
                    + (f" Ignored non-numeric: {_names(ignored)}." if ignored else "")
                    + _comma_hint(df, ignored[:50]))
    usable_all = _usable(values)
    missing = usable_all.shape[0] - usable_all.sum(axis=0)
    missing_by_column = tuple((c, int(m)) for c, m in zip(numeric, missing, strict=True))
    ids = tuple(likely_id_columns(np.where(usable_all, values, np.nan), numeric).items())
    preview = _preview(df)
    with np.errstate(invalid="ignore"):
        finite = np.where(usable_all, values, np.nan)
        spread = np.nanmax(finite, axis=0, initial=-np.inf) - np.nanmin(finite, axis=0, initial=np.inf)
    const = [c for c, s in zip(numeric, spread, strict=True) if s == 0]
    if const:
        messages.append(f"Constant column(s) (one value in every row, no information): {_names(const)}.")
    if columns is None:
        chosen = list(numeric)
    else:
        chosen = [str(c) for c in columns]
        if not chosen:
            raise ValueError("The 'columns' parameter of load_csv must name at least one column.")
        unknown = [c for c in chosen if c not in df.columns]
        if unknown:
            raise ValueError(f"Unknown column(s) {_names(unknown)}. Numeric columns: {_names(numeric)}.")
        nonnum = [c for c in chosen if c not in numeric]
        if nonnum:
            raise ValueError(f"Column(s) {_names(nonnum)} are not numeric. "
                             f"Numeric columns: {_names(numeric)}.")
        if len(set(chosen)) != len(chosen):
            raise ValueError(f"The 'columns' parameter of load_csv repeats a column: {chosen}.")
    position = {c: j for j, c in enumerate(numeric)}
    idx = [position[c] for c in chosen]
    impute = _check_impute(impute, chosen)
    X_all = values[:, idx]
    usable = usable_all[:, idx]
    if impute:
        X_all, usable = X_all.copy(), usable.copy()
        for c, v in impute.items():  # a loop over columns
            j = chosen.index(c)
            X_all[~usable[:, j], j] = v
            usable[:, j] = True
        messages.append("Filled missing values with declared constants: " + ", ".join(
            f"{_quote(c)} = {v:g} ({dict(missing_by_column)[c]:,} cell(s))" for c, v in impute.items()) + ".")
    ok = np.all(usable, axis=1)
    X = X_all[ok]
    dropped = int(ok.size - ok.sum())
    huge = int(np.sum(np.any(np.isfinite(X_all) & ~usable, axis=1)))
    if dropped:
        messages.append(f"Dropped {dropped:,} row(s) with a missing, non-numeric or infinite value in "
                        "the chosen columns" + (f" ({huge:,} of them with a value beyond ±{MAX_MAGNITUDE:g}, "
                                                "too large to square in float64: rescale the column "
                                                "to keep them)" if huge else "") + ".")
        worst = sorted(((m, c) for c, m in missing_by_column if m and c in chosen and c not in impute),
                       reverse=True)
        messages.append("Rows each column drops: " + ", ".join(f"{_quote(c)} {m:,}" for m, c in worst[:12])
                        + ". Leave a column out to keep its rows.")
    if X.shape[0] < 2:
        best = max((int(usable_all.shape[0] - m) for _, m in missing_by_column), default=0)
        msg = (f"Only {X.shape[0]} usable row(s) ({dropped} dropped for missing or non-numeric "
               "values); at least 2 are needed.")
        if columns is None and len(numeric) > 1 and best >= 2:
            messages.append(msg + " Choose fewer columns: the columns that drop rows are listed above.")
            return CsvLoad(None, tuple(numeric), dropped, truncated, tuple(messages), missing_by_column,
                           ids, preview)
        raise ValueError(msg)
    ds = Dataset(X=X, name=name or default_name, feature_names=tuple(chosen), source="upload",
                 params=dict(recipe="upload", columns=list(chosen), dropped_rows=dropped,
                             truncated=truncated, max_rows=max_rows)
                 | ({"imputed": dict(impute)} if impute else {}))
    return CsvLoad(ds, tuple(numeric), dropped, truncated, tuple(messages), missing_by_column, ids,
                   preview)


def _check_impute(impute: Mapping[str, float] | None, chosen: Sequence[str]) -> dict[str, float]:
    if impute is None:
        return {}
    if not isinstance(impute, Mapping):
        raise ValueError(f"The 'impute' parameter of load_csv must be a mapping column → number. "
                         f"Got {impute!r} instead.")
    out = {}
    for c, v in impute.items():
        if c not in chosen:
            raise ValueError(f"Cannot fill column {_quote(str(c))}: it is not one of the chosen columns.")
        try:
            f = float(v)
        except (TypeError, ValueError):
            f = math.nan
        if not (math.isfinite(f) and abs(f) <= MAX_MAGNITUDE):
            raise ValueError(f"The fill value for {_quote(str(c))} must be a finite number. Got {v!r}.")
        out[str(c)] = f
    return out


def _preview(df: pd.DataFrame) -> tuple[tuple[str, ...], ...]:
    """The header and the first rows as text (every column; long cells cut)."""
    def cut(v: Any) -> str:
        s = "" if (isinstance(v, float) and math.isnan(v)) else str(v)
        return s if len(s) <= PREVIEW_CHARS else s[:PREVIEW_CHARS - 1] + "…"
    head = tuple(cut(c) for c in df.columns)
    return (head, *(tuple(cut(v) for v in row) for row in df.head(PREVIEW_ROWS).itertuples(index=False)))
