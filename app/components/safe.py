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
- :func:`csv_cell` neutralises spreadsheet formulas: a text cell starting with ``= + - @``,
  tab or CR gets a leading apostrophe (OWASP "CSV injection").
"""

from __future__ import annotations

import re

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
