"""The Dataset every page and algorithm consumes: points plus what is publicly known about them."""

from __future__ import annotations

import hashlib
import math
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from functools import cached_property
from typing import Any, Literal

import numpy as np

Source = Literal["generated", "builtin", "upload"]


def _frozen_array(a: Any, dtype: type, name: str, ndim: int) -> np.ndarray:
    arr = np.array(a, dtype=dtype, copy=True)
    if arr.ndim != ndim:
        raise ValueError(f"The '{name}' field of Dataset must be a {ndim}-D array. Got shape {arr.shape}.")
    arr.flags.writeable = False
    return arr


@dataclass(frozen=True, eq=False)
class Dataset:
    """A dataset and what is publicly known about it.

    Attributes
    ----------
    X : (n, d) float64 array
        The points (read-only; one row is one person in the privacy statements).
    name : str
        Short human name.
    labels : (n,) int array or None
        Ground-truth cluster labels when known (generated and built-in data).
    true_centers : (k, d) array or None
        The generating centers (generated data) or class means (built-ins); None if unknown.
    radius : float or None
        The public ℓ2 bound Λ declared by the recipe (every row has norm ≤ Λ). None for uploads
        until the user declares one (:meth:`with_radius`); never measured from the data silently.
    k : int or None
        Suggested number of clusters.
    feature_names : tuple of str
        Column names (``x1, x2, ...`` when none are given: the same 1-based names the plots'
        axes use).
    source : {"generated", "builtin", "upload"}
    params : mapping
        The recipe and its parameters (including the seed), enough to regenerate the data.
    """

    X: np.ndarray
    name: str
    labels: np.ndarray | None = None
    true_centers: np.ndarray | None = None
    radius: float | None = None
    k: int | None = None
    feature_names: tuple[str, ...] = ()
    source: Source = "generated"
    params: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        X = _frozen_array(self.X, np.float64, "X", 2)
        object.__setattr__(self, "X", X)
        n, d = X.shape
        if self.labels is not None:
            labels = _frozen_array(self.labels, np.int64, "labels", 1)
            if labels.shape[0] != n:
                raise ValueError(f"Dataset labels have {labels.shape[0]} entries for {n} rows.")
            object.__setattr__(self, "labels", labels)
        if self.true_centers is not None:
            tc = _frozen_array(self.true_centers, np.float64, "true_centers", 2)
            if tc.shape[1] != d:
                raise ValueError(f"Dataset true_centers have dimension {tc.shape[1]}, X has {d}.")
            object.__setattr__(self, "true_centers", tc)
        if self.radius is not None:
            r = float(self.radius)
            if not (math.isfinite(r) and r > 0):
                raise ValueError(
                    f"The 'radius' of a Dataset must be a float in (0, inf). Got {self.radius!r}.")
            object.__setattr__(self, "radius", r)
        if self.k is not None:
            if isinstance(self.k, bool) or int(self.k) != self.k or self.k < 1:
                raise ValueError(f"The suggested 'k' of a Dataset must be an int >= 1. Got {self.k!r}.")
            object.__setattr__(self, "k", int(self.k))
        names = tuple(str(c) for c in self.feature_names) or tuple(f"x{j + 1}" for j in range(d))
        if len(names) != d:
            raise ValueError(f"Dataset has {d} columns but {len(names)} feature names.")
        object.__setattr__(self, "feature_names", names)
        if self.source not in ("generated", "builtin", "upload"):
            raise ValueError(f"Dataset source must be generated, builtin or upload. Got {self.source!r}.")
        object.__setattr__(self, "params", dict(self.params))

    @property
    def n(self) -> int:
        return int(self.X.shape[0])

    @property
    def d(self) -> int:
        return int(self.X.shape[1])

    @cached_property
    def content_hash(self) -> str:
        """sha256 of the shape and the bytes of X (the cache key for anything derived from X)."""
        h = hashlib.sha256()
        h.update(repr(self.X.shape).encode())
        h.update(np.ascontiguousarray(self.X).tobytes())
        return h.hexdigest()

    def with_radius(self, r: float) -> Dataset:
        """A copy with the public ℓ2 bound Λ = r declared (the caller's declaration, not measured)."""
        return replace(self, radius=r)

    def __repr__(self) -> str:
        return (
            f"Dataset(name={self.name!r}, n={self.n}, d={self.d}, k={self.k}, radius={self.radius}, "
            f"source={self.source!r})"
        )
