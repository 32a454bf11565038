"""Dense point clouds drawn into one PNG per subplot, for figures that must redraw fast.

Why: Streamlit remounts a plotly chart whenever its figure changes (the element id hashes the
spec), so every ρ move makes the browser build the storyboard from scratch. With WebGL traces
that costs one or two new WebGL contexts, 250-370 ms each under software GL; with SVG traces,
one DOM node per marker (~0.7 s for the ~6,000 markers of panels (c)-(g)). A PNG in
``layout.images`` is a single ``<image>`` element however many points it holds: the same
panels then redraw in ~0.1 s (``bench/app_latency.py``).

The rasterizer is plain numpy: every marker is a small stamp of pixel offsets (a disc, or the
two strokes of an ``x``) with an anti-aliased edge; the stamps of one layer are accumulated
sparsely (only touched pixels) and composited "over" the layers below it, as plotly draws
traces in order. ``png_bytes`` writes the image with zlib (no imaging library needed).
"""

from __future__ import annotations

import base64
import hashlib
import struct
import zlib
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

#: Raster pixels per screen pixel: images are drawn at twice the size they are shown, so they
#: stay sharp on high-density screens and when the browser scales them.
SCALE = 1
#: The raster's size in screen pixels (a storyboard subplot is ~300-450 px wide).
SIZE_PX = 420


@dataclass(frozen=True)
class Window:
    """The data rectangle an image covers, and its size in raster pixels."""

    x0: float
    x1: float
    y0: float
    y1: float
    width: int
    height: int

    @property
    def x_range(self) -> tuple[float, float]:
        return (self.x0, self.x1)

    @property
    def y_range(self) -> tuple[float, float]:
        return (self.y0, self.y1)

    def pixels(self, P: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Pixel (column, row) of each 2-D point; row 0 is the top (largest y)."""
        col = (P[:, 0] - self.x0) / (self.x1 - self.x0) * self.width
        row = (self.y1 - P[:, 1]) / (self.y1 - self.y0) * self.height
        return col, row


def square_window(P: np.ndarray, *, pad: float = 0.06, size_px: int = SIZE_PX,
                  scale: int = SCALE) -> Window:
    """A square window around the points ``P`` (m, 2), padded by ``pad`` of its side.

    Square so that one raster pixel is square in data units (the storyboard's axes have
    ``scaleratio=1``).
    """
    P = np.asarray(P, dtype=float)
    P = P[np.isfinite(P).all(axis=1)] if P.size else P
    if P.shape[0] == 0:
        lo, hi = np.array([-1.0, -1.0]), np.array([1.0, 1.0])
    else:
        lo, hi = P.min(axis=0), P.max(axis=0)
    mid = (lo + hi) / 2
    half = max(float(np.max(hi - lo)) / 2, 1e-9) * (1 + 2 * pad)
    side = size_px * scale
    return Window(mid[0] - half, mid[0] + half, mid[1] - half, mid[1] + half, side, side)


def _stamp(diameter: float, symbol: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Pixel offsets (dx, dy) of one marker and the coverage of each (0, 1]."""
    r = max(diameter / 2, 0.75)
    R = int(np.ceil(r + 1))
    dy, dx = np.mgrid[-R:R + 1, -R:R + 1].astype(float)
    if symbol.startswith("x"):
        # the two diagonal strokes of plotly's "x", about a fifth of the marker wide
        half_width = max(0.7, diameter / 10)
        dist = np.abs(np.abs(dx) - np.abs(dy)) / np.sqrt(2)
        cover = np.clip(half_width + 0.5 - dist, 0, 1) * (np.maximum(np.abs(dx), np.abs(dy)) <= r)
    else:
        cover = np.clip(r + 0.5 - np.hypot(dx, dy), 0, 1)
    keep = cover > 0
    return dx[keep].astype(np.int64), dy[keep].astype(np.int64), cover[keep]


def _rgb(color: str) -> np.ndarray:
    """'#RRGGBB' (or 'rgb(r, g, b)') as three floats in [0, 1]."""
    c = color.strip()
    if c.startswith("#") and len(c) == 7:
        return np.array([int(c[i:i + 2], 16) for i in (1, 3, 5)], dtype=np.float32) / 255
    if c.startswith("rgb"):
        parts = c[c.index("(") + 1:c.index(")")].split(",")[:3]
        return np.array([float(p) for p in parts], dtype=np.float32) / 255
    raise ValueError(f"The 'color' parameter must be '#RRGGBB' or 'rgb(r, g, b)'. Got {color!r}.")


class Canvas:
    """An RGBA raster (premultiplied alpha) that point layers are composited onto in order."""

    def __init__(self, window: Window) -> None:
        self.window = window
        self.rgba = np.zeros((window.height * window.width, 4), dtype=np.float32)
        self.touched = np.zeros(window.height * window.width, dtype=bool)

    def draw(self, P: np.ndarray, color: str, *, size: float, opacity: float = 1.0,
             symbol: str = "circle") -> None:
        """Composite one layer of markers (one colour) over what is drawn already.

        ``size`` is plotly's marker size (diameter in screen pixels); overlapping markers of
        the layer combine like plotly's: coverage 1 - Π(1 - opacity·w) per pixel.
        """
        P = np.asarray(P, dtype=float).reshape(-1, 2)
        P = P[np.isfinite(P).all(axis=1)]
        if P.shape[0] == 0 or opacity <= 0:
            return
        w = self.window
        col, row = w.pixels(P)
        dx, dy, cover = _stamp(size * SCALE, symbol)
        ix = (np.floor(col).astype(np.int64)[:, None] + dx[None, :]).ravel()
        iy = (np.floor(row).astype(np.int64)[:, None] + dy[None, :]).ravel()
        cov = np.broadcast_to(cover, (P.shape[0], cover.size)).ravel()
        inside = (ix >= 0) & (ix < w.width) & (iy >= 0) & (iy < w.height)
        ix, iy, cov = ix[inside], iy[inside], cov[inside]
        if ix.size == 0:
            return
        # Accumulate within the layer's bounding box only: a cluster's markers touch a small
        # patch, and one bincount over it beats sorting the stamps or a pass over the raster.
        x0, y0 = ix.min(), iy.min()
        box_w, box_h = int(ix.max() - x0 + 1), int(iy.max() - y0 + 1)
        log_clear = np.bincount((iy - y0) * box_w + (ix - x0),
                                weights=np.log1p(-min(opacity, 0.999999) * cov),
                                minlength=box_w * box_h)
        local = np.flatnonzero(log_clear)
        pixels = (local // box_w + y0) * w.width + (local % box_w + x0)
        a = (1.0 - np.exp(log_clear[local])).astype(np.float32)[:, None]
        self.touched[pixels] = True
        src = np.append(_rgb(color), np.float32(1.0))
        self.rgba[pixels] = src * a + self.rgba[pixels] * (1 - a)

    def copy(self) -> Canvas:
        out = Canvas.__new__(Canvas)
        out.window, out.rgba, out.touched = self.window, self.rgba.copy(), self.touched.copy()
        return out

    def to_rgba8(self) -> np.ndarray:
        """(height, width, 4) uint8 with straight (not premultiplied) alpha."""
        out = np.zeros((self.touched.size, 4), dtype=np.uint8)
        pixels = np.flatnonzero(self.touched)  # only touched pixels: most of the raster is empty
        px = self.rgba[pixels]
        a = np.maximum(px[:, 3:4], np.float32(1e-12))
        px[:, :3] /= a
        out[pixels] = np.clip(px * 255 + 0.5, 0, 255).astype(np.uint8)
        return out.reshape(self.window.height, self.window.width, 4)


def png_bytes(rgba: np.ndarray, *, level: int = 1) -> bytes:
    """An 8-bit RGBA PNG of ``rgba`` (height, width, 4) uint8 (zlib level 1: speed first)."""
    rgba = np.ascontiguousarray(rgba, dtype=np.uint8)
    if rgba.ndim != 3 or rgba.shape[2] != 4:
        raise ValueError(f"The 'rgba' parameter must have shape (height, width, 4). Got {rgba.shape}.")
    h, w, _ = rgba.shape
    rows = np.concatenate([np.zeros((h, 1), dtype=np.uint8), rgba.reshape(h, w * 4)], axis=1)

    def chunk(tag: bytes, body: bytes) -> bytes:
        return (struct.pack(">I", len(body)) + tag + body
                + struct.pack(">I", zlib.crc32(tag + body) & 0xFFFFFFFF))

    header = struct.pack(">IIBBBBB", w, h, 8, 6, 0, 0, 0)  # 8-bit RGBA, no interlace
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header)
            + chunk(b"IDAT", zlib.compress(rows.tobytes(), level)) + chunk(b"IEND", b""))


def data_uri(png: bytes) -> str:
    return "data:image/png;base64," + base64.b64encode(png).decode("ascii")


def layout_image(uri: str, window: Window, *, xref: str = "x", yref: str = "y") -> dict:
    """A plotly ``layout.images`` entry that stretches the image over ``window`` in data units."""
    return dict(source=uri, xref=xref, yref=yref, x=window.x0, y=window.y1,
                sizex=window.x1 - window.x0, sizey=window.y1 - window.y0, sizing="stretch",
                xanchor="left", yanchor="top", layer="below")


# ---- plotly traces -> one image ---------------------------------------------------------------

_CACHE: OrderedDict[bytes, Canvas] = OrderedDict()
_CACHE_SIZE = 8


def _marker_layers(trace: dict) -> list[tuple[np.ndarray, str, float, float, str]]:
    """(points, colour, size, opacity, symbol) per colour of a marker trace, in drawing order."""
    x = np.asarray(trace.get("x", ()), dtype=float)
    y = np.asarray(trace.get("y", ()), dtype=float)
    P = np.column_stack([x, y]) if x.size else np.zeros((0, 2))
    m = trace.get("marker") or {}
    size = float(m.get("size", 6))
    opacity = float(m.get("opacity", 1.0)) * float(trace.get("opacity", 1.0))
    symbol = str(m.get("symbol", "circle"))
    color = m.get("color", "#444444")
    if isinstance(color, str):
        return [(P, color, size, opacity, symbol)]
    color = np.asarray(color)
    return [(P[color == c], str(c), size, opacity, symbol) for c in dict.fromkeys(color.tolist())]


def _digest(traces: Sequence[dict], window: Window) -> bytes:
    h = hashlib.blake2b(repr((window, SCALE)).encode(), digest_size=16)
    for P, color, size, opacity, symbol in (lay for tr in traces for lay in _marker_layers(tr)):
        h.update(repr((color, size, opacity, symbol, P.shape)).encode())
        h.update(np.ascontiguousarray(P).tobytes())
    return h.digest()


def traces_image(background: Sequence[dict], foreground: Sequence[dict],
                 window: Window) -> str | None:
    """Marker traces (plotly dicts, drawn in order) as one PNG data URI over ``window``.

    One image, not two: plotly keeps a single image per subplot for the same position and
    size. The ``background`` layers (the faint data, the same under every panel and every ρ
    move) are drawn once and their canvas is cached by content (a small LRU); each call copies
    it and draws the ``foreground`` on top. None if nothing lands in the window.
    """
    key = _digest(background, window)
    if key in _CACHE:
        _CACHE.move_to_end(key)
    else:
        base = Canvas(window)
        for tr in background:
            _draw_trace(base, tr)
        _CACHE[key] = base
        while len(_CACHE) > _CACHE_SIZE:
            _CACHE.popitem(last=False)
    canvas = _CACHE[key].copy()
    for tr in foreground:
        _draw_trace(canvas, tr)
    return data_uri(png_bytes(canvas.to_rgba8())) if canvas.touched.any() else None


def _draw_trace(canvas: Canvas, trace: dict) -> None:
    for P, color, size, opacity, symbol in _marker_layers(trace):
        canvas.draw(P, color, size=size, opacity=opacity, symbol=symbol)


def legend_stub(trace: dict) -> dict:
    """A data-less SVG copy of a rasterized trace, so it keeps its legend entry (name, marker)."""
    stub = {k: v for k, v in trace.items() if not k.startswith("_") and k not in ("x", "y")}
    marker = dict(stub.get("marker") or {})
    if not isinstance(marker.get("color", ""), str):
        marker.pop("color")
    return dict(stub, type="scatter", x=[None], y=[None], marker=marker, hoverinfo="skip")
