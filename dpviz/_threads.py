"""Native thread pools: one BLAS/OpenMP limit shared safely by every family, and the core count.

Several families run numpy/scikit-learn kernels on worker threads (the tuple stage's blocks, the
grid coreset's weighted k-means, the hash-tree coreset, the streamed engine) and want one native
thread each. :func:`one_thread` limits BLAS and OpenMP inside a ``with`` block and is safe from
any number of threads at once; :func:`default_n_jobs` is the cores this process may use.

Thread safety: the process-wide BLAS limit is reference-counted under a lock (set by the first
user, restored by the last), so concurrent pipelines neither fight over nor leak it; OpenMP's
thread count is per thread and is limited and restored in the calling thread only.
"""

from __future__ import annotations

import contextlib
import os
import threading
from collections.abc import Iterator
from typing import Any

import threadpoolctl
from threadpoolctl import ThreadpoolController

_POOLS_LOCK = threading.Lock()
_POOLS: list[ThreadpoolController] = []


def _threadpools() -> ThreadpoolController:
    """The process's native thread pools, inspected once (scikit-learn's OpenMP loaded first)."""
    with _POOLS_LOCK:
        if not _POOLS:
            import sklearn.cluster  # noqa: F401  (loads the OpenMP runtime the controller must see)

            _POOLS.append(ThreadpoolController())
        return _POOLS[0]


# The BLAS limit is process-wide: the first thread in sets it and the last one out restores it.
# (Two overlapping threadpoolctl ``limit`` contexts on two threads each restored what they saw on
# entry, for every library, so the one leaving last could leave the process at 1 BLAS thread for
# good.) OpenMP's thread count is per thread: each thread limits and restores its own.
_LIMIT_LOCK = threading.Lock()
_limit_users = 0
_blas_original: list[int] = []


def _libs(user_api: str) -> list[Any]:
    return [c for c in _threadpools().lib_controllers if c.user_api == user_api]


def _set_blas(counts: list[int]) -> None:
    """Set the BLAS libraries' thread counts (under ``_LIMIT_LOCK``). threadpoolctl ≥ 3.8 lets one
    "controlling" thread change OpenBLAS and ignores the others; the lock already serializes our
    changes, so control is released before and after (whichever thread is first in next may set)."""
    release = getattr(threadpoolctl.OpenBLASController, "clear_controlling_thread", None)
    if release is not None:
        release(force=True)
    for c, n in zip(_libs("blas"), counts, strict=True):
        c.set_num_threads(n)
    if release is not None:
        release(force=True)


@contextlib.contextmanager
def one_thread() -> Iterator[None]:
    """Limit every native thread pool (BLAS, OpenMP) to one thread inside a ``with`` block.

    Safe from any number of threads at once: the process-wide BLAS limit is reference-counted
    under a lock (set by the first user, restored by the last); OpenMP's thread count is per
    thread and is limited and restored in the calling thread only. The library controllers are
    inspected once (``threadpool_limits`` re-inspects on every call: ~15 ms; 77 calls made it 80%
    of a small streamed tuple stage).
    """
    global _limit_users, _blas_original
    with _LIMIT_LOCK:
        if _limit_users == 0:
            _blas_original = [c.num_threads for c in _libs("blas")]
            _set_blas([1] * len(_blas_original))
        _limit_users += 1
    omp = _libs("openmp")
    omp_original = [c.num_threads for c in omp]  # this thread's
    for c in omp:
        c.set_num_threads(1)
    try:
        yield
    finally:
        for c, n in zip(omp, omp_original, strict=True):
            c.set_num_threads(n)
        with _LIMIT_LOCK:
            _limit_users -= 1
            if _limit_users == 0:
                _set_blas(_blas_original)


def default_n_jobs() -> int:
    """The cores this process may use."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not on Linux
        return max(1, os.cpu_count() or 1)


__all__ = ["default_n_jobs", "one_thread"]
