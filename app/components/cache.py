"""Caches: shared ones for public recipes, per-session ones for anything derived from uploads.

- Generated and built-in datasets depend only on public recipe parameters: they are cached
  process-wide with ``st.cache_resource`` (the Dataset is frozen and its arrays read-only, so
  sharing one object is safe and avoids copying 10⁵ rows on every rerun).
- Everything computed from a dataset's rows (the tuple stage, private runs, the reference
  k-means cost, sweeps) lives in a small LRU in ``st.session_state``, keyed on the dataset's
  content hash. Uploaded bytes and what is derived from them never leave the session and are
  never written to disk; ``st.cache_data`` is not used for them.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Hashable
from typing import Any, TypeVar

import streamlit as st

T = TypeVar("T")

#: LRU sizes of the per-session caches. A private run holds an (n,) label array (0.8 MB at
#: n = 10⁵), a noise cloud N of them: the sizes bound a session to a few tens of MB.
SIZES = {"stage": 3, "run": 24, "refcost": 8, "sweep": 8, "upload": 2, "csv": 4, "cloud": 2,
         "figures": 8, "demo_data": 2, "prefetch": 4}


def session_lru(name: str) -> OrderedDict:
    """The per-session LRU called ``name`` (created on first use)."""
    key = f"_cache_{name}"
    if key not in st.session_state:
        st.session_state[key] = OrderedDict()
    return st.session_state[key]


def memo(name: str, key: Hashable, compute: Callable[[], T]) -> T:
    """Return the cached value for ``key`` in the session cache ``name``, computing it once."""
    lru = session_lru(name)
    if key in lru:
        lru.move_to_end(key)
        return lru[key]
    value = compute()
    lru[key] = value
    while len(lru) > SIZES.get(name, 8):
        lru.popitem(last=False)
    return value


def peek(name: str, key: Hashable) -> Any | None:
    """The cached value or None (no computation)."""
    return session_lru(name).get(key)


def put(name: str, key: Hashable, value: Any) -> None:
    lru = session_lru(name)
    lru[key] = value
    lru.move_to_end(key)
    while len(lru) > SIZES.get(name, 8):
        lru.popitem(last=False)
