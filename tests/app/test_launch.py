"""``python -m app.launch`` (``make run``, ``dpviz app``, the benches and the browser tests): the
app's imports happen before the server listens, and nothing that draws is imported (issue 43)."""

from __future__ import annotations

import sys
from pathlib import Path

from app import launch

ROOT = Path(__file__).resolve().parents[2]


def test_preload_imports_the_library_and_every_component_but_no_page():
    names = launch.preload()
    files = {p.relative_to(ROOT).with_suffix("").as_posix().replace("/", ".")
             for p in (ROOT / "app" / "components").rglob("*.py") if p.name != "__init__.py"}
    assert files <= set(names)  # every component module, however deep
    assert {"dpviz", "sklearn.cluster", "pandas", "plotly.graph_objects"} <= set(names)
    assert not [n for n in names if n.startswith(("app.views", "app.main"))]  # pages draw: never
    assert all(n in sys.modules for n in names)


def test_main_hands_streamlit_run_the_app_and_the_options(monkeypatch):
    seen = {}
    monkeypatch.setattr(launch, "preload", lambda: seen.setdefault("preloaded", True))
    monkeypatch.setattr(launch, "warm", lambda: seen.setdefault("warmed", True))

    def fake_main(*, args, prog_name):
        seen.update(args=args, prog=prog_name)

    monkeypatch.setattr("streamlit.web.cli.main", fake_main)
    launch.main(["--server.port", "8600"])
    assert seen == {"preloaded": True, "warmed": True, "prog": "streamlit",
                    "args": ["run", str(ROOT / "app" / "main.py"), "--server.port", "8600"]}


def test_the_browser_tests_serve_the_app_through_the_launcher():
    sys.path.insert(0, str(ROOT / "tests" / "e2e"))
    try:
        from st_e2e import serve_command
    finally:
        sys.path.remove(str(ROOT / "tests" / "e2e"))
    assert serve_command(ROOT / "app" / "main.py")[1:] == ["-m", "app.launch"]
    assert serve_command(ROOT / "tests" / "app" / "toy_live_page.py")[1:3] == ["-m", "streamlit"]


def test_warm_parses_the_shipped_sweeps_once_for_the_process(monkeypatch, tmp_path):
    from app.components import sweep

    monkeypatch.setenv("DPVIZ_PRECOMPUTED", "1")
    sweep._parsed_precomputed.cache_clear()
    shipped = launch.warm()
    assert shipped == len(sweep.read_precomputed(sweep.PRECOMPUTED)[1]) > 0
    before = sweep._parsed_precomputed.cache_info()
    store = sweep.SharedSweeps()  # the server's store, made by the first Compare visitor
    after = sweep._parsed_precomputed.cache_info()
    assert (after.hits, after.misses) == (before.hits + 1, before.misses)  # not parsed again
    spec, frames = sweep.load_precomputed()[0]
    assert store.get(spec)[1] is frames
    # A rewritten file (make precompute while a server runs) is a new version: read again.
    copy = tmp_path / "sweeps.json"
    copy.write_bytes(sweep.PRECOMPUTED.read_bytes())
    monkeypatch.setenv("DPVIZ_PRECOMPUTED", str(copy))
    assert len(sweep.load_precomputed()) == shipped
    copy.write_text("{}")
    assert sweep.load_precomputed() == []  # no code hash: nothing, as before
    monkeypatch.setenv("DPVIZ_PRECOMPUTED", "0")
    assert launch.warm() == 0
