"""Filter scores vs keep threshold; FindDiam probes."""

import numpy as np
import pytest
from _viz_fakes import fake_fc_result

from dpviz.core.filters import zcdp_filter
from dpviz.privacy.ledger import Ledger
from dpviz.viz.filters import filter_scores_figure, find_diam_figure, find_diam_table


def test_scores_histogram_splits_kept_and_removed_at_the_threshold():
    result, _ = fake_fc_result()
    st = result.step("match_core")
    fig = filter_scores_figure(result)
    kept, removed, true = fig.data
    keep = st.data["keep"]
    np.testing.assert_allclose(kept.x, st.data["noisy_scores"][keep])
    np.testing.assert_allclose(removed.x, st.data["noisy_scores"][~keep])
    assert kept.name == f"kept ({keep.sum()}) — non-private diagnostic"
    assert true.visible == "legendonly"
    xs = sorted(s.x0 for s in fig.layout.shapes)
    assert xs == [0.0, st.data["threshold"]]  # z = 0 (friends with n/2) and τ


def test_scores_from_a_real_zcdp_filter_outcome():
    counts = np.r_[np.full(90, 100), np.full(10, 3)]
    out = zcdp_filter(counts, rho=1.0, delta=1e-6, rng=np.random.default_rng(0),
                      ledger=Ledger("t"))
    fig = filter_scores_figure(out, title="demo")
    assert len(fig.data[0].x) + len(fig.data[1].x) == 100
    assert any(s.x0 == pytest.approx(out.threshold) for s in fig.layout.shapes)


def test_missing_filter_step_is_explained():
    result, _ = fake_fc_result(stop_after="pieces")
    fig = filter_scores_figure(result, step="dist_core")
    assert "stopped before" in fig.layout.annotations[0].text


def test_find_diam_table_and_figure():
    result, _ = fake_fc_result()
    probes = result.step("diameters").data["probes"]
    df = find_diam_table(probes)
    assert len(df) == sum(len(p) for p in probes)
    assert list(df.columns) == ["coordinate", "probe", "r", "a", "a_hat", "threshold", "accepted"]
    fig = find_diam_figure(result)
    assert fig.layout.xaxis.type == "log"
    acc = [t for t in fig.data if "accepted" in (t.name or "")]
    rej = [t for t in fig.data if "rejected" in (t.name or "")]
    assert sum(len(t.x) for t in acc) == int(df["accepted"].sum())
    assert sum(len(t.x) for t in rej) == int((~df["accepted"]).sum())
    assert "chosen radii (private)" in fig.layout.title.text
    # a single FindDiam probe list (not per coordinate) works too
    assert len(find_diam_table(probes[0])) == len(probes[0])


def test_friends_matrix_sorted_core_first():
    from dpviz.viz.filters import friends_matrix_figure

    M = np.zeros((6, 6), bool)
    M[np.ix_([1, 3, 4], [1, 3, 4])] = True  # three mutual friends
    M[np.diag_indices(6)] = True
    keep = np.array([False, True, False, True, True, False])
    fig = friends_matrix_figure(M, keep)
    Z = np.asarray(fig.data[0].z)
    assert Z[:3, :3].all() and Z[:3, 3:].sum() == 0  # the core block comes first
    assert [s.x0 for s in fig.layout.shapes if s.xref == "x"] == [2.5]
    with pytest.raises(ValueError, match="square"):
        friends_matrix_figure(np.zeros((2, 3)))
