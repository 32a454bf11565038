"""The parameters that open FriendlyCore in Explore from another page (Compare's click).

FriendlyCore's page reads its knobs from the canonical parameters (the knobs' table,
:mod:`app.components.friendlycore.knobs`): the comparison's t (the auto t from the declared size
when 0), oracle, preset, r_min (10⁻³·Λ when 0) and fallback, so that Explore plans the same budget
from the same row-level (ε, δ) (``app/components/compare.explore_params``).
"""

from __future__ import annotations

from typing import Any

from app.components.friendlycore import knobs
from dpviz.clustering.friendlycore.spec import auto_n_tuples


def explore_params(params: Any, *, n_declared: int, k: int, radius: float) -> dict[str, Any]:
    """The canonical Explore parameters of FriendlyCore's ``params`` on these public inputs."""
    return knobs.to_params(params) | {
        knobs.T.param: params.n_tuples or auto_n_tuples(n_declared, k),
        knobs.R_MIN.param: params.r_min or 1e-3 * radius}
