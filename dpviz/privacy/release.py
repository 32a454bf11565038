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
* releases are booked per declared dataset in :mod:`dpviz.privacy.ledger_store` (the Release
  page shows the composed total before confirming).
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
from typing import Any

import numpy as np

from dpviz.privacy.budget import ApproxDP
from dpviz.privacy.declared import Provenance

#: Which sampler draws each kind of randomness of a release (written into every export; issue 34,
#: finding F). OpenDP draws the Gaussian, Laplace and exponential-mechanism noise; numpy's PCG64
#: (from OS entropy, fresh per call, NOT a CSPRNG) draws the rest, Binomial draws included. (No
#: export may contain the word "seed": the texts avoid it.)
_NUMPY_FRESH = ("numpy Generator (PCG64 — not a cryptographically secure generator) initialised from 128 "
                "bits of fresh OS entropy, a new one per call, never stored")
SAMPLERS: dict[str, str] = {
    "gaussian noise": "OpenDP make_gaussian: the noisy value sampled exactly from OpenDP's CSPRNG and "
                      "rounded once (floating-point safe)",
    "laplace noise": "OpenDP make_laplace: the noisy value sampled exactly from OpenDP's CSPRNG and "
                     "rounded once (floating-point safe)",
    "exponential mechanism": "OpenDP make_noisy_max / make_noisy_top_k (Gumbel race, zCDP output "
                             "measure, scale 1) sampled exactly from OpenDP's CSPRNG",
    "binomial and geometric draws (Balcan et al.'s activation of empty cells)":
        f"{_NUMPY_FRESH}; numpy's BTPE / inversion samplers on 53-bit uniforms (OpenDP has no "
        "Binomial sampler): not OpenDP, not a CSPRNG",
    "other randomness (piece assignment, permutations, subsamples, projections, oracle starts)":
        _NUMPY_FRESH,
}
#: The same in one sentence (``sampler`` in every export; ``samplers`` gives it per kind).
SAMPLER_TEXT = ("Gaussian and Laplace noise: OpenDP make_gaussian / make_laplace (CSPRNG, floating-point "
                "safe); exponential mechanism: OpenDP make_noisy_max / make_noisy_top_k (CSPRNG); "
                "Binomial and geometric draws and all other randomness: a numpy PCG64 Generator "
                "initialised from fresh OS entropy per call (not a CSPRNG); nothing replayable is kept")

#: Result.params keys never written to a release: timings and choices read from the true data.
NOT_RELEASED = frozenset({"seed", "seconds", "method", "n", "n_rows", "labels"})

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


@functools.cache
def _noisy_max_measurement(top: int) -> Any:
    """OpenDP's report-noisy-max with GUMBEL noise of scale 1 (``output_measure`` zCDP selects
    Gumbel noise; ``MaxDivergence`` would select exponential noise, i.e. permute-and-flip): the
    index of the largest ``score + Gumbel(1)``, i.e. index i with probability ∝ exp(score_i),
    the exponential mechanism's distribution (Gumbel-max; with ``top`` > 1 the Gumbel-top-k,
    equal to ``top`` peeling draws without replacement)."""
    dp = _opendp()
    space = (dp.vector_domain(dp.atom_domain(T=float, nan=False)), dp.linf_distance(T=float))
    if top == 1:
        return dp.m.make_noisy_max(*space, dp.zero_concentrated_divergence(), scale=1.0)
    return dp.m.make_noisy_top_k(*space, dp.zero_concentrated_divergence(), k=top, scale=1.0)


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

    The exponential mechanism (``exponential_mechanism`` / ``exponential_top``, called by
    :func:`dpviz.privacy.mechanisms.gumbel_argmax` and ``gumbel_top``) is OpenDP's
    ``make_noisy_max`` / ``make_noisy_top_k`` with Gumbel noise (zCDP output measure, scale 1)
    on the log-weights: OpenDP samples the Gumbel race exactly from a CSPRNG, treating each
    float score as the exact rational it is (no rounding of the noisy scores decides the
    winner), so the index has exactly the distribution ∝ exp(score) the mechanism's proof
    assumes (McSherry & Talwar 2007; OpenDP's proof document for ``make_noisy_top_k``). Raw
    Gumbel floats (``gumbel``) are still refused: an argmax over textbook float Gumbels is what
    those functions replace.

    ``binomial`` / ``geometric`` (Balcan et al.'s aggregate activation of empty cells) draw from
    a fresh OS-entropy numpy Generator: OpenDP has no Binomial sampler. The output is an integer
    whose success probability is data-independent (f(0), from public constants); it is not the
    floating-point noise of a released real value (Mironov's attack reads the low bits of a
    noisy float), and numpy's BTPE/inversion samplers are exact up to the 2⁻⁵³ resolution of
    their uniforms. This is weaker than OpenDP's exact sampling; we state it rather than hide it.

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
            "SecureRNG gives no raw Gumbel floats: draw the exponential mechanism with "
            "dpviz.privacy.mechanisms.gumbel_argmax / gumbel_top (OpenDP's noisy max)."
        )

    def exponential_mechanism(self, logits: np.ndarray) -> int:
        """Index i with probability ∝ exp(logits_i) (OpenDP ``make_noisy_max``, Gumbel, scale 1).

        Entries of −∞ have probability 0 and are left out; at least one must be finite.
        """
        lw = np.asarray(logits, dtype=np.float64).ravel()
        keep = np.flatnonzero(np.isfinite(lw))
        if keep.size == 0:
            raise ValueError("exponential_mechanism needs at least one finite log-weight.")
        return int(keep[_noisy_max_measurement(1)(lw[keep].tolist())])

    def exponential_top(self, logits: np.ndarray, m: int) -> np.ndarray:
        """``m`` distinct indices by Gumbel-top-m on ``logits`` (= m peeling exponential-mechanism
        draws; OpenDP ``make_noisy_top_k``, Gumbel, scale 1), in the order drawn."""
        lw = np.asarray(logits, dtype=np.float64).ravel()
        keep = np.flatnonzero(np.isfinite(lw))
        m = int(min(m, keep.size))
        if m == 0:
            return np.zeros(0, dtype=np.int64)
        return keep[np.asarray(_noisy_max_measurement(m)(lw[keep].tolist()), dtype=np.int64)]

    def binomial(self, *args: Any, **kwargs: Any) -> Any:
        """Binomial draws from fresh OS entropy (see the class docstring for why this is used)."""
        return self._fresh().binomial(*args, **kwargs)

    def geometric(self, *args: Any, **kwargs: Any) -> Any:
        """Geometric draws from fresh OS entropy (the skip sampler of a huge Binomial)."""
        return self._fresh().geometric(*args, **kwargs)

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


def produced_by(result: Any) -> dict[str, Any]:
    """Which method produced a result's centers, from its trace (issue 25, finding 5).

    "own structure" when the algorithm's own private structure answered, "fallback" (with the
    fallback's method) when a fallback step was used, "failure" when the output is ⊥. Read from
    the released trace steps only (the fallback step's ``used`` is itself a released bit). Who
    answered is worded once, by ``dpviz.registry.answered_by`` (``Result.answered_by``, set by
    ``dpviz.run``: every release is a ``dpviz.run``); this module sits below the registry.
    """
    trace = getattr(result, "trace", ()) or ()
    fb = next((s for s in trace if s.name == "fallback"), None)
    who = getattr(result, "answered_by", None)
    if result.centers is None:
        return {"outcome": "failure", "answered_by": who, "failure": result.failure}
    if fb is not None and bool(fb.data.get("used")):
        return {"outcome": "fallback", "answered_by": who, "failure": fb.data.get("reason")}
    return {"outcome": "own structure", "answered_by": who, "failure": None}


def export_release(result: Any, *, dataset: Mapping[str, Any], delta_prime: float | None = None,
                   session_total: ApproxDP | None = None, feature_names: list[str] | None = None,
                   provenance: Provenance | None = None, acknowledge_data_derived: str | None = None,
                   units: Mapping[str, Any] | None = None) -> str:
    """A release as JSON: centers, the row-level statement, the ledger rows, parameters; no seed.

    The statement is the run's :class:`~dpviz.privacy.plan.BudgetPlan` (``result.plan``, set by
    :func:`dpviz.run`): the same (ε, δ), δ′ and lines as the guarantee the run was calibrated to.
    A result with no plan (a function called directly) is refused: only a plan shows that the
    size and budget came from declared inputs or a booked DP count (issue 34, finding A).

    Parameters
    ----------
    dataset : mapping
        Declared, public facts only (name, d, the declared bounds); never a hash of the rows.
        ``size_source`` and the size used are written from the plan, whatever the caller says.
    provenance : Provenance, optional
        Where each public input came from. An input read from the data needs
        ``acknowledge_data_derived`` (the user's words, recorded in the export).
    units : mapping, optional
        ``{"center": (d,), "scale": (d,)}``: the algorithm ran on (x − center)/scale, and the
        export gives the centers in the data's original units (x = c·scale + center), with the
        transform and the declared radius it used. Both must be declared (public) values.

    Raises
    ------
    ValueError
        A simulation (seeded, or drawn without :class:`SecureRNG`); a Result without a budget plan
        built from declared inputs (not made by :func:`dpviz.run`); a ``delta_prime`` that is
        not the plan's; an input read from the data without an acknowledgement.
    """
    if getattr(result, "simulation", True) or getattr(result, "seed", None) is not None:
        raise ValueError("export_release: this Result is a simulation (its noise is reproducible "
                         "or not from the release sampler); run it with rng=SecureRNG().")
    plan = getattr(result, "plan", None)
    if plan is None or plan.guarantee is None or plan.size_source not in ("declared", "dp_count") \
            or "n_declared" not in dict(getattr(result, "params", {}) or {}):
        # A direct call (grid_coreset(...), balcan_kmeans(...)) has no plan: nothing says its size
        # and budget came from declared inputs, and its params may hold len(X) (issue 34, A).
        raise ValueError("export_release: this Result has no budget plan built from declared inputs "
                         "(it was not made by dpviz.run), so nothing shows that the true row count "
                         "shaped nothing. Run it as dpviz.run(name, X, k, epsilon=…, delta=…, "
                         "radius=…, n_declared=…, rng=SecureRNG()).")
    prov = provenance if provenance is not None else Provenance.of()
    prov = prov.with_source("n", "dp_estimate" if plan.size_source == "dp_count" else "declared")
    derived = prov.data_derived()
    if derived and not (acknowledge_data_derived or "").strip():
        raise ValueError(f"export_release: {', '.join(derived)} was read from the data, not declared; "
                         "the guarantee does not cover it. Declare it, or pass "
                         "acknowledge_data_derived with the user's acknowledgement.")
    if delta_prime is not None and not math.isclose(delta_prime, plan.delta_prime, rel_tol=1e-12,
                                                    abs_tol=0.0):
        raise ValueError(f"export_release: delta_prime={delta_prime:g} is not the run's "
                         f"δ′ = {plan.delta_prime:g}; omit it (the plan states the guarantee).")
    privacy: dict[str, Any] = {
        "neighbouring_relation": "add/remove one row of the dataset",
        "row_level_eps": plan.guarantee.eps,
        "row_level_delta": plan.guarantee.delta,
        "algorithm": plan.algorithm,
        "delta_prime": plan.delta_prime,
        "plan": plan.as_dict(),
        "lines": list(plan.lines),
    }
    total = result.ledger.total()
    privacy["zcdp_total"] = {"rho": total.rho, "delta": total.delta}
    centers = None if result.centers is None else np.asarray(result.centers, dtype=np.float64)
    units_out: dict[str, Any] = {"centers": "as given to the algorithm (no transform declared)"}
    if units is not None and centers is not None:
        scale = np.asarray(units["scale"], dtype=np.float64)
        shift = np.asarray(units["center"], dtype=np.float64)
        units_out = {"centers": "the data's original units (c·scale + center)",
                     "scale": scale, "center": shift, "declared_bounds": units.get("bounds"),
                     "centers_as_run": centers}
        centers = centers * scale + shift
    ds = dict(dataset)
    params = {k: v for k, v in dict(result.params).items() if k not in NOT_RELEASED}
    ds["size_source"] = "dp_count" if plan.size_source == "dp_count" else "declared"
    ds["n_declared" if plan.size_source == "declared" else "n_dp_count"] = params.get("n_declared")
    if plan.size_source == "dp_count":
        ds.pop("n_declared", None)
    out: dict[str, Any] = {
        "kind": "dpviz release",
        "dataset": ds,
        "centers": centers,
        "units": units_out,
        "feature_names": feature_names,
        "produced_by": produced_by(result),
        "failure": result.failure,
        "privacy": privacy,
        "provenance": prov.as_dict(),
        "data_derived_acknowledgement": (acknowledge_data_derived or None) if derived else None,
        "session_total": None if session_total is None else
        {"eps": session_total.eps, "delta": session_total.delta},
        "ledger": [{k: r[k] for k in ("id", "label", "rho", "delta", "noise_scale", "sensitivity",
                                      "unit", "mechanism")} for r in result.ledger.to_rows()],
        "parameters": params,
        "sampler": SAMPLER_TEXT,
        "samplers": dict(SAMPLERS),
    }
    return json.dumps(_strip_seeds(jsonable(out)), indent=2, default=str)
