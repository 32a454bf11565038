"""The Compare page's helpers: the call that reproduces a run, and the Explore link of a point.

The Compare sweep itself (its spec, pieces, job and shared store) is :mod:`app.components.sweep`,
shared with the Budget page; its engine is ``dpviz.sweeps.sweep``.
"""

from __future__ import annotations

from typing import Any

import dpviz
from app.components import families
from app.components.sweep import CompareSpec, param_values


def reproduce_call(name: str, eps: float, spec: CompareSpec) -> str:
    """The ``dpviz.run`` call that reproduces one algorithm's run at one ε (public inputs only)."""
    values = param_values(spec.params_of(name))
    defaults = param_values(dpviz.registry.get(name).make_params())
    extra = "".join(f", {k}={v!r}" for k, v in values.items() if v != defaults.get(k))
    return (f'dpviz.run("{name}", X, {spec.k}, epsilon={eps:g}, delta={spec.delta:g}, '
            f"radius={spec.radius:g}, n_declared={spec.n_declared}{extra})")


def explore_params(name: str, eps: float, spec: CompareSpec) -> dict[str, Any]:
    """The canonical parameters that open ``name`` at row-level ``eps`` in Explore.

    Explore shows any registered private algorithm (``alg``) at a row-level target (``eps`` and
    ``delta``), with its own parameters under ``<algorithm>.<field>`` keys; a family whose page
    reads flat keys adds them (its folder's ``handoff.py``; FriendlyCore's t, preset, oracle,
    r_min), so that Explore plans the same budget.
    """
    from dpviz.registry import get

    params = spec.params_of(name)
    algo = get(name)
    values = param_values(params)
    defaults = param_values(algo.make_params())
    out: dict[str, Any] = {"alg": name, "eps": float(eps), "k": spec.k, "seed": spec.seed}
    out |= {f"{name}.{k}": v for k, v in values.items() if v != defaults[k]}
    out["delta"] = spec.delta
    handoff = families.module(name, "handoff")
    if handoff is None:
        return out
    return out | handoff.explore_params(params, n_declared=spec.n_declared, k=spec.k, radius=spec.radius)
