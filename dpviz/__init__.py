"""dpviz: differentially private clustering you can see.

The library is pure Python (numpy, scipy, scikit-learn, plotly); it never imports Streamlit.
Entry points return a :class:`Result` (answer, ledger of privacy spends, trace of steps).
"""

from dpviz import data, metrics, privacy, registry
from dpviz.averaging import fc_avg, fc_avg_unknown_diam, friendly_avg
from dpviz.clustering import (
    compute_tuples,
    diffprivlib_kmeans,
    dp_lloyd,
    fc_clustering,
    fc_private_stage,
    fc_tuple_stage,
    nonprivate_kmeans,
)
from dpviz.core import friendly_core, friendly_core_dp
from dpviz.estimators import FriendlyCoreKMeans
from dpviz.privacy.plan import BudgetPlan
from dpviz.registry import algorithms, plan, run
from dpviz.result import Result, TraceStep

__all__ = [
    "BudgetPlan",
    "FriendlyCoreKMeans",
    "Result",
    "TraceStep",
    "algorithms",
    "compute_tuples",
    "data",
    "diffprivlib_kmeans",
    "dp_lloyd",
    "fc_avg",
    "fc_avg_unknown_diam",
    "fc_clustering",
    "fc_private_stage",
    "fc_tuple_stage",
    "friendly_avg",
    "friendly_core",
    "friendly_core_dp",
    "metrics",
    "nonprivate_kmeans",
    "plan",
    "privacy",
    "registry",
    "run",
]
