"""The release path: a secure noise sampler, a per-session privacy ledger and a seedless export.

A *simulation* (any run given an int seed or a numpy Generator) is reproducible: whoever holds
its seed can subtract its noise, so its numbers must never be published. A *release* draws its
noise here:

* :class:`SecureRNG` stands in for ``rng=`` wherever the library takes one. Gaussian and
  Laplace noise is added by OpenDP's samplers (``opendp.measurements.make_gaussian`` /
  ``make_laplace``), which sample the noisy value exactly and round it once, from a
  cryptographically secure source (immune to the floating-point attack on textbook samplers,
  Mironov 2012). Everything else (piece assignment, permutations, the oracle's seeding) comes
  from a fresh OS-entropy numpy Generator per call. It never stores or exposes a seed.
* :class:`SessionLedger` composes every release made on one dataset (keyed by its content hash)
  in one session: :meth:`SessionLedger.preview` is the composed total if one more release is
  made, :meth:`SessionLedger.add` books it.
* :func:`export_release` writes a release as JSON: centers, the row-level statement, the ledger
  rows and the parameters, never a seed.

References: Mironov 2012 ("On significance of the least significant bits for differential
privacy"); the OpenDP library (opendp.org), ``make_gaussian`` and ``make_laplace``; Bun &
Steinke 2016, Lemma 2.3 (zCDP composition).
"""

from __future__ import annotations

import functools
import json
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from dpviz.privacy.accounting import PrivacyStatement, compose_dp, row_level_statement
from dpviz.privacy.budget import ApproxDP
from dpviz.privacy.ledger import Ledger

#: Keys an exported release must never contain (checked by :func:`export_release`).
FORBIDDEN_KEYS = ("seed", "seeds", "seed_streams", "entropy", "state")


@functools.cache
def _opendp() -> Any:
    import opendp.prelude as dp

    dp.enable_features("contrib")  # make_gaussian / make_laplace on floats are "contrib"
    return dp


@functools.cache
def _gaussian_measurement(scale: float) -> Any:
    dp = _opendp()
    return dp.m.make_gaussian(dp.vector_domain(dp.atom_domain(T=float, nan=False)),
                              dp.l2_distance(T=float), scale=scale)


@functools.cache
def _laplace_measurement(scale: float) -> Any:
    dp = _opendp()
    return dp.m.make_laplace(dp.vector_domain(dp.atom_domain(T=float, nan=False)),
                             dp.l1_distance(T=float), scale=scale)


def _opendp_release(measurement: Any, value: np.ndarray | float) -> np.ndarray | float:
    arr = np.asarray(value, dtype=np.float64)
    out = np.asarray(measurement(arr.ravel().tolist()), dtype=np.float64).reshape(arr.shape)
    return out if arr.ndim else float(out)


class SecureRNG:
    """A release sampler usable wherever the library takes ``rng=`` (it never holds a seed).

    ``gaussian_release`` / ``laplace_release`` are what :mod:`dpviz.privacy.mechanisms` calls:
    OpenDP adds the noise to the value itself (floating-point safe, CSPRNG). The Generator-like
    methods (``integers``, ``random``, ``permutation``, ``choice``, ``uniform``, ``spawn``) serve
    the non-noise randomness from a Generator seeded with fresh OS entropy on every call.
    ``normal`` / ``laplace`` also work (OpenDP noise around 0) for code that draws noise directly.
    ``gumbel`` (the exponential mechanism) is refused: no floating-point-safe sampler is wired.

    Privacy
    -------
    The noise of a release cannot be replayed: there is no seed to publish or leak.
    """

    is_secure_sampler = True

    def __repr__(self) -> str:
        return "SecureRNG()"

    # ---- noise (OpenDP) ------------------------------------------------------------------
    def gaussian_release(self, value: np.ndarray | float, sigma: float) -> np.ndarray | float:
        """value + N(0, σ²) per coordinate, sampled by OpenDP's ``make_gaussian``."""
        if sigma == 0:
            return value
        return _opendp_release(_gaussian_measurement(float(sigma)), value)

    def laplace_release(self, value: np.ndarray | float, scale: float) -> np.ndarray | float:
        """value + Lap(b) per coordinate, sampled by OpenDP's ``make_laplace``."""
        if scale == 0:
            return value
        return _opendp_release(_laplace_measurement(float(scale)), value)

    def normal(self, loc: float = 0.0, scale: float = 1.0, size: Any = None) -> np.ndarray | float:
        z = self.gaussian_release(np.zeros(size if size is not None else ()), float(scale))
        return np.asarray(z) + loc if size is not None else float(z) + loc

    def standard_normal(self, size: Any = None) -> np.ndarray | float:
        return self.normal(0.0, 1.0, size)

    def laplace(self, loc: float = 0.0, scale: float = 1.0, size: Any = None) -> np.ndarray | float:
        z = self.laplace_release(np.zeros(size if size is not None else ()), float(scale))
        return np.asarray(z) + loc if size is not None else float(z) + loc

    def gumbel(self, *args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError(
            "SecureRNG has no floating-point-safe Gumbel sampler: the exponential mechanism is not "
            "available on the release path."
        )

    # ---- everything else (OS entropy, fresh per call) ------------------------------------
    @staticmethod
    def _fresh() -> np.random.Generator:
        return np.random.default_rng(np.random.SeedSequence())  # 128 bits from the OS

    def integers(self, *args: Any, **kwargs: Any) -> Any:
        return self._fresh().integers(*args, **kwargs)

    def random(self, *args: Any, **kwargs: Any) -> Any:
        return self._fresh().random(*args, **kwargs)

    def uniform(self, *args: Any, **kwargs: Any) -> Any:
        return self._fresh().uniform(*args, **kwargs)

    def permutation(self, *args: Any, **kwargs: Any) -> Any:
        return self._fresh().permutation(*args, **kwargs)

    def choice(self, *args: Any, **kwargs: Any) -> Any:
        return self._fresh().choice(*args, **kwargs)

    def spawn(self, n: int) -> list[SecureRNG]:
        return [SecureRNG() for _ in range(n)]


def is_secure(rng: Any) -> bool:
    """True when ``rng`` is the release sampler (a run on it is a release, not a simulation)."""
    return bool(getattr(rng, "is_secure_sampler", False))


# ----------------------------------------------------------------------------- session ledger


@dataclass(frozen=True)
class SessionEntry:
    """One release booked in a session: its label, row-level (ε, δ) and parameters."""

    label: str
    row: ApproxDP
    params: Mapping[str, Any] = field(default_factory=dict)


@dataclass
class SessionLedger:
    """Every release made on each dataset in one session, composed per dataset.

    Datasets are keyed by content hash: two releases on the same rows compose, releases on
    different datasets do not (they concern different people or the caller says so). The
    composition is basic (ε and δ add: Dwork & Roth 2014, Thm 3.16), valid for any mix of
    algorithms and statements. Keep one per user session; never share it across sessions.
    """

    entries: dict[str, list[SessionEntry]] = field(default_factory=dict)

    def total(self, dataset_hash: str) -> ApproxDP:
        """The composed row-level (ε, δ) of the releases on ``dataset_hash`` so far."""
        out = ApproxDP(0.0, 0.0)
        for e in self.entries.get(dataset_hash, []):
            out = compose_dp(out, e.row)
        return out

    def preview(self, dataset_hash: str, row: ApproxDP) -> ApproxDP:
        """The composed total if one more release costing ``row`` is made on that dataset."""
        return compose_dp(self.total(dataset_hash), row)

    def add(self, dataset_hash: str, row: ApproxDP, *, label: str,
            params: Mapping[str, Any] | None = None) -> ApproxDP:
        """Book a release; returns the new composed total."""
        self.entries.setdefault(dataset_hash, []).append(SessionEntry(label, row, dict(params or {})))
        return self.total(dataset_hash)

    def releases(self, dataset_hash: str) -> list[SessionEntry]:
        return list(self.entries.get(dataset_hash, []))


# ----------------------------------------------------------------------------- export


def jsonable(obj: Any) -> Any:
    """``obj`` with numpy values, tuples and non-finite floats made JSON-ready."""
    if isinstance(obj, Mapping):
        return {str(k): jsonable(v) for k, v in obj.items()}
    if isinstance(obj, list | tuple):
        return [jsonable(v) for v in obj]
    if isinstance(obj, np.generic):
        return obj.item()
    if isinstance(obj, np.ndarray):
        return jsonable(obj.tolist())
    if isinstance(obj, float) and not math.isfinite(obj):
        return None
    return obj


def _strip_seeds(obj: Any) -> Any:
    if isinstance(obj, dict):
        return {k: _strip_seeds(v) for k, v in obj.items() if k.lower() not in FORBIDDEN_KEYS}
    if isinstance(obj, list):
        return [_strip_seeds(v) for v in obj]
    return obj


def release_statement(ledger: Ledger, delta_prime: float) -> PrivacyStatement:
    """The row-level statement exported with a release (``row_level_statement``)."""
    return row_level_statement(ledger, delta_prime)


def export_release(result: Any, *, delta_prime: float, dataset: Mapping[str, Any],
                   session_total: ApproxDP | None = None,
                   feature_names: list[str] | None = None) -> str:
    """A release as JSON: centers, the row-level statement, the ledger rows, parameters; no seed.

    Raises ValueError if ``result`` is a simulation (seeded or drawn without :class:`SecureRNG`):
    a simulation's numbers must not be published.
    """
    if getattr(result, "simulation", True) or getattr(result, "seed", None) is not None:
        raise ValueError("export_release: this Result is a simulation (its noise is reproducible "
                         "or not from the release sampler); run it with rng=SecureRNG().")
    stmt = row_level_statement(result.ledger, delta_prime)
    # The calibrated guarantee of a registered run (dpviz.run) when there is one; else the
    # ledger's own row-level statement.
    row = getattr(result, "guarantee", None) or stmt.row
    out: dict[str, Any] = {
        "kind": "dpviz release",
        "dataset": dict(dataset),
        "centers": None if result.centers is None else np.asarray(result.centers).tolist(),
        "feature_names": feature_names,
        "failure": result.failure,
        "privacy": {
            "neighbouring_relation": "add/remove one row of the dataset",
            "row_level_eps": row.eps,
            "row_level_delta": row.delta,
            "algorithm": getattr(result, "algorithm", None),
            "delta_prime": delta_prime,
            "zcdp_total": {"rho": stmt.paper.rho, "delta": stmt.paper.delta},
            "lines": list(stmt.lines),
        },
        "session_total": None if session_total is None else
        {"eps": session_total.eps, "delta": session_total.delta},
        "ledger": [{k: r[k] for k in ("id", "label", "rho", "delta", "noise_scale", "sensitivity",
                                      "unit", "mechanism")} for r in result.ledger.to_rows()],
        "parameters": dict(result.params),
        "sampler": "OpenDP make_gaussian / make_laplace (CSPRNG, floating-point safe); "
                   "other randomness from fresh OS entropy; nothing replayable is kept",
    }
    return json.dumps(_strip_seeds(jsonable(out)), indent=2, default=str)
