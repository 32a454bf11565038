"""Hypothetical-outcome cloud: N private draws aligned to the non-private centers."""

import numpy as np
from _viz_fakes import TRUE_CENTERS, blobs, fake_ledger

from dpviz.result import Result
from dpviz.viz.colors import cluster_color
from dpviz.viz.noise import aligned_draws, noise_cloud_figure


def _draws(n=12, seed=0, fail=0):
    rng = np.random.default_rng(seed)
    out = []
    for i in range(n):
        if i < fail:
            out.append(Result(None, "empty core", fake_ledger()))
            continue
        C = TRUE_CENTERS[rng.permutation(3)] + 0.02 * rng.normal(size=(3, 2))
        out.append(Result(C, None, fake_ledger()))
    return out


def test_aligned_draws_undo_each_draws_permutation():
    A = aligned_draws(_draws(), TRUE_CENTERS)
    assert A.shape == (12, 3, 2)
    assert np.max(np.abs(A - TRUE_CENTERS[None])) < 0.1


def test_cloud_traces_are_coloured_by_matched_cluster_and_count_failures():
    X, _ = blobs(300)
    fig = noise_cloud_figure(X, _draws(fail=2), TRUE_CENTERS, current=_draws(1, seed=5)[0])
    clouds = [t for t in fig.data if "private draws" in (t.name or "")]
    assert len(clouds) == 3
    for j, tr in enumerate(clouds):
        assert tr.marker.color == cluster_color(j)
        assert len(tr.x) == 10
        np.testing.assert_allclose(np.mean(tr.x), TRUE_CENTERS[j, 0], atol=0.05)
        assert tr.name.endswith("— private")
    names = [t.name for t in fig.data]
    assert any("non-private diagnostic (ε = ∞)" in n for n in names)
    assert "this run's centers — private" in names
    assert "2 output ⊥" in fig.layout.title.text


def test_zoomed_cloud_has_one_panel_per_cluster_scaled_to_its_draws():
    X, _ = blobs(300)
    draws = _draws()
    fig = noise_cloud_figure(X, draws, TRUE_CENTERS, zoom=True, current=draws[0])
    assert [a.text for a in fig.layout.annotations][:3] == ["cluster 1", "cluster 2", "cluster 3"]
    A = aligned_draws(draws, TRUE_CENTERS)
    half = np.max(np.abs(A[:, 1] - TRUE_CENTERS[1])) * 1.3
    np.testing.assert_allclose(fig.layout.xaxis2.range,
                               [TRUE_CENTERS[1, 0] - half, TRUE_CENTERS[1, 0] + half])
    shown = [t.name for t in fig.data if t.showlegend is not False]
    assert len(shown) == len(set(shown))


def test_fixed_scale_is_the_same_for_every_panel_and_shows_larger_noise_as_a_larger_cloud():
    """Issue 16: each zoomed panel at its own scale made the clouds look alike at every ρ."""
    from dpviz.viz.data import project_2d
    from dpviz.viz.noise import zoom_scale

    X, _ = blobs(300)
    proj = project_2d(X)
    small = _draws(seed=1)
    big = [Result(TRUE_CENTERS + 5 * (r.centers[np.argsort(
        np.argmin(np.linalg.norm(r.centers[:, None] - TRUE_CENTERS[None], axis=2), axis=1))]
        - TRUE_CENTERS), None, fake_ledger()) for r in small]  # the same draws, 5× the noise
    scale = zoom_scale(small, TRUE_CENTERS, proj)
    A = proj.transform(aligned_draws(small, TRUE_CENTERS).reshape(-1, 2)).reshape(12, 3, 2)
    R = proj.transform(TRUE_CENTERS)
    assert scale == np.max(np.abs(A - R[None])) * 1.3
    for draws in (small, big):
        fig = noise_cloud_figure(X, draws, TRUE_CENTERS, zoom=True, scale=scale, projector=proj)
        for j, axis in enumerate(("xaxis", "xaxis2", "xaxis3")):
            np.testing.assert_allclose(fig.layout[axis].range, [R[j, 0] - scale, R[j, 0] + scale])
        assert f"same scale (±{scale:.3g})" in fig.layout.title.text
    # at the fixed scale the 5× noisier draws spread 5× wider (some now off the panel)
    spread = [np.ptp(t.x) for fig in (noise_cloud_figure(X, d, TRUE_CENTERS, zoom=True, scale=scale,
                                                         projector=proj) for d in (small, big))
              for t in fig.data if "cluster 1:" in (t.name or "")]
    np.testing.assert_allclose(spread[1], 5 * spread[0], rtol=1e-6)
