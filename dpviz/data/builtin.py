"""scikit-learn's bundled datasets (no download), mapped into a fixed public box.

Each feature is standardized (z-score with the dataset's own mean and standard deviation; a
constant feature becomes 0), clipped to [−3, 3] and divided by 3, so every row lies in the
public box [−1, 1]^d and the declared radius is Λ = √d, the radius of the box's circumscribed
ball. Λ is a property of the box, not measured from the rows (the data's own max norm is
usually much smaller; see :func:`dpviz.data.bounds.data_radius`).

These are public benchmark datasets, so using their statistics for the standardization has no
privacy cost here. For data that is actually private, the scaling constants would have to be
public (declared) as well.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from functools import cache

import numpy as np

from dpviz.data.dataset import Dataset

#: Standardized features are clipped to [−BOX_Z, BOX_Z] and divided by BOX_Z.
BOX_Z = 3.0

_LOADERS: dict[str, tuple[str, int, str]] = {
    # name: (sklearn loader, suggested k, title)
    "iris": ("load_iris", 3, "Iris (150 flowers, 4 features)"),
    "wine": ("load_wine", 3, "Wine (178 wines, 13 features)"),
    "digits": ("load_digits", 10, "Digits (1797 8×8 images, 64 features)"),
    "breast_cancer": ("load_breast_cancer", 2, "Breast cancer (569 tumours, 30 features)"),
}


def standardize_to_box(X: np.ndarray, z: float = BOX_Z) -> np.ndarray:
    """z-score each column (std 0 → column of zeros), clip to [−z, z], divide by z."""
    X = np.asarray(X, dtype=np.float64)
    mu = X.mean(axis=0)
    sd = X.std(axis=0)
    sd = np.where(sd > 0, sd, 1.0)
    return np.clip((X - mu) / sd, -z, z) / z


@cache
def load_builtin(name: str) -> Dataset:
    """Load a bundled scikit-learn dataset, scaled into the public box [−1, 1]^d (Λ = √d).

    Parameters
    ----------
    name : {"iris", "wine", "digits", "breast_cancer"}

    Returns
    -------
    Dataset
        With class labels, class means as ``true_centers`` (in the scaled space), the suggested
        k (number of classes), ``radius = √d`` and ``params`` recording the scaling.

    Raises
    ------
    ValueError
        For an unknown name (the message lists the available ones).
    """
    if name not in _LOADERS:
        raise ValueError(f"Unknown built-in dataset {name!r}. Available: {', '.join(_LOADERS)}.")
    import sklearn.datasets as skd

    loader, k, title = _LOADERS[name]
    bunch = getattr(skd, loader)()
    X = standardize_to_box(bunch.data)
    y = np.asarray(bunch.target, dtype=np.int64)
    classes = np.unique(y)
    centers = np.stack([X[y == c].mean(axis=0) for c in classes])
    d = X.shape[1]
    names = tuple(str(f) for f in getattr(bunch, "feature_names", [])) or tuple(
        f"x{j + 1}" for j in range(d))
    return Dataset(
        X=X, name=title, labels=y, true_centers=centers, radius=math.sqrt(d), k=k,
        feature_names=names, source="builtin",
        params=dict(recipe=name, loader=f"sklearn.datasets.{loader}",
                    scaling=f"standardized (z-score), clipped to [-{BOX_Z:g}, {BOX_Z:g}], divided "
                            f"by {BOX_Z:g}: public box [-1, 1]^d",
                    radius_from="public box [-1, 1]^d: radius sqrt(d)"),
    )


def _make(name: str) -> Callable[[], Dataset]:
    def load() -> Dataset:
        return load_builtin(name)

    load.__name__ = f"load_{name}"
    load.__doc__ = f"{_LOADERS[name][2]}, scaled into [−1, 1]^d (Λ = √d)."
    return load


#: name → zero-argument loader returning the Dataset.
BUILTIN: dict[str, Callable[[], Dataset]] = {name: _make(name) for name in _LOADERS}

#: name → human title.
BUILTIN_TITLES: dict[str, str] = {name: spec[2] for name, spec in _LOADERS.items()}
