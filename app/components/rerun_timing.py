"""Section timings of the app's reruns, for profiling the live path (never shown in the app).

``bench/app_latency.py`` measures the browser side; this measures the server side of one rerun
when ``$DPVIZ_TIMING`` names a file to append to.
"""

from __future__ import annotations

import os
import time


class Laps:
    """Section timings of one rerun, appended to the file named by ``$DPVIZ_TIMING`` (if set).

    For profiling the live path (``bench/app_latency.py`` measures the browser side). Timings are
    never shown in the app: the running time of a private computation can depend on the data.
    """

    def __init__(self, name: str) -> None:
        self.path = os.environ.get("DPVIZ_TIMING")
        self.name = name
        self.t0 = self.last = time.perf_counter()
        self.cpu0 = time.thread_time()
        self.parts: list[str] = []

    def __call__(self, label: str) -> None:
        if self.path:
            now = time.perf_counter()
            self.parts.append(f"{label}={1e3 * (now - self.last):.0f}")
            self.last = now

    def done(self) -> None:
        if self.path:
            total = 1e3 * (time.perf_counter() - self.t0)
            cpu = 1e3 * (time.thread_time() - self.cpu0)
            with open(self.path, "a") as fh:
                fh.write(f"{self.name} total={total:.0f}ms cpu={cpu:.0f}ms "
                         + " ".join(self.parts) + "\n")
