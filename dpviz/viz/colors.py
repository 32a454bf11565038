"""Fixed colours for every figure, and cluster colours that do not flicker between draws.

Cluster j of one run and cluster j of the next run are different objects: a private run may
return the same clusters in another order (FriendlyReorder draws a random permutation π,
Tsfadia et al. 2022, §5.2.1). ``align_colors`` matches the new centers to reference centers
with the Hungarian algorithm (scipy's ``linear_sum_assignment``) so the same cluster keeps the
same colour across reruns, ρ moves and noise redraws.
"""

from __future__ import annotations

import numpy as np
from scipy.optimize import linear_sum_assignment

#: Qualitative palette for clusters (Okabe & Ito 2008, colour-blind safe, then Tableau 10).
PALETTE: tuple[str, ...] = (
    "#0072B2",  # blue
    "#E69F00",  # orange
    "#009E73",  # bluish green
    "#CC79A7",  # reddish purple
    "#56B4E9",  # sky blue
    "#D55E00",  # vermillion
    "#F0E442",  # yellow
    "#8C564B",  # brown
    "#17BECF",  # cyan
    "#7F7F7F",  # grey
    "#BCBD22",  # olive
    "#9467BD",  # purple
)

#: Semantic colours shared by all figures.
DATA = "#9AA5B1"  # the raw data, drawn faintly under everything else
REMOVED = "#C0392B"  # elements a filter removed
KEPT = "#2E86C1"  # elements a filter kept
PRIVATE = "#D62728"  # private releases (the paper's Figure 3 draws them red)
NONPRIVATE = "#111111"  # non-private diagnostics (black)
FINAL = "#F1C40F"  # centers after the private Lloyd step (the paper's yellow)
REFERENCE = "#000000"  # the reference tuple of FriendlyReorder (the paper's black)
THRESHOLD = "#444444"


def cluster_color(j: int) -> str:
    """The colour of cluster index ``j`` (cycles through :data:`PALETTE`)."""
    return PALETTE[int(j) % len(PALETTE)]


def with_alpha(color: str, alpha: float) -> str:
    """``'#RRGGBB'`` as an ``rgba(...)`` string with opacity ``alpha``."""
    c = color.lstrip("#")
    r, g, b = (int(c[i : i + 2], 16) for i in (0, 2, 4))
    return f"rgba({r},{g},{b},{alpha:g})"


def align_colors(reference_centers: np.ndarray | None, centers: np.ndarray | None) -> np.ndarray:
    """Colour index of each of ``centers`` so that it matches the nearest reference cluster.

    Parameters
    ----------
    reference_centers : (k_ref, d) array or None
        Centers whose colours are fixed (index i gets colour ``cluster_color(i)``), e.g. the
        non-private or true centers, or the previous draw.
    centers : (k, d) array or None
        New centers to colour.

    Returns
    -------
    perm : (k,) int array
        ``perm[j]`` is the colour index of ``centers[j]``: the reference cluster matched to it by a
        minimum-total-distance assignment. When ``k > k_ref`` the unmatched centers get the
        unused indices ``k_ref, k_ref + 1, ...``; with no reference, the identity.
    """
    if centers is None:
        return np.zeros(0, dtype=int)
    centers = np.asarray(centers, dtype=float)
    k = centers.shape[0]
    if reference_centers is None or len(reference_centers) == 0 or k == 0:
        return np.arange(k)
    ref = np.asarray(reference_centers, dtype=float)
    cost = np.linalg.norm(centers[:, None, :] - ref[None, :, :], axis=2)
    rows, cols = linear_sum_assignment(cost)
    perm = np.full(k, -1, dtype=int)
    perm[rows] = cols
    unmatched = np.flatnonzero(perm < 0)
    perm[unmatched] = ref.shape[0] + np.arange(unmatched.size)
    return perm


def canonical_order(centers_2d: np.ndarray) -> np.ndarray:
    """Colour indices for centers without a reference: rank by (x, y) of their 2-D projection.

    Deterministic in the positions alone, so a rerun that returns the same clusters in another
    order still gets the same colours.
    """
    c = np.asarray(centers_2d, dtype=float)
    if c.shape[0] == 0:
        return np.zeros(0, dtype=int)
    order = np.lexsort((c[:, 1], c[:, 0]))
    perm = np.empty(c.shape[0], dtype=int)
    perm[order] = np.arange(c.shape[0])
    return perm


#: A light template (white background, faint grid). A dict, so figures validate it cheaply:
#: the built-in "plotly_white" is deep-copied and validated on every figure (≈ 40 ms each).
#: Streamlit replaces templates with its own theme anyway; this one is for HTML exports.
TEMPLATE: dict = {
    "layout": {
        "paper_bgcolor": "white",
        "plot_bgcolor": "white",
        "font": {"color": "#2a3f5f"},
        "title": {"x": 0.05},
        "xaxis": {"gridcolor": "#EBF0F8", "zerolinecolor": "#EBF0F8", "linecolor": "#EBF0F8"},
        "yaxis": {"gridcolor": "#EBF0F8", "zerolinecolor": "#EBF0F8", "linecolor": "#EBF0F8"},
        "hoverlabel": {"align": "left"},
    }
}
