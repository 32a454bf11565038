"""Explore's main panel beside the sliders (issue 16; app/components/friendlycore/live.py): the
figure the page hands to the live chart, across budget moves (an exact ρ handed over, as a link or
Budget's click does, where FriendlyCore must answer; the ε slider where the backup does). (That it
fits a 1280×720 screen is checked in chromium: tests/e2e/test_e2e_main_panel.py.)"""

from __future__ import annotations

import json

import numpy as np
from apptest_helpers import container, hand_over_rho, open_app

# Fig. 6 blobs, n = 20,000, k = 8, t = 200: FriendlyCore answers from ρ ≈ 0.794 (docs/app.md).
LESSON = {"src": "generate", "gen": "fig6_blobs", "n": "20000", "k": "8", "t": "200", "seed": "0"}


def _panel(at) -> dict:
    """The main panel's figure (plotly JSON) as mounted under the ``main_panel`` container."""
    stack = [container(at, "main_panel")]
    while stack:
        node = stack.pop()
        if getattr(node, "type", None) == "bidi_component" and node.key == "main_panel_chart":
            return json.loads(json.loads(node.proto.json)["figure"])
        stack.extend(getattr(node, "children", {}).values())
    raise AssertionError("no main panel chart")


def _legend(fig: dict) -> dict[str, dict]:
    return {t["name"].replace("<br>", " "): t for t in fig["data"] if t.get("showlegend") is not False}


def _centers(at) -> np.ndarray:
    return np.asarray(at.session_state["_explore_last_result"][1].centers)


def test_main_panel_keeps_its_scale_and_the_earlier_draws_across_rho_moves():
    at = open_app(**LESSON, rho="1")
    assert not at.exception
    first = _panel(at)
    legend = _legend(first)
    cloud = [n for n in legend if n.startswith("noise cloud ×")]
    assert len(cloud) == 1, legend.keys()
    assert "earlier draws (runs you saw before)" not in legend
    c1 = _centers(at)
    shown = legend["private centers (this run) — private"]
    assert len(shown["x"]) == len(c1) == 8

    hand_over_rho(at, 0.794)
    assert not at.exception
    moved = _panel(at)
    legend = _legend(moved)
    assert cloud[0] in legend, "one magnification per dataset and k"
    assert moved["layout"]["xaxis"]["range"] == first["layout"]["xaxis"]["range"]
    assert moved["layout"]["yaxis"]["range"] == first["layout"]["yaxis"]["range"]
    earlier = legend["earlier draws (runs you saw before)"]
    np.testing.assert_allclose(earlier["x"], c1[:, 0])  # d = 2: the projection is the identity
    np.testing.assert_allclose(earlier["y"], c1[:, 1])
    assert moved["layout"]["margin"]["autoexpand"] is False

    at.select_slider(key="eps_slider").set_value(1.0).run()  # the backup answers: no cloud
    assert not at.exception
    low = _panel(at)
    assert not any(n.startswith("noise cloud") for n in _legend(low))
    assert "backup" in low["layout"]["annotations"][0]["text"]
    assert len(_legend(low)["earlier draws (runs you saw before)"]["x"]) == 16
