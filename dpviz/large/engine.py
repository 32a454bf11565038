"""Where the chunk and piece work runs: local threads (default) or a Dask distributed cluster.

Both engines expose the same three calls, so the pipeline in :mod:`dpviz.large.fc_stream` is
written once:

* ``map(fn, *iterables)`` runs ``fn`` on every item; threads return the results, Dask returns
  futures that stay on the workers;
* ``pick(parts, i)`` the i-th element of every part (Dask: on the workers, no round trip);
* ``gather(xs)`` the values on the driver.

The private stage (noise, ledger) always runs on the driver; the engines only ever compute
non-private intermediate values (tuples, sums, counts).

Faults on a Dask cluster (issue 29): a worker that dies mid-run loses its tasks and the results it
held; the scheduler recomputes them on the other workers from the same inputs (every task is a
deterministic function of its chunk, key and seed), so the release is the one without the fault.
A scheduler that cannot be reached, or that goes away, or a task that keeps killing its workers,
raises :class:`ClusterError` (an ``OSError``: one line, the command line exits 2); nothing is
released because the private stage runs only after every gather has returned.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import operator
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from dpviz._threads import default_n_jobs, one_thread

Progress = Callable[[str], None]


class ClusterError(OSError):
    """The Dask cluster could not run the work (scheduler unreachable or gone, workers lost)."""


def _one_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return f"{type(exc).__name__}: {text.splitlines()[0]}" if text else type(exc).__name__


def _cluster_failures() -> tuple[type[BaseException], ...]:
    """The exception types that mean the cluster failed, not the task (a task's own ValueError or
    OSError, e.g. a file it cannot read, passes through unchanged)."""
    import distributed.client as dc
    from distributed.comm.core import CommClosedError
    from distributed.scheduler import KilledWorker

    extra = tuple(getattr(dc, n) for n in ("ClosedClientError", "FuturesCancelledError") if hasattr(dc, n))
    return (KilledWorker, CommClosedError, concurrent.futures.CancelledError, asyncio.CancelledError,
            concurrent.futures.TimeoutError, TimeoutError, *extra)


def _quiet(_: str) -> None:
    pass


def _one_thread(fn: Callable[..., Any], *args: Any) -> Any:
    # Pieces and chunks are small numpy calls: BLAS threads would only contend with the engine's.
    with one_thread():
        return fn(*args)


class ThreadEngine:
    """Run tasks on ``n_jobs`` local threads (numpy, pyarrow and scikit-learn release the GIL)."""

    name = "threads"

    def __init__(self, n_jobs: int | None = None) -> None:
        self.n_jobs = default_n_jobs() if n_jobs is None else max(1, int(n_jobs))
        self._pool: ThreadPoolExecutor | None = None

    def map(self, fn: Callable[..., Any], *iterables: Iterable[Any], progress: Progress = _quiet,
            label: str = "") -> list[Any]:
        items = list(zip(*iterables, strict=True))
        if self.n_jobs == 1 or len(items) <= 1:
            out = []
            for i, args in enumerate(items):
                out.append(_one_thread(fn, *args))
                progress(f"{label} {i + 1}/{len(items)}")
            return out
        if self._pool is None:
            self._pool = ThreadPoolExecutor(max_workers=self.n_jobs, thread_name_prefix="dpviz")
        futures = [self._pool.submit(_one_thread, fn, *args) for args in items]
        out = []
        for i, f in enumerate(futures):  # in order: results never depend on completion order
            out.append(f.result())
            progress(f"{label} {i + 1}/{len(items)}")
        return out

    def pick(self, parts: list[Any], i: int) -> list[Any]:
        return [p[i] for p in parts]

    def slots(self) -> int:
        """How many tasks run at once (the threads)."""
        return self.n_jobs

    def gather(self, xs: list[Any]) -> list[Any]:
        return xs

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=False, cancel_futures=True)
            self._pool = None

    def __repr__(self) -> str:
        return f"ThreadEngine(n_jobs={self.n_jobs})"


class DaskEngine:
    """Run tasks on a Dask distributed cluster (a ``Client`` or a scheduler address)."""

    name = "dask"

    def __init__(self, client: Any) -> None:
        from distributed import Client

        self._own = not isinstance(client, Client)
        self.address = str(client) if self._own else client.scheduler.address
        if self._own:
            try:
                self.client = Client(client)
            except (OSError, ValueError, *_cluster_failures()) as exc:
                raise ClusterError(f"Cannot reach the Dask scheduler at {self.address!r} "
                                   f"({_one_line(exc)}); nothing was read or released.") from exc
        else:
            self.client = client

    def _failed(self, exc: BaseException) -> ClusterError:
        return ClusterError(f"The Dask cluster at {self.address!r} failed during the run ({_one_line(exc)}); "
                            "nothing was released.")

    def _status_ok(self) -> None:
        if self.client.status not in ("running", "connecting"):
            raise ClusterError(f"The connection to the Dask scheduler at {self.address!r} is "
                               f"{self.client.status}; nothing was released.")

    def map(self, fn: Callable[..., Any], *iterables: Iterable[Any], progress: Progress = _quiet,
            label: str = "") -> list[Any]:
        lists = [list(it) for it in iterables]
        if not lists or not lists[0]:
            return []
        self._status_ok()
        try:
            futures = self.client.map(_one_thread, [fn] * len(lists[0]), *lists, pure=False)
        except _cluster_failures() as exc:
            raise self._failed(exc) from exc
        progress(f"{label}: {len(futures)} task(s) submitted to {self.address}")
        return futures

    def pick(self, parts: list[Any], i: int) -> list[Any]:
        self._status_ok()
        try:
            return self.client.map(operator.getitem, parts, [i] * len(parts), pure=False)
        except _cluster_failures() as exc:
            raise self._failed(exc) from exc

    def slots(self) -> int:
        """How many tasks run at once: the cluster's worker threads (at least 1)."""
        self._status_ok()
        workers = self.client.scheduler_info().get("workers", {})
        return max(1, sum(int(w.get("nthreads", 1)) for w in workers.values()))

    def gather(self, xs: list[Any]) -> list[Any]:
        self._status_ok()
        try:
            return self.client.gather(xs)
        except _cluster_failures() as exc:
            raise self._failed(exc) from exc

    def close(self) -> None:
        if self._own:
            self.client.close()

    def __repr__(self) -> str:
        return f"DaskEngine({self.address})"


Engine = ThreadEngine | DaskEngine


def make_engine(scheduler: Any = None, n_jobs: int | None = None) -> Engine:
    """Threads when ``scheduler`` is None; else Dask (an address string or a ``Client``)."""
    if scheduler is None:
        return ThreadEngine(n_jobs)
    if isinstance(scheduler, ThreadEngine | DaskEngine):
        return scheduler
    return DaskEngine(scheduler)
