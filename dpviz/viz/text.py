"""User text inside plotly figures: shown literally, never as plotly's pseudo-HTML.

Plotly renders a subset of HTML in titles, axis titles, legends and hover labels (``<b>``,
``<br>``, ``<a href>``, ``<span style>``). A column or file name from a user's upload is data,
not markup: :func:`plotly_text` escapes ``&``, ``<`` and ``>`` to entities, which plotly.js
decodes back to the same characters on screen (issue 19).
"""

from __future__ import annotations

_ENTITIES = {"&": "&amp;", "<": "&lt;", ">": "&gt;"}


def plotly_text(text: object) -> str:
    """``text`` as a string plotly shows character for character (no tags, no links)."""
    s = str(text)
    return "".join(_ENTITIES.get(ch, ch) for ch in s) if any(ch in s for ch in _ENTITIES) else s


def wrap(text: str, width: int = 60, sep: str = "<br>") -> str:
    """``text`` broken at spaces into lines of at most ``width`` characters, joined by ``sep``
    (plotly titles and annotations never wrap by themselves and are clipped at the chart's edge)."""
    lines: list[str] = []
    line = ""
    for word in text.split(" "):
        if line and len(line) + 1 + len(word) > width:
            lines.append(line)
            line = word
        else:
            line = f"{line} {word}" if line else word
    lines.append(line)
    return sep.join(lines)
