"""Data scatter: shared projection, PCA for d > 2, deterministic display downsampling."""

from types import SimpleNamespace

import numpy as np
import pytest

from dpviz.viz.data import data_figure, downsample_index, project_2d


def _n_points(fig):
    return sum(len(t.x) for t in fig.data if t.name.startswith("data"))


def test_downsampling_caps_points_and_is_deterministic():
    X = np.random.default_rng(0).normal(size=(5000, 2))
    f1 = data_figure(X, max_points=700, rng_seed=3)
    f2 = data_figure(X, max_points=700, rng_seed=3)
    assert _n_points(f1) == 700
    np.testing.assert_array_equal(f1.data[0].x, f2.data[0].x)
    assert "showing 700 of 5,000 points" in f1.layout.title.text
    idx = downsample_index(5000, 700, rng_seed=3)
    np.testing.assert_array_equal(f1.data[0].x, X[idx, 0])
    assert np.all(np.diff(idx) > 0)


def test_small_data_is_drawn_whole_as_scattergl():
    X = np.random.default_rng(1).normal(size=(50, 2))
    fig = data_figure(X)
    assert _n_points(fig) == 50 and fig.data[0].type == "scattergl"
    assert "showing" not in fig.layout.title.text
    with pytest.raises(ValueError, match="max_points"):
        downsample_index(10, 0)


def test_pca_for_high_dimensional_data_says_so():
    rng = np.random.default_rng(2)
    X = rng.normal(size=(400, 6)) * np.array([0.1, 5.0, 0.1, 0.1, 2.0, 0.1])
    proj = project_2d(X)
    assert proj.method == "pca"
    # the first axis is the highest-variance coordinate (index 1), the second index 4
    assert np.argmax(np.abs(proj.components[:, 0])) == 1
    assert np.argmax(np.abs(proj.components[:, 1])) == 4
    assert proj.components[1, 0] > 0  # sign fixed: largest loading positive
    fig = data_figure(X)
    assert fig.layout.xaxis.title.text.startswith("PC1")
    assert "PCA of 6-D data" in fig.layout.title.text


def test_identity_projection_for_2d_and_padding_for_1d():
    X = np.arange(10.0).reshape(5, 2)
    np.testing.assert_allclose(project_2d(X).transform(X), X)
    P = project_2d(X[:, :1]).transform(X[:, :1])
    np.testing.assert_allclose(P[:, 0], X[:, 0])
    np.testing.assert_allclose(P[:, 1], 0.0)
    with pytest.raises(ValueError, match="fitted on d=2"):
        project_2d(X).transform(np.zeros((3, 3)))


def test_dataset_labels_and_true_centers_are_drawn():
    rng = np.random.default_rng(3)
    centers = np.array([[0.0, 0.0], [3.0, 3.0]])
    y = rng.integers(0, 2, 200)
    ds = SimpleNamespace(X=centers[y] + rng.normal(size=(200, 2)) * 0.1, labels=y,
                         true_centers=centers, feature_names=("a", "b"), name="two blobs")
    fig = data_figure(ds)
    names = [t.name for t in fig.data]
    assert names == ["data (true label): cluster 1", "data (true label): cluster 2",
                     "true centers (known to the generator)"]
    assert fig.layout.xaxis.title.text == "a"
    np.testing.assert_allclose(fig.data[-1].x, centers[:, 0])
