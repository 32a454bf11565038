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
"""

from __future__ import annotations

import contextlib
import os
import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any, TypeVar

import streamlit as st

T = TypeVar("T")

#: LRU sizes of the per-session caches. A private run holds an (n,) label array (0.8 MB at
#: n = 10⁵), a noise cloud N of them: the sizes bound a session to a few tens of MB.
SIZES = {"stage": 3, "run": 24, "refcost": 8, "sweep": 8, "upload": 2, "csv": 4, "cloud": 2,
         "figures": 8, "live_figures": 8, "statement": 10,
         "demo_data": 2}


def session_lru(name: str) -> OrderedDict:
    """The per-session LRU called ``name`` (created on first use)."""
    key = f"_cache_{name}"
    if key not in st.session_state:
        st.session_state[key] = OrderedDict()
    return st.session_state[key]


def memo(name: str, key: Hashable, compute: Callable[[], T]) -> T:
    """Return the cached value for ``key`` in the session cache ``name``, computing it once.

    A value :func:`speculate` started is waited for if the worker is on it. If it is still
    queued (behind other speculation), it is cancelled and computed here at once; if it
    failed, it is computed here too, so the error is raised in the script thread.
    """
    lru = session_lru(name)
    if key in lru:
        lru.move_to_end(key)
        value = lru[key]
        if not isinstance(value, Future):
            return value
        if value.cancel():  # still queued: do not wait behind other speculation
            value = compute()
        else:
            try:
                value = value.result()
            except Exception:  # including CancelledError: compute it here instead
                value = compute()
        lru[key] = value
        return value
    value = compute()
    put(name, key, value)
    return value


def peek(name: str, key: Hashable) -> Any | None:
    """The cached value or None (no computation; a speculation still running counts as None)."""
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


def speculate(name: str, key: Hashable, compute: Callable[[], T]) -> Future | None:
    """Start ``compute`` in the background unless ``key`` is cached or started already.

    ``compute`` must be a pure function of values captured from the script thread. Returns
    the (new or existing) future, or None if the value is cached or speculation is off
    (``DPVIZ_PREFETCH=0`` in the server's environment, e.g. on a server short of cores).
    """
    if os.environ.get("DPVIZ_PREFETCH", "1") == "0":
        return None
    lru = session_lru(name)
    if key in lru and not (isinstance(lru[key], Future) and lru[key].cancelled()):
        value = lru[key]
        return value if isinstance(value, Future) else None
    future = _WORKER.submit(compute)
    put(name, key, future)
    return future
