"""Generate on the Data page's dataset (issue 14): a declared public share, DPGM on the private rest
in the background, the guarantee, a scatter of synthetic vs real rows per cluster and a CSV."""

from __future__ import annotations

import base64
import io
import json
import time

import numpy as np
from apptest_helpers import SMALL, metric, open_app, texts

from app.components.synthetic import guarantee_text, synthetic_table_csv

DEADLINE = 60.0


def _wait(at):
    job = at.session_state["_job_generate"]
    start = time.monotonic()
    while not job.done.is_set():
        assert time.monotonic() - start < DEADLINE, "training did not finish"
        time.sleep(0.1)
    at.run()
    assert not at.exception
    return job


def test_generate_trains_on_the_data_pages_dataset_with_a_public_split():
    at = open_app("generate", **SMALL)  # the generated 3,000-row, 2-column, 4-blob dataset
    at.radio(key="dpgm_data").set_value("data").run()
    assert not at.exception
    assert at.slider(key="dpgm_public_pct").value == 15
    page = texts(at)
    assert "450 rows (15%, drawn once at random with seed 0) are declared PUBLIC: they get no privacy" in page
    assert "declared size n = 2,550" in page and "2 columns" in page
    at.number_input(key="dpgm_k").set_value(2)
    at.number_input(key="dpgm_epochs").set_value(1)
    at.button(key="dpgm_train").click().run()
    assert not at.exception
    job = _wait(at)
    res = job.result
    assert job.error is None and not res.cancelled
    inp = job.info["input"]
    assert inp.X.shape == (2550, 2) and inp.X_public.shape == (450, 2)
    assert job.info["n_declared"] == 2550 and res.extra["n_declared"] == 2550
    assert res.extra["q"] == 64 / 2550  # the sampling rate uses the private part's declared size
    assert np.all((inp.X >= 0) & (inp.X <= 1))  # rows scaled into [0, 1] by the public box
    acc = res.account
    assert acc.guarantee in ("pld", "rdp") and acc.eps <= 10.0 + 1e-9
    assert metric(at, "ε per row (the guarantee)") == f"{acc.eps:.3g}"
    charts = [json.loads(c.proto.spec) for c in at.get("plotly_chart")]
    scatter = next(c for c in charts
                   if "Synthetic rows per cluster vs the real rows" in c["layout"]["title"]["text"])
    names = [t["name"] for t in scatter["data"]]
    assert names[0] == "real rows (non-private view)"
    assert set(names[1:]) <= {"synthetic, cluster 0 (DP)", "synthetic, cluster 1 (DP)"} and len(names) >= 2
    assert [d.label for d in at.get("download_button")] == ["Download the synthetic dataset (CSV)"]
    text = guarantee_text(res, "simulation (seeded)", of=inp.of)
    assert "per row of the Data page's dataset (2,550 private rows)" in text
    assert text in texts(at).replace("\\", "")
    lines = synthetic_table_csv(res, 2550, 0, text, inp.box, inp.feature_names).decode().splitlines()
    assert lines[0] == f"# {text}" and len(lines) == 2 + 2550
    assert lines[1] == "x1,x2,component"
    rows = np.loadtxt(io.StringIO("\n".join(lines[2:])), delimiter=",")
    assert rows.shape == (2550, 3) and set(np.unique(rows[:, 2])) <= {0.0, 1.0}
    # synthetic values lie in the public box, in the data's units
    assert np.all(rows[:, :2] >= inp.box.lo - 1e-5) and np.all(rows[:, :2] <= inp.box.hi + 1e-5)


def test_zero_public_rows_needs_k_1_and_then_uses_the_declared_radius():
    at = open_app("generate", **SMALL)
    at.radio(key="dpgm_data").set_value("data").run()
    at.slider(key="dpgm_public_pct").set_value(0).run()
    assert not at.exception
    assert "no rows declared public" in texts(at) and "declared size n = 3,000" in texts(at)
    at.number_input(key="dpgm_k").set_value(2)
    at.button(key="dpgm_train").click().run()
    assert "0 rows are declared public: declare more public rows or set k = 1" in texts(at).replace("\\", "")
    assert "_job_generate" not in at.session_state
    at.number_input(key="dpgm_k").set_value(1)
    at.number_input(key="dpgm_epochs").set_value(1)
    at.button(key="dpgm_train").click().run()
    job = _wait(at)
    assert job.error is None and job.info["n_declared"] == 3000
    assert job.info["input"].box.source.startswith("the declared radius")


def test_a_formula_like_column_name_is_neutralised_in_the_csv():
    from dpviz.generative.data import UnitBox

    class Fake:
        def sample(self, n, rng=None, binary=True):
            return np.full((n, 2), 0.5), np.zeros(n, dtype=int)

    box = UnitBox(np.array([-1.0, 0.0]), np.array([1.0, 4.0]), "test")
    out = synthetic_table_csv(Fake(), 3, 0, "g", box, ("=HYPERLINK(1)", 'a,"b"')).decode().splitlines()
    assert out[1] == '\'=HYPERLINK(1),"a,""b""",component'
    assert out[2] == "0,2,0"


def test_64_column_data_is_shown_as_8x8_images():
    at = open_app("generate", src="builtin", builtin="digits", k="4")
    at.radio(key="dpgm_data").set_value("data").run()
    assert not at.exception
    assert "(shown as 8×8 images)" in texts(at) and "declared size n = 1,527" in texts(at)
    at.number_input(key="dpgm_k").set_value(2)
    at.number_input(key="dpgm_epochs").set_value(1)
    at.button(key="dpgm_train").click().run()
    job = _wait(at)
    assert job.error is None and job.info["input"].image
    charts = [json.loads(c.proto.spec) for c in at.get("plotly_chart")]
    grid = next(c for c in charts if "Synthetic 8×8 rows per cluster" in c["layout"]["title"]["text"])
    zspec = grid["data"][0]["z"]  # plotly's typed-array encoding: base64 bytes, dtype and shape
    z = np.frombuffer(base64.b64decode(zspec["bdata"]), dtype=zspec["dtype"])
    assert z.size == (2 * 9 + 1) * (10 * 9 + 1)  # 2 clusters × 10 images of 8×8 with 1-pixel gaps
    assert np.nanmin(z) >= 0.0 and np.nanmax(z) <= 1.0  # shown on the public box's scale
