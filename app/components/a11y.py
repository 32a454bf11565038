"""Accessibility shared by every page (issue 36; WCAG 2.2 AA, checked by axe-core in
``tests/e2e/test_e2e_a11y.py``).

- :func:`install` (once per run, from ``app/main.py``): a focus ring that is visible and distinct
  from hover (WCAG 2.4.7, 2.4.11), and Streamlit's "Skip to main content" link taken to the page's
  main control (the ε slider on Explore) instead of the top of the main column.
- :func:`chart`: ``st.plotly_chart`` with a text alternative (WCAG 1.1.1): a one-line summary
  above the chart (also its accessible name), the data behind it one click away (a lazy
  expander with the table: built only while open), and a toolbar reduced to a PNG download.
  :func:`describe` and :func:`figure_table` read any Plotly figure (or its JSON), so the live
  charts (``app/components/live_chart.py``) share them.

Colour contrast (WCAG 1.4.3) is the theme's: ``.streamlit/config.toml`` sets a text colour dark
enough that Streamlit's faded captions reach 4.5:1 on the sidebar's grey.
"""

from __future__ import annotations

import base64
import functools
import json
import re
from collections.abc import Callable
from typing import Any

import numpy as np
import pandas as pd
import plotly.graph_objects as go
import streamlit as st

from app.components import keys, safe

#: The one modebar button a chart keeps (a keyboard user tabs past one stop, not ten); drag to
#: zoom and double-click to reset still work with a mouse. "Share chart" (upload to Plotly's
#: cloud) is never offered: the figures show private data.
TOOLBAR = {"displaylogo": False, "showSendToCloud": False, "modeBarButtons": [["toImage"]]}

#: Rows of a chart's data table; a larger figure's table says how many rows it left out.
MAX_TABLE_ROWS = 5_000

# The page's main control, per page, as CSS selectors tried in order (only the current page's
# widgets are on screen); with none of them present, the first form control of the main column.
_MAIN_CONTROLS = (
    f".st-key-{keys.EPS_SLIDER} input[type='range']",  # Explore
    f".st-key-{keys.SOURCE_RADIO} input",  # Data
    f".st-key-{keys.BUDGET_ALGORITHMS} input",  # Budget
    f".st-key-{keys.COMPARE_ALGORITHMS} input",  # Compare
    f".st-key-{keys.MI_GUESS_IN} button",  # Learn: the membership game
    f".st-key-{keys.PRESENT_A} input[type='range']",  # Present
)

_CSS = """<style>
/* Keyboard focus: a thick dark-blue ring with a white gap, on every control (WCAG 2.4.7,
   2.4.11); hover never draws it, so a focused link no longer looks like a hovered one. */
:focus-visible { outline: 3px solid #0b4f9c !important; outline-offset: 2px !important;
  box-shadow: 0 0 0 2px #ffffff !important; }
[data-testid="stSidebarNavLink"]:focus-visible { background: #dbe8f7 !important; }
[data-testid="stSidebarNavLink"]:hover:not(:focus-visible) { outline: none !important; }
[data-testid="stSkipToContent"]:focus-visible { background: #ffffff; color: #0b4f9c; }
/* A disabled widget's label stays readable (4.5:1 on white; the control itself looks disabled). */
label[data-testid="stWidgetLabel"][disabled] { color: #5e5e5e; }
</style>"""

_SKIP_JS = """<script>
(() => {
  if (window.__dpvizSkip) return;
  window.__dpvizSkip = true;
  const MAIN = __MAIN__;
  const FIRST = "input, button, select, textarea, [role='slider'], [tabindex='0']";
  const usable = (el) => el && !el.disabled && el.getClientRects().length > 0;
  // Capture phase: runs before Streamlit's own handler (which focuses the main column).
  document.addEventListener("click", (event) => {
    const link = event.target.closest && event.target.closest("[data-testid='stSkipToContent']");
    if (!link) return;
    const main = document.querySelector("[data-testid='stMain']");
    let target = MAIN.map((s) => document.querySelector(s)).find(usable);
    if (!target && main) target = [...main.querySelectorAll(FIRST)].find(usable);
    if (!target) return;
    event.preventDefault();
    event.stopImmediatePropagation();
    target.focus();
    target.scrollIntoView({ block: "center" });
  }, true);
})();
</script>""".replace("__MAIN__", json.dumps(list(_MAIN_CONTROLS)))


def install() -> None:
    """The focus ring and the skip link's target; call once per run (takes no space)."""
    st.html(_CSS)
    st.html(_SKIP_JS, unsafe_allow_javascript=True)


# ----------------------------------------------------------------------------------- charts ---


def _array(value: Any) -> np.ndarray | None:
    """A trace attribute as a 1-D array: a list, a numpy array, or plotly's typed-array JSON
    (``{"dtype": "f8", "bdata": "<base64>", "shape": "r, c"}``); None if it is not data."""
    if value is None or isinstance(value, str):
        return None
    if isinstance(value, dict):
        if "bdata" not in value:
            return None
        out = np.frombuffer(base64.b64decode(value["bdata"]), dtype=np.dtype(value["dtype"]))
        return out
    out = np.asarray(value, dtype=object if isinstance(value, (list, tuple)) else None)
    return out.ravel() if out.ndim else None


def _plain(figure: go.Figure | dict | str) -> dict:
    if isinstance(figure, str):
        return json.loads(figure)
    if isinstance(figure, go.Figure):
        return figure.to_plotly_json()
    return figure


def _text(value: Any) -> str:
    if isinstance(value, dict):
        value = value.get("text")
    return re.sub(r"<[^>]+>", " ", str(value or "")).replace("  ", " ").strip()


def _series(trace: dict, i: int) -> str:
    return _text(trace.get("name")) or f"{trace.get('type', 'scatter')} {i + 1}"


def figure_table(figure: go.Figure | dict | str, *, max_rows: int = MAX_TABLE_ROWS) -> pd.DataFrame:
    """The data a figure draws, one row per point: series, x, y (and value for heat maps and
    pies); image traces (point clouds drawn as pictures) have no rows. At most ``max_rows``
    rows, spread over the series (``.attrs["left_out"]`` counts the rest)."""
    fig = _plain(figure)
    frames = []
    for i, trace in enumerate(fig.get("data", [])):
        if trace.get("type") == "image":
            continue
        name = _series(trace, i)
        x, y = _array(trace.get("x")), _array(trace.get("y"))
        z = _array(trace.get("z"))
        values, labels = _array(trace.get("values")), _array(trace.get("labels"))
        if values is not None:
            cols = {"x": labels if labels is not None else np.arange(len(values)), "value": values}
        elif z is not None and trace.get("type") in {"heatmap", "contour", "histogram2d"}:
            shape = np.shape(trace["z"]) if not isinstance(trace["z"], dict) else tuple(
                int(s) for s in str(trace["z"].get("shape", len(z))).split(","))
            rows, cols_n = (1, shape[0]) if len(shape) == 1 else shape[:2]
            yy, xx = np.meshgrid(np.arange(rows), np.arange(cols_n), indexing="ij")
            xs = x[xx.ravel()] if x is not None and len(x) == cols_n else xx.ravel()
            ys = y[yy.ravel()] if y is not None and len(y) == rows else yy.ravel()
            cols = {"x": xs, "y": ys, "value": z}
        elif x is not None or y is not None:
            n = len(x) if x is not None else len(y)
            cols = {"x": x if x is not None else np.full(n, None),
                    "y": y if y is not None else np.full(n, None)}
        else:
            continue
        frame = pd.DataFrame({k: pd.Series(v) for k, v in cols.items()})
        frame.insert(0, "series", name)
        frames.append(frame)
    table = pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(columns=["series", "x", "y"])
    left_out = max(0, len(table) - max_rows)
    if left_out:
        table = table.iloc[np.linspace(0, len(table) - 1, max_rows).astype(int)].reset_index(drop=True)
    for col in table.columns[1:]:  # a column mixing numbers and labels is shown as text
        if table[col].dtype == object:
            table[col] = table[col].map(lambda v: "" if v is None else str(v))
    table.attrs["left_out"] = left_out
    return table


def _axis_titles(layout: dict) -> tuple[str, str]:
    def title(prefix: str) -> str:
        names = sorted(k for k in layout if re.fullmatch(prefix + r"axis\d*", k))
        return next((t for t in (_text(layout[k].get("title")) for k in names) if t), "")

    return title("x"), title("y")


@functools.lru_cache(maxsize=64)
def _describe_json(spec: str) -> str:
    return describe(json.loads(spec))


def describe(figure: go.Figure | dict | str) -> str:
    """One line a screen reader can read for a figure: its title, its series and its axes."""
    if isinstance(figure, str):
        return _describe_json(figure)
    fig = _plain(figure)
    layout = fig.get("layout", {})
    data = fig.get("data", [])
    # An untitled figure's line starts with its series: the caption already says "Chart:"
    # (issue 43: "Chart: Chart. …" above every untitled chart).
    title = _text(layout.get("title")).strip()
    panels = [_text(a.get("text")) for a in layout.get("annotations", []) if a.get("showarrow") is False]
    names = list(dict.fromkeys(_series(t, i) for i, t in enumerate(data)))
    images = sum(t.get("type") == "image" for t in data)
    parts = [title.rstrip(".")] if title else []
    if names:
        shown = ", ".join(names[:6]) + (f" and {len(names) - 6} more" if len(names) > 6 else "")
        parts.append(f"{len(names)} series: {shown}")
    if images:
        parts.append(f"{images} point cloud(s) drawn as images")
    xt, yt = _axis_titles(layout)
    if xt or yt:
        parts.append(", ".join(f"{a} axis: {t}" for a, t in (("x", xt), ("y", yt)) if t))
    if len(panels) > 1:
        parts.append(f"{len(panels)} labels: " + "; ".join(p for p in panels[:8] if p))
    return (". ".join(parts) or "A chart with no data") + "."


def data_table(figure: go.Figure | dict | str, *, key: str,
               table: Callable[[], pd.DataFrame] | pd.DataFrame | None = None) -> None:
    """A collapsed expander with the data behind a chart; its contents are built only while it
    is open (opening it reruns the page, or the fragment it is in)."""
    box = st.expander("Data behind this chart (table)", key=f"{key}_data", on_change="rerun",
                      icon=":material/table_rows:")
    if not box.open:
        return
    with box:
        frame = table() if callable(table) else table if table is not None else figure_table(figure)
        left_out = frame.attrs.get("left_out", 0)
        if left_out:
            st.caption(f"Every {(len(frame) + left_out) / len(frame):.0f}th point of "
                       f"{len(frame) + left_out:,} (the download has them all).")
        if frame.empty:
            st.caption("This chart draws its points as images; the data is the dataset's "
                       "(Data page).")
        else:
            st.dataframe(frame, hide_index=True, height=min(38 + 35 * len(frame), 320))


def chart(figure: go.Figure, *, key: str, summary: str | None = None,
          table: Callable[[], pd.DataFrame] | pd.DataFrame | None = None,
          data_on_page: str | None = None, config: dict | None = None, where: Any = None,
          summary_below: bool = False, **kwargs: Any) -> Any:
    """``st.plotly_chart`` with its text alternative: the one-line ``summary`` (default:
    :func:`describe`) above it and as its accessible name, the ``table`` (default: the figure's
    own data) in an expander below it — or, when the page already shows that data (say, inside
    an expander, where another one cannot nest), ``data_on_page`` says where, in the summary;
    the toolbar is :data:`TOOLBAR` unless ``config`` says otherwise; ``summary_below`` puts the
    summary under the chart (Present: the picture first, at 1280×720). Returns what
    ``st.plotly_chart`` returns (a selection state with ``on_select``)."""
    where = st if where is None else where
    summary = (summary or describe(figure)).rstrip(".") + (f" (its data: {data_on_page})"
                                                             if data_on_page else "")
    with where.container(key=f"{key}_alt"):
        if not summary_below:
            st.caption(f"Chart: {safe.md(summary)}")
        event = st.plotly_chart(figure, key=key, config={**TOOLBAR, **(config or {})},
                                alt=summary[:500], **kwargs)
        if summary_below:
            st.caption(f"Chart: {safe.md(summary)}")
        if data_on_page is None:
            data_table(figure, key=key, table=table)
    return event
