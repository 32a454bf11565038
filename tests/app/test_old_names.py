"""Old stored algorithm names (issue 33): a Budget link or a precomputed sweep made before the
registry names (``fc:<preset>``, ``nonprivate``) opens with registry names, through the one
mapping ``dpviz.registry.registry_name``."""

from __future__ import annotations

import json

import pandas as pd
from apptest_helpers import SMALL, open_app

from app.components import sweep


def test_an_old_budget_link_opens_with_registry_names():
    at = open_app("budget", **SMALL, balg="fc:paper,nonprivate")
    assert not at.exception
    picker = at.multiselect(key="budget_algorithms")
    assert picker.value == ["friendlycore[preset=paper]", "kmeans++"]
    assert at.query_params["balg"] == "friendlycore[preset=paper],kmeans++"


def test_a_precomputed_file_with_old_names_is_read_with_registry_names(tmp_path):
    spec = sweep.SweepSpec("abc", ("friendlycore", "kmeans++"), (0.1,), 1, 4, 60, 1e-6, 1.0, 1e-3,
                           "kmeans++", 7)
    frame = pd.DataFrame({"algorithm": ["friendlycore", "kmeans++"], "epsilon": [0.1, float("inf")],
                          "rep": [0, 0], "loss": [0.5, 0.0]})
    path = tmp_path / "sweeps.json"
    sweep.save_precomputed([(spec, [frame])], [], path)
    doc = json.loads(path.read_text())  # as a file made before issue 33 spelled it
    doc["sweeps"][0]["spec"]["algorithms"] = ["fc:practical", "nonprivate"]
    doc["sweeps"][0]["frames"] = [frame.assign(algorithm=["fc:practical", "nonprivate"])
                                  .to_json(orient="split", double_precision=15)]
    path.write_text(json.dumps(doc))
    [(got, frames)] = sweep.read_precomputed(path)[1]
    assert got == spec
    assert list(frames[0]["algorithm"]) == ["friendlycore", "kmeans++"]
