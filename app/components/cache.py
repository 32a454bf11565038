"""Caches: shared ones for public recipes, per-session ones for anything derived from uploads.

- Generated and built-in datasets depend only on public recipe parameters: they are cached
  process-wide with ``st.cache_resource`` (the Dataset is frozen and its arrays read-only, so
  sharing one object is safe and avoids copying 10⁵ rows on every rerun).
- Everything computed from a dataset's rows (the tuple stage, private runs, the reference
  k-means cost, sweeps) lives in a small LRU in ``st.session_state``, keyed on the dataset's
  content hash. Uploaded bytes and what is derived from them never leave the session and are
  never written to disk; ``st.cache_data`` is not used for them.
- :func:`speculate` starts a computation on one low-priority background thread and parks its
  future in the LRU; :func:`memo` of that key then waits for it instead of computing. The
  worker only runs pure functions of values passed in (never Session State).
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
         "figures": 8, "live_figures": 6, "statement": 8,
         "demo_data": 2}


def session_lru(name: str) -> OrderedDict:
    """The per-session LRU called ``name`` (created on first use)."""
    key = f"_cache_{name}"
    if key not in st.session_state:
        st.session_state[key] = OrderedDict()
    return st.session_state[key]


def memo(name: str, key: Hashable, compute: Callable[[], T]) -> T:
    """Return the cached value for ``key`` in the session cache ``name``, computing it once.

    A value :func:`speculate` started is waited for; if it failed, ``compute`` runs here, so
    the error is raised in the script thread like any other.
    """
    lru = session_lru(name)
    if key in lru:
        lru.move_to_end(key)
        value = lru[key]
        if not isinstance(value, Future):
            return value
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
    """Run the worker at nice 10 (on Linux a thread id is a schedulable entity), so that
    speculative work yields the cores to the script and to a browser on the same machine."""
    with contextlib.suppress(AttributeError, OSError):  # not Linux, or not permitted
        os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), 10)


#: One worker for the whole server: speculation never takes more than one core, and jobs run
#: in the order they were started (a job may wait on the future of an earlier one).
_WORKER = ThreadPoolExecutor(max_workers=1, thread_name_prefix="dpviz-speculate",
                             initializer=_lower_priority)


def speculate(name: str, key: Hashable, compute: Callable[[], T]) -> Future | None:
    """Start ``compute`` in the background unless ``key`` is cached or started already.

    ``compute`` must be a pure function of values captured from the script thread. Returns
    the (new or existing) future, or None if the value is cached or speculation is off
    (``DPVIZ_PREFETCH=0`` in the server's environment, e.g. on a server short of cores).
    """
    if os.environ.get("DPVIZ_PREFETCH", "1") == "0":
        return None
    lru = session_lru(name)
    if key in lru:
        value = lru[key]
        return value if isinstance(value, Future) else None
    future = _WORKER.submit(compute)
    put(name, key, future)
    return future
