"""Column hygiene for uploads: likely id/label columns, and scaling by DECLARED bounds.

- :func:`likely_id_columns` flags columns that look like identifiers or class labels (by name:
  ``id``, ``customer_id``, ``target``, ``label``, ``class``; by values: a monotone integer
  sequence, distinct integers packed into a range of < 2n, or an integer column with few
  values). Clustering on them clusters row numbers or the answer key. It reads the values (a
  non-private look for the data owner, used only to pre-select columns the user confirms).
- :func:`scale_by_bounds` maps each column from a publicly declared interval [lo, hi] onto
  [−1, 1] (values outside are clipped: a per-row rule), so Λ = √d is known without looking at
  any row. :func:`scale_by_data` z-scores by the data's own mean and sd: NOT private (the mean
  and sd are statistics of the rows; one row moves them) and the dataset says so.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

import numpy as np

from dpviz.data.dataset import Dataset
from dpviz.privacy.declared import Provenance

#: Names that say "identifier" (matched on the lower-cased name; also camelCase "customerId").
_ID_NAME = re.compile(r"^(id|index|uuid|row|rownum|row_?number|.*[_ \-.]id)$")
_CAMEL_ID = re.compile(r"^[A-Za-z]+(Id|ID)$")
_LABEL_NAMES = {"target", "label", "labels", "class", "classes", "cluster", "group", "species"}
#: An integer column with at most this many distinct values (and more rows than 5× that) is a
#: likely class label.
LOW_CARDINALITY = 10

SCALED_BY_DATA = "this file's own mean and sd (NOT private)"
SCALED_BY_BOUNDS = "declared public bounds"


#: Whole numbers beyond this are floats that happen to be integral (float64 has 53 bits).
_MAX_ID = 2.0**53


def _is_integer(col: np.ndarray) -> bool:
    return (col.size > 0 and bool(np.all(np.isfinite(col))) and bool(np.all(np.abs(col) < _MAX_ID))
            and bool(np.all(col == np.round(col))))


def likely_id_columns(values: np.ndarray, names: Sequence[str]) -> dict[str, str]:
    """{column name: why} for columns that look like an identifier or a class label.

    ``values`` is (n, d) with NaN where a cell is missing; missing cells are ignored.
    """
    out: dict[str, str] = {}
    for j, name in enumerate(names):
        col = values[:, j]
        col = col[np.isfinite(col)]
        low = name.strip().lower()
        if low in _LABEL_NAMES:
            out[name] = f"its name '{name}' says it is a label"
            continue
        if _ID_NAME.match(low.strip()) or _CAMEL_ID.match(name.strip()):
            out[name] = f"its name '{name}' says it is an identifier"
            continue
        if not _is_integer(col) or col.size < 3:
            continue
        diffs = np.diff(col)
        if np.all(diffs > 0) or np.all(diffs < 0):
            out[name] = "its values are whole numbers that only go up (or only down): a row number"
        elif np.unique(col).size == col.size and np.ptp(col) < 2 * col.size:
            # distinct AND dense (ids are near-consecutive); whole-dollar incomes are not dense
            out[name] = "every row has a different whole number: an identifier"
        elif np.unique(col).size <= LOW_CARDINALITY and col.size >= 5 * LOW_CARDINALITY:
            out[name] = (f"it has only {np.unique(col).size} different whole-number values: "
                         "a class label?")
    return out


def suggest_bounds(X: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Each column's min and max rounded outward to two significant digits.

    NOT private: measured on the rows. A convenience for exploring; declare bounds from the
    domain (units, ranges) for a real release.
    """
    lo, hi = X.min(axis=0), X.max(axis=0)
    return _round_out(lo, down=True), _round_out(hi, down=False)


def _round_out(v: np.ndarray, *, down: bool) -> np.ndarray:
    out = np.empty_like(v, dtype=np.float64)
    for j, x in enumerate(np.asarray(v, dtype=np.float64)):  # one value per column
        if x == 0:
            out[j] = 0.0
            continue
        e = 10.0 ** (np.floor(np.log10(abs(x))) - 1)
        out[j] = (np.floor(x / e) if down else np.ceil(x / e)) * e
    return out


def scale_by_bounds(ds: Dataset, lo: Sequence[float], hi: Sequence[float]) -> Dataset:
    """Each column mapped from its declared [lo_j, hi_j] onto [−1, 1]; values outside clipped.

    The declaration is public (the caller's), so the transform is a fixed per-row function: one
    row still changes one row, and Λ = √d bounds every row. Raises ValueError if hi ≤ lo.
    """
    lo_a, hi_a = np.asarray(lo, dtype=np.float64), np.asarray(hi, dtype=np.float64)
    if lo_a.shape != (ds.d,) or hi_a.shape != (ds.d,):
        raise ValueError(f"Declare one lower and one upper bound per column ({ds.d} columns).")
    bad = [ds.feature_names[j] for j in np.flatnonzero(~(hi_a > lo_a))]
    if bad or not (np.all(np.isfinite(lo_a)) and np.all(np.isfinite(hi_a))):
        raise ValueError(f"Each upper bound must be above its lower bound (finite). Check: "
                         f"{', '.join(bad) or 'a bound that is not a number'}.")
    center, half = (lo_a + hi_a) / 2.0, (hi_a - lo_a) / 2.0
    raw = ds.X
    X = np.clip((raw - center) / half, -1.0, 1.0)
    clipped = int(np.count_nonzero(np.any((raw < lo_a) | (raw > hi_a), axis=1)))
    params = dict(ds.params) | {"scaled": SCALED_BY_BOUNDS, "bounds": {
        c: [float(a), float(b)] for c, a, b in zip(ds.feature_names, lo_a, hi_a, strict=True)},
        "rows_clipped_to_bounds": clipped}
    return replace(ds, X=X, radius=float(np.sqrt(ds.d)), params=params)


def scale_by_data(ds: Dataset) -> Dataset:
    """z-scores by the data's own mean and sd (constant columns keep sd 1). NOT private: the
    dataset's params say so, and the app repeats it next to the run. Λ is left undeclared."""
    mean, sd = ds.X.mean(axis=0), ds.X.std(axis=0)
    sd = np.where(sd > 0, sd, 1.0)
    params = dict(ds.params) | {"scaled": SCALED_BY_DATA}
    return replace(ds, X=(ds.X - mean) / sd, radius=None, params=params)


def declared_units(params: Mapping[str, Any]) -> dict[str, Any] | None:
    """The map back to the data's original units of a dataset scaled by DECLARED bounds
    (:func:`scale_by_bounds`): x = c·scale + center with center = (lo + hi)/2, scale = (hi − lo)/2,
    and the bounds themselves; None when the dataset was not scaled that way. Public: built from
    the declaration only (for ``dpviz.privacy.release.export_release(units=...)``)."""
    if params.get("scaled") != SCALED_BY_BOUNDS or "bounds" not in params:
        return None
    bounds = dict(params["bounds"])
    lo = np.array([b[0] for b in bounds.values()], dtype=np.float64)
    hi = np.array([b[1] for b in bounds.values()], dtype=np.float64)
    return {"center": (lo + hi) / 2.0, "scale": (hi - lo) / 2.0, "bounds": bounds}


def input_provenance(params: Mapping[str, Any], *, radius_from_data: bool = False) -> Provenance:
    """Where a dataset's public inputs came from, from its recipe: the column bounds (declared,
    or suggested from the file's own range), a scaling by the data's own mean and sd, and Λ
    (``radius_from_data`` when it was filled from the rows' own max norm)."""
    src: dict[str, str] = {"radius": "data" if radius_from_data else "declared"}
    notes: dict[str, str] = {}
    if radius_from_data:
        notes["radius"] = "filled from the rows' own largest norm"
    if params.get("scaled") == SCALED_BY_BOUNDS:
        from_data = bool(params.get("bounds_source"))
        src["bounds"] = "data" if from_data else "declared"
        if from_data:
            notes["bounds"] = "suggested from this file's own range"
    elif params.get("scaled"):
        src["scaling"] = "data"
        notes["scaling"] = "standardized with the file's own mean and sd"
    return Provenance.of(notes, **src)
