"""Balcan, Dick, Liang, Mou, Zhang (ICML 2017): private k-means in high dimension.

JL projection → private candidate set (Alg. 1–2) → private local search (Alg. 3) → noisy recovery
in ℝ^d (Alg. 4, Alg. 5 for sparse data) → private Lloyd refinement (§7). Pure ε-DP.
"""

from dpviz.clustering.balcan.localsearch import LocalSearch, brute_force_swap_losses, localswap, swap_losses
from dpviz.clustering.balcan.params import BalcanConfig, BalcanParams, resolve_config
from dpviz.clustering.balcan.partition import (
    CandidateSet,
    PartitionTree,
    activation_probability,
    candidate,
    private_partition,
    sample_empty_count,
)
from dpviz.clustering.balcan.pipeline import STEPS, balcan_kmeans, sulq_rho
from dpviz.clustering.balcan.projection import Projection, jl_projection, projected_radius
from dpviz.clustering.balcan.recovery import recover_centers, sparse_recover, sparsify
from dpviz.clustering.balcan.spec import SPEC, SULQ, balcan_guarantee, balcan_private

__all__ = [
    "SPEC",
    "STEPS",
    "SULQ",
    "BalcanConfig",
    "BalcanParams",
    "CandidateSet",
    "LocalSearch",
    "PartitionTree",
    "Projection",
    "activation_probability",
    "balcan_guarantee",
    "balcan_kmeans",
    "balcan_private",
    "brute_force_swap_losses",
    "candidate",
    "jl_projection",
    "localswap",
    "private_partition",
    "projected_radius",
    "recover_centers",
    "resolve_config",
    "sample_empty_count",
    "sparse_recover",
    "sparsify",
    "sulq_rho",
    "swap_losses",
]
