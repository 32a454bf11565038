"""What Explore offers to download: the simulated centers (CSV), the run's ledger (CSV) and the run
configuration (JSON).

Both are a simulation, not a release: the configuration lists the seed streams that replay the
noise exactly. Uploaded rows are never included; text from an upload (column names) is
neutralised for spreadsheets (:func:`app.components.safe.csv_cell`).
"""

from __future__ import annotations

import csv
import json
from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd

from app.components import safe
from app.components.run import RunConfig
from dpviz.privacy.release import jsonable
from dpviz.viz.privacy import ledger_table


def centers_csv(result, feature_names) -> str:
    """The private centers as CSV (one row per center); column names from an upload are
    neutralised for spreadsheets (a leading = + - @ tab or CR gets an apostrophe)."""
    if result.centers is None:
        return "no centers: the run output ⊥\n"
    df = pd.DataFrame(np.asarray(result.centers), columns=[safe.csv_cell(c) for c in feature_names])
    df.index.name = "center"
    # Quote every text cell: a name holding a CR would otherwise break the row (pandas quotes
    # only fields with the delimiter, a quote or LF).
    return df.to_csv(quoting=csv.QUOTE_NONNUMERIC)


def ledger_csv(result) -> str:
    """Every spend of the run's ledger (:func:`dpviz.viz.privacy.ledger_table`) as CSV: the table
    the Privacy view shows, with full-precision numbers."""
    table = ledger_table(result.ledger)
    for col in ("mechanism", "unit", "step", "note"):
        table[col] = table[col].map(safe.csv_cell)
    return table.to_csv(index=False, quoting=csv.QUOTE_NONNUMERIC)


def config_json(ds, cfg: RunConfig, params: Mapping[str, Any], statement=None,
                url_query: Mapping[str, str] | None = None) -> str:
    """The run configuration (enough to reproduce it with the library) as JSON."""
    out: dict[str, Any] = {
        "kind": "simulation — not a release: the seed streams below replay the noise exactly, "
                "so results of this configuration must not be published",
        "dataset": {"name": ds.name, "source": ds.source, "n": ds.n, "d": ds.d,
                    "content_sha256": ds.content_hash, "recipe": jsonable(dict(ds.params))},
        "run": {**cfg.__dict__, "seed_streams": "SeedSequence(seed).spawn(3): [tuple stage, "
                                                "private stage, noise redraws]"},
        "calls": [
            "stage = dpviz.clustering.friendlycore.fc_tuple_stage(X, k, n_tuples=t, oracle=oracle, "
            "radius=radius, rng=default_rng(SeedSequence(seed).spawn(3)[0]))",
            "result = dpviz.clustering.friendlycore.fc_private_stage(X, stage, rho=rho, "
            "delta=delta, radius=radius, r_min=r_min, preset=preset, "
            "rng=default_rng(SeedSequence(seed).spawn(3)[1]))",
        ],
        "app_parameters": jsonable(dict(params)),
    }
    if url_query is not None:
        out["url_query"] = dict(url_query)
    if statement is not None:
        out["privacy"] = {"paper": str(statement.paper), "row_level_eps": statement.row.eps,
                          "row_level_delta": statement.row.delta,
                          "delta_prime": statement.delta_prime, "lines": list(statement.lines)}
    if ds.source == "upload":
        out["note"] = "Uploaded data is not included; the sha256 identifies the rows used."
    return json.dumps(out, indent=2, default=str)
