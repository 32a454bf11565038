"""A Plotly chart that stays mounted across reruns and is updated in place with ``Plotly.react``.

``st.plotly_chart`` derives a chart's element id from its figure, so a figure that changes on
every ρ move is a new element: the browser tears the graph down, builds it from scratch (a new
WebGL context under software rendering) and then lays it out a second time when Streamlit's
theme is applied. This Streamlit component (Components v2) keeps one plotly.js graph under a
fixed key and hands it each new figure; plotly.js then redraws only what changed.

plotly.js is the copy shipped inside the installed ``plotly`` package (so the browser and
``plotly.py`` agree on the figure schema and nothing is downloaded from a CDN). It is served
by Streamlit's static file serving (``server.enableStaticServing``, ``.streamlit/config.toml``)
from ``app/static/``, where :func:`plotly_js_url` copies it on first use. When that is not
possible (static serving off, read-only checkout) the app falls back to ``st.plotly_chart``.
"""

from __future__ import annotations

import functools
import os
import shutil
import zlib
from pathlib import Path

import plotly
import plotly.graph_objects as go
import plotly.io as pio
import streamlit as st

from app.components import a11y, safe

STATIC_DIR = Path(__file__).resolve().parents[1] / "static"
_PLOTLY_JS = Path(plotly.__file__).parent / "package_data" / "plotly.min.js"

_HTML = '<div class="dpviz-live-chart"></div><p class="dpviz-live-chart-error" hidden></p>'
_CSS = ".dpviz-live-chart { width: 100%; } .dpviz-live-chart-error { color: #d33; }"

# Called by Streamlit with the mount's data whenever it changes (same parentElement each time;
# the cleanup it returns runs only when the element leaves the page, or at once if a newer
# call superseded this one before it returned, hence the isConnected test).
_JS = """
function loadPlotly(src) {
  window.__dpvizPlotly ??= new Promise((resolve, reject) => {
    if (window.Plotly) { resolve(window.Plotly); return; }
    const script = document.createElement("script");
    script.src = src;
    script.async = true;
    script.onload = () => resolve(window.Plotly);
    script.onerror = () => { window.__dpvizPlotly = undefined; reject(new Error(src)); };
    document.head.appendChild(script);
  });
  return window.__dpvizPlotly;
}

// Streamlit's theme, as the CSS variables it sets on every component (--st-font, ...): the
// chart's font and text colour follow the app, its background is the page's.
function themed(layout, root) {
  const css = getComputedStyle(root);
  const font = { family: css.getPropertyValue("--st-font").trim() || undefined,
                 color: css.getPropertyValue("--st-text-color").trim() || undefined };
  return { ...layout, font: { ...font, ...layout.font },
           paper_bgcolor: "rgba(0,0,0,0)", plot_bgcolor: "rgba(0,0,0,0)" };
}

// data-pending: the figure last handed over; data-revision: the figure on screen (tests wait
// until they agree); data-error: why it could not be drawn.
export default function ({ parentElement, data }) {
  const root = parentElement.querySelector(".dpviz-live-chart");
  const message = parentElement.querySelector(".dpviz-live-chart-error");
  const seq = (root.__dpvizSeq = (root.__dpvizSeq || 0) + 1);
  const fail = (err) => {
    root.dataset.error = `plotly.js: ${err.message}`;
    message.textContent = `Could not draw this chart (${root.dataset.error}).`;
    message.hidden = false;
  };
  const cleanup = () => {
    if (!root.isConnected && window.Plotly) window.Plotly.purge(root);
  };
  root.dataset.pending = data.revision;
  if (data.alt) {  // the chart's text alternative (app/components/a11y.py) is its accessible name
    root.setAttribute("role", "figure");
    root.setAttribute("aria-label", data.alt);
  }
  let figure;
  try {
    figure = JSON.parse(data.figure);
  } catch (err) {
    fail(err);
    return cleanup;
  }
  if (figure.layout.height) root.style.minHeight = `${figure.layout.height}px`;
  loadPlotly(data.src)
    .then((Plotly) => {
      if (seq !== root.__dpvizSeq) return undefined;  // a newer figure came while loading
      return Plotly.react(root, figure.data, themed(figure.layout, root), data.config)
        .then(() => {
          if (seq !== root.__dpvizSeq) return;
          root.dataset.revision = data.revision;
          delete root.dataset.error;
          message.hidden = true;
        });
    })
    .catch(fail);
  return cleanup;
}
"""


@functools.cache
def _component():
    return st.components.v2.component("dpviz_live_chart", html=_HTML, css=_CSS, js=_JS,
                                      isolate_styles=False)


def plotly_js_url() -> str | None:
    """The URL the page loads plotly.js from, or None when it cannot be served (static serving
    off, or ``app/static/`` not writable)."""
    if not st.get_option("server.enableStaticServing"):
        return None
    name = serve_plotly_js(STATIC_DIR)
    if name is None:
        return None
    base = (st.get_option("server.baseUrlPath") or "").strip("/")
    return f"/{base}/app/static/{name}" if base else f"/app/static/{name}"


@functools.cache
def serve_plotly_js(static_dir: Path) -> str | None:
    """Copy the installed package's ``plotly.min.js`` into ``static_dir`` (once per process) and
    return its file name there, versioned so that a browser's cache never pairs an old
    plotly.js with a newer ``plotly.py``; None if it cannot be written."""
    name = f"plotly-{plotly.__version__}.min.js"
    target = static_dir / name
    try:
        if not target.is_file() or target.stat().st_size != _PLOTLY_JS.stat().st_size:
            static_dir.mkdir(exist_ok=True)
            partial = target.with_suffix(f".{os.getpid()}.part")  # another server may copy too
            shutil.copyfile(_PLOTLY_JS, partial)
            partial.replace(target)
    except OSError:
        return None
    return name


def revision(spec: str) -> str:
    """The tag of a figure's JSON that the page writes to the graph's ``data-revision`` once it
    has drawn it (tests compare it with the figure the server built)."""
    return f"{zlib.adler32(spec.encode()):08x}"


def live_chart(figure: go.Figure | str, *, key: str, config: dict | None = None) -> None:
    """Draw ``figure`` (or its ``to_json()``, which is cheaper to cache) under ``key``; a later
    call with the same key updates the same graph in place. Like :func:`app.components.a11y.chart`,
    a one-line summary precedes it (and names it), its data is one click away and its toolbar
    keeps only the PNG download (issue 36)."""
    spec = figure if isinstance(figure, str) else figure.to_json()
    src = plotly_js_url()
    summary = a11y.describe(spec)
    config = {**a11y.TOOLBAR, **(config or {})}
    with st.container(key=f"{key}_alt"):
        st.caption(f"Chart: {safe.md(summary)}")
        if src is None:
            st.plotly_chart(pio.from_json(spec) if isinstance(figure, str) else figure, key=key,
                            config=config, alt=summary[:500])
        else:
            _component()(key=key, data={"src": src, "figure": spec, "revision": revision(spec),
                                        "alt": summary[:500],
                                        "config": {"responsive": True, **config}})
        a11y.data_table(spec, key=key)
