"""Every file of the hostile corpus loads or is rejected with a clear message, fast (issue 19).

The corpus (``hostile_corpus.py``, ≥ 300 files) is generated into a temporary directory; it is
never checked in. Each file: ``load_csv`` returns a CsvLoad or raises ValueError (nothing else,
so no traceback reaches the app); a message is a sentence about the file, never a Python
internal; files ≤ 5 MB take ≤ 2 s; the cases with a known right answer are checked exactly.
Files over 5 MB (1e6 rows, 50 MB) are marked slow.
"""

from __future__ import annotations

import time
import tracemalloc
from pathlib import Path

import hostile_corpus as hc
import pytest

from dpviz.data import load_csv
from dpviz.data.csv import CsvLoad

CASES = {c.name: c for c in hc.corpus()}
TIME_LIMIT_S = 2.0
#: Python-internal wording that must never reach a user.
INTERNALS = ("Traceback", "object has no attribute", "Errno", "NoneType", "KeyError", "IndexError",
             "line 1 column", "<class", "dtype(")


@pytest.fixture(scope="session")
def corpus_dir(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("hostile")


def _path(corpus_dir: Path, case: hc.Case) -> Path:
    path = corpus_dir / case.name
    if not path.exists():
        hc.write(corpus_dir, [case])
    return path


def _load(path: Path):
    try:
        return load_csv(path)
    except ValueError as exc:
        return exc


def _assert_clear(out) -> None:
    texts = [str(out)] if isinstance(out, Exception) else list(out.messages)
    for text in texts:
        assert text and (text[0].isupper() or text[0].isdigit()) and text.rstrip().endswith((".", ")")), text
        assert not any(w in text for w in INTERNALS), text
        assert len(text) < 2000, text[:300]
    if isinstance(out, Exception):
        assert len(str(out)) > 25


def test_corpus_is_large_and_varied():
    assert len(CASES) >= 300
    prefixes = {name.split("_")[0] for name in CASES}
    assert {"random", "gzip", "enc", "delim", "dec", "num", "col", "width", "rag", "hdr", "formula",
            "markup", "eol", "q", "big", "mut"} <= prefixes


@pytest.mark.parametrize("name", [n for n, c in CASES.items() if not c.big])
def test_file_loads_or_is_rejected_clearly(corpus_dir, name):
    case = CASES[name]
    path = _path(corpus_dir, case)
    # CPU seconds of this process (all its threads), not wall time: under a load average near 40
    # the wall clock passed 2 s on the 2 000-column files while their loads took ~0.5 s of CPU.
    t0 = time.process_time()
    out = _load(path)  # anything but CsvLoad/ValueError propagates and fails the test
    elapsed = time.process_time() - t0
    assert path.stat().st_size <= 5 * 1024 * 1024
    assert elapsed <= TIME_LIMIT_S, f"{name}: {elapsed:.2f} s"
    assert isinstance(out, (CsvLoad, ValueError))
    if case.expect == "load":
        assert isinstance(out, CsvLoad), f"{name}: {out}"
    elif case.expect == "reject":
        assert isinstance(out, ValueError), f"{name}: loaded {out}"
    _assert_clear(out)
    if isinstance(out, CsvLoad) and out.dataset is not None:
        assert out.dataset.n >= 2 and out.dataset.X.flags.writeable is False
        assert abs(out.dataset.X).max() <= 1e100
    if case.check is not None:
        case.check(out)


@pytest.mark.slow
@pytest.mark.parametrize("name", [n for n, c in CASES.items() if c.big])
def test_big_file(corpus_dir, name):
    case = CASES[name]
    out = _load(_path(corpus_dir, case))
    assert isinstance(out, (CsvLoad, ValueError))
    assert isinstance(out, CsvLoad) if case.expect == "load" else isinstance(out, ValueError)
    _assert_clear(out)
    if case.check is not None:
        case.check(out)


@pytest.mark.parametrize("name", ["width_100000.csv", "hdr_4mb_wide.csv", "hdr_4mb_one_name.csv",
                                  "big_5mb_rows.csv", "big_5mb_2000cols.csv", "gzip_bomb.csv"])
def test_memory_is_bounded_by_the_file(corpus_dir, name):
    """Peak Python/numpy allocation stays within 20× the file size + 32 MB (no d×d, no inflation)."""
    path = _path(corpus_dir, CASES[name])
    size = path.stat().st_size
    tracemalloc.start()
    try:
        _load(path)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    mb = 1024 * 1024
    assert peak <= 20 * size + 32 * mb, f"{name}: peak {peak / mb:.0f} MB, file {size / mb:.1f} MB"


def test_file_name_is_kept_verbatim_for_the_app_to_escape(corpus_dir):
    case = CASES['<img src="http:__127.0.0.1:9_f.png">.csv']
    out = load_csv(_path(corpus_dir, case))
    assert out.dataset.name == '<img src="http:__127.0.0.1:9_f.png">'
