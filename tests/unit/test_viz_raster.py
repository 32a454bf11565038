"""dpviz.viz.raster: point clouds drawn into PNG images (exact pixels, compositing, PNG bytes)."""

import base64
import struct
import zlib

import numpy as np
import pytest

from dpviz.viz import raster


def _decode_png(png: bytes) -> np.ndarray:
    """A minimal decoder for the PNGs png_bytes writes (8-bit RGBA, filter 0), independent of it."""
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    pos, idat, size = 8, b"", None
    while pos < len(png):
        (length,) = struct.unpack(">I", png[pos:pos + 4])
        tag, body = png[pos + 4:pos + 8], png[pos + 8:pos + 8 + length]
        (crc,) = struct.unpack(">I", png[pos + 8 + length:pos + 12 + length])
        assert crc == zlib.crc32(tag + body) & 0xFFFFFFFF, tag
        if tag == b"IHDR":
            w, h, depth, ctype = struct.unpack(">IIBB", body[:10])
            assert (depth, ctype) == (8, 6)
            size = (h, w)
        elif tag == b"IDAT":
            idat += body
        pos += 12 + length
    h, w = size
    rows = np.frombuffer(zlib.decompress(idat), dtype=np.uint8).reshape(h, 1 + 4 * w)
    assert np.all(rows[:, 0] == 0)  # filter type 0 on every row
    return rows[:, 1:].reshape(h, w, 4)


def _window(side: int = 101) -> raster.Window:
    # one data unit per pixel: x in [0, side), y in [0, side) with row 0 at the top
    return raster.Window(0.0, float(side), 0.0, float(side), side, side)


def test_png_bytes_round_trips_exactly():
    rgba = np.random.default_rng(0).integers(0, 256, size=(7, 13, 4), dtype=np.uint8)
    np.testing.assert_array_equal(_decode_png(raster.png_bytes(rgba)), rgba)
    uri = raster.data_uri(raster.png_bytes(rgba))
    assert uri.startswith("data:image/png;base64,")
    np.testing.assert_array_equal(_decode_png(base64.b64decode(uri.split(",", 1)[1])), rgba)
    with pytest.raises(ValueError, match="rgba"):
        raster.png_bytes(np.zeros((4, 4, 3), dtype=np.uint8))


def test_disc_lands_on_its_pixel_with_plotly_size_as_diameter():
    c = raster.Canvas(_window())
    c.draw(np.array([[50.5, 50.5]]), "#FF0000", size=9, opacity=1.0)  # pixel (row 50, col 50)
    img = c.to_rgba8()
    assert tuple(img[50, 50]) == (255, 0, 0, 255)
    full = np.count_nonzero(img[..., 3] == 255)
    assert abs(full - np.pi * 4.5**2) < 0.25 * np.pi * 4.5**2  # area of a disc of diameter 9
    rows, cols = np.nonzero(img[..., 3])
    assert rows.min() >= 50 - 6 and rows.max() <= 50 + 6 and cols.min() >= 44 and cols.max() <= 56
    assert raster.SCALE == 1  # the sizes above are in raster pixels = screen pixels


def test_y_axis_points_up_like_plotly():
    c = raster.Canvas(_window())
    c.draw(np.array([[10.5, 90.5]]), "#000000", size=3)  # high y: near the top rows
    rows, _ = np.nonzero(c.to_rgba8()[..., 3])
    assert rows.max() < 20


def test_overlapping_markers_combine_like_plotly_opacity():
    c = raster.Canvas(_window())
    P = np.array([[50.5, 50.5], [50.5, 50.5]])
    c.draw(P, "#0000FF", size=7, opacity=0.5)
    assert abs(int(c.to_rgba8()[50, 50, 3]) - round(255 * (1 - 0.5**2))) <= 1
    # a later layer is drawn over an earlier one, as plotly draws traces in order
    c.draw(P[:1], "#00FF00", size=7, opacity=1.0)
    assert tuple(c.to_rgba8()[50, 50]) == (0, 255, 0, 255)


def test_x_symbol_draws_diagonals_not_a_disc():
    c = raster.Canvas(_window())
    c.draw(np.array([[50.5, 50.5]]), "#000000", size=11, symbol="x")
    a = c.to_rgba8()[..., 3]
    assert a[50, 50] == 255 and a[47, 47] > 0 and a[53, 47] > 0
    assert a[50, 45] == 0 and a[45, 50] == 0  # left and top of the center: between the strokes


def test_points_outside_or_not_finite_are_skipped():
    c = raster.Canvas(_window())
    c.draw(np.array([[-500.0, 3.0], [np.nan, 1.0], [1e9, 1e9]]), "#000000", size=5)
    assert not c.touched.any()
    with pytest.raises(ValueError, match="color"):
        c.draw(np.array([[5.0, 5.0]]), "red", size=5)


def test_square_window_holds_every_point_with_padding():
    P = np.array([[0.0, 0.0], [4.0, 1.0], [2.0, -1.0]])
    w = raster.square_window(P, size_px=200)
    assert w.width == w.height == 200 * raster.SCALE
    assert np.isclose(w.x1 - w.x0, w.y1 - w.y0)
    assert w.x0 < 0 < 4 < w.x1 and w.y0 < -1 < 1 < w.y1
    col, row = w.pixels(P)
    assert np.all((col > 0) & (col < w.width) & (row > 0) & (row < w.height))


def test_traces_image_draws_background_once_and_keeps_layer_order(monkeypatch):
    w = _window()
    bg = [dict(type="scattergl", x=np.array([20.5]), y=np.array([80.5]), name="bg",
               marker=dict(size=5, color="#808080", opacity=0.5))]
    fg = [dict(type="scattergl", x=np.array([20.5, 60.5]), y=np.array([80.5, 40.5]), name="fg",
               marker=dict(size=5, color=["#FF0000", "#0000FF"], opacity=1.0))]
    calls = []
    real_draw = raster.Canvas.draw
    monkeypatch.setattr(raster.Canvas, "draw",
                        lambda self, P, color, **kw: (calls.append(color), real_draw(self, P, color, **kw)))
    raster._CACHE.clear()
    img = _decode_png(base64.b64decode(raster.traces_image(bg, fg, w).split(",", 1)[1]))
    assert tuple(img[101 - 81, 20]) == (255, 0, 0, 255)  # foreground over background
    assert tuple(img[101 - 41, 60]) == (0, 0, 255, 255)  # per-point colours kept
    assert calls == ["#808080", "#FF0000", "#0000FF"]
    raster.traces_image(bg, fg[:0], w)
    assert calls == ["#808080", "#FF0000", "#0000FF"]  # cached background, nothing new drawn
    assert raster.traces_image([], [], w) is None


def test_legend_stub_keeps_name_and_style_without_data():
    tr = dict(type="scattergl", x=np.arange(5.0), y=np.arange(5.0), name="cloud Q1", _raster="fg",
              marker=dict(size=4, color=["#000000"] * 5, opacity=0.3), legendgroup="g")
    stub = raster.legend_stub(tr)
    assert stub["type"] == "scatter" and stub["x"] == [None] and stub["y"] == [None]
    assert stub["name"] == "cloud Q1" and stub["legendgroup"] == "g"
    assert stub["marker"] == dict(size=4, opacity=0.3) and "_raster" not in stub
