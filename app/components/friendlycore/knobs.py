"""FriendlyCore's knobs, each spelled once from the URL to ``FCParams`` (issue 45 item 4).

One row per knob, read by the URL parser and the canonical parameters' defaults
(:mod:`app.components.state`), by :class:`~app.components.friendlycore.run.RunConfig` (its fields)
and by the ``FCParams`` it builds (:meth:`RunConfig.fc_params`):

=========  ==========  ======================  ===============  ===========  ======================
knob       parameter   URL (written)           FCParams field   default      bounds
=========  ==========  ======================  ===============  ===========  ======================
t          t           friendlycore.n_tuples   n_tuples         1,500        0 (automatic) or 2-5,000
oracle     oracle      friendlycore.oracle     oracle           kmeans++     FCParams's choices
preset     preset      friendlycore.preset     preset           practical    FCParams's choices
r_min      rmin        friendlycore.r_min      r_min            0.001        (0, 10⁶]
fallback   fb          friendlycore.fallback   fallback         true         true / false
=========  ==========  ======================  ===============  ===========  ======================

* **knob**: the name the app's code uses (``RunConfig.t``, ``cfg.r_min``);
* **parameter**: the key of the canonical dict (``state.params()["rmin"]``), which is also the
  flat URL name of links made before the namespaced names; such a link still opens the same run
  (a namespaced name wins when a link carries both);
* **URL**: ``friendlycore.<FCParams field>``, what the app writes;
* **default**: the app's (the default lesson's: t = 1,500 on 150,000 rows,
  ``bench/teaching_default.py``), not ``FCParams``'s (t = 0, r_min = 0: automatic);
* **bounds**: what a link may set. The upper bound and the choices are ``FCParams``'s own hints;
  the app narrows the lower bound (t = 1 is no clustering, r_min = 0 is not offered), so every
  value a link sets is one ``FCParams`` accepts (``tests/unit/test_fc_knobs.py``). Until issue 45 a
  link's r_min was read up to 10⁹ while ``FCParams`` refuses above 10⁶.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, fields
from typing import Any

import dpviz.registry
from dpviz.clustering.friendlycore.spec import FCParams
from dpviz.specs import ParamHint, param_fields

#: The registry name FriendlyCore's URL names are namespaced with.
ALGORITHM = "friendlycore"


@dataclass(frozen=True)
class Knob:
    """One of FriendlyCore's knobs: its names (code, canonical parameter, ``FCParams`` field), the
    app's default and the bounds a link may set (see the module's table)."""

    name: str
    param: str
    field: str
    default: Any
    help: str
    #: The smallest value a link may set (None: ``FCParams``'s own lower bound) and whether it is
    #: excluded (r_min > 0).
    low: float | None = None
    low_open: bool = False
    #: A value below ``low`` that is still accepted and means "automatic" (t = 0).
    automatic: Any = None

    @property
    def url(self) -> str:
        """The name the app writes in a link: ``friendlycore.<FCParams field>``."""
        return f"{ALGORITHM}.{self.field}"

    @property
    def hint(self) -> ParamHint:
        """``FCParams``'s hint of this knob's field (its range and choices)."""
        return next(h for f, h in param_fields(FCParams) if f.name == self.field)

    @property
    def kind(self) -> type:
        """The value's type (the default's): int, float, str or bool."""
        return type(self.default)

    @property
    def bounds(self) -> tuple[Any, ...]:
        """(low, high) for a number, the choices for a name, (False, True) for a flag."""
        if self.kind is bool:
            return (False, True)
        if self.hint.choices is not None:
            return tuple(self.hint.choices)
        return (self.hint.low if self.low is None else self.low, self.hint.high)


T = Knob("t", "t", "n_tuples", 1500, "tuples (pieces); 0 = automatic (from n and k)", low=2, automatic=0)
ORACLE = Knob("oracle", "oracle", "oracle", "kmeans++", "non-private oracle")
PRESET = Knob("preset", "preset", "preset", "practical", "budget split preset")
R_MIN = Knob("r_min", "rmin", "r_min", 0.001, "r_min", low=0.0, low_open=True)
FALLBACK = Knob("fallback", "fb", "fallback", True, "FriendlyCore's fallback (grid coreset) on/off")

#: Every knob, in the table's order.
KNOBS: tuple[Knob, ...] = (T, ORACLE, PRESET, R_MIN, FALLBACK)
assert {k.field for k in KNOBS} == {f.name for f in fields(FCParams)}, "a knob of FCParams has no row"


def from_params(p: Mapping[str, Any]) -> dict[str, Any]:
    """The knobs' values (by knob name, as their type) in the canonical parameters ``p``; a knob
    ``p`` lacks takes its default."""
    return {k.name: k.kind(p.get(k.param, k.default)) for k in KNOBS}


def to_params(params: FCParams) -> dict[str, Any]:
    """The canonical parameters (by parameter name) of an ``FCParams``."""
    return {k.param: getattr(params, k.field) for k in KNOBS}


def fc_params(values: Mapping[str, Any], *, stage_only: bool = False) -> FCParams:
    """The ``FCParams`` of knob values (by knob name): all of them, or only the tuple stage's (the
    registered spec's ``stage_fields``: t and the oracle; the others at ``FCParams``'s defaults, so
    a budget knob it refuses never hides the last good stage)."""
    stage = dpviz.registry.get(ALGORITHM).stage_fields
    return FCParams(**{k.field: values[k.name] for k in KNOBS if k.field in stage or not stage_only})
