"""Caches: shared ones for public recipes, per-session ones for anything derived from uploads.

- Generated and built-in datasets depend only on public recipe parameters: they are cached
  process-wide with ``st.cache_resource`` (the Dataset is frozen and its arrays read-only, so
  sharing one object is safe and avoids copying 10⁵ rows on every rerun).
- Everything computed from a dataset's rows (the tuple stage, private runs, the reference
  k-means cost, sweeps) lives in a small LRU in ``st.session_state``, keyed on the dataset's
  content hash. Uploaded bytes and what is derived from them never leave the session and are
  never written to disk; ``st.cache_data`` is not used for them.
- :func:`speculate` starts a computation on one low-priority background thread and parks its
  future in the LRU; :func:`memo` of that key then waits for it if it has started, or else
  withdraws it and computes at once. :func:`cancel_queued` withdraws what a user has moved
  away from. The worker only runs pure functions of values passed in (never Session State).
- Admission control (issue 19, load): speculation is skipped while as many computations that
  :func:`memo` started are running as there are cores, so a busy server spends its cores on what
  users asked for. ``DPVIZ_MAX_RUNS=C`` also caps those computations at C at once across all
  sessions (a session whose run must wait is told when it starts: :func:`queue_message`); off
  by default, because on the shared VM it made moves slower (docs/hostile.md, docs/deploy.md).
- Public data (issue 46): a value computed only from a public dataset (a generated recipe, a
  built-in table) and public parameters, e.g. a seeded simulation of the lesson and its figures'
  JSON, is the same for every session that asks, so ``memo(..., public=True)`` keeps it in one
  bounded process-wide LRU (:data:`PUBLIC`) and computes it once for the server, while other
  sessions asking at the same time wait for that one computation. Callers pass ``public=True``
  only for a dataset whose ``source`` is public (``simulation.is_public``); nothing derived from
  an upload is ever put there. The idle server empties it (:func:`_janitor`).
- Memory: when sessions are dropped, :func:`release_memory` returns the freed heap to the system.
"""

from __future__ import annotations

import contextlib
import ctypes
import ctypes.util
import functools
import gc
import math
import os
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Hashable
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any, TypeVar

import streamlit as st

from app.components.keys import Key

# Session keys this module owns (declared here, issue 45 item 4; keys that more than one module
# uses are in app/components/keys.py).
CACHE: Key[object] = Key("_cache_", object, "prefix: a per-session LRU (an OrderedDict), _cache_<name>")

T = TypeVar("T")

#: LRU sizes of the per-session caches. A private run holds an (n,) label array (0.8 MB at
#: n = 10⁵), a noise cloud N of them: the sizes bound a session to a few tens of MB.
SIZES = {"stage": 3, "run": 24, "refcost": 8, "sweep": 8, "upload": 2, "csv": 4, "cloud": 2,
         "figures": 8, "live_figures": 8, "statement": 10, "diagnostics": 24, "main_panels": 8,
         "demo_data": 2}


def session_lru(name: str) -> OrderedDict:
    """The per-session LRU called ``name`` (created on first use)."""
    key = f"{CACHE}{name}"
    if key not in st.session_state:
        st.session_state[key] = OrderedDict()
    return st.session_state[key]


def memo(name: str, key: Hashable, compute: Callable[[], T], *, public: bool = False) -> T:
    """Return the cached value for ``key`` in the session cache ``name``, computing it once.

    A value :func:`speculate` started is waited for if the worker is on it. If it is still
    queued (behind other speculation), it is cancelled and computed here at once; if it
    failed, it is computed here too, so the error is raised in the script thread.

    ``public=True`` (a value of public data only, see the module's docstring): the value comes
    from the server-wide :data:`PUBLIC` cache when another session computed it, and is computed
    into it otherwise (once for all sessions asking).
    """
    if public:
        hit = PUBLIC.get(name, key)
        if hit is not _MISSING:
            put(name, key, hit)  # a reference: the session keeps what it shows, at no copy
            return hit
        compute = functools.partial(PUBLIC.get_or_compute, name, key, compute)
    lru = session_lru(name)
    if key in lru:
        lru.move_to_end(key)
        value = lru[key]
        if not isinstance(value, Future):
            return value
        if value.cancel():  # still queued: do not wait behind other speculation
            value = ADMISSION.run(compute)
        else:
            try:
                value = value.result()
            except Exception:  # including CancelledError: compute it here instead
                value = ADMISSION.run(compute)
        lru[key] = value
        return value
    value = ADMISSION.run(compute)
    put(name, key, value)
    return value


def peek(name: str, key: Hashable, *, public: bool = False) -> Any | None:
    """The cached value or None (no computation; a speculation still running counts as None).
    ``public=True``: the server-wide public cache is looked at first."""
    if public and (hit := PUBLIC.get(name, key)) is not _MISSING:
        return hit
    value = session_lru(name).get(key)
    if isinstance(value, Future):
        if not value.done() or value.cancelled() or value.exception() is not None:
            return None
        value = value.result()
    return value


def put(name: str, key: Hashable, value: Any) -> None:
    lru = session_lru(name)
    lru[key] = value
    lru.move_to_end(key)
    while len(lru) > SIZES.get(name, 8):
        _, old = lru.popitem(last=False)
        if isinstance(old, Future):
            old.cancel()  # no-op once running


def _lower_priority() -> None:
    """Run the worker only on otherwise idle CPU (Linux SCHED_IDLE; nice 10 where that is not
    available), so that speculative work yields the cores to the script and to a browser on
    the same machine. On Linux a thread is a schedulable entity of its own.

    With nice 10, prefetching the δ neighbours too slowed ρ moves; with SCHED_IDLE it did not
    (docs/app.md). The cost: on a machine whose cores are all busy, the worker (and the GIL
    whenever it holds it) waits for idle time; ``DPVIZ_PREFETCH=0`` turns it off there."""
    with contextlib.suppress(AttributeError, OSError):  # not Linux, or not permitted
        os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), 10)
        os.sched_setscheduler(threading.get_native_id(), os.SCHED_IDLE, os.sched_param(0))


#: One worker for the whole server: speculation never takes more than one core, and jobs run
#: in the order they were started (a job may wait on the future of an earlier one).
_WORKER = ThreadPoolExecutor(max_workers=1, thread_name_prefix="dpviz-speculate",
                             initializer=_lower_priority)


def cancel_queued(*names: str) -> None:
    """Withdraw this session's speculation that the worker has not started (in the caches
    ``names``): called when the user moves on, so that what is wanted now runs first."""
    for name in names:
        lru = session_lru(name)
        for key in [k for k, v in lru.items() if isinstance(v, Future) and v.cancel()]:
            del lru[key]


def speculating() -> bool:
    """Whether work ahead is started now: not with ``DPVIZ_PREFETCH=0`` in the server's
    environment (e.g. a server short of cores), nor while the server is busy (:class:`Admission`)."""
    return os.environ.get("DPVIZ_PREFETCH", "1") != "0" and not ADMISSION.busy()


def speculate(name: str, key: Hashable, compute: Callable[[], T], *,
              public: bool = False) -> Future | None:
    """Start ``compute`` in the background unless ``key`` is cached or started already.

    ``compute`` must be a pure function of values captured from the script thread. Returns
    the (new or existing) future, or None if the value is cached or speculation is off
    (``DPVIZ_PREFETCH=0`` in the server's environment, e.g. on a server short of cores).
    ``public=True``: as :func:`memo`'s (a value another session computed is not computed again).
    """
    if not speculating():
        return None
    if public:
        if PUBLIC.get(name, key) is not _MISSING:
            return None
        compute = functools.partial(PUBLIC.get_or_compute, name, key, compute)
    lru = session_lru(name)
    if key in lru and not (isinstance(lru[key], Future) and lru[key].cancelled()):
        value = lru[key]
        return value if isinstance(value, Future) else None
    future = _WORKER.submit(compute)
    put(name, key, future)
    return future


# ------------------------------------------------------------- public values (issue 46) ---

_MISSING = object()
#: Entries of the server-wide caches of public values, per cache name (others: 16). The lesson's
#: ε slider has 17 stops and 8 δ stops: a class moving both stays within these.
PUBLIC_SIZES = {"run": 48, "statement": 48, "live_figures": 48, "diagnostics": 48, "main_panels": 48,
                "figures": 16, "core_eps": 8, "refcost": 4}


class PublicCache:
    """Bounded process-wide LRUs (one per cache name) of values computed from public data only,
    each computed once: sessions asking for a key that is being computed wait for it (one lock
    per key) instead of computing it again (issue 46: a class of 100 on the default lesson)."""

    def __init__(self, sizes: dict[str, int]) -> None:
        self.sizes = sizes
        self._lrus: dict[str, OrderedDict] = {}
        self._lock = threading.Lock()
        self._computing: dict[tuple[str, Hashable], list] = {}  # [lock, users]
        self._done: set[Hashable] = set()  # tokens of :meth:`first_time`

    def get(self, name: str, key: Hashable) -> Any:
        """The value, or ``_MISSING``."""
        with self._lock:
            lru = self._lrus.get(name)
            if lru is None or key not in lru:
                return _MISSING
            lru.move_to_end(key)
            return lru[key]

    def get_or_compute(self, name: str, key: Hashable, compute: Callable[[], T]) -> T:
        with self._lock:
            one = self._computing.setdefault((name, key), [threading.Lock(), 0])
            one[1] += 1  # sessions holding or waiting for this key's lock
        try:
            with one[0]:  # a second session asking now waits for the first one's computation
                value = self.get(name, key)
                if value is _MISSING:
                    value = compute()
                    with self._lock:
                        lru = self._lrus.setdefault(name, OrderedDict())
                        lru[key] = value
                        while len(lru) > self.sizes.get(name, 16):
                            lru.popitem(last=False)
                return value
        finally:
            with self._lock:
                one[1] -= 1
                if not one[1]:
                    del self._computing[(name, key)]

    def __len__(self) -> int:
        with self._lock:
            return sum(len(lru) for lru in self._lrus.values())

    def first_time(self, token: Hashable) -> bool:
        """True the first time ``token`` is asked about since the cache was last emptied (work
        started once for the server, e.g. a slider's warm-up, is not started again per move)."""
        with self._lock:
            if token in self._done:
                return False
            self._done.add(token)
            return True

    def clear(self) -> None:
        with self._lock:
            self._lrus.clear()
            self._done.clear()


#: THE server-wide cache of public values (:func:`memo` with ``public=True``).
PUBLIC = PublicCache(PUBLIC_SIZES)


_WARMING: dict[tuple[str, Hashable], Future] = {}
_WARM_LOCK = threading.Lock()


def warm(name: str, key: Hashable, compute: Callable[[], T]) -> Callable[[], T] | None:
    """Compute a public value (see :func:`memo`'s ``public``) on the background worker for the
    whole server, unless it is computed or being computed already (by any session): a class's
    later moves anywhere on the slider then find it done. Returns a function giving the value
    (waiting for it), or None when speculation is off or the server is busy (:func:`speculate`).
    Unlike :func:`speculate` nothing is put in the session's LRU (whose bound would cancel it)."""
    if not speculating():
        return None
    if (hit := PUBLIC.get(name, key)) is not _MISSING:
        return lambda: hit
    with _WARM_LOCK:
        future = _WARMING.get((name, key))
        if future is None:
            def job() -> T:
                try:
                    return PUBLIC.get_or_compute(name, key, compute)
                finally:
                    with _WARM_LOCK:
                        _WARMING.pop((name, key), None)

            future = _WARMING[(name, key)] = _WORKER.submit(job)
    return future.result


# ------------------------------------------------------------------------ load (issue 19) ---


class Admission:
    """At most ``limit`` computations at once across the server's sessions (script threads).

    Streamlit runs each session's script in its own thread; on a small machine twenty sessions
    computing at once share the cores (and the GIL) and all finish late. Here the first
    ``limit`` run and the others wait their turn (first come, first served), each showing a
    message saying when its run starts (:func:`queue_message`). A thread that holds a slot and
    computes something nested does not take a second one (no deadlock).
    """

    def __init__(self, limit: int | None, busy_at: int | None = None) -> None:
        self.limit = 1 << 30 if limit is None else max(1, int(limit))
        self.busy_at = self.limit if busy_at is None else max(1, int(busy_at))
        self._cond = threading.Condition()
        self._running = 0
        self._queue: list[int] = []  # tickets of the waiting threads, in arrival order
        self._next = 0
        self._mine = threading.local()
        #: Recent mean seconds a computation held its slot (None until one finished): the wait
        #: the queue message announces.
        self.mean_s: float | None = None

    def busy(self) -> bool:
        """``busy_at`` computations running, or someone waiting: no room for speculation."""
        with self._cond:
            return self._running >= min(self.busy_at, self.limit) or bool(self._queue)

    def run(self, compute: Callable[[], T]) -> T:
        if getattr(self._mine, "depth", 0):  # nested in a computation that holds a slot
            return compute()
        with self._slot():
            _test_hold_first_slot()
            self._mine.depth = 1
            try:
                return compute()
            finally:
                self._mine.depth = 0

    @contextlib.contextmanager
    def _slot(self):
        with self._cond:
            ahead = self._running >= self.limit or bool(self._queue)
            ticket = self._next
            self._next += 1
            if ahead:
                self._queue.append(ticket)
        if ahead:
            self._wait_turn(ticket)
        else:
            with self._cond:
                self._running += 1
        started = time.perf_counter()
        try:
            yield
        finally:
            with self._cond:
                self._running -= 1
                took = time.perf_counter() - started
                self.mean_s = took if self.mean_s is None else 0.7 * self.mean_s + 0.3 * took
                self._cond.notify_all()

    def _wait_turn(self, ticket: int) -> None:
        """Wait in line (first come, first served), saying every second when this run starts
        (:func:`queue_message`, from the place in line and the recent computations' mean time)."""
        notice = _QueueNotice()
        try:
            while True:
                with self._cond:
                    if self._running < self.limit and self._queue[0] == ticket:
                        self._queue.pop(0)
                        self._running += 1
                        self._cond.notify_all()
                        return
                    text = queue_message(self._queue.index(ticket), self.limit, self.mean_s)
                notice.show(text)  # outside the lock: it writes to the page
                with self._cond:
                    self._cond.wait(timeout=1.0)
        finally:
            notice.clear()


#: Test hook (tests/e2e/test_e2e_queue.py): a file path. The server process's first computation
#: that takes a slot holds it until that file exists (at most 120 s), after writing
#: ``<path>.held``, so that a browser test sees a second session wait in line, deterministically.
TEST_HOLD_FIRST_SLOT = "DPVIZ_TEST_HOLD_FIRST_SLOT"
_first_slot_taken = threading.Event()


def _test_hold_first_slot() -> None:
    path = os.environ.get(TEST_HOLD_FIRST_SLOT, "")
    if not path or _first_slot_taken.is_set():
        return
    _first_slot_taken.set()
    with contextlib.suppress(OSError), open(f"{path}.held", "w") as fh:
        fh.write("held\n")
    deadline = time.monotonic() + 120
    while not os.path.exists(path) and time.monotonic() < deadline:
        time.sleep(0.1)


def queue_message(ahead: int, limit: int, mean_s: float | None) -> str:
    """What a session waiting for a slot reads: how many wait before it and, once the server has
    timed a computation, when its run starts (its place in line times the recent mean time of a
    computation, over the ``limit`` that run at once; at least 1 s)."""
    when = ("as soon as one of them finishes" if mean_s is None
            else f"in about {max(1, math.ceil((ahead + 1) * mean_s / limit))} s")
    before = ("no other run waits" if ahead == 0 else
              f"{ahead} other run{'s wait' if ahead > 1 else ' waits'}")
    running = f"{limit} runs are" if limit > 1 else "1 run is"
    return f"The server is busy: {running} computing and {before} before yours. Your run starts {when}."


class _QueueNotice:
    """The queue message on the waiting session's page (nothing outside a script run, e.g. on
    the background worker or in a test calling :func:`memo` directly)."""

    def __init__(self) -> None:
        self._slot = None
        self._text = ""
        try:
            from streamlit.runtime.scriptrunner import get_script_run_ctx

            if get_script_run_ctx(suppress_warning=True) is not None:
                self._slot = st.empty()
        except Exception:  # Streamlit's internals moved: no message, the run still waits
            self._slot = None

    def show(self, text: str) -> None:
        if self._slot is not None and text != self._text:
            self._text = text
            with contextlib.suppress(Exception):  # a session gone mid-wait: nothing to show
                self._slot.info(text, icon=":material/hourglass_top:")

    def clear(self) -> None:
        if self._slot is not None:
            with contextlib.suppress(Exception):
                self._slot.empty()


#: No limit by default: on the shared 2-core VM a limit of 2 made a ρ move's p50 slower at
#: N = 20 (2.7–2.9 s against 1.8–2.3 s without, page loads 12–17 s against 6 s; docs/hostile.md):
#: a page load's tuple stage holds a slot for seconds and the moves queue behind it. Speculation
#: still stops while as many computations run as there are cores.
_LIMIT = os.environ.get("DPVIZ_MAX_RUNS")
ADMISSION = Admission(int(_LIMIT) if _LIMIT else None, busy_at=os.cpu_count() or 2)


def _malloc_trim() -> None:
    """Hand the C heap's free pages back to the system (glibc's ``malloc_trim``; a no-op
    elsewhere). Python frees a closed session's arrays, but glibc keeps the pages in its
    arenas, so the server's RSS stayed ~130 MB above its baseline after 20 sessions."""
    name = ctypes.util.find_library("c")
    with contextlib.suppress(OSError, AttributeError, TypeError):
        ctypes.CDLL(name).malloc_trim(0)


def release_memory() -> None:
    """Collect garbage (the app turns Streamlit's post-run collection off for speed, so cycles
    from a closed session wait for the next automatic one) and trim the C heap."""
    gc.collect()
    _malloc_trim()


def _session_count() -> int | None:
    try:
        from streamlit.runtime import Runtime

        return len(Runtime.instance()._session_mgr.list_sessions())
    except Exception:  # no runtime (tests, scripts), or Streamlit's internals moved
        return None


def _janitor(period: float) -> None:
    """Every ``period`` s: when the server holds fewer sessions than at the last look (closed
    sessions were dropped), :func:`release_memory`; when it holds none, the public values'
    cache is emptied first (:data:`PUBLIC`: an idle server gives that memory back, and the next
    class's first session computes them again)."""
    last, again = _session_count(), 0
    while True:
        time.sleep(period)
        now = _session_count()
        dropped = now is not None and last is not None and now < last
        if dropped or again == 1:
            before = _rss_mb()
            if now == 0:
                PUBLIC.clear()
            release_memory()
            _log(f"janitor sessions={last}->{now} rss={before:.0f}->{_rss_mb():.0f}MB")
        # Once more a few periods later: a dropped session's script thread and messages are
        # let go asynchronously, after the count falls (measured: ~30 MB more at 20 sessions).
        again = 3 if dropped else max(again - 1, 0)
        last = now


def _rss_mb() -> float:
    try:
        with open("/proc/self/status") as fh:
            kb = next(int(ln.split()[1]) for ln in fh if ln.startswith("VmRSS:"))
        return kb / 1024
    except (OSError, StopIteration, ValueError):
        return float("nan")


def _log(line: str) -> None:
    """Append to ``$DPVIZ_TIMING`` (the profiling log of ``rerun_timing.Laps``), if set."""
    path = os.environ.get("DPVIZ_TIMING")
    if path:
        with contextlib.suppress(OSError), open(path, "a") as fh:
            fh.write(line + "\n")


@functools.cache
def start_janitor(period: float = 2.0) -> None:
    """Start the memory janitor once per process (``DPVIZ_TRIM=0`` turns it off)."""
    if os.environ.get("DPVIZ_TRIM", "1") != "0":
        threading.Thread(target=_janitor, args=(period,), name="dpviz-janitor", daemon=True).start()
