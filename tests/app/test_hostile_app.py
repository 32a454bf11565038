"""Hostile input in the app (issue 19): user text shown as text, odd files offer the column
picker, extreme values never crash, data-derived values are announced, sessions are isolated."""

from __future__ import annotations

import csv
import io
import re

import numpy as np
from apptest_helpers import SMALL, container, open_app, texts

from app.components import downloads, safe

IMG = '![b](http://127.0.0.1:9/beacon.png)'
TAG = '<img src="http://127.0.0.1:9/tag.png">'
#: Markdown or HTML that would be live if it reached the page unescaped.
LIVE = re.compile(r"(?<!\\)!(?<!\\)\[|(?<!\\)<img|(?<!\\)\]\(|(?<!\\):red\[|(?<!\\)\*\*bold")


def _rows(n: int = 300, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return np.round(rng.normal(size=(n, 2)) + np.arange(n)[:, None] % 3 * 4, 4)


def _csv(header: list[str], X: np.ndarray, extra: str = "") -> bytes:
    quoted = ",".join('"' + h.replace('"', '""') + '"' for h in header)
    body = "\n".join(",".join(f"{v:g}" for v in row) + extra for row in X)
    return (quoted + "\n" + body + "\n").encode()


def _upload(at, name: str, raw: bytes):
    at.radio(key="source_radio").set_value("upload").run()
    at.file_uploader(key="csv_upload").upload(name, raw, "text/csv")
    return at.run()


def _all_markdown(at) -> str:
    parts = [texts(at)]
    parts += [str(getattr(w, "label", "")) for w in (*at.checkbox, *at.button, *at.number_input)]
    return "\n".join(parts)


def test_markup_in_header_and_file_name_is_text_everywhere():
    at = open_app("data", **SMALL)
    _upload(at, f"{IMG} {TAG}.csv", _csv([f"{IMG}", "**bold** :red[x]"], _rows()))
    assert not at.exception
    page = _all_markdown(at)
    assert "beacon" in page and "tag.png" in page  # the name is shown ...
    assert not LIVE.search(page), LIVE.search(page)  # ... but only as escaped text
    # The picker offers the names verbatim (widget options are plain text).
    assert at.multiselect(key="csv_columns").options[0] == IMG
    at.number_input(key="csv_radius").set_value(50.0).run()
    at.button(key="csv_use").click().run()
    assert not at.exception
    at.switch_page("views/explore.py").run()
    assert not at.exception
    page = _all_markdown(at)
    assert "beacon" in page and not LIVE.search(page)


def test_url_text_is_shown_as_text():
    at = open_app(**{**SMALL, "gen": IMG, "k": TAG})  # notices show on the first run
    assert not at.exception
    page = _all_markdown(at)
    assert "beacon" in page and "tag.png" in page
    assert not LIVE.search(page)


def test_centers_csv_neutralises_formulas():
    class R:
        centers = np.array([[1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0]])
    names = ["=HYPERLINK(\"http://x\",\"y\")", "+1", "-1", "@SUM(A1)", "\tx", "\rx", "plain"]
    text = downloads.centers_csv(R(), names)
    header = next(csv.reader(io.StringIO(text, newline="")))
    assert header == ["center", *("'" + n for n in names[:6]), "plain", "answered_by"]
    assert safe.csv_cell("a=1") == "a=1" and safe.csv_cell(3) == "3"


def test_md_table_keeps_every_cell_in_its_column_and_shows_it_as_text():
    rows = [{"name | col": f"x | {IMG}", "missing": float("nan"), "tiny": 0.000123456, "n": 3},
            {"name | col": TAG, "missing": None, "tiny": 12345.678, "n": 4}]
    lines = safe.md_table(rows).splitlines()
    unescaped_pipes = [len(re.findall(r"(?<!\\)\|", line)) for line in lines]
    assert len(lines) == 4 and unescaped_pipes == [5, 5, 5, 5]  # 4 columns on every line
    assert lines[2].count("—") == 1 and lines[3].count("—") == 1
    assert "0.0001235" in lines[2] and "1.235e+04" in lines[3] and "| 3 |" in lines[2]
    assert not LIVE.search("\n".join(lines))
    assert safe.md_table([]) == ""


def test_ledger_csv_lists_every_spend():
    import dpviz
    from dpviz.viz.privacy import ledger_table
    res = dpviz.run("friendlycore", _rows(), 3, epsilon=3.0, delta=1e-6, radius=10.0, rng=0)
    table = ledger_table(res.ledger)
    got = list(csv.reader(io.StringIO(downloads.ledger_csv(res), newline="")))
    assert got[0] == list(table.columns) and len(got) == len(table) + 1 > 10
    assert [float(r[1]) for r in got[1:]] == list(table["rho"])


def test_trailing_empty_column_and_missing_values_offer_the_picker():
    X = _rows()
    raw = _csv(["a", "b"], X, extra=",")  # a trailing delimiter on every row
    at = open_app("data", **SMALL)
    _upload(at, "trailing.csv", raw)
    assert not at.exception
    assert at.multiselect(key="csv_columns").value == ["a", "b"]
    assert "Read 300 rows × 2 columns" in texts(at)
    # A column empty in most rows: all together leave < 2 rows, so no error but the picker,
    # with per-column missing counts and the sparse column left out.
    sparse = "a,b,c\n" + "\n".join(f"{r[0]:g},{r[1]:g}," + ("1" if i == 0 else "") for i, r in enumerate(X))
    at = open_app("data", **SMALL)
    _upload(at, "sparse.csv", sparse.encode())
    assert not at.exception
    ms = at.multiselect(key="csv_columns")
    assert ms.options == ["a", "b", "c (299 rows missing)"] and ms.value == ["a", "b"]
    assert "Read 300 rows × 2 columns" in texts(at)
    ms.set_value(["a", "b", "c"]).run()
    assert not at.exception
    assert "pick fewer columns" in texts(at)


def test_ragged_file_says_what_to_fix():
    at = open_app("data", **SMALL)
    _upload(at, "ragged.csv", b"a,b\n1,10,100\n2,20\n3,30\n")
    assert not at.exception
    err = container(at, "csv_error").error[0].value
    assert "Data row 1 has 3 fields but the header has 2" in err


def test_huge_values_and_max_norm_never_crash():
    X = _rows() * 1e11  # norms ~1e12 and above: the max norm exceeds the app's Λ cap
    at = open_app("data", **SMALL)
    _upload(at, "huge.csv", _csv(["a", "b"], X) + b"1e200,1\n1e309,2\n")
    assert not at.exception
    assert "beyond" in texts(at)  # 1e200 dropped with a reason; 1e309 is infinite
    at.checkbox(key="csv_use_data_radius").check().run()
    assert not at.exception
    assert at.number_input(key="csv_radius").value == 1e12
    page = texts(at)
    assert "exceeds the largest Λ" in page and "r_min = 10⁻³·Λ goes into the page's URL" in page
    at.button(key="csv_use").click().run()
    assert not at.exception


def test_data_derived_values_are_announced_next_to_their_controls():
    at = open_app("data", **SMALL)
    _upload(at, "people.csv", _csv(["a", "b"], _rows()))
    page = texts(at)
    assert "never from your row count" in page
    assert "their count and any fingerprint of them never leave this session" in page


def test_two_sessions_never_see_each_others_upload():
    a = open_app("data", **SMALL)
    _upload(a, "secretfile.csv", _csv(["alpha", "beta"], _rows(seed=1)))
    a.number_input(key="csv_radius").set_value(50.0).run()
    a.button(key="csv_use").click().run()
    assert not a.exception and "secretfile" in texts(a)
    # B opens the very link A would share.
    b = open_app("data", **dict(a.query_params))
    assert not b.exception
    page_b = texts(b)
    assert "secretfile" not in page_b and "alpha" not in page_b
    assert "No uploaded dataset in this session yet" in page_b
    upload_keys = [k for k in b.session_state if str(k).startswith("_cache_")]
    for key in upload_keys:
        for value in b.session_state[key].values():
            assert "secretfile" not in repr(value)
    assert a.session_state["_active_upload"] != b.session_state["_active_upload"] \
        if "_active_upload" in b.session_state else True


def test_extreme_values_run_through_explore_without_an_exception_box():
    """Values near 1e90 (squares 1e180) with the largest Λ the app accepts: every row lies
    outside the Λ-ball, so the run fails or falls back, but nothing overflows into a crash."""
    at = open_app("data", **SMALL)
    _upload(at, "extreme.csv", _csv(["a", "b"], _rows() * 1e90))
    assert not at.exception
    at.number_input(key="csv_radius").set_value(1e12).run()
    at.button(key="csv_use").click().run()
    at.switch_page("views/explore.py").run()
    assert not at.exception
