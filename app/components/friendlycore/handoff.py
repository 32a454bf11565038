"""The parameters that open FriendlyCore in Explore from another page (Compare's click).

FriendlyCore's page reads its knobs from the flat keys: the comparison's t (the auto t from the
declared size when 0), preset, oracle and r_min, so that Explore plans the same budget from the
same row-level (ε, δ) (``app/components/compare.explore_params``).
"""

from __future__ import annotations

from typing import Any

from dpviz.clustering.friendlycore.spec import auto_n_tuples


def explore_params(params: Any, *, n_declared: int, k: int, radius: float) -> dict[str, Any]:
    """The flat Explore parameters of FriendlyCore's ``params`` on these public inputs."""
    return {"t": params.n_tuples or auto_n_tuples(n_declared, k), "preset": params.preset,
            "oracle": params.oracle, "rmin": params.r_min or 1e-3 * radius}
