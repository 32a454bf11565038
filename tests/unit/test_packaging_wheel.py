"""The built wheel installs and works on its own (issue 37): library, command line and app.

The wheel is built from a copy of the working tree (``pip wheel --no-deps``: PEP 517 through
setuptools, fetched by pip from its configured index), installed with its ``[app]`` extra in a
virtual environment made without the system's (or the shared .venv's) site-packages, and every
check runs that environment's programs from an empty temporary directory with ``PYTHONPATH``
unset (the Makefile exports the checkout's), so only the installed wheel can answer.

The environment's dependencies are resolved from the wheel's own metadata (``Requires-Dist``),
constrained to the versions requirements.txt pins (the tested ones; constraints never add a
package). Installing them takes ~35 s of CPU and ~1.1 GB, so the environment is kept under
``~/.cache/dpviz-tests/`` keyed by a hash of the wheel's ``Requires-Dist``, the constraints and
the Python version: a change to any declared dependency makes a new one from nothing, and every
run force-reinstalls the freshly built wheel itself. ``DPVIZ_PACKAGING_FRESH=1`` makes a
throwaway environment instead.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import textwrap
import time
import urllib.request
import zipfile
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.packaging
STEP_TIMEOUT = 600  # one pip step on a loaded 2-core machine


def _clean_env(**extra: str) -> dict[str, str]:
    """This process's environment without anything pointing at the checkout or its venv."""
    env = {k: v for k, v in os.environ.items()
           if k not in ("PYTHONPATH", "VIRTUAL_ENV", "PYTHONHOME", "PYTHONSTARTUP")}
    return {**env, **extra}


def _run(cmd: list[str], cwd: Path, **kw) -> subprocess.CompletedProcess:
    out = subprocess.run(cmd, cwd=cwd, env=kw.pop("env", _clean_env()), capture_output=True,
                         text=True, timeout=kw.pop("timeout", STEP_TIMEOUT), **kw)
    assert out.returncode == 0, f"{cmd}\n{out.stdout[-3000:]}\n{out.stderr[-3000:]}"
    return out


def _source_copy(dest: Path) -> Path:
    """The working tree's tracked and untracked-but-not-ignored files (no .venv, no build/)."""
    names = subprocess.run(["git", "ls-files", "-co", "--exclude-standard", "-z"], cwd=ROOT,
                           capture_output=True, check=True).stdout.decode().split("\0")
    for name in filter(None, names):
        src = ROOT / name
        if src.is_file():
            (dest / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dest / name)
    return dest


def _dockerfile() -> str:
    """The Dockerfile with its continuation lines joined."""
    return (ROOT / "Dockerfile").read_text().replace("\\\n", " ")


def _exec_form(instruction: str) -> list[list[str]]:
    """The JSON (exec) form arguments of every ``instruction`` line of the Dockerfile."""
    return [json.loads(m) for m in re.findall(rf"^\s*{instruction}\s+(\[.*\])\s*$", _dockerfile(), re.M)]


def _constraints(dest: Path) -> Path:
    """The Dockerfile's own command that turns requirements.txt into pip constraints (extras and
    -r lines stripped: the pinned versions), run on this checkout's requirements.txt."""
    m = re.search(r"^RUN (sed .*?) > /tmp/constraints\.txt", _dockerfile(), re.M)
    assert m, "the Dockerfile's constraints step moved: update this test"
    cmd = m.group(1).replace("/tmp/requirements.txt", str(ROOT / "requirements.txt"))
    subprocess.run(["bash", "-c", f"{cmd} > {dest}"], check=True)
    assert "dask==" in dest.read_text() and "[" not in dest.read_text()
    return dest


def _requires(wheel: Path) -> list[str]:
    with zipfile.ZipFile(wheel) as z:
        meta = next(n for n in z.namelist() if n.endswith(".dist-info/METADATA"))
        return [ln for ln in z.read(meta).decode().splitlines() if ln.startswith("Requires-Dist:")]


def _environment(wheel: Path, constraints: Path, scratch: Path) -> Path:
    """A venv with ``wheel[app]`` and exactly what its metadata pulls in; its directory."""
    key = hashlib.sha256("\n".join([*_requires(wheel), constraints.read_text(), sys.version])
                         .encode()).hexdigest()[:16]
    fresh = os.environ.get("DPVIZ_PACKAGING_FRESH", "") == "1"
    cache = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "dpviz-tests"
    venv = scratch / "venv" if fresh else cache / f"venv-{key}"
    done = venv / ".dpviz-complete"
    pip = [str(venv / "bin" / "python"), "-m", "pip", "install", "--quiet", "-c", str(constraints)]
    if not done.is_file():
        shutil.rmtree(venv, ignore_errors=True)
        venv.parent.mkdir(parents=True, exist_ok=True)
        _run([sys.executable, "-m", "venv", str(venv)], scratch)  # no --system-site-packages
        _run([*pip, f"{wheel}[app]"], scratch)
        done.write_text(key)
    _run([*pip, "--force-reinstall", "--no-deps", str(wheel)], scratch)  # this build, not a cached one
    return venv


@pytest.fixture(scope="module")
def installed(tmp_path_factory) -> dict[str, Path]:
    tmp = tmp_path_factory.mktemp("packaging")
    src = _source_copy(tmp / "src")
    _run([sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "-w", str(tmp / "dist"), str(src)],
         tmp)
    (wheel,) = (tmp / "dist").glob("dpviz-*.whl")
    venv = _environment(wheel, _constraints(tmp / "constraints.txt"), tmp)
    work = tmp / "elsewhere"  # an empty working directory: no dpviz/ or app/ to import from
    work.mkdir()
    for run in _exec_form("RUN"):  # the image's build steps after the install (plotly.js copy)
        assert run[0] == "python"
        _run([str(venv / "bin" / "python"), *run[1:]], work)
    return {"wheel": wheel, "bin": venv / "bin", "work": work}


def test_wheel_holds_the_library_and_the_app_and_nothing_else(installed):
    names = set(zipfile.ZipFile(installed["wheel"]).namelist())
    tops = {n.split("/")[0] for n in names}
    assert tops == {"dpviz", "dpviz_app", next(t for t in tops if t.endswith(".dist-info"))}
    for must in ("dpviz_app/app/main.py", "dpviz_app/.streamlit/config.toml",
                 "dpviz_app/app/precomputed/budget_sweeps.json", "dpviz/clustering/auto_rule.json"):
        assert must in names
    # Every Python file and data file of the checkout's app/ and dpviz/ is in the wheel.
    for path in [*(ROOT / "app").rglob("*.py"), *(ROOT / "app" / "precomputed").glob("*.json")]:
        if "__pycache__" not in path.parts and "static" not in path.parts:
            assert f"dpviz_app/{path.relative_to(ROOT).as_posix()}" in names, path
    for path in [*(ROOT / "dpviz").rglob("*.py"), *(ROOT / "dpviz").rglob("*.json")]:
        if "__pycache__" not in path.parts:
            assert path.relative_to(ROOT).as_posix() in names, path
    # The wheel declares the runtime dependencies and the extras.
    requires = "\n".join(_requires(installed["wheel"]))
    for dep in ("numpy", "scipy", "scikit-learn", "pandas", "plotly", "pyarrow", "opendp"):
        assert f"Requires-Dist: {dep}" in requires
    assert 'streamlit>=1.67; extra == "app"' in requires and 'extra == "scale"' in requires


def test_installed_command_line_and_library_run_from_the_wheel(installed):
    b, work = installed["bin"], installed["work"]
    help_text = _run([str(b / "dpviz"), "--help"], work).stdout
    assert "run" in help_text and "app" in help_text
    script = textwrap.dedent("""
        import json, dpviz, numpy as np
        from dpviz.data import fig6_blobs
        ds = fig6_blobs(3000, k=4, rng=1)
        r = dpviz.run("friendlycore", ds.X, 4, epsilon=2.0, delta=1e-6, radius=10.0, rng=7)
        np.savetxt("rows.csv", ds.X, delimiter=",", header="a,b", comments="")
        print(json.dumps({"file": dpviz.__file__, "eps": r.guarantee.eps,
                          "centers": None if r.centers is None else np.asarray(r.centers).shape}))
    """)
    out = json.loads(_run([str(b / "python"), "-c", script], work).stdout.splitlines()[-1])
    assert Path(out["file"]).is_relative_to(b.parent), out["file"]  # the installed copy ran
    assert 1.99 <= out["eps"] <= 2.0 and out["centers"] == [4, 2]  # calibrated to at most the target
    # The command line's release (pyarrow reader, OpenDP sampler, plotly report) from the wheel.
    _run([str(b / "dpviz"), "run", "rows.csv", "--k", "4", "--epsilon", "2", "--delta", "1e-6",
          "--radius", "10", "--n-declared", "3000", "--out", "release.json", "--quiet", "--unbooked"],
         work)  # --unbooked: a release needs --dataset-id or says it is unbooked (issue 34, C)
    release = json.loads((work / "release.json").read_text())
    assert release["booking"]["booked"] is False
    assert np.asarray(release["centers"]).shape == (4, 2)
    assert (work / "release.html").stat().st_size > 1_000_000  # plotly.js inlined: works offline


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


#: One browser-like session over Streamlit's websocket (as bench/load.py drives it): the landing
#: page's texts, element types, pages and run status. Only a client: it runs in this test's Python.
SESSION = textwrap.dedent("""
    import asyncio, json, sys
    from streamlit.proto.BackMsg_pb2 import BackMsg
    from streamlit.proto.ForwardMsg_pb2 import ForwardMsg
    from tornado.websocket import websocket_connect

    async def main(url):
        ws = await websocket_connect(url + "/_stcore/stream", subprotocols=["streamlit"])
        back = BackMsg()
        back.rerun_script.query_string = ""
        await ws.write_message(back.SerializeToString(), binary=True)
        seen = {"texts": [], "types": [], "status": None, "pages": []}
        while seen["status"] is None:
            msg = ForwardMsg()
            msg.ParseFromString(await ws.read_message())
            kind = msg.WhichOneof("type")
            if kind == "navigation":
                seen["pages"] = [p.page_name for p in msg.navigation.app_pages]
            elif kind == "delta" and msg.delta.WhichOneof("type") == "new_element":
                el = msg.delta.new_element
                seen["types"].append(el.WhichOneof("type"))
                for field in ("markdown", "alert"):
                    if el.WhichOneof("type") == field:
                        seen["texts"].append(getattr(el, field).body)
            elif kind == "script_finished":
                seen["status"] = msg.script_finished
        ws.close()
        print(json.dumps(seen))

    asyncio.run(main(sys.argv[1]))
""")


def _wait_healthy(url: str, proc: subprocess.Popen, timeout: float = 120) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        assert proc.poll() is None, f"dpviz app exited with {proc.returncode}"
        try:
            with urllib.request.urlopen(f"{url}/_stcore/health", timeout=2) as r:
                if r.status == 200 and r.read() == b"ok":
                    return
        except OSError:
            time.sleep(0.5)
    raise AssertionError("the installed app never answered its health check")


def test_installed_app_serves_the_classroom_lesson(installed):
    b, work = installed["bin"], installed["work"]
    port = _free_port()
    url = f"http://127.0.0.1:{port}"
    (cmd,) = _exec_form("CMD")  # the image's command, on a free loopback port
    assert cmd[:3] == ["dpviz", "app", "--classroom"] and "8501" in cmd and "0.0.0.0" in cmd
    cmd = [str(b / "dpviz"), *[{"8501": str(port), "0.0.0.0": "127.0.0.1"}.get(a, a) for a in cmd[1:]]]
    proc = subprocess.Popen(cmd, cwd=work, env=_clean_env(), stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True)
    try:
        _wait_healthy(url, proc)
        (health,) = _exec_form("HEALTHCHECK.*CMD")  # the image's HEALTHCHECK, as Docker runs it
        _run([str(b / "python"), *[a.replace(":8501/", f":{port}/") for a in health[1:]]], work)
        # plotly.js for the live charts, copied at build time, is served from the installed app.
        version = _run([str(b / "python"), "-c", "import plotly; print(plotly.__version__)"], work).stdout
        with urllib.request.urlopen(f"{url}/app/static/plotly-{version.strip()}.min.js", timeout=10) as r:
            assert r.status == 200 and len(r.read()) > 1_000_000
        with urllib.request.urlopen(url, timeout=10) as r:
            assert r.status == 200 and b"<html" in r.read().lower()
        (work / "session.py").write_text(SESSION)
        ws_url = url.replace("http://", "ws://")
        seen = json.loads(_run([sys.executable, "session.py", ws_url], work, timeout=300).stdout)
        assert seen["status"] == 0, seen  # ScriptFinishedStatus.FINISHED_SUCCESSFULLY
        assert "exception" not in seen["types"]
        assert any("Classroom mode" in t for t in seen["texts"])
        assert "slider" in seen["types"]  # Explore's ε slider (a select_slider is a slider element)
        assert seen["pages"] and "release" not in [p.lower() for p in seen["pages"]]
        # The installed app hashes its code as the checkout's does (same pinned numeric packages):
        # the precomputed Budget sweeps shipped in the wheel are used, not recomputed.
        probe = ("import sys, dpviz.serve as s; sys.path.insert(0, str(s.app_root())); "
                 "from app.components.sweep import code_hash; print(s.app_root(), code_hash())")
        root, installed_hash = _run([str(b / "python"), "-c", probe], work).stdout.split()
        assert Path(root).is_relative_to(b.parent) and Path(root).name == "dpviz_app"
        from app.components.sweep import code_hash

        assert installed_hash == code_hash()
    finally:
        proc.send_signal(signal.SIGTERM)  # forwarded to Streamlit (a container's `docker stop`)
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            raise AssertionError("dpviz app did not stop on SIGTERM") from None
    assert proc.returncode == 0, proc.stdout.read()[-2000:]
