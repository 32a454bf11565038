"""The algorithm registry: every private clustering algorithm behind one interface.

Each family registers one :class:`AlgorithmSpec` at the bottom of its own module (see
``dpviz/clustering/friendlycore/spec.py`` for FriendlyCore). A spec states its name and paper, a frozen,
self-validating parameter dataclass whose fields carry UI hints (:func:`hint`), its budget kind,
how a **row-level** (ε, δ) target becomes its own budget, an optional non-private stage (cached by
the app so a budget move reruns only the private part), the private run, and its trace-step names.

The app, the sweeps, the Compare page, the benches and the command line iterate
:func:`algorithms`; :func:`run` is the one public call::

    dpviz.run("friendlycore", X, 8, epsilon=3.0, delta=1e-6, radius=1.0, n_declared=len(X))

Discovery: every module of the packages in :data:`FAMILY_PACKAGES` is imported on the first call
to :func:`algorithms`, :func:`get` or :func:`run`, so a new family is one new module that calls
:func:`register`; nothing else is edited.

The row-level contract (docs/privacy.md): ``guarantee(budget, pub, params, delta_prime)`` is the
(ε, δ)-DP guarantee for adding or removing one row of the user's data, computed from public
inputs only. :func:`calibrate` finds the largest budget whose guarantee is within the target.

Split by concept (issue 45): specs and names in :mod:`dpviz.specs`, calibration and plan in
:mod:`dpviz.planning`, the run in :mod:`dpviz.runner`, the accounting in
:mod:`dpviz.privacy.accounting`. This module re-exports their public names, so
``from dpviz.registry import …`` keeps working everywhere.
"""

from __future__ import annotations

from dpviz.planning import (
    CALIBRATION_RTOL,
    COUNT_EPS_FRACTION,
    _bisect,
    calibrate,
    plan,
    plan_at_budget,
    plan_at_rho,
)
from dpviz.privacy.accounting import (
    LEDGER_RTOL,
    LedgerOverTargetError,
    budget_from_rho,
    check_ledger,
    reaccount,
)
from dpviz.privacy.plan import BudgetPlan
from dpviz.runner import (
    COUNT_INFEASIBLE,
    STAGE_COUNT,
    STAGE_NONPRIVATE,
    STAGE_PLAN,
    STAGE_PRIVATE,
    STAGES,
    CancelToken,
    RunCancelledError,
    check_public,
    run,
    stages,
)
from dpviz.specs import (
    FAMILY_PACKAGES,
    GRID_CORESET,
    AlgorithmSpec,
    Answer,
    Budget,
    BudgetKind,
    Calibration,
    DataShape,
    ParamHint,
    Public,
    algorithms,
    answered_by,
    applicability,
    backup_name,
    check_hinted,
    get,
    hint,
    markdown_table,
    param_fields,
    parse_name,
    register,
    registry_name,
    releasable,
    resolve_name,
    unregister,
    variant_name,
)

__all__ = [
    "CALIBRATION_RTOL",
    "COUNT_EPS_FRACTION",
    "COUNT_INFEASIBLE",
    "FAMILY_PACKAGES",
    "GRID_CORESET",
    "LEDGER_RTOL",
    "STAGES",
    "STAGE_COUNT",
    "STAGE_NONPRIVATE",
    "STAGE_PLAN",
    "STAGE_PRIVATE",
    "AlgorithmSpec",
    "Answer",
    "Budget",
    "BudgetKind",
    "BudgetPlan",
    "Calibration",
    "CancelToken",
    "DataShape",
    "LedgerOverTargetError",
    "ParamHint",
    "Public",
    "RunCancelledError",
    "_bisect",
    "algorithms",
    "answered_by",
    "applicability",
    "backup_name",
    "budget_from_rho",
    "calibrate",
    "check_hinted",
    "check_ledger",
    "check_public",
    "get",
    "hint",
    "markdown_table",
    "param_fields",
    "parse_name",
    "plan",
    "plan_at_budget", "plan_at_rho",
    "reaccount",
    "register",
    "registry_name",
    "releasable",
    "resolve_name",
    "run",
    "stages",
    "unregister",
    "variant_name",
]
