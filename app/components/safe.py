"""User text on the page and in downloads: shown as text, never as markup (issue 19).

Everything that comes from a user's file or a link (column names, file names, values, URL
parameters, error messages that quote them) passes through here before it reaches a Streamlit
element that renders markdown (``st.markdown``, ``st.caption``, ``st.error``/``warning``/
``info``/``success``, widget labels) or a spreadsheet-bound CSV.

- :func:`md` backslash-escapes every ASCII punctuation character that can start or close a
  markdown, HTML or Streamlit construct (CommonMark allows escaping any of them), so
  ``![x](http://…)``, ``<img …>``, ``**…**``, ``$…$``, ``:red[…]`` and ``:material/…:`` stay
  literal text: no image is fetched, no link or style is made; a leading ``#``, ``-``, ``+``,
  ``=`` or ``1.`` is escaped too (no heading or list). Other punctuation is left alone so that
  messages stay readable in tests and logs.
- :func:`md_table` writes rows as a markdown table of such escaped cells: static HTML, which the
  browser lays out in a few ms where an ``st.dataframe`` grid takes ~300 ms to mount (issue 16).
- :func:`csv_cell` neutralises spreadsheet formulas: a text cell starting with ``= + - @``,
  tab or CR gets a leading apostrophe (OWASP "CSV injection").
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence

#: Punctuation that opens or closes an inline construct anywhere in a line: emphasis, code,
#: links and images, raw HTML and entities, tables, math, Streamlit's :color[...] / :material/...:
#: directives, strikethrough.
_ACTIVE = "\\`*_{}[]()!|<>$:~&"
_PUNCT = re.compile("([" + re.escape(_ACTIVE) + "])")
#: Line starts that make a heading, list, quote or thematic break ("- x", "1. x", "# x").
_LINE_START = re.compile(r"^(\s*)([#+\-=]|\d+[.)])")
_CONTROL = re.compile(r"[\x00-\x1f\x7f\u2028\u2029]+")
FORMULA_PREFIXES = ("=", "+", "-", "@", "\t", "\r")


def md(text: object) -> str:
    """``text`` as markdown that renders to the same characters (one line, nothing active)."""
    escaped = _PUNCT.sub(r"\\\1", _CONTROL.sub(" ", str(text)))
    return _LINE_START.sub(lambda m: m.group(1) + "".join("\\" + c if not c.isdigit() else c
                                                          for c in m.group(2)), escaped)


def csv_cell(text: object) -> str:
    """A text cell a spreadsheet shows as text, not as a formula."""
    s = str(text)
    return "'" + s if s.startswith(FORMULA_PREFIXES) else s


def text_table(rows: list[tuple[str, ...]] | tuple[tuple[str, ...], ...], *, width: int = 18) -> str:
    """Rows of cells as a fixed-width plain-text table for ``st.text`` / ``st.code`` (never
    markdown): control characters removed, each cell cut to ``width`` characters."""
    def cell(v: object) -> str:
        s = _CONTROL.sub(" ", str(v))
        return s if len(s) <= width else s[:width - 1] + "…"
    cells = [[cell(v) for v in row] for row in rows]
    if not cells:
        return ""
    widths = [max(len(r[j]) if j < len(r) else 0 for r in cells) for j in range(max(map(len, cells)))]
    return "\n".join("  ".join(c.ljust(w) for c, w in zip(r, widths, strict=False)).rstrip() for r in cells)


def md_table(rows: Sequence[Mapping[str, object]], *, number: str = ".4g") -> str:
    """``rows`` (dicts with the same keys) as a markdown table: header from the first row's keys,
    every cell escaped by :func:`md`, floats formatted with ``number`` and NaN / None as "—"."""
    def cell(v: object) -> str:
        if v is None or (isinstance(v, float) and math.isnan(v)):
            return "—"
        if isinstance(v, float):
            return format(v, number)  # digits, ".", "e", "+", "-": nothing to escape mid-line
        return str(v) if isinstance(v, int) else md(v)
    if not rows:
        return ""
    keys = list(rows[0])
    lines = ["| " + " | ".join(md(k) for k in keys) + " |", "|" + "---|" * len(keys)]
    lines += ["| " + " | ".join(cell(r[k]) for k in keys) + " |" for r in rows]
    return "\n".join(lines)
