"""Easy Instances in Explore: γ is a slider of the generated form, and the registered view
"γ: pass rate and noise" renders from cached simulations (issue 12, "In the app")."""

from __future__ import annotations

import json

import numpy as np
from apptest_helpers import SMALL, container, open_app, texts

from dpviz.viz.easy_instances import PANEL_TITLES, PANELS
from dpviz.viz.easy_instances_gamma import HELP, TITLE


def _charts(at) -> list[dict]:
    return [json.loads(c.proto.spec) for c in at.get("plotly_chart")]


def test_gamma_is_a_slider_and_the_gamma_view_renders():
    at = open_app(**SMALL, alg="easy_instances", eps="3.0",
                  **{"easy_instances.gamma": "0.002", "easy_instances.n_tuples": "75"})
    assert not at.exception
    slider = at.slider(key="algp_easy_instances_gamma")
    assert slider.value == 0.002 and (slider.min, slider.max, slider.step) == (0.0, 0.49, 0.0005)
    assert slider.proto.format == "%.4f"  # 10⁻³ shows as 0.0010, not as 0.00
    # the storyboard: six panels, each with its own legend
    (board,) = _charts(at)
    titles = [a["text"] for a in board["layout"]["annotations"]]
    assert all(any(t.startswith(p) for t in titles) for p in PANEL_TITLES)
    used = {t.get("legend", "legend") for t in board["data"] if t.get("showlegend", True)}
    assert used == {"legend", *(f"legend{n}" for n in range(2, len(PANELS) + 1))}
    view = at.segmented_control(key="alg_view")
    assert TITLE in view.options
    view.set_value(TITLE).run()
    assert not at.exception
    assert HELP in texts(at)
    (fig,) = [c for c in _charts(at) if "SIMULATION" in c["layout"]["title"]["text"]]
    names = [t.get("name") for t in fig["data"]]
    assert "current γ = 0.002" in names and "pass rate (not ⊥), simulated" in names
    # t = 75 tuples (set), below n_min: every run is ⊥ before reading data, and the
    # figure says so instead of drawing an empty curve
    assert "infeasible (public inputs): ⊥ before any data is read" in names
    assert any("every γ is infeasible" in a["text"] for a in fig["layout"]["annotations"])


def test_moving_the_slider_changes_the_run_and_the_mark():
    at = open_app(**SMALL, alg="easy_instances", eps="3.0", **{"easy_instances.n_tuples": "75"})
    at.slider(key="algp_easy_instances_gamma").set_value(0.01)
    at.button(key="alg_apply").click().run()
    assert not at.exception
    assert at.query_params.get("easy_instances.gamma") in ("0.01", ["0.01"])
    at.segmented_control(key="alg_view").set_value(TITLE).run()
    (fig,) = [c for c in _charts(at) if "SIMULATION" in c["layout"]["title"]["text"]]
    assert "current γ = 0.01" in [t.get("name") for t in fig["data"]]


def test_the_gmm_entry_has_the_gamma_view_too():
    at = open_app(**SMALL, alg="easy_instances_gmm", eps="3.0",
                  **{"easy_instances_gmm.n_tuples": "75", "easy_instances_gmm.gamma": "0.001"})
    at.segmented_control(key="alg_view").set_value(TITLE).run()
    assert not at.exception
    (fig,) = [c for c in _charts(at) if "SIMULATION" in c["layout"]["title"]["text"]]
    assert "current γ = 0.001" in [t.get("name") for t in fig["data"]]


def test_automatic_fields_say_automatic_and_too_few_rows_says_how_many():
    """Issue 27 defect 5: t = 0, γ = 0, r_min = 0 meant "automatic" without saying so. The labels
    now say "automatic (value)"; SMALL (3 000 rows, k = 4) cannot fill the automatic t, and the
    error says how many declared rows it needs (before any data is read)."""
    at = open_app(**SMALL, alg="easy_instances", eps="3.0")
    assert not at.exception
    labels = {w.key: w.label for w in [*at.number_input, *at.slider] if w.key}
    assert labels["algp_easy_instances_n_tuples"].startswith("tuples t: automatic (")
    assert labels["algp_easy_instances_gamma"].startswith("γ (ball scale): automatic (")
    assert labels["algp_easy_instances_r_min"] == "r_min: automatic (0.001)"
    errs = " ".join(e.value for e in at.error)
    assert "declared rows" in errs and "n = 3,000 is declared" in errs


def test_easy_instances_runs_at_its_defaults_on_its_papers_instance_uploaded():
    """Issue 28: the paper's easy instance (k = 3, d = 10, means at 1024·e_i, σ = 1; R/σ = 2¹⁰)
    uploaded as a 20,000-row CSV with Λ = 1036 declared: Explore runs Easy Instances at its defaults
    (automatic t, γ, r_min and split) at row-level ε = 3 and answers 3 centers near the true means,
    not ⊥ (before issue 28 the registry's plan tested m = 3 tuples and failed on this instance)."""
    import io

    g = np.random.default_rng(2028)
    n, d, k = 20_000, 10, 3
    means = 1024.0 * np.eye(d)[:k]
    labels = g.integers(0, k, n)
    X = means[labels] + g.normal(size=(n, d))
    buf = io.StringIO()
    np.savetxt(buf, X, delimiter=",", header=",".join(f"x{i}" for i in range(d)), comments="", fmt="%.6f")
    at = open_app("data", n=SMALL["n"])  # small generated rows before the upload, not the lesson's 150,000
    at.radio(key="source_radio").set_value("upload").run()
    at.file_uploader(key="csv_upload").upload("easy.csv", buf.getvalue().encode(), "text/csv")
    at.run()
    at.number_input(key="csv_radius").set_value(1036.0).run()
    at.number_input(key="csv_declared_n").set_value(n).run()
    at.button(key="csv_use").click().run()
    assert not at.exception, [e.value for e in at.exception]
    at.session_state["params"].update({"alg": "easy_instances", "eps": 3.0, "delta": 1e-6, "k": k})
    at.switch_page("views/explore.py").run()
    assert not at.exception, [e.value for e in at.exception]
    status = " ".join(str(e.value) for e in container(at, "run_status").success)
    assert "released 3 centers" in status, texts(at)
    res = next(v for key, v in at.session_state["_cache_run"].items()
               if key[1] == "easy_instances" and not hasattr(v, "done"))
    assert res.ok and res.centers.shape == (k, d)
    # the paper's promise on an easy instance: the released centers separate it perfectly (every
    # row's nearest released center is its own mean's), checked on every row (a simulation)
    dist = np.linalg.norm(means[:, None, :] - res.centers[None, :, :], axis=2)
    own = dist.argmin(axis=1)  # the released center of each true mean
    assert len(set(own.tolist())) == k, dist
    nearest = np.linalg.norm(X[:, None, :] - res.centers[None, :, :], axis=2).argmin(axis=1)
    assert np.array_equal(nearest, own[labels])
