"""The Compare page's helpers: the call that reproduces a run, and the Explore link of a point.

The Compare sweep itself (its spec, pieces, job and shared store) is :mod:`app.components.sweep`,
shared with the Budget page; its engine is ``dpviz.sweeps.sweep``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import dpviz
from app.components import families
from app.components.sweep import CompareSpec, eps_grid, param_values


def default_set(ds, p: Mapping[str, Any]) -> list[str]:
    """The data shape's default methods for the canonical parameters ``p``
    (:func:`dpviz.compare_set.default_methods`: public inputs only, the declared n, d, k, the
    compared ε range, δ and the target ε)."""
    import dpviz.compare_set

    eps = eps_grid(p["celo"], p["cehi"], int(p["cpts"]))
    return dpviz.compare_set.default_methods(int(ds.n), int(ds.d), int(p["k"]), eps, float(p["cdelta"]),
                                             float(p["eps"]))


def algorithm_names(ds, p: Mapping[str, Any]) -> list[str]:
    """The registry names a ``calg`` value stands for on ``ds`` ("all", "default" or a list)."""
    names = [s.name for s in dpviz.algorithms(applicable_to=int(ds.d))]
    if p["calg"] == "all":
        return names
    if p["calg"] == "default":
        return [a for a in default_set(ds, p) if a in names]
    return [a for a in p["calg"].split(",") if a]


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
