"""Classroom mode refuses uploads however it is switched on (issue 46, item 3), at the HTTP level.

``DPVIZ_CLASSROOM=1`` alone (``DPVIZ_CLASSROOM=1 streamlit run app/main.py``, no
``--server.maxUploadSize 0``) used to leave Streamlit's upload endpoint accepting files: only
``dpviz app --classroom`` passed the 0 MB limit. Each test starts a real ``streamlit run`` on a free
loopback port, opens a session the way the browser does (Streamlit's websocket protocol, as
``bench/load.py``: the session id arrives in the first ``new_session`` message), takes the XSRF
cookie from the server's health endpoint (which the page polls), and PUTs a small CSV to
``/_stcore/upload_file/<session>/<file>``. The same request to a server outside classroom mode is
accepted (204): the probe is the browser's.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import os
import subprocess
import sys
import time
import urllib.error
import urllib.request
import uuid
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests" / "e2e"))  # the browser tests' server helpers
from st_e2e import free_port, stop_server  # noqa: E402

CSV = b"x,y\n1,2\n3,4\n"


def _serve(classroom: bool) -> tuple[subprocess.Popen, str]:
    """``streamlit run app/main.py`` with nothing but the environment saying classroom mode."""
    port = free_port()
    env = {k: v for k, v in os.environ.items() if k != "DPVIZ_CLASSROOM"}
    env["PYTHONPATH"] = str(ROOT)
    if classroom:
        env["DPVIZ_CLASSROOM"] = "1"
    proc = subprocess.Popen(
        [sys.executable, "-m", "streamlit", "run", str(ROOT / "app" / "main.py"), "--server.port", str(port),
         "--server.address", "127.0.0.1", "--server.headless", "true", "--browser.gatherUsageStats", "false"],
        cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(f"{url}/_stcore/health", timeout=2) as r:
                if r.status == 200:
                    return proc, url
        except OSError:
            time.sleep(0.3)
    proc.kill()
    raise RuntimeError("streamlit did not come up in 120 s")


def _xsrf(url: str) -> str:
    """The XSRF cookie the server sets (the page's health poll gets it; the browser echoes it in the
    X-Xsrftoken header)."""
    with urllib.request.urlopen(f"{url}/_stcore/health", timeout=30) as r:
        for header in r.headers.get_all("Set-Cookie") or []:
            name, _, rest = header.partition("=")
            if name.strip() == "_streamlit_xsrf":
                return rest.split(";", 1)[0]
    raise AssertionError("the server set no XSRF cookie")


def _put(url: str, session_id: str, token: str) -> int:
    """PUT one small CSV to the upload endpoint as the browser's file_uploader does; the status."""
    boundary = uuid.uuid4().hex
    body = (f"--{boundary}\r\nContent-Disposition: form-data; name=\"file\"; filename=\"rows.csv\"\r\n"
            "Content-Type: text/csv\r\n\r\n").encode() + CSV + f"\r\n--{boundary}--\r\n".encode()
    req = urllib.request.Request(
        f"{url}/_stcore/upload_file/{session_id}/{uuid.uuid4().hex}", data=body, method="PUT",
        headers={"Content-Type": f"multipart/form-data; boundary={boundary}", "X-Xsrftoken": token,
                 "Cookie": f"_streamlit_xsrf={token}"})
    try:
        with urllib.request.urlopen(req, timeout=30) as r:
            return r.status
    except urllib.error.HTTPError as exc:
        return exc.code


async def _statuses(url: str, token: str) -> tuple[int, int]:
    """Open a session and PUT a file twice: the moment its id arrives (its first script run has only
    just started) and after that run finished. Returns both HTTP statuses."""
    from streamlit.proto.BackMsg_pb2 import BackMsg
    from streamlit.proto.ForwardMsg_pb2 import ForwardMsg
    from tornado.websocket import websocket_connect

    ws = await websocket_connect(f"{url.replace('http', 'ws')}/_stcore/stream", subprotocols=["streamlit"])
    try:
        back = BackMsg()
        back.rerun_script.query_string = "n=3000&t=60&k=4&gk=4&seed=1"  # a small Explore page
        await ws.write_message(back.SerializeToString(), binary=True)
        early = None
        while True:
            raw = await asyncio.wait_for(ws.read_message(), 120)
            assert raw is not None, "the server closed the websocket"
            msg = ForwardMsg()
            msg.ParseFromString(raw)
            kind = msg.WhichOneof("type")
            if kind == "new_session" and early is None:
                session_id = msg.new_session.initialize.session_id
                early = await asyncio.to_thread(_put, url, session_id, token)
            elif kind == "script_finished":
                break
        late = await asyncio.to_thread(_put, url, session_id, token)
        return early, late
    finally:
        ws.close()


def _statuses_now(url: str) -> tuple[int, int]:
    """:func:`_statuses` on an event loop of its own thread: a test that ran earlier in this worker
    (a sync Playwright or AppTest session) may have left an event loop running in the main thread,
    where ``asyncio.run`` refuses to start."""
    with concurrent.futures.ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(asyncio.run, _statuses(url, _xsrf(url))).result()


@pytest.fixture
def server(request):
    proc, url = _serve(classroom=request.param)
    try:
        yield url
    finally:  # nothing is checked at exit; a server with prefetching on waits 2-3 s for its
        stop_server(proc)  # speculation thread (5.7 and 6.2 s teardowns here): killed after 1 s


@pytest.mark.parametrize("server", [True], indirect=True, ids=["DPVIZ_CLASSROOM=1"])
def test_the_environment_variable_alone_refuses_every_upload_at_the_endpoint(server):
    early, late = _statuses_now(server)
    assert (early, late) == (413, 413)  # 413 Payload Too Large: the 0 MB limit, before and after a run


@pytest.mark.parametrize("server", [False], indirect=True, ids=["not classroom"])
def test_outside_classroom_mode_the_same_upload_is_accepted(server):
    early, late = _statuses_now(server)
    assert late == 204  # the probe is right: the app's 50 MB limit once its script has run
    assert early in (204, 413)  # until the first run decides the mode, the packaged config refuses
