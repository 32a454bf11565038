"""Private clustering: FriendlyCore's FC_Clustering and its sample-and-aggregate stage."""

from dpviz.clustering.baselines import diffprivlib_kmeans, dp_lloyd, nonprivate_kmeans
from dpviz.clustering.friendlycore.budget import (
    FCBudget,
    FCSplit,
    margins,
    paper_split,
    practical_split,
    resolve_budget,
    resolve_split,
)
from dpviz.clustering.friendlycore.pipeline import fc_clustering, fc_private_stage, fc_tuple_stage
from dpviz.clustering.friendlycore.steps import friendly_ord_tup_avg, friendly_reorder, noisy_lloyd_step
from dpviz.clustering.grid_coreset import FallbackOutcome, fallback_centers
from dpviz.clustering.tuples import TupleStage, assign_pieces, compute_tuples, stage_match_graph, tuple_stage

__all__ = [
    "FCBudget",
    "FCSplit",
    "FallbackOutcome",
    "TupleStage",
    "assign_pieces",
    "compute_tuples",
    "diffprivlib_kmeans",
    "dp_lloyd",
    "fallback_centers",
    "fc_clustering",
    "fc_private_stage",
    "fc_tuple_stage",
    "friendly_ord_tup_avg",
    "friendly_reorder",
    "margins",
    "noisy_lloyd_step",
    "nonprivate_kmeans",
    "paper_split",
    "practical_split",
    "resolve_budget",
    "resolve_split",
    "stage_match_graph",
    "tuple_stage",
]
