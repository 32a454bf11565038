"""Parameter checks shared by every public function (errors a user can act on).

Messages follow scikit-learn's form: "The 'rho' parameter of fc_avg must be a float in the
range (0, inf). Got -1.0 instead."
"""

from __future__ import annotations

import hashlib
import math
from typing import Any

import numpy as np

RngLike = np.random.Generator | int | None

#: Largest magnitude accepted for a coordinate or a radius: squares and sums of squares of such
#: numbers over 10⁶ rows × 10⁴ dimensions stay far below float64's 1.8e308 (issue 19: values
#: near 1e154 overflowed r², 2Λ and k-means costs deep inside the algorithms).
MAX_MAGNITUDE = 1e100
#: Largest number of clusters k any algorithm accepts: a public cap that bounds every (k, d)
#: allocation (issue 19: k = 2**40 asked for 16 TiB).
MAX_CLUSTERS = 10_000
# A row-level ε above this is no guarantee at all (e^ε overflows float64 near 709); asking for more is
# a mistake, and the mechanisms' noise scales underflow long before it.
MAX_EPSILON = 10_000.0


def _range_text(low: float, high: float, low_open: bool, high_open: bool) -> str:
    left = "(" if low_open else "["
    right = ")" if high_open else "]"
    return f"{left}{low:g}, {high:g}{right}"


def check_scalar(
    value: Any,
    name: str,
    func: str,
    *,
    low: float = -math.inf,
    high: float = math.inf,
    low_open: bool = False,
    high_open: bool = False,
    integer: bool = False,
) -> float:
    """Return ``value`` as a float (or int) if it lies in the range, else raise ValueError."""
    kind = "an int" if integer else "a float"
    rng_txt = _range_text(low, high, low_open, high_open)
    msg = f"The '{name}' parameter of {func} must be {kind} in the range {rng_txt}. Got {value!r} instead."
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise ValueError(msg)
    if integer and not float(value).is_integer():
        raise ValueError(msg)
    v = float(value)
    if math.isnan(v):
        raise ValueError(msg)
    too_low = v <= low if low_open else v < low
    too_high = v >= high if high_open else v > high
    if too_low or too_high:
        raise ValueError(msg)
    return int(v) if integer else v


def check_radius(value: Any, name: str, func: str, *, allow_zero: bool = False) -> float:
    """A radius or length: a float in (0, MAX_MAGNITUDE] (or [0, …] with ``allow_zero``).

    The upper limit keeps r², (2Λ)² and sums of squares finite (issue 19: radius = 9e307
    overflowed 2Λ, r = 1.4e154 overflowed r² deep inside the algorithms)."""
    return check_scalar(value, name, func, low=0.0, low_open=not allow_zero, high=MAX_MAGNITUDE)


def check_bool(value: Any, name: str, func: str) -> bool:
    """A flag: True or False only (a string like 'no' is truthy and would mean the opposite)."""
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    raise ValueError(f"The '{name}' parameter of {func} must be a bool (True or False). "
                     f"Got {value!r} instead.")


def check_rho(rho: Any, func: str) -> float:
    return check_scalar(rho, "rho", func, low=0.0, low_open=True, high_open=True)


def check_delta(delta: Any, func: str, *, allow_zero: bool = False) -> float:
    return check_scalar(delta, "delta", func, low=0.0, high=1.0, low_open=not allow_zero, high_open=True)


def check_data(X: Any, func: str, *, allow_empty: bool = True) -> np.ndarray:
    """Return X as a finite float64 array of shape (n, d); raise ValueError otherwise.

    Complex input is rejected (casting would drop the imaginary part), so is a masked array
    with masked entries (casting would use the hidden values); every entry must lie within
    ±MAX_MAGNITUDE so that squared norms stay finite.
    """
    if isinstance(X, np.ma.MaskedArray):
        if np.ma.getmaskarray(X).any():
            raise ValueError(f"The 'X' parameter of {func} is a masked array with "
                             f"{int(np.ma.getmaskarray(X).sum())} masked entries. Drop those rows or "
                             "fill them (X.filled(...)) first.")
        X = np.ma.getdata(X)
    try:
        raw = np.asarray(X)
    except (TypeError, ValueError) as exc:  # e.g. ragged nested lists
        raise ValueError(f"The 'X' parameter of {func} must be a numeric array of shape (n, d).") from exc
    if raw.dtype.kind == "c":
        raise ValueError(f"The 'X' parameter of {func} must be real; got complex values. Pass the real "
                         "part (X.real) or stack real and imaginary parts as columns.")
    if raw.dtype.kind in "USV":
        raise ValueError(f"The 'X' parameter of {func} must be a numeric array; got {raw.dtype.kind!r} "
                         "(text) values. Convert the columns to numbers first (dpviz.data.load_csv does).")
    try:
        arr = np.asarray(raw, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"The 'X' parameter of {func} must be a numeric array of shape (n, d).") from exc
    if arr.ndim != 2:
        raise ValueError(
            f"The 'X' parameter of {func} must be a 2-D array of shape (n, d). "
            f"Got an array with shape {arr.shape} instead."
        )
    if arr.shape[1] < 1:
        raise ValueError(f"The 'X' parameter of {func} must have at least one column (d >= 1).")
    if not allow_empty and arr.shape[0] == 0:
        raise ValueError(f"The 'X' parameter of {func} must have at least one row. Got 0 rows.")
    if arr.size and not np.all(np.isfinite(arr)):
        bad = int(np.sum(~np.all(np.isfinite(arr), axis=1)))
        raise ValueError(
            f"The 'X' parameter of {func} contains {bad} row(s) with NaN or infinite values. "
            "Drop or impute them first (dpviz.data.load_csv drops them and reports the count)."
        )
    if arr.size and np.abs(arr).max() > MAX_MAGNITUDE:
        raise ValueError(
            f"The 'X' parameter of {func} has values beyond ±{MAX_MAGNITUDE:g} (largest "
            f"{np.abs(arr).max():.3g}); their squares overflow. Rescale the columns first.")
    return arr


def stable_int(domain: str) -> int:
    """A stable 64-bit key of a name: the first 8 bytes of its SHA-256 (Python's hash() is salted
    per process, so it could not make a seed replayable)."""
    return int.from_bytes(hashlib.sha256(domain.encode("utf-8")).digest()[:8], "big")


def seed_sequence(seed: int, domain: str) -> np.random.SeedSequence:
    """The stream an int ``seed`` means for the consumer ``domain`` (issue 24).

    ``SeedSequence(seed, spawn_key=(stable_int(domain),))``: the same int given to a data
    generator ("data:<recipe>") and to an algorithm ("algorithm:<name>") yields two independent
    streams, so an algorithm's public draws can never replay the data's (before, DP-Lloyd's public
    start *was* ``ball_mixture``'s true centers when both got the same int).
    """
    return np.random.SeedSequence(int(seed), spawn_key=(stable_int(domain),))


def check_rng(rng: RngLike, domain: str) -> tuple[np.random.Generator, int | None]:
    """Normalize ``rng`` once at a public boundary; return the Generator and a replay seed.

    An int is never used raw: it seeds the stream of its consumer, ``domain`` (one key per data
    generator, "data:<recipe>"; per registered algorithm, "algorithm:<name>", also when its
    function is called directly; "reference" for the reference k-means; see :func:`seed_sequence`),
    and is returned as the replay seed (``Result.seed``: the run is a *simulation*, anyone with the
    seed can replay its noise). None draws fresh OS entropy and keeps no seed. A Generator is used
    as given (seed unknown: None); the caller owns its stream. The release sampler
    (:class:`dpviz.privacy.release.SecureRNG`) is passed through unchanged and has no seed.
    """
    if isinstance(rng, np.random.Generator) or getattr(rng, "is_secure_sampler", False):
        return rng, None  # type: ignore[return-value]
    if rng is None:
        # Fresh entropy; the seed is never kept, so it cannot leak through a Result.
        return np.random.default_rng(np.random.SeedSequence()), None
    if isinstance(rng, (int, np.integer)) and not isinstance(rng, bool) and int(rng) >= 0:
        return np.random.default_rng(seed_sequence(int(rng), domain)), int(rng)
    raise ValueError(
        f"The 'rng' parameter must be a numpy.random.Generator, a non-negative int seed, None or "
        f"a dpviz.privacy.release.SecureRNG. Got {rng!r} instead."
    )


def is_simulation(rng: object) -> bool:
    """True unless ``rng`` is the release sampler: a run on anything else must not be published."""
    return not getattr(rng, "is_secure_sampler", False)
