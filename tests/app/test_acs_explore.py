"""Explore for DP kernel k-means (issue 14): the declared PUBLIC rows control (generic, from
``spec.uses_public_data``), the RFF dimension slider and the "Accuracy vs ε by d" view."""

from __future__ import annotations

import json

from apptest_helpers import SMALL, open_app, texts


def test_no_public_rows_by_default_and_the_rff_dimension_is_a_slider():
    at = open_app(**SMALL, alg="kernel_kmeans", eps="3.0")
    assert not at.exception
    assert at.slider(key="algpub_kernel_kmeans").value == 0  # nothing is public unless declared
    assert "No rows declared public" in texts(at)
    assert "The declared size n = 3,000" in texts(at)
    d = at.slider(key="algp_kernel_kmeans_n_features")
    assert d.value == 50 and d.min == 5 and d.max == 1000 and d.step == 5
    # an algorithm that takes no public data shows no such control
    lloyd = open_app(**SMALL, alg="dp_lloyd", eps="3.0")
    assert not lloyd.exception
    assert not [s for s in lloyd.slider if s.key == "algpub_dp_lloyd"]


def test_declaring_public_rows_excludes_them_and_says_so_in_the_privacy_statement():
    at = open_app(**SMALL, alg="kernel_kmeans", eps="3.0")
    at.slider(key="algpub_kernel_kmeans").set_value(20).run()
    assert not at.exception
    page = texts(at)
    assert "600 rows (20%, drawn once at random with seed 0) are declared PUBLIC" in page
    assert "no privacy" in page and "uses only the other 2,400 rows" in page
    assert "The declared size n = 2,400" in page and "excludes the 600 rows declared public" in page
    assert "released 4 centers" in page
    at.segmented_control(key="alg_view").set_value("Privacy").run()
    assert not at.exception
    page = texts(at)
    assert "600 rows were declared PUBLIC and have no privacy" in page
    assert "covers the other 2,400 rows" in page
    # the run the page shows used the public split (its params record the size, not the rows)
    # (runs one ε step away may still be prefetching: Futures, not shown)
    runs = [r for r in at.session_state["_cache_run"].values() if hasattr(r, "params")]
    assert any(r.params.get("public_rows") == 600 and r.params["n_declared"] == 2400
               and r.params["init_from"] == "public records" for r in runs)


def test_the_accuracy_vs_eps_by_d_view_renders():
    at = open_app(**SMALL, alg="kernel_kmeans", eps="3.0")
    at.slider(key="algpub_kernel_kmeans").set_value(10).run()
    view = at.segmented_control(key="alg_view")
    assert "Accuracy vs ε by d" in view.options
    view.set_value("Accuracy vs ε by d").run()
    assert not at.exception
    assert "RFF dimension d trades" in texts(at)
    charts = [json.loads(c.proto.spec) for c in at.get("plotly_chart")]
    fig = next(c for c in charts if "by RFF dimension d" in c["layout"]["title"]["text"])
    names = [t.get("name") for t in fig["data"] if t.get("mode") == "lines+markers"]
    assert names == ["kernel k-means, d = 10", "kernel k-means, d = 50 (current)",
                     "kernel k-means, d = 200", "standard DP k-means (input space)"]
