"""Cluster colours: Hungarian matching to a reference, so colours do not flicker."""

import numpy as np
import pytest

from dpviz.viz.colors import PALETTE, align_colors, canonical_order, cluster_color, with_alpha

REF = np.array([[0.0, 0.0], [10.0, 0.0], [0.0, 10.0]])


@pytest.mark.parametrize("perm", [(0, 1, 2), (2, 0, 1), (1, 2, 0), (2, 1, 0)])
def test_align_colors_undoes_a_permutation(perm):
    centers = REF[list(perm)] + 0.3  # same clusters, shuffled order, small shift
    out = align_colors(REF, centers)
    np.testing.assert_array_equal(out, perm)  # centers[j] is reference cluster perm[j]


def test_align_colors_extra_centers_get_unused_indices():
    centers = np.vstack([REF[[1, 0]], [[50.0, 50.0]]])
    out = align_colors(REF[:2], centers)
    np.testing.assert_array_equal(out, [1, 0, 2])


def test_align_colors_without_reference_is_identity():
    np.testing.assert_array_equal(align_colors(None, REF), [0, 1, 2])
    assert align_colors(REF, None).size == 0


def test_canonical_order_depends_on_positions_only():
    a = canonical_order(REF)
    b = canonical_order(REF[[2, 0, 1]])
    # the same point gets the same colour index whatever its position in the array
    assert a[2] == b[0] and a[0] == b[1] and a[1] == b[2]


def test_palette_helpers():
    assert cluster_color(len(PALETTE)) == PALETTE[0]
    assert with_alpha("#FF0080", 0.5) == "rgba(255,0,128,0.5)"
