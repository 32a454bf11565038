"""The lessons' own controls: the Learn page's FriendlyCore lesson (``app/views/learn.py``: its
row-level guarantee at a ρ, and the live example's runs ``run.demo_run``, ``run.demo_figures``,
``run.demo_prefetch``), and the default lesson's rows control on Explore and Present (issue 43).

Fewer rows make privacy dearer: on the default lesson (Fig. 6 blobs, k = 8, t = 1,500) the
backup's answer is wrong (normalized loss ≥ 0.3) up to ε ≈ 0.1 at 150,000 rows, up to ε ≈ 0.3 at
50,000 and up to ε ≈ 1 at 20,000, and FriendlyCore's own core forms (from ε = 5) only at 150,000
(``bench/teaching_default.py --losses``; the table is in docs/app.md). One click on the rows
control shows the other side.
"""

from __future__ import annotations

import functools

import streamlit as st

import dpviz.registry
from app.components import shipped, state
from app.components.friendlycore.run import demo_figures, demo_prefetch, demo_run  # noqa: F401

#: The live example's public inputs (``run.demo_run``: 20,000 rows, k = 3, t = 200, Λ = 1).
N, K, T, RADIUS, R_MIN = 20_000, 3, 200, 1.0, 0.001

#: The default lesson's rows control: the sizes whose reference ships
#: (:data:`app.components.shipped.LESSONS`), the default last.
ROWS: tuple[int, ...] = shipped.LESSON_ROWS
ROWS_LABEL = "Rows in the lesson (fewer rows: privacy costs more)"
ROWS_HELP = ("Regenerates the lesson's data (Fig. 6 blobs) with this many rows; k, t and the seeds "
             "stay. With fewer rows the same ε adds noise that matters more: the backup's centers "
             "go wrong at larger ε, and FriendlyCore's own core needs 150,000 rows to form.")


def on_lesson(p=None) -> bool:
    """Whether the current data is the default lesson's recipe (its generator, dimension,
    clusters, separation and data seed), at any number of rows."""
    p = state.params() if p is None else p
    recipe = {**state.defaults(), **shipped.LESSONS[-1]}
    return p["src"] == "generate" and all(p[name] == recipe[name]
                                          for name in ("gen", "d", "gk", "sep", "dseed"))


def rows_control(key: str, *, short: bool = False) -> int | None:
    """The lesson's rows as a one-line control (changing it reruns the app on the new rows), or
    None (nothing drawn) when the data is not the default lesson's recipe. ``short``: options
    as "20k" (Present's large type)."""
    if not on_lesson():
        return None
    n = int(state.get("n"))
    options = sorted(set(ROWS) | {n})  # an n from the Data page or a link stays selectable
    state.seed_widget("n", key)
    fmt = (lambda v: f"{v / 1000:g}k") if short else (lambda v: f"{v:,} rows")
    st.segmented_control("Rows (fewer: privacy costs more)" if short else ROWS_LABEL, options, key=key,
                         format_func=fmt, required=True, help=ROWS_HELP,
                         on_change=state.on_change("n", key, int))
    return n


@functools.lru_cache(maxsize=256)
def row_guarantee(rho: float, delta: float):
    """FriendlyCore's row-level (ε, δ) at the own budget (ρ, δ) with δ′ = δ on the live example's
    public inputs: converted by the plan's rule (``budget_from_rho`` → ``plan_at_budget``), which
    Explore's readout agrees with. Public inputs only, so cached process-wide."""
    registry = dpviz.registry
    spec = registry.get("friendlycore")
    pub = registry.Public(n_declared=N, d=2, k=K, radius=RADIUS)
    params = spec.make_params(n_tuples=T, r_min=R_MIN)
    return registry.plan_at_rho(spec, float(rho), float(delta), pub, params).guarantee
