"""Where the chunk and piece work runs: local threads (default) or a Dask distributed cluster.

Both engines expose the same three calls, so the pipeline in :mod:`dpviz.large.fc_stream` is
written once:

* ``map(fn, *iterables)`` runs ``fn`` on every item; threads return the results, Dask returns
  futures that stay on the workers;
* ``pick(parts, i)`` the i-th element of every part (Dask: on the workers, no round trip);
* ``gather(xs)`` the values on the driver.

The private stage (noise, ledger) always runs on the driver; the engines only ever compute
non-private intermediate values (tuples, sums, counts).
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from dpviz.clustering.tuples import default_n_jobs, one_thread

Progress = Callable[[str], None]


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
        self.client = Client(client) if self._own else client

    def map(self, fn: Callable[..., Any], *iterables: Iterable[Any], progress: Progress = _quiet,
            label: str = "") -> list[Any]:
        lists = [list(it) for it in iterables]
        if not lists or not lists[0]:
            return []
        futures = self.client.map(_one_thread, [fn] * len(lists[0]), *lists, pure=False)
        progress(f"{label}: {len(futures)} task(s) submitted to {self.client.scheduler.address}")
        return futures

    def pick(self, parts: list[Any], i: int) -> list[Any]:
        return self.client.map(operator.getitem, parts, [i] * len(parts), pure=False)

    def gather(self, xs: list[Any]) -> list[Any]:
        return self.client.gather(xs)

    def close(self) -> None:
        if self._own:
            self.client.close()

    def __repr__(self) -> str:
        return f"DaskEngine({self.client.scheduler.address})"


Engine = ThreadEngine | DaskEngine


def make_engine(scheduler: Any = None, n_jobs: int | None = None) -> Engine:
    """Threads when ``scheduler`` is None; else Dask (an address string or a ``Client``)."""
    if scheduler is None:
        return ThreadEngine(n_jobs)
    if isinstance(scheduler, ThreadEngine | DaskEngine):
        return scheduler
    return DaskEngine(scheduler)
