"""What every Explore page shares: the non-private reference, the loss tile, the error text.

The non-private reference (k-means++ on all rows: its centers and cost, used by the normalized
loss and the noise cloud) is computed once per ``(content_hash, k)``. A family's own runs live in
its folder (``app/components/<family>/run.py``); nothing here names an algorithm.
"""

from __future__ import annotations

import re
import time
from collections.abc import Hashable
from dataclasses import dataclass

import numpy as np

import dpviz.clustering.baselines
import dpviz.metrics
from app.components import cache, safe, simulation


@dataclass(frozen=True)
class Reference:
    """The non-private reference on all rows (a diagnostic, never released); ``recipe`` says how
    it was computed (``dpviz.metrics.reference_recipe``), shown beside the normalized loss."""

    centers: np.ndarray | None
    cost: float
    seconds: float
    recipe: str = ""


def reference(ds, k: int) -> Reference:
    """The non-private reference for the normalized loss, cached per (content hash, k)."""
    def compute() -> Reference:
        from app.components import shipped  # the default lesson's, shipped (issue 33 item 2)

        if (made := shipped.reference(ds, k)) is not None:
            return Reference(*made)
        t0 = time.perf_counter()
        ref = dpviz.metrics.reference_kmeans(ds.X, k, rng=0)
        return Reference(ref.centers, ref.cost, time.perf_counter() - t0, ref.recipe)

    return cache.memo("refcost", (ds.content_hash, int(k)), compute,
                      public=simulation.is_public(ds))


def loss_tile(raw: float | None) -> tuple[str, str]:
    """The normalized-loss tile's value and a caption suffix: never negative on screen.

    1 − X/Y is below 0 when the private centers happen to cost less than the non-private
    k-means++ reference (a heuristic, not the optimum; issue 16 saw −0.003 on "No clusters at
    all"). That is "as good as non-private": shown as 0.000, the measured value in the caption.
    """
    if raw is None:
        return "—", ""
    if raw >= 0:
        return f"{raw:.3f}", ""
    return "0.000", (f"; measured {raw:.3f}: the private centers cost less than the non-private "
                     "k-means++ reference (a heuristic), shown as 0")


_TOO_FEW_ROWS = re.compile(r"n_tuples=(\d+) with k=(\d+) needs at least (\d+) rows; got n=(\d+)\. "
                           r"Use n_tuples <= (\d+) or a smaller k\.")


def ui_words(msg: str) -> str:
    """A library message in the sidebar's words: ``n_tuples`` is the field "t", and the advice
    respects the field's own limit t ≥ 2 (issue 16: a two-row file was told "n_tuples ≤ 1")."""
    m = _TOO_FEW_ROWS.fullmatch(msg.strip())
    if m is not None:
        t, k, need, n, t_max = (int(g) for g in m.groups())
        if t_max >= 2:
            return (f"t = {t} pieces with k = {k} need at least {need:,} rows (k rows a piece); "
                    f"this dataset has {n:,}. Set t to at most {t_max:,}, or lower k.")
        k_max = n // 2
        advice = f"lower k to at most {k_max}" if k_max >= 1 else "use a dataset with more rows"
        return (f"This dataset has {n:,} row(s): too few for k = {k}. FriendlyCore needs at least "
                f"t = 2 pieces of k rows each ({2 * k:,} rows); {advice}.")
    return re.sub(r"\bn_tuples\b", "t", msg)


def error_text(exc: BaseException) -> str:
    """What to show for an exception from the library: a ValueError is the user's to fix."""
    if isinstance(exc, ValueError):
        return safe.md(ui_words(str(exc)))  # may quote user input: shown as text, not markdown
    return (f"The library failed ({type(exc).__name__}: {safe.md(exc)}). This is a bug in dpviz, "
            "not in your settings; the previous result stays on screen.")


def memo_figure(key: Hashable, build, *, public: bool = False):
    """Figures that depend only on cached inputs (e.g. panels (a), (b)) are built once (once for
    the server with ``public``: the figure's dataset is public, ``simulation.is_public``)."""
    return cache.memo("figures", key, build, public=public)
