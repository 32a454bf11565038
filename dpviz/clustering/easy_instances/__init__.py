"""Easy Instances (Cohen, Kaplan, Mansour, Stemmer, Tsfadia, ICML 2021): private k-tuple clustering
(PrivateTestPartition → PrivatekAverages / PrivatekNoisyCenters) and its applications PrivatekMeans
and PrivateGMM. Constants are tagged as in the engineer's note: [S] stated, [S-skel] structure
stated, [D] derived, [R] recalled, [OURS] a dpviz default.
"""

from dpviz.clustering.easy_instances.aggregators import private_k_averages, private_k_noisy_centers
from dpviz.clustering.easy_instances.applications import (
    easy_tuple_stage,
    gmm_guarantee,
    kmeans_guarantee,
    kmeans_private_stage,
    private_gmm,
    private_k_means,
)
from dpviz.clustering.easy_instances.interior_point import avg_rd, bounding_segment, interior_point
from dpviz.clustering.easy_instances.partition import private_test_close_tuples, private_test_partition
from dpviz.clustering.easy_instances.plan import (
    TUPLE_STEPS_PER_ROW,
    AveragesPlan,
    AveragesSplit,
    NoisyCentersPlan,
    NoisyCentersSplit,
    PartitionPlan,
    averages_plan,
    noisy_centers_plan,
    partition_plan,
)
from dpviz.clustering.easy_instances.spec import GMM_SPEC, SPEC

__all__ = [
    "GMM_SPEC",
    "SPEC",
    "TUPLE_STEPS_PER_ROW",
    "AveragesPlan",
    "AveragesSplit",
    "NoisyCentersPlan",
    "NoisyCentersSplit",
    "PartitionPlan",
    "averages_plan",
    "avg_rd",
    "bounding_segment",
    "easy_tuple_stage",
    "gmm_guarantee",
    "interior_point",
    "kmeans_guarantee",
    "kmeans_private_stage",
    "noisy_centers_plan",
    "partition_plan",
    "private_gmm",
    "private_k_averages",
    "private_k_means",
    "private_k_noisy_centers",
    "private_test_close_tuples",
    "private_test_partition",
]
