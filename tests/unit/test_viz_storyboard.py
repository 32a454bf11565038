"""Figure 3 storyboard drawn from a Result's trace (hand-built Results; see _viz_fakes)."""

import numpy as np
import pytest
from _viz_fakes import TRUE_CENTERS, fake_fc_result

from dpviz.viz.colors import PALETTE, cluster_color
from dpviz.viz.storyboard import (
    PANEL_FUNCTIONS,
    run_status,
    storyboard_figure,
    storyboard_panels,
)


def _names(fig):
    return [t.name for t in fig.data]


def test_grid_has_seven_panels_and_one_legend_entry_per_name():
    result, X = fake_fc_result()
    fig = storyboard_figure(result, X)
    titles = [a.text.replace("<br>", " ") for a in fig.layout.annotations]  # wrapped to a column
    assert [t[:2] for t in titles] == ["a.", "b.", "c.", "d.", "e.", "f.", "g."]
    assert "27 of 30 tuples kept" in titles[2]
    shown = [t.name for t in fig.data if t.showlegend is not False]
    assert len(shown) == len(set(shown))
    assert len({t.xaxis for t in fig.data}) == 7


def test_every_trace_says_private_or_non_private():
    result, X = fake_fc_result()
    names = _names(storyboard_figure(result, X))
    for n in names:
        assert ("— private" in n) or ("non-private diagnostic" in n) or ("never released" in n), n
    assert "private averages — private" in names
    assert "non-private averages — non-private diagnostic" in names
    assert "final centers (private Lloyd step) — private" in names
    assert "core tuples (kept) — non-private diagnostic" in names


def test_panels_draw_the_trace_values():
    result, X = fake_fc_result()
    b, c, d, e = storyboard_panels(result, X, panels="bcde")
    T = np.asarray(result.step("tuples").data["tuples"])
    assert len(b.traces[1]["x"]) == T.shape[0] * T.shape[1]
    keep = result.step("match_core").data["keep"]
    # removed first, kept on top (issue 43: the core tuples hid under the removed ones)
    assert len(c.traces[1]["x"]) == (~keep).sum() * 3 and len(c.traces[2]["x"]) == keep.sum() * 3
    assert c.traces[2]["name"].startswith("core tuples (kept)")
    ordered = result.step("reorder").data["ordered"]
    np.testing.assert_allclose(d.traces[1]["x"], ordered[:, 0, 0])  # 2-D data: identity projection
    priv = result.step("tuple_averages").data["centers"]
    np.testing.assert_allclose(e.traces[-1]["x"], priv[:, 0])


@pytest.mark.parametrize("perm", [(0, 1, 2), (2, 0, 1), (1, 2, 0)])
def test_cluster_colours_follow_the_cluster_not_its_index(perm):
    result, X = fake_fc_result(perm=np.array(perm))
    f, g = storyboard_panels(result, X, panels="fg", reference_centers=TRUE_CENTERS)
    C = np.asarray(result.step("tuple_averages").data["centers"])
    nearest = np.argmin(np.linalg.norm(C[:, None] - TRUE_CENTERS[None], axis=2), axis=1)
    assert list(f.traces[-1]["marker"]["color"]) == [cluster_color(i) for i in nearest]
    # the Lloyd partition panel uses the same colours for the same clusters
    part = [t for t in g.traces if "nearest center" in t["name"]]
    assert sorted(t["marker"]["color"] for t in part) == sorted(cluster_color(i) for i in range(3))


def test_colours_stable_across_reruns_without_reference():
    a, _ = fake_fc_result(perm=np.array([0, 1, 2]))
    b, X = fake_fc_result(perm=np.array([2, 0, 1]))
    (fa,) = storyboard_panels(a, X, panels="f")
    (fb,) = storyboard_panels(b, X, panels="f")
    col_a = dict(zip(np.round(fa.traces[-1]["x"], 1), fa.traces[-1]["marker"]["color"], strict=True))
    col_b = dict(zip(np.round(fb.traces[-1]["x"], 1), fb.traces[-1]["marker"]["color"], strict=True))
    assert col_a == col_b


def test_failed_run_explains_where_and_why_and_the_fallback():
    result, X = fake_fc_result(stop_after="match_core")
    status = run_status(result)
    assert status.last_step == "match_core" and status.fallback_used
    fig = storyboard_figure(result, X)
    msgs = [a.text.replace("<br>", " ") for a in fig.layout.annotations
            if a.text.startswith("Not reached")]
    assert len(msgs) == 4  # panels d, e, f, g
    assert all("stopped before this step" in m and "backup method" in m for m in msgs)
    assert "fallback centers (dp_lloyd) — private" in _names(fig)
    title = fig.layout.title.text
    # the subtitle speaks plain words: which method answered, no internal step names
    title = title.replace("<br>", " ")
    assert "backup method" in title and "answered instead" in title and "match_core" not in title
    single = PANEL_FUNCTIONS["e"](result, X)
    assert "backup method" in single.layout.title.text.replace("<br>", " ")
    # one panel's message is its title's last line, never a note over the plot (issue 43)
    assert single.layout.title.text.split("<br><sup>")[-1].startswith("Not reached")
    assert not single.layout.annotations


def test_failed_run_without_fallback_says_bottom():
    result, X = fake_fc_result(stop_after="tuples", fallback=False)
    assert result.centers is None
    fig = PANEL_FUNCTIONS["g"](result, X)
    text = fig.layout.title.text.split("<br><sup>")[-1].replace("<br>", " ")
    assert text.startswith("Not reached") and "backup method is off" in text and "⊥" in text
    assert "no centers were released" in fig.layout.title.text.replace("<br>", " ")


def test_single_panels_and_bad_panel_key():
    result, X = fake_fc_result()
    for key, fn in PANEL_FUNCTIONS.items():
        fig = fn(result, X)
        assert fig.layout.title.text.startswith(f"{key}.")
    with pytest.raises(ValueError, match="Unknown storyboard panel"):
        storyboard_panels(result, X, panels="az")


def test_high_dimensional_data_shares_one_projection():
    rng = np.random.default_rng(0)
    result, X2 = fake_fc_result()
    # embed the 2-D fixture in 5-D: every array in the trace is drawn through the same PCA
    X = np.c_[X2, 0.001 * rng.normal(size=(X2.shape[0], 3))]
    from dataclasses import replace

    from dpviz.result import TraceStep

    def lift(a):
        a = np.asarray(a, float)
        return np.concatenate([a, np.zeros((*a.shape[:-1], 3))], axis=-1)

    steps = []
    for s in result.trace:
        data = dict(s.data)
        for key in ("tuples", "ordered", "reference", "centers"):
            if data.get(key) is not None and np.ndim(data[key]) >= 2:
                data[key] = lift(data[key])
        steps.append(TraceStep(s.name, s.released, data, s.note))
    r5 = replace(result, trace=tuple(steps), centers=lift(result.centers))
    fig = storyboard_figure(r5, X)
    assert "principal components" in fig.layout.title.text


# ---- integration: the real fc_clustering -----------------------------------------------------

def test_storyboard_of_a_real_fc_clustering_run():
    from dpviz.clustering.friendlycore.pipeline import fc_clustering
    from dpviz.data import fig3_three
    from dpviz.viz import filter_scores_figure, find_diam_figure, ledger_figure

    ds = fig3_three(5000, rng=0)
    res = fc_clustering(ds.X, 3, rho=5.0, delta=1e-6, n_tuples=100, radius=ds.radius,
                        r_min=1e-3, rng=1)
    assert run_status(res).complete
    fig = storyboard_figure(res, ds, reference_centers=ds.true_centers)
    names = _names(fig)
    assert "final centers (private Lloyd step) — private" in names
    final = next(t for t in fig.data if t.name == "final centers (private Lloyd step) — private")
    np.testing.assert_allclose(final.x, res.step("lloyd").data["centers"][:, 0])
    keep = res.step("match_core").data["keep"]
    title_c = fig.layout.annotations[2].text.replace("<br>", " ")
    assert f"{int(keep.sum())} of {keep.size} tuples kept" in title_c
    f_scores = filter_scores_figure(res)
    assert len(f_scores.data[0].x) == keep.sum()
    assert find_diam_figure(res).layout.xaxis.type == "log"
    lf = ledger_figure(res.ledger)
    assert lf.data[0].values[0] == pytest.approx(5.0)  # the root's area is the whole ρ


def test_storyboard_of_a_real_run_that_falls_back():
    from dpviz.clustering.friendlycore.pipeline import fc_clustering
    from dpviz.data import fig3_three

    ds = fig3_three(3000, rng=0)
    res = fc_clustering(ds.X, 3, rho=1e-4, delta=1e-6, n_tuples=50, radius=ds.radius,
                        r_min=1e-3, rng=1)
    status = run_status(res)
    assert status.fallback_used and not status.complete and res.centers is not None
    fig = storyboard_figure(res, ds)
    assert any(a.text.startswith("Not reached") for a in fig.layout.annotations)
    assert any((t.name or "").startswith("fallback centers") for t in fig.data)


def test_data_panel_coloured_by_piece():
    result, X = fake_fc_result()
    (a,) = storyboard_panels(result, X, panels="a", color_pieces=True)
    piece = result.step("pieces").data["piece_of_row"]
    (tr,) = a.traces
    assert tr["marker"]["color"] == [PALETTE[p % len(PALETTE)] for p in piece]
    assert "t=30 random pieces" in a.title and tr["name"].endswith("non-private diagnostic")
    fig = PANEL_FUNCTIONS["a"](result, X, color_pieces=True)
    assert fig.data[0].name == tr["name"]


def _legend(fig):
    return sorted(t.name for t in fig.data if t.showlegend is not False)


def test_raster_points_same_legend_no_webgl_one_image_per_panel():
    result, X = fake_fc_result()
    vec = storyboard_figure(result, X)
    ras = storyboard_figure(result, X, points="raster")
    assert _legend(ras) == _legend(vec)
    assert {t.type for t in ras.data} == {"scatter"}  # no WebGL trace: no context to create
    # every panel here has point clouds: one image each, on its own axes, below the traces
    assert sorted((im.xref, im.yref) for im in ras.layout.images) == sorted(
        (f"x{s}", f"y{s}") for s in ["", "2", "3", "4", "5", "6", "7"])
    assert all(im.layer == "below" and im.source.startswith("data:image/png") for im in ras.layout.images)
    # clouds are in the images: the SVG marker traces left hold at most the centers
    assert max(len([v for v in t.x if v is not None]) for t in ras.data if t.mode == "markers") <= 5
    # fixed ranges cover every image and every SVG point
    for i, im in enumerate(ras.layout.images):
        ax = ras.layout[f"xaxis{'' if i == 0 else i + 1}"]
        assert ax.range[0] <= im.x and im.x + im.sizex <= ax.range[1]


def test_raster_images_hold_the_kept_tuples_of_panel_c():
    import base64
    import io

    from PIL import Image

    result, X = fake_fc_result()
    fig = storyboard_figure(result, X, panels="c", cols=1, points="raster", legend=False)
    (im,) = fig.layout.images
    rgba = np.asarray(Image.open(io.BytesIO(base64.b64decode(im.source.split(",", 1)[1]))))
    tuples = next(s for s in result.trace if s.name == "tuples").data["tuples"]
    keep = next(s for s in result.trace if s.name == "match_core").data["keep"]
    P = np.asarray(tuples)[np.asarray(keep)].reshape(-1, 2)  # d = 2: the projection is the identity
    col = ((P[:, 0] - im.x) / im.sizex * rgba.shape[1]).astype(int)
    row = ((im.y - P[:, 1]) / im.sizey * rgba.shape[0]).astype(int)
    assert np.mean(rgba[row, col, 3] > 100) > 0.9  # opaque where the kept tuple points are
    assert np.mean(rgba[..., 3] > 0) < 0.5  # and mostly transparent elsewhere
    assert fig.layout.showlegend is False and not any(t.x == (None,) for t in fig.data)


def test_points_must_be_vector_or_raster():
    result, X = fake_fc_result()
    with pytest.raises(ValueError, match="points"):
        storyboard_figure(result, X, points="svg")


def test_fixed_margin_and_no_tick_labels_on_every_panel():
    result, X = fake_fc_result()
    fig = storyboard_figure(result, X, panels="cdefg", cols=3, tick_labels=False,
                            margin=dict(l=10, r=10, t=70, b=10))
    assert (fig.layout.margin.l, fig.layout.margin.t, fig.layout.margin.autoexpand) == (10, 70, False)
    axes = [f"{a}axis{s}" for a in "xy" for s in ["", "2", "3", "4", "5"]]
    assert all(fig.layout[a].showticklabels is False for a in axes)
    default = storyboard_figure(result, X, panels="cdefg", cols=3)
    assert default.layout.margin.autoexpand is None
    # issue 43: a projected storyboard has a scale: ticks and their labels on every panel
    assert all(default.layout[a].showticklabels is True and default.layout[a].ticks == "outside"
               for a in axes)


@pytest.mark.parametrize("key", list(PANEL_FUNCTIONS))
def test_single_panel_raster_keeps_title_and_legend_without_webgl(key):
    result, X = fake_fc_result()
    vec, ras = PANEL_FUNCTIONS[key](result, X), PANEL_FUNCTIONS[key](result, X, points="raster")
    assert ras.layout.title.text == vec.layout.title.text
    assert _legend(ras) == _legend(vec)
    assert {t.type for t in ras.data} <= {"scatter"}  # no WebGL trace: no context to create
    has_cloud = any(t.type == "scattergl" for t in vec.data)
    assert len(ras.layout.images) == int(has_cloud)
    for im in ras.layout.images:  # on the panel's own axes, inside their fixed ranges
        assert (im.xref, im.yref, im.layer) == ("x", "y", "below")
        assert ras.layout.xaxis.range[0] <= im.x and im.x + im.sizex <= ras.layout.xaxis.range[1]
    with pytest.raises(ValueError, match="points"):
        PANEL_FUNCTIONS[key](result, X, points="svg")
