"""Learn's live example (issue 16, speed): a fragment whose figures are cached per ρ."""

from __future__ import annotations

import json

from apptest_helpers import open_app


def test_a_rho_move_redraws_the_live_example_from_its_cached_figures():
    at = open_app("learn")
    assert not at.exception
    at.select_slider(key="learn_demo_rho").set_value(0.1).run()
    assert not at.exception
    figures = at.session_state["_cache_figures"]
    story, scores = figures[("learn", 0.1)]
    fig = json.loads(story)
    # The point clouds are images (one per panel), not thousands of WebGL markers.
    assert fig["layout"]["images"] and not any(t.get("type") == "scattergl" for t in fig["data"])
    assert scores is None or json.loads(scores)["data"]
    assert ("learn", 1.0) in figures  # the first position's figures stay cached too
