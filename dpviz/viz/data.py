"""Scatter plots of data: one shared 2-D projection, Scattergl, deterministic downsampling.

Every panel of a run uses the same :class:`Projector` so points, tuples and centers line up.
For d > 2 it is PCA (computed on the data, for display only; nothing private depends on it)
and the axis titles say so.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import plotly.graph_objects as go

from dpviz.viz import colors
from dpviz.viz.text import plotly_text

#: Above this many rows PCA is fitted on a deterministic subsample (display only).
_PCA_FIT_ROWS = 50_000
#: Above this dimension no d×d covariance is formed: the top two components come from a
#: randomized range finder (Halko, Martinsson, Tropp 2011, Alg. 4.4) on at most
#: _PCA_FIT_CELLS / d rows, in O(rows · d) memory (issue 19: d = 5 000 needed 200 MB and minutes).
_PCA_DENSE_DIM = 500
_PCA_FIT_CELLS = 5_000_000


@dataclass(frozen=True)
class Projector:
    """A fixed affine map R^d → R^2 shared by every panel of a figure.

    Attributes
    ----------
    mean : (d,) array
        Subtracted before projecting (zeros when d ≤ 2: the data is shown as is).
    components : (d, 2) array
        Columns are the two axes (the top principal directions when d > 2).
    axis_titles : (str, str)
        What the axes show, e.g. ``("PC1 (62% of variance)", "PC2 (21% of variance)")``.
    method : str
        ``"identity"`` (d = 2), ``"pad"`` (d = 1, y = 0) or ``"pca"``.
    """

    mean: np.ndarray
    components: np.ndarray
    axis_titles: tuple[str, str]
    method: str

    @property
    def d(self) -> int:
        return int(self.components.shape[0])

    def transform(self, Z: np.ndarray) -> np.ndarray:
        """Project points (…, d) to (…, 2)."""
        Z = np.asarray(Z, dtype=float)
        if Z.shape[-1] != self.d:
            raise ValueError(
                f"The projector was fitted on d={self.d} columns; got points with "
                f"{Z.shape[-1]} columns."
            )
        return (Z - self.mean) @ self.components

    def note(self) -> str:
        if self.method == "pca":
            return f"{self.d}-D data shown in its first two principal components (display only)."
        return ""


def project_2d(X: np.ndarray, *, feature_names: tuple[str, ...] | None = None) -> Projector:
    """The 2-D display projection of ``X`` (n, d): identity for d = 2, PCA for d > 2.

    PCA uses the d×d covariance (O(n d²)), fitted on at most 50 000 evenly spaced rows; the
    sign of each axis is fixed (largest loading positive) so reruns never mirror the picture.
    """
    X = np.asarray(X, dtype=float)
    if X.ndim != 2 or X.shape[1] < 1:
        raise ValueError(f"project_2d needs an array of shape (n, d); got shape {X.shape}.")
    d = X.shape[1]
    # Column names are user data: escaped so that plotly shows them as text (dpviz.viz.text).
    names = tuple(plotly_text(c) for c in feature_names) if feature_names and len(feature_names) == d \
        else None
    if d == 1:
        return Projector(np.zeros(1), np.array([[1.0, 0.0]]), (names[0] if names else "x1", ""), "pad")
    if d == 2:
        titles = (names[0], names[1]) if names else ("x1", "x2")
        return Projector(np.zeros(2), np.eye(2), titles, "identity")
    n = X.shape[0]
    max_rows = _PCA_FIT_ROWS if d <= _PCA_DENSE_DIM else max(2, _PCA_FIT_CELLS // d)
    step = n // max_rows if d <= _PCA_DENSE_DIM else -(-n // max_rows)  # ceil: at most max_rows
    fit = X[:: max(1, step)] if n > max_rows else X
    mean = fit.mean(axis=0) if fit.shape[0] else np.zeros(d)
    if fit.shape[0] < 2:
        comps = np.eye(d)[:, :2]
        return Projector(mean, comps, ("x1", "x2"), "pca")
    if d <= _PCA_DENSE_DIM:
        cov = np.cov(fit, rowvar=False)
        vals, vecs = np.linalg.eigh(cov)
        order = np.argsort(vals)[::-1][:2]
        comps, top = vecs[:, order], vals[order]
        total = float(vals.sum())
    else:
        comps, top, total = _randomized_top2(fit - mean)
    signs = np.sign(comps[np.argmax(np.abs(comps), axis=0), [0, 1]])
    comps = comps * np.where(signs == 0, 1.0, signs)
    share = top / total if total > 0 else np.zeros(2)
    titles = (f"PC1 ({share[0]:.0%} of variance)", f"PC2 ({share[1]:.0%} of variance)")
    return Projector(mean, comps, titles, "pca")


def _randomized_top2(Xc: np.ndarray, oversample: int = 8, power: int = 4) -> tuple[np.ndarray, np.ndarray,
                                                                                   float]:
    """Top-2 principal axes (d, 2), their variances and the total variance of centered rows
    Xc (m, d) without a d×d matrix: a fixed-seed randomized range finder with power iterations
    (Halko, Martinsson, Tropp 2011, Alg. 4.4); display only, deterministic."""
    m, d = Xc.shape
    omega = np.random.default_rng(0).standard_normal((d, min(d, 2 + oversample)))
    Q, _ = np.linalg.qr(Xc @ omega)
    for _ in range(power):
        Q, _ = np.linalg.qr(Xc.T @ Q)
        Q, _ = np.linalg.qr(Xc @ Q)
    _, s, vt = np.linalg.svd(Q.T @ Xc, full_matrices=False)
    var = s[:2] ** 2 / max(m - 1, 1)
    total = float(np.einsum("ij,ij->", Xc, Xc)) / max(m - 1, 1)
    comps = vt[:2].T
    if comps.shape[1] < 2:
        comps = np.pad(comps, ((0, 0), (0, 2 - comps.shape[1])))
        var = np.pad(var, (0, 2 - var.size))
    return comps, var, total


def downsample_index(n: int, max_points: int, *, rng_seed: int = 0) -> np.ndarray:
    """Sorted indices of at most ``max_points`` of ``n`` rows, the same for the same arguments.

    For display only: drawing 10⁵ markers slows the browser without showing more.
    """
    if max_points < 1:
        raise ValueError(f"The 'max_points' parameter must be an int >= 1. Got {max_points!r}.")
    if n <= max_points:
        return np.arange(n)
    rng = np.random.default_rng(rng_seed)
    return np.sort(rng.choice(n, size=max_points, replace=False))


def _unpack(data: Any) -> tuple[np.ndarray, np.ndarray | None, np.ndarray | None, tuple | None, str]:
    """(X, labels, true_centers, feature_names, name) from a Dataset or an array."""
    if hasattr(data, "X"):
        return (np.asarray(data.X, dtype=float), getattr(data, "labels", None),
                getattr(data, "true_centers", None), getattr(data, "feature_names", None),
                getattr(data, "name", "data"))
    return np.asarray(data, dtype=float), None, None, None, "data"


def _scattergl(x: np.ndarray, y: np.ndarray, *, name: str, mode: str = "markers",
               **kw: Any) -> dict:
    """A Scattergl trace as a dict (keys with value None are left out)."""
    out = dict(type="scattergl", x=x, y=y, mode=mode, name=name)
    out.update({k: v for k, v in kw.items() if v is not None})
    return out


def points_traces(
    P: np.ndarray,
    labels: np.ndarray | None = None,
    *,
    color_of: np.ndarray | None = None,
    name: str = "data",
    opacity: float = 0.5,
    size: float = 4,
    color: str = colors.DATA,
    showlegend: bool = True,
    legendgroup: str | None = None,
    suffix: str = "",
) -> list[dict]:
    """Scattergl traces (plain dicts) for already projected (and downsampled) points ``P`` (m, 2).

    Dicts rather than ``go.Scattergl`` objects: a figure validates them once when it is built,
    which halves the time to draw a storyboard panel.

    Without labels: one trace. With labels: one trace per label, coloured ``cluster_color(
    color_of[label])``; label −1 is drawn grey as "removed". ``suffix`` ends every name.
    """
    if labels is None:
        return [_scattergl(P[:, 0], P[:, 1], name=name + suffix, legendgroup=legendgroup,
                           showlegend=showlegend,
                           marker=dict(size=size, color=color, opacity=opacity))]
    labels = np.asarray(labels)
    traces = []
    for lab in np.unique(labels):
        sel = labels == lab
        if lab < 0:
            c, nm = colors.DATA, f"{name}: removed (outside Λ)"
        else:
            ci = int(color_of[lab]) if color_of is not None and lab < len(color_of) else int(lab)
            c, nm = colors.cluster_color(ci), f"{name}: cluster {ci + 1}"
        traces.append(_scattergl(P[sel, 0], P[sel, 1], name=nm + suffix, legendgroup=legendgroup,
                                 showlegend=showlegend,
                                 marker=dict(size=size, color=c, opacity=opacity)))
    return traces


def centers_trace(
    C2: np.ndarray,
    *,
    name: str,
    color: str | list[str],
    symbol: str = "x",
    size: float = 14,
    line_color: str = "white",
    opacity: float = 1.0,
    showlegend: bool = True,
) -> dict:
    """One trace (a dict) of projected centers (k, 2) drawn as large outlined markers.

    WebGL like the data: plotly draws every WebGL trace above every SVG trace, so an SVG marker
    would disappear under a Scattergl cloud.
    """
    return _scattergl(C2[:, 0], C2[:, 1], name=name, showlegend=showlegend,
                      marker=dict(size=size, color=color, symbol=symbol, opacity=opacity,
                                  line=dict(width=1.5, color=line_color)))


def data_figure(
    data: Any,
    labels: np.ndarray | None = None,
    *,
    projector: Projector | None = None,
    max_points: int = 20_000,
    rng_seed: int = 0,
    title: str | None = None,
    show_true_centers: bool = True,
) -> go.Figure:
    """Preview scatter of a Dataset (or an (n, d) array).

    Parameters
    ----------
    data : Dataset or (n, d) array
        A Dataset's ground-truth ``labels`` and ``true_centers`` are drawn when present.
    labels : (n,) int array, optional
        Colours points by these labels instead (−1 = removed).
    projector : Projector, optional
        Shared projection; by default ``project_2d(X)`` (PCA when d > 2, said in the axes).
    max_points : int
        At most this many points are drawn (a deterministic random subset, the same for the same
        ``rng_seed``); the title says "showing m of n points".
    """
    X, ds_labels, true_centers, feature_names, name = _unpack(data)
    if X.ndim != 2:
        raise ValueError(f"data_figure needs data of shape (n, d); got shape {X.shape}.")
    labels = ds_labels if labels is None else labels
    proj = projector or project_2d(X, feature_names=feature_names)
    n = X.shape[0]
    idx = downsample_index(n, max_points, rng_seed=rng_seed)
    P = proj.transform(X[idx]) if n else np.zeros((0, 2))
    lab = None if labels is None else np.asarray(labels)[idx]
    traces = points_traces(P, lab, name="data" if lab is None else "data (true label)",
                           opacity=0.6 if n < 5000 else 0.35)
    if show_true_centers and true_centers is not None and len(true_centers):
        C2 = proj.transform(np.asarray(true_centers, dtype=float))
        traces.append(centers_trace(C2, name="true centers (known to the generator)",
                                    color=colors.NONPRIVATE, symbol="diamond", size=11))
    head = title or plotly_text(name)
    sub = [f"showing {idx.size:,} of {n:,} points"] if idx.size < n else [f"{n:,} points"]
    if proj.method == "pca":
        sub.append(f"PCA of {proj.d}-D data")
    fig = go.Figure(data=traces, layout=dict(
        title=dict(text=f"{head}<br><sup>{' · '.join(sub)}</sup>"),
        xaxis=dict(title=dict(text=proj.axis_titles[0])),
        yaxis=dict(title=dict(text=proj.axis_titles[1]), scaleanchor="x", scaleratio=1),
        template=colors.TEMPLATE, legend=dict(itemsizing="constant")))
    return fig
