"""Released centers as segment profiles: one row per center, in the data's original units, with
each coordinate's noise scale (issue 27, "things no peer has").

Only released values and public constants are used: the centers, the noisy counts and noise
scales the algorithm released in its last step, and the declared per-column bounds. The noise
scale of a center coordinate is the standard deviation of the noise added to the coordinate's sum
divided by the released (noisy) count of the center's cluster, σ_sum / max(n̂_j, 1): the average's
noise (Su et al. 2016, §3, DP-Lloyd's noisy sums and counts; FriendlyCore's final Lloyd step,
Tsfadia et al. 2022, §5.2.4). It is approximate (the count is noisy too) and said so. Methods
whose last step releases no such pair (grid summaries, local search) get no noise column: the
table says so rather than inventing one.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from dpviz.data import columns

#: The last step's keys that give a per-center noise scale: (σ of the sums, released counts).
_NOISE_KEYS = (("sigma_sum", "noisy_counts"), ("sigma", "n_hat"))


def center_noise(res: Any) -> np.ndarray | None:
    """Per-center noise sd of each coordinate in the algorithm's space, from the last released
    step that released these centers with a sum noise σ and noisy counts; None when unknown."""
    if res.centers is None:
        return None
    k = np.asarray(res.centers).shape[0]
    for step in reversed(res.trace):
        if not step.released or step.data.get("centers") is None:
            continue
        if np.shape(step.data["centers"]) != np.shape(res.centers) or not np.allclose(
                np.asarray(step.data["centers"], dtype=float), np.asarray(res.centers, dtype=float)):
            continue
        for s_key, n_key in _NOISE_KEYS:
            sigma, counts = step.data.get(s_key), step.data.get(n_key)
            if sigma is None or counts is None:
                continue
            counts = np.broadcast_to(np.asarray(counts, dtype=float), (k,))
            return float(sigma) / np.maximum(counts, 1.0)
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


def segment_profiles(res: Any, ds, feature_names=None) -> tuple[pd.DataFrame | None, str]:
    """The centers as a table (one row per segment; a ± noise-sd column per coordinate when the
    method released one) and a sentence saying the units and where the noise scale comes from."""
    if res.centers is None:
        return None, "The release is ⊥ (no centers)."
    names = list(feature_names or ds.feature_names)
    offset, scale, units = _original_units(ds)
    C = offset + np.asarray(res.centers, dtype=float) * scale
    noise = center_noise(res)
    table: dict[str, Any] = {"segment": [f"segment {j + 1}" for j in range(C.shape[0])]}
    for i, c in enumerate(names):
        table[c] = C[:, i]
        if noise is not None:
            table[f"{c} ± noise sd"] = noise * abs(scale[i])
    if noise is not None:
        how = ("± noise sd: the noise of each coordinate's sum (σ) over the cluster's released "
               "noisy count (≈ σ / n̂ⱼ; approximate, the count is noisy too)")
    else:
        how = "this method's last step releases no per-center noise scale, so none is shown"
    return pd.DataFrame(table), f"Centers in {units}; {how}."
