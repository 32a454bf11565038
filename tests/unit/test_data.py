"""Tests for dpviz.data: Dataset, generators (the papers' recipes), built-ins, bounds."""

import math

import numpy as np
import pytest

from dpviz.data import (
    BUILTIN,
    GENERATORS,
    Dataset,
    clip_to_ball,
    data_radius,
    fig6_blobs,
    fig7_gmm,
    load_builtin,
    null_uniform,
    varied_blobs,
)
from dpviz.data.generators import equal_sizes


@pytest.mark.parametrize("name", list(GENERATORS))
def test_every_generator_shapes_norms_and_reproducible(name):
    spec = GENERATORS[name]
    a = spec(1003, rng=5)
    b = spec(1003, rng=5)
    c = spec(1003, rng=6)
    assert a.X.shape[0] == 1003 and a.X.dtype == np.float64
    assert a.radius is not None and a.k is not None and a.source == "generated"
    assert np.linalg.norm(a.X, axis=1).max() <= a.radius
    assert a.content_hash == b.content_hash and a.content_hash != c.content_hash
    assert a.params["seed"] == 5 and a.params["n"] == 1003
    if a.labels is not None:
        assert a.labels.shape == (1003,)
        np.testing.assert_array_equal(a.labels, b.labels)
    assert spec.title and spec.description


def test_fig6_recipe_centers_sizes_and_std():
    ds = fig6_blobs(80_003, rng=1)
    assert ds.k == 8 and ds.radius == 1.0 and ds.true_centers.shape == (8, 2)
    # centers uniform in the ball of radius 1 - 1/32
    assert np.linalg.norm(ds.true_centers, axis=1).max() <= 1 - 1 / 32
    # equal sizes n/k, remainder spread one each over the first n mod k clusters
    np.testing.assert_array_equal(np.bincount(ds.labels), [10001, 10001, 10001] + [10000] * 5)
    # per-cluster std ≈ 0.0221 (tolerance 3 %; clipping to norm 1 only shrinks the border ones)
    inner = np.linalg.norm(ds.true_centers, axis=1) < 0.85
    for j in np.flatnonzero(inner):
        pts = ds.X[ds.labels == j]
        assert pts.std(axis=0) == pytest.approx([0.0221, 0.0221], rel=0.03)
        assert pts.mean(axis=0) == pytest.approx(ds.true_centers[j], abs=0.001)


def test_fig6_clips_to_norm_one():
    ds = fig6_blobs(20_000, sigma=0.3, rng=2)  # wide clusters: many points clipped
    norms = np.linalg.norm(ds.X, axis=1)
    assert norms.max() <= 1.0
    assert np.mean(norms > 1 - 1e-12) > 0.05  # clipped points sit on the sphere


def test_fig7_recipe():
    ds = fig7_gmm(5000, d=20, rng=3)
    assert ds.radius == pytest.approx(10 * math.sqrt(20)) and ds.k == 5
    assert set(np.unique(ds.true_centers)) <= {1.0, 2.0}
    pts = ds.X[ds.labels == 0]
    assert pts.std(axis=0).mean() == pytest.approx(1.0, abs=0.03)


def test_equal_sizes_and_varied_sizes():
    np.testing.assert_array_equal(equal_sizes(10, 4), [3, 3, 2, 2])
    ds = varied_blobs(1000, k=4, rng=0)
    np.testing.assert_array_equal(np.bincount(ds.labels), [400, 300, 200, 100])


def test_null_uniform_is_uniform_in_ball():
    ds = null_uniform(40_000, rng=4)
    r = np.linalg.norm(ds.X, axis=1)
    # P(||x|| ≤ 1/2) = 1/4 in 2-D, binomial sd ≈ 0.0022
    assert np.mean(r <= 0.5) == pytest.approx(0.25, abs=0.01)
    assert ds.labels is None and ds.true_centers is None


def test_large_generation_is_fast():
    import time

    # CPU seconds of this process, not wall time: a loaded machine (other jobs, pytest-xdist's
    # other worker) stretched the wall clock past 5 s while the generation itself stayed ~0.35 s.
    t = time.process_time()
    fig6_blobs(1_000_000, rng=0)
    assert time.process_time() - t < 5.0  # ~0.35 s


def test_generator_bad_params():
    with pytest.raises(ValueError, match="'n' parameter of fig6_blobs"):
        fig6_blobs(0)
    with pytest.raises(ValueError, match="'sigma' parameter of fig6_blobs"):
        fig6_blobs(100, sigma=-1.0)
    with pytest.raises(ValueError, match="'k' parameter of fig7_gmm"):
        fig7_gmm(100, k=0)


def test_dataset_is_immutable_and_with_radius():
    X = np.arange(6, dtype=float).reshape(3, 2)
    ds = Dataset(X=X, name="t", source="upload")
    X[0, 0] = 99.0  # the Dataset holds its own copy
    assert ds.X[0, 0] == 0.0
    with pytest.raises(ValueError):
        ds.X[0, 0] = 1.0
    assert ds.feature_names == ("x1", "x2") and ds.radius is None
    ds2 = ds.with_radius(7)
    assert ds2.radius == 7.0 and ds.radius is None and ds2.content_hash == ds.content_hash
    with pytest.raises(ValueError, match="radius"):
        ds.with_radius(-1)
    with pytest.raises(ValueError, match="labels"):
        Dataset(X=X, name="t", labels=[0, 1])


def test_content_hash_depends_on_shape():
    a = Dataset(X=np.zeros((2, 3)), name="a")
    b = Dataset(X=np.zeros((3, 2)), name="b")
    assert a.content_hash != b.content_hash


@pytest.mark.parametrize("name", list(BUILTIN))
def test_builtin_public_box(name):
    ds = BUILTIN[name]()
    assert ds.source == "builtin" and ds.labels is not None
    assert np.abs(ds.X).max() <= 1.0
    assert ds.radius == pytest.approx(math.sqrt(ds.d))
    assert data_radius(ds.X) <= ds.radius
    assert "standardized" in ds.params["scaling"]
    assert ds.true_centers.shape == (len(np.unique(ds.labels)), ds.d)


def test_load_builtin_unknown():
    with pytest.raises(ValueError, match="Available: iris"):
        load_builtin("mnist")
    assert load_builtin("iris").k == 3


def test_data_radius_and_clip():
    X = np.array([[3.0, 4.0], [0.3, 0.4], [0.0, 0.0]])
    assert data_radius(X) == 5.0
    Y = clip_to_ball(X, 1.0)
    np.testing.assert_allclose(Y, [[0.6, 0.8], [0.3, 0.4], [0.0, 0.0]])
    assert X[0, 0] == 3.0  # input not mutated
    with pytest.raises(ValueError, match="'radius' parameter of clip_to_ball"):
        clip_to_ball(X, 0.0)
    assert data_radius(np.zeros((0, 2))) == 0.0
