"""A release sampler for audits that count thousands of releases (issue 45): the release path,
numpy's noise.

:class:`FastReleaseSampler` is a :class:`dpviz.privacy.release.SecureRNG` (``is_secure`` is true, so
every run takes the release path, with its declared-size checks and refusals) whose noise comes
from a numpy Generator instead of OpenDP's exact samplers: the same distributions (Gaussian,
Laplace, the exponential mechanism as a Gumbel race), up to numpy's floating-point sampling. An
audit of what a release *decides* (who answers, whether it refuses) does not test the sampler's
exactness; OpenDP's draws were ~21 of the ~23 ms of one FriendlyCore release. OpenDP's samplers
are checked in tests/unit/test_release.py and test_no_data_refusals.py, this one's distributions in
``test_no_data_refusals.py::test_the_fast_release_sampler_takes_the_release_path_with_the_same_noise``;
an audit that uses it keeps a smaller run on ``SecureRNG``. Tests only: its floats are exactly what
Mironov's attack reads.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from dpviz.privacy.release import SecureRNG


class FastReleaseSampler(SecureRNG):
    """The release path with numpy noise (tests only; see the module docstring)."""

    def __init__(self, seed: Any = None) -> None:
        """``seed``: anything ``numpy.random.default_rng`` takes (a seeded audit is reproducible)."""
        self._rng = np.random.default_rng(seed)

    def __repr__(self) -> str:
        return "FastReleaseSampler()"

    def _add(self, draw, value: np.ndarray | float, scale: float) -> np.ndarray | float:
        """``value`` plus ``draw(0, scale, shape)`` (numpy's sampler), a float for a scalar."""
        if scale == 0:
            return value
        arr = np.asarray(value, dtype=np.float64)
        out = arr + draw(0.0, float(scale), arr.shape)
        return out if arr.ndim else float(out)

    def gaussian_release(self, value: np.ndarray | float, sigma: float) -> np.ndarray | float:
        return self._add(self._rng.normal, value, sigma)

    def laplace_release(self, value: np.ndarray | float, scale: float) -> np.ndarray | float:
        return self._add(self._rng.laplace, value, scale)

    def _race(self, logits: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The finite entries' indices and their scores plus Gumbel(1) noise."""
        lw = np.asarray(logits, dtype=np.float64).ravel()
        keep = np.flatnonzero(np.isfinite(lw))
        return keep, lw[keep] + self._rng.gumbel(0.0, 1.0, keep.size)

    def exponential_mechanism(self, logits: np.ndarray) -> int:
        keep, noisy = self._race(logits)
        if keep.size == 0:
            raise ValueError("exponential_mechanism needs at least one finite log-weight.")
        return int(keep[np.argmax(noisy)])

    def exponential_top(self, logits: np.ndarray, m: int) -> np.ndarray:
        keep, noisy = self._race(logits)
        m = int(min(m, keep.size))
        return keep[np.argsort(-noisy, kind="stable")[:m]].astype(np.int64)

    def _fresh(self) -> np.random.Generator:  # type: ignore[override]
        return self._rng

    def spawn(self, n: int) -> list[SecureRNG]:
        return [FastReleaseSampler(g) for g in self._rng.spawn(n)]
