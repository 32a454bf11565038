"""The storyboard's charts (app/components/live_chart.py): one mounted component per chart, fed
the cached figure JSON and the app-served plotly.js; ``st.plotly_chart`` when it cannot be
served. (That the page updates the graph in place is checked in a real browser:
tests/e2e/test_e2e_explore.py::test_eps_slider_redraws_the_storyboard.)"""

from __future__ import annotations

import json

import plotly
import pytest
from apptest_helpers import SMALL, container, open_app
from streamlit import config

from app.components import live_chart

CHARTS = ("storyboard_a", "storyboard_b", "storyboard_live")


def _elements(at, kind: str) -> dict:
    """Elements of ``kind`` (e.g. "bidi_component") under the storyboard, by key."""
    found, stack = {}, [container(at, "storyboard")]
    while stack:
        node = stack.pop()
        if getattr(node, "type", None) == kind:
            found[node.key] = node
        stack.extend(getattr(node, "children", {}).values())
    return found


def _shown_live_spec(at) -> str:
    key, _ = at.session_state["_explore_last_result"]
    return at.session_state["_cache_live_figures"][("live", key, False)]


def test_storyboard_charts_get_the_cached_figure_and_the_packaged_plotly_js():
    at = open_app(**SMALL, rho="1")
    assert not at.exception
    mounts = _elements(at, "bidi_component")
    assert set(mounts) == set(CHARTS)
    data = {key: json.loads(mount.proto.json) for key, mount in mounts.items()}
    spec = _shown_live_spec(at)
    assert data["storyboard_live"]["figure"] == spec
    assert data["storyboard_live"]["revision"] == live_chart.revision(spec)
    name = f"plotly-{plotly.__version__}.min.js"
    for key in CHARTS:
        assert data[key]["src"] == f"/app/static/{name}"
        assert data[key]["config"]["displaylogo"] is False
        assert mounts[key].proto.component_name == "dpviz_live_chart"
    served = live_chart.STATIC_DIR / name
    assert served.read_bytes() == (live_chart._PLOTLY_JS).read_bytes()

    at.select_slider(key="eps_slider").set_value(10.0).run()
    moved = json.loads(_elements(at, "bidi_component")["storyboard_live"].proto.json)
    assert moved["figure"] == _shown_live_spec(at) != spec


@pytest.fixture
def static_serving_off():
    before = config.get_option("server.enableStaticServing")
    config.set_option("server.enableStaticServing", False)
    yield
    config.set_option("server.enableStaticServing", before)


def test_without_static_serving_the_storyboard_falls_back_to_plotly_chart(static_serving_off):
    assert live_chart.plotly_js_url() is None
    at = open_app(**SMALL, rho="1")
    assert not at.exception
    assert not _elements(at, "bidi_component")
    charts = _elements(at, "plotly_chart")
    assert set(charts) == set(CHARTS)
    shown = json.loads(charts["storyboard_live"].proto.spec)
    assert shown["data"] == json.loads(_shown_live_spec(at))["data"]


def test_plotly_js_is_copied_once_under_a_versioned_name(tmp_path):
    name = live_chart.serve_plotly_js(tmp_path)
    assert name == f"plotly-{plotly.__version__}.min.js"
    assert (tmp_path / name).read_bytes() == live_chart._PLOTLY_JS.read_bytes()
    assert [p.name for p in tmp_path.iterdir()] == [name]  # no partial copy left behind


def test_plotly_js_url_honours_the_base_url_path():
    before = config.get_option("server.baseUrlPath")
    config.set_option("server.baseUrlPath", "/dp/")
    try:
        assert live_chart.plotly_js_url() == f"/dp/app/static/plotly-{plotly.__version__}.min.js"
    finally:
        config.set_option("server.baseUrlPath", before)


def test_unwritable_static_dir_means_no_url(tmp_path):
    blocked = tmp_path / "file"
    blocked.write_text("not a directory")
    assert live_chart.serve_plotly_js(blocked / "static") is None
