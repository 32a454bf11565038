"""N concurrent sessions moving the ρ slider: server-side latency and server memory (issue 19).

    PYTHONPATH=. .venv/bin/python bench/load.py [--sessions 1,10,20] [--moves 10] [--n 20000]
        [--t 200] [--think 1.0] [--ttl 10] [--quick] [--json PATH]

Starts the app (``python -m app.launch``, as ``make run``) on a free loopback port (``DPVIZ_TIMING``
set, so every rerun's server-side time is logged by ``app.components.rerun_timing.Laps``), then for
each N drives N sessions at once with a light client: Streamlit's own websocket protocol (protobuf
``BackMsg`` / ``ForwardMsg`` over ``/_stcore/stream``), one asyncio task per session in this
process, no browser. Each session opens Explore on the Fig. 6 blobs (``n`` rows, ``t`` pieces),
waits for its first run (page load), then makes ``--moves`` ρ moves to seeded random slider
positions, each sent as the browser sends it (a fragment rerun with the slider's formatted value),
with a think time of ``--think`` s on average between moves.

Per move the client measures the round trip from sending the new value to the server's
``script_finished`` (loopback, so this is the server's queueing plus compute); the server's own
``explore.live`` time comes from the ``DPVIZ_TIMING`` log. An error is a run that ends in any
status other than success or an ``exception`` element in the page. Memory is the server's RSS
(``/proc/<pid>/status``) before, at the end of the moves, and after every session closed and
was dropped: the server runs with ``server.disconnectedSessionTTL = --ttl`` (Streamlit's
default is 120 s) and drops expired sessions lazily, so after the TTL one short connection
touches the session storage (:func:`settle`). Prints one table row per N.

A class at once (issue 37): ``--arrive 10`` opens the N sessions at seeded uniform times within
10 s instead of all at once; ``--classroom`` starts the server in classroom mode
(``DPVIZ_CLASSROOM=1``, uploads refused), as ``dpviz app --classroom`` does. The table also gives
the first screen's p50 and max, the server's CPU time (user + system of the whole process, from
``/proc/<pid>/stat``) per first screen and per move, and the RSS growth per session.

    PYTHONPATH=. .venv/bin/python bench/load.py --sessions 40 --arrive 10 --think 5 --moves 6 --classroom
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

import numpy as np
from streamlit.proto.BackMsg_pb2 import BackMsg
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg
from tornado.websocket import websocket_connect

ROOT = Path(__file__).resolve().parents[1]
STATUS_OK = {0, 3}  # FINISHED_SUCCESSFULLY, FINISHED_FRAGMENT_RUN_SUCCESSFULLY


def free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_server(port: int, timing: Path, ttl: int, arenas: int = 2,
                 classroom: bool = False) -> subprocess.Popen:
    cmd = [sys.executable, "-m", "app.launch",
           "--server.port", str(port), "--server.address", "127.0.0.1", "--server.headless", "true",
           "--browser.gatherUsageStats", "false", "--server.fileWatcherType", "none",
           "--server.disconnectedSessionTTL", str(ttl)]
    env = {**os.environ, "PYTHONPATH": str(ROOT), "DPVIZ_TIMING": str(timing)}
    if classroom:  # as `dpviz app --classroom` (dpviz/serve.py) starts it
        from dpviz.serve import CLASSROOM_ENV, CLASSROOM_OPTIONS

        cmd += list(CLASSROOM_OPTIONS)
        env[CLASSROOM_ENV] = "1"
    if arenas > 0:  # as `make run` starts the app (Makefile): fewer glibc arenas, less held memory
        env["MALLOC_ARENA_MAX"] = str(arenas)
    proc = subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, start_new_session=True)
    deadline = time.monotonic() + 90
    while time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/_stcore/health", timeout=2) as r:
                if r.status == 200:
                    return proc
        except OSError:
            time.sleep(0.5)
    proc.kill()
    raise RuntimeError("streamlit did not come up")


def cpu_s(pid: int) -> float:
    """User + system CPU time of the whole process (every thread) so far, in seconds."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def rss_mb(pid: int) -> float:
    text = Path(f"/proc/{pid}/status").read_text()
    return int(re.search(r"VmRSS:\s+(\d+) kB", text).group(1)) / 1024


class Session:
    """One browser-like session speaking Streamlit's websocket protocol."""

    def __init__(self, url: str, query: str) -> None:
        self.url, self.query = url, query
        self.page_hash = ""
        self.slider_id = self.fragment = None
        self.options: list[str] = []
        self.errors = 0

    async def _until_finished(self) -> None:
        while True:
            raw = await self.ws.read_message()
            if raw is None:
                raise ConnectionError("server closed the websocket")
            msg = ForwardMsg()
            msg.ParseFromString(raw)
            kind = msg.WhichOneof("type")
            if kind == "new_session":
                self.page_hash = msg.new_session.page_script_hash
            elif kind == "page_info_changed":
                self.query = msg.page_info_changed.query_string
            elif kind == "delta" and msg.delta.WhichOneof("type") == "new_element":
                el = msg.delta.new_element
                etype = el.WhichOneof("type")
                if etype == "exception":
                    self.errors += 1
                elif etype == "slider" and el.slider.id.endswith("eps_slider"):
                    self.slider_id, self.options = el.slider.id, list(el.slider.options)
                    self.fragment = msg.delta.fragment_id
            elif kind == "script_finished":
                if msg.script_finished not in STATUS_OK:
                    self.errors += 1
                return

    async def open(self) -> float:
        self.ws = await websocket_connect(f"{self.url}/_stcore/stream", subprotocols=["streamlit"])
        back = BackMsg()
        back.rerun_script.query_string = self.query
        t0 = time.perf_counter()
        await self.ws.write_message(back.SerializeToString(), binary=True)
        await self._until_finished()
        if self.slider_id is None:
            raise RuntimeError("no ρ slider on the page")
        return time.perf_counter() - t0

    async def move(self, option: str) -> float:
        back = BackMsg()
        rs = back.rerun_script
        rs.query_string, rs.page_script_hash, rs.fragment_id = self.query, self.page_hash, self.fragment
        widget = rs.widget_states.widgets.add()
        widget.id = self.slider_id
        widget.string_array_value.data.append(option)
        t0 = time.perf_counter()
        await self.ws.write_message(back.SerializeToString(), binary=True)
        await self._until_finished()
        return time.perf_counter() - t0

    def close(self) -> None:
        self.ws.close()


async def drive(url: str, n_sessions: int, moves: int, n: int, think: float, seed: int,
                pid: int | None = None, arrive: float = 0.0, t: int = 200) -> dict:
    query = f"src=generate&gen=fig6_blobs&n={n}&gk=8&k=8&t={t}&seed=1"
    sessions = [Session(url, query) for _ in range(n_sessions)]
    starts = np.random.default_rng([seed, 10**6]).uniform(0.0, arrive, n_sessions)

    async def arrive_and_open(s: Session, at: float) -> float:
        await asyncio.sleep(float(at))
        return await s.open()

    cpu0 = cpu_s(pid) if pid else float("nan")
    loads = await asyncio.gather(*(arrive_and_open(s, at) for s, at in zip(sessions, starts, strict=True)),
                                 return_exceptions=True)
    cpu1 = cpu_s(pid) if pid else float("nan")
    failed = [x for x in loads if isinstance(x, BaseException)]
    live = [s for s, x in zip(sessions, loads, strict=True) if not isinstance(x, BaseException)]

    async def user(i: int, s: Session) -> list[float]:
        rng = np.random.default_rng([seed, i])
        out = []
        for _ in range(moves):
            await asyncio.sleep(float(rng.exponential(think)))
            out.append(await s.move(s.options[int(rng.integers(len(s.options)))]))
        return out

    per = await asyncio.gather(*(user(i, s) for i, s in enumerate(live)), return_exceptions=True)
    cpu2 = cpu_s(pid) if pid else float("nan")
    lat = [t for p in per if not isinstance(p, BaseException) for t in p]
    errors = len(failed) + sum(isinstance(p, BaseException) for p in per) + sum(s.errors for s in live)
    peak = rss_mb(pid) if pid else float("nan")
    for s in live:
        s.close()
    await asyncio.sleep(0.5)  # let the close frames go out
    failures = [repr(x) for x in failed + [p for p in per if isinstance(p, BaseException)]]
    return dict(loads=[x for x in loads if not isinstance(x, BaseException)], lat=lat, errors=errors,
                peak=peak, failures=failures, cpu_open=(cpu1 - cpu0) / max(len(live), 1),
                cpu_move=(cpu2 - cpu1) / max(len(lat), 1))


def pct(xs: list[float], q: float) -> float:
    return float(np.percentile(xs, q)) if xs else float("nan")


def live_times(timing: Path, start: int) -> list[float]:
    lines = timing.read_text().splitlines()[start:] if timing.exists() else []
    return [int(m.group(1)) / 1e3 for ln in lines if (m := re.match(r"explore\.live total=(\d+)ms", ln))]


def settle(url: str, args: argparse.Namespace, pid: int) -> float:
    """RSS once the closed sessions are gone. Streamlit keeps a disconnected session for the
    TTL and drops it lazily (a cachetools TTLCache expires entries only when it is touched), so
    after the TTL one short session connects and closes, which expires the old ones; RSS is
    read ``--settle`` s later."""
    time.sleep(args.ttl + 2)

    async def touch() -> None:
        s = Session(url, "src=generate&gen=fig6_blobs&n=1000&page=learn")
        s.ws = await websocket_connect(f"{url}/_stcore/stream", subprotocols=["streamlit"])
        s.close()
        await asyncio.sleep(0.5)

    asyncio.run(touch())
    time.sleep(args.settle)  # the server's janitor frees their memory (app/components/cache.py)
    return rss_mb(pid)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sessions", default="1,10,20", help="comma-separated N values")
    ap.add_argument("--moves", type=int, default=10, help="ρ moves per session")
    ap.add_argument("--n", type=int, default=20_000, help="rows of the Fig. 6 blobs")
    ap.add_argument("--t", type=int, default=200,
                    help="FriendlyCore's pieces t (the app's default lesson: --n 150000 --t 1500)")
    ap.add_argument("--think", type=float, default=1.0, help="mean think time between moves (s)")
    ap.add_argument("--ttl", type=int, default=10, help="server.disconnectedSessionTTL (s)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--quick", action="store_true", help="N = 1, 5; 4 moves")
    ap.add_argument("--settle", type=float, default=10.0,
                    help="seconds after the closed sessions are dropped before RSS is read")
    ap.add_argument("--warmup-moves", type=int, default=6,
                    help="moves of the one warm-up session before the baseline RSS (lazy imports "
                         "and process-wide caches of public inputs are then part of the baseline)")
    ap.add_argument("--malloc-arena-max", type=int, default=2,
                    help="MALLOC_ARENA_MAX for the server, as `make run` sets it (0: unset, "
                         "glibc's default of 8 per core)")
    ap.add_argument("--arrive", type=float, default=0.0,
                    help="open the sessions at seeded uniform times within this many seconds (0: at once)")
    ap.add_argument("--classroom", action="store_true", help="serve in classroom mode (DPVIZ_CLASSROOM=1)")
    ap.add_argument("--json", type=Path, help="also write the raw numbers here")
    args = ap.parse_args()
    ns = [1, 5] if args.quick else [int(x) for x in args.sessions.split(",")]
    moves = 4 if args.quick else args.moves

    load_start = os.getloadavg()  # other work on the machine inflates every wall time: say how much
    timing = Path(tempfile.mkdtemp()) / "timing.log"
    port = free_port()
    proc = start_server(port, timing, args.ttl, args.malloc_arena_max, args.classroom)
    url = f"ws://127.0.0.1:{port}"
    rows, raw = [], {}
    try:
        # Warm-up: imports and the shared generated dataset (a public recipe, cached process-wide).
        asyncio.run(drive(url, 1, args.warmup_moves, args.n, 0.0, args.seed + 1, t=args.t))
        settle(url, args, proc.pid)
        for n_sess in ns:
            base = rss_mb(proc.pid)
            start = len(timing.read_text().splitlines()) if timing.exists() else 0
            t0 = time.perf_counter()
            out = asyncio.run(drive(url, n_sess, moves, args.n, args.think, args.seed, proc.pid, args.arrive,
                                    args.t))
            wall = time.perf_counter() - t0
            peak = out["peak"]
            if out["failures"]:
                print(f"N = {n_sess}: {len(out['failures'])} failure(s), first: {out['failures'][0]}")
            after = settle(url, args, proc.pid)
            server = live_times(timing, start)
            lat, loads = out["lat"], out["loads"]
            rows.append((n_sess, len(lat), out["errors"], statistics.median(loads) if loads else float("nan"),
                         pct(lat, 50), pct(lat, 99), max(lat, default=float("nan")),
                         pct(server, 50), pct(server, 99), base, peak, after, wall,
                         max(loads, default=float("nan")), out["cpu_open"], out["cpu_move"],
                         (peak - base) / n_sess, pct(loads, 95), pct(lat, 95)))
            raw[n_sess] = dict(latency=lat, page_load=loads, server_live=server, rss=[base, peak, after],
                               cpu_open=out["cpu_open"], cpu_move=out["cpu_move"])
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
    print(f"n = {args.n:,} rows, t = {args.t:,}, {moves} moves per session, think {args.think} s, "
          f"arrivals within {args.arrive} s, {'classroom mode, ' if args.classroom else ''}"
          f"disconnectedSessionTTL {args.ttl} s, {os.cpu_count()} CPUs, MALLOC_ARENA_MAX "
          f"{args.malloc_arena_max or 'unset'}, warm-up {args.warmup_moves} moves, load average "
          f"(1, 5, 15 min) at the start {' '.join(f'{x:.1f}' for x in load_start)}, at the end "
          f"{' '.join(f'{x:.1f}' for x in os.getloadavg())}")
    print("| N | moves | errors | page load p50 (s) | move p50 (s) | move p99 (s) | move max (s) "
          "| server live p50 (s) | server live p99 (s) | RSS before (MB) | RSS at end (MB) "
          "| RSS after close (MB) | wall (s) | page load max (s) | server CPU per page load (s) "
          "| server CPU per move (s) | RSS per session (MB) | page load p95 (s) | move p95 (s) |")
    print("|" + "---|" * 19)
    for r in rows:
        print("| " + " | ".join(f"{v:.2f}" if isinstance(v, float) else str(v) for v in r) + " |")
    janitor = [ln for ln in (timing.read_text().splitlines() if timing.exists() else [])
               if ln.startswith("janitor")]
    if janitor:  # app/components/cache.py: memory released when sessions were dropped
        print("server memory janitor: " + "; ".join(j.removeprefix("janitor ") for j in janitor))
    if args.json:
        args.json.write_text(json.dumps(raw))


if __name__ == "__main__":
    main()
