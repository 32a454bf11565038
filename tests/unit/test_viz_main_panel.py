"""The main panel (issue 16): data, private centers, the noise cloud ×M at a fixed scale, and
earlier draws (dpviz.viz.main_panel), on hand-built Results (see _viz_fakes)."""

import numpy as np
import pytest
from _viz_fakes import TRUE_CENTERS, fake_fc_result

from dpviz.viz import main_panel as mp
from dpviz.viz.data import project_2d


def _entries(fig):
    return [t.name.replace("<br>", " ") for t in fig.data if t.showlegend is not False]


def test_released_noise_reads_the_step_that_released_the_centers():
    result, _ = fake_fc_result()
    C, sigma = mp.released_noise(result)
    lloyd = result.find("lloyd")
    assert np.array_equal(C, result.centers) and np.array_equal(C, lloyd.data["centers"])
    assert np.array_equal(sigma, lloyd.data["sigma"])


def test_cloud_magnification_is_round_and_at_least_one():
    assert mp.cloud_magnification(np.array([0.0015]), 2.0) == 50.0  # raw 0.12·2/0.003 = 80
    assert mp.cloud_magnification(np.array([0.001, 0.002, 0.003]), 1.0) == 20.0  # raw 30
    assert mp.cloud_magnification(np.array([1.0]), 1.0) == 1.0  # never shrinks the noise
    assert mp.cloud_magnification(np.array([np.nan]), 1.0) == 1.0


def test_cloud_is_the_recorded_sigma_times_m_around_each_center():
    result, X = fake_fc_result()
    C, sigma = mp.released_noise(result)
    cloud = mp.noise_cloud(C, sigma, 10.0, samples=4000, rng_seed=3)
    assert cloud.shape == (C.shape[0], 4000, C.shape[1])
    # around each center, sd 10·σ_j per coordinate (4000 draws: within 5 %)
    assert np.abs(cloud.mean(axis=1) - C).max() < 4 * 10 * sigma.max() / np.sqrt(4000)
    assert cloud.std(axis=1) == pytest.approx(np.repeat(10 * sigma[:, None], C.shape[1], axis=1),
                                              rel=0.05)
    assert np.isnan(mp.noise_cloud(C, np.array([np.nan, 0.1, 0.1]), 2.0)[0]).all()
    fig = mp.main_panel_figure(result, X, magnification=10.0)
    names = _entries(fig)
    assert "noise cloud ×10: each center's Gaussian noise" in names
    assert mp.CENTERS_NAME in names and mp.DATA_NAME in names
    assert len(fig.layout.images) == 1 and fig.layout.images[0].source.startswith("data:image/png")
    assert not fig.layout.annotations  # FriendlyCore answered: no note


def test_axes_do_not_move_with_the_run():
    result, X = fake_fc_result(seed=0)
    other, _ = fake_fc_result(seed=1)
    proj = project_2d(X)
    a = mp.main_panel_figure(result, X, projector=proj, magnification=5.0)
    b = mp.main_panel_figure(other, X, projector=proj, magnification=5.0,
                             earlier=[result.centers])
    assert a.layout.xaxis.range == b.layout.xaxis.range and a.layout.yaxis.range == b.layout.yaxis.range
    assert a.layout.margin.autoexpand is False
    assert (a.layout.xaxis.title.text, a.layout.yaxis.title.text) == ("x1", "x2")
    earlier = [t for t in b.data if t.name.replace("<br>", " ") == mp.EARLIER_NAME]
    assert len(earlier) == 1 and len(earlier[0].x) == len(result.centers)
    assert mp.EARLIER_NAME not in _entries(a)


def test_no_cloud_and_a_note_when_the_backup_answered():
    result, X = fake_fc_result(stop_after="match_core")
    assert result.centers is not None and mp.released_noise(result) is None
    fig = mp.main_panel_figure(result, X, magnification=5.0)
    assert not any("noise cloud" in n for n in _entries(fig))
    assert "backup" in fig.layout.annotations[0].text
    assert TRUE_CENTERS.shape[1] == 2


def test_backup_note_states_its_count_noise_which_grows_as_rho_shrinks():
    """Issue 27, defect 3: below the core's ρ the picture said only "another method answered" at
    every ρ; it now states the grid counts' σ = 1/√(2ρ_level) from the run's ledger."""
    import math

    from dpviz.clustering.friendlycore.pipeline import fc_private_stage, fc_tuple_stage
    from dpviz.data import GENERATORS

    ds = GENERATORS["fig6_blobs"](4000, rng=0)
    radius = float(ds.radius)
    stage = fc_tuple_stage(ds.X, 8, n_tuples=40, radius=radius, rng=np.random.default_rng(1))
    sigmas = []
    for rho in (0.001, 0.01):
        res = fc_private_stage(ds.X, stage, rho=rho, delta=1e-6, radius=radius, r_min=1e-3 * radius,
                               n_declared=4000, rng=np.random.default_rng(2))
        assert mp.released_noise(res) is None and res.centers is not None  # the backup answered
        spends = [s for _, s in res.ledger.spends() if s.name.startswith("grid counts")]
        rho_level = spends[0].budget.rho
        assert mp.grid_count_sigma(res) == pytest.approx(1 / math.sqrt(2 * rho_level), rel=1e-12)
        note = mp.main_panel_figure(res, ds.X, magnification=5.0).layout.annotations[0].text
        assert f"σ = {mp.grid_count_sigma(res):.3g} rows" in note.replace("<br>", " ")
        sigmas.append(mp.grid_count_sigma(res))
    assert sigmas[0] > 3 * sigmas[1]  # 10× less ρ: √10× more noise per count


def test_the_axis_title_says_how_many_rows_are_drawn():
    """A sample of the rows is drawn (issue 33: the decimation said under the panel)."""
    result, X = fake_fc_result(seed=0)
    big = np.vstack([X] * 10)  # 6,000 rows: 2,000 of them are drawn
    fig = mp.main_panel_figure(result, big, magnification=5.0)
    assert fig.layout.xaxis.title.text == "x1 · 2,000 of 6,000 rows drawn (a uniform sample)"
    assert mp.main_panel_figure(result, X, magnification=5.0).layout.xaxis.title.text == "x1"
