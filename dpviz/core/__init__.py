"""FriendlyCore: predicates, friend counts, the two filters and the core itself."""

from dpviz.core.filters import (
    FilterOutcome,
    basic_filter,
    expected_margin,
    zcdp_filter,
    zcdp_threshold,
)
from dpviz.core.friendlycore import (
    CoreOutcome,
    friendly_core,
    friendly_core_dp,
    friendly_core_mask,
)
from dpviz.core.predicates import (
    SKETCH_LABEL,
    DistR,
    Predicate,
    SampledCounts,
    SketchPrivacyWarning,
    as_predicate,
    dist_r_counts,
    dist_r_cross_counts,
    friend_counts,
    sample_size,
    sampled_dist_r_counts,
    sampled_friend_counts,
)

__all__ = [
    "SKETCH_LABEL", "CoreOutcome", "DistR", "FilterOutcome", "Predicate", "SampledCounts",
    "SketchPrivacyWarning", "as_predicate", "basic_filter", "dist_r_counts", "dist_r_cross_counts",
    "expected_margin", "friend_counts", "friendly_core", "friendly_core_dp", "friendly_core_mask",
    "sample_size", "sampled_dist_r_counts", "sampled_friend_counts", "zcdp_filter",
    "zcdp_threshold",
]
