"""Released centers as segment profiles: one row per center, in the data's original units, with
each coordinate's noise scale (issue 27, "things no peer has").

Only released values and public constants are used: the centers, the noisy counts and noise
scales the algorithm released in its last step, and the declared per-column bounds. The noise
scale of a center coordinate is the σ of the Gaussian added to the average (FriendlyAvg in
FriendlyCore's Lloyd step and FriendlyOrdTupAvg, Tsfadia et al. 2022, §5.2.3–5.2.4), or for noisy
sums and counts (DP-Lloyd, Su et al. 2016, §3) the sum's σ over the released count, σ_sum / n̂ⱼ,
approximate because the count is noisy too (said so on the page). Methods
whose last step releases no such pair (grid summaries, local search) get no noise column: the
table says so rather than inventing one.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from dpviz.data import columns


def center_noise(res: Any) -> np.ndarray | None:
    """Per-center noise sd of each coordinate in the algorithm's space, or None when unknown.

    Read from the released step that produced these centers: ``sigma_sum`` over ``noisy_counts``
    (DP-Lloyd: center = noisy sum / noisy count, so ≈ σ_sum / n̂ⱼ), or ``sigma`` (FriendlyAvg and
    FriendlyOrdTupAvg add N(0, σⱼ²) to each average directly). NaN where a cluster kept its previous
    center (DP-Lloyd's ``kept_previous``: a noisy count below 1).
    """
    if res.centers is None:
        return None
    centers = np.asarray(res.centers, dtype=float)
    k = centers.shape[0]
    for step in reversed(res.trace):
        got = step.data.get("centers") if step.released else None
        if got is None or np.shape(got) != centers.shape or not np.allclose(
                np.asarray(got, dtype=float), centers, equal_nan=True):
            continue
        if step.data.get("sigma_sum") is not None and step.data.get("noisy_counts") is not None:
            counts = np.broadcast_to(np.asarray(step.data["noisy_counts"], dtype=float), (k,))
            noise = float(step.data["sigma_sum"]) / np.maximum(counts, 1.0)
            # a cluster whose noisy count fell below 1 kept its previous center: that center is
            # not this step's noisy sum / count, so it has no σ_sum / n̂ⱼ (NaN, shown as n/a)
            kept = step.data.get("kept_previous")
            if kept is not None:
                noise[np.broadcast_to(np.asarray(kept, dtype=bool), (k,))] = np.nan
            return noise
        if step.data.get("sigma") is not None:
            return np.broadcast_to(np.asarray(step.data["sigma"], dtype=float), (k,)).copy()
        return None
    return None


def _original_units(ds) -> tuple[np.ndarray, np.ndarray, str]:
    """(offset, scale, unit words): original = offset + scale · x per column."""
    prm = ds.params
    if prm.get("scaled") == columns.SCALED_BY_BOUNDS and isinstance(prm.get("bounds"), dict):
        b = np.asarray([prm["bounds"][c] for c in ds.feature_names], dtype=float)
        lo, hi = b[:, 0], b[:, 1]
        return (lo + hi) / 2.0, (hi - lo) / 2.0, "original units (through the declared bounds)"
    if prm.get("scaled") or ds.source == "builtin":
        return np.zeros(ds.d), np.ones(ds.d), "scaled units (the scaling was measured on the rows; " \
                                              "its constants are not kept)"
    return np.zeros(ds.d), np.ones(ds.d), "original units"


#: How the table shows a number that is not known (a NaN): never "None" or "nan".
NOT_AVAILABLE = "n/a"
#: The footnote of a noise sd shown as n/a.
UNKNOWN_NOISE = (f"{NOT_AVAILABLE}: the noise scale of that center is unknown — it was not released "
                 "through a noisy mean in the method's last step (e.g. DP-Lloyd kept the cluster's "
                 "previous center because its noisy count fell below 1)")


def _shown(values: np.ndarray, digits: int) -> list[str]:
    """Numbers as text with ``digits`` significant digits (no exponent), :data:`NOT_AVAILABLE` for NaN."""
    return [NOT_AVAILABLE if not np.isfinite(v) else
            np.format_float_positional(v, precision=digits, unique=False, fractional=False, trim="-")
            for v in np.asarray(values, dtype=float)]  # k values: one per center


def segment_profiles(res: Any, ds, feature_names=None) -> tuple[pd.DataFrame | None, str]:
    """The centers as a table (one row per segment; a ± noise-sd column per coordinate when the
    method released one) and a sentence saying the units and where the noise scale comes from.

    The noise-sd columns are text with 3 significant digits, "n/a" where the scale is unknown
    (NaN; the sentence then says why); a center column stays numeric unless a value is missing.
    """
    if res.centers is None:
        return None, "The release is ⊥ (no centers)."
    names = list(feature_names or ds.feature_names)
    offset, scale, units = _original_units(ds)
    C = offset + np.asarray(res.centers, dtype=float) * scale
    noise = center_noise(res)
    table: dict[str, Any] = {"segment": [f"segment {j + 1}" for j in range(C.shape[0])]}
    for i, c in enumerate(names):
        table[c] = C[:, i] if np.isfinite(C[:, i]).all() else _shown(C[:, i], 6)
        if noise is not None:
            table[f"{c} ± noise sd"] = _shown(noise * abs(scale[i]), 3)
    if noise is not None:
        how = ("± noise sd: the standard deviation of the noise on each coordinate, from the method's "
               "released step (an average's σ, or a sum's σ over the released noisy count, ≈ σ / n̂ⱼ, "
               "approximate since the count is noisy too)")
        if not np.isfinite(noise).all():
            how += f"; {UNKNOWN_NOISE}"
    else:
        how = "this method's last step releases no per-center noise scale, so none is shown"
    if not np.isfinite(C).all():
        how += f"; {NOT_AVAILABLE} in a center column: the method released no value there"
    return pd.DataFrame(table), f"Centers in {units}; {how}."
