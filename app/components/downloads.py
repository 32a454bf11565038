"""What Explore offers to download: the simulated centers (CSV) and the run's ledger (CSV); a
family's page adds its run configuration (JSON; FriendlyCore's: ``friendlycore/page.config_json``).

Both are a simulation, not a release: the configuration lists the seed streams that replay the
noise exactly. Nothing computed from an upload's rows without noise is included: not the rows
(the storyboard figure, which draws every row, is not offered for an upload), not their count, not
a fingerprint of them (issue 25, finding 5). Text from an upload (column names) is neutralised
for spreadsheets (:func:`app.components.safe.csv_cell`).
"""

from __future__ import annotations

import csv
from typing import Any

import numpy as np
import pandas as pd

from app.components import safe
from dpviz.registry import answered_by
from dpviz.viz.privacy import ledger_table


def centers_csv(result, feature_names) -> str:
    """The private centers as CSV (one row per center, and who released them: ``answered_by``);
    column names from an upload are neutralised for spreadsheets (a leading = + - @ tab or CR gets
    an apostrophe)."""
    if result.centers is None:
        return "no centers: the run output ⊥\n"
    df = pd.DataFrame(np.asarray(result.centers), columns=[safe.csv_cell(c) for c in feature_names])
    df.index.name = "center"
    # Who released them (the algorithm or its backup): a public bit of the run's trace.
    df["answered_by"] = answered_by(result).who
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


#: Recipe entries of an upload that are statistics of its rows (kept out of every download).
_ROW_STATISTICS = ("rows_clipped_to_bounds", "n_rows", "dropped_rows", "rows_dropped", "truncated", "sha256")


def public_recipe(ds) -> dict[str, Any]:
    """``ds.params`` without counts or fingerprints of an upload's rows (a generator's recipe —
    its n, its seed — is public and kept whole)."""
    prm = dict(ds.params)
    if ds.source != "upload":
        return prm
    if prm.get("bounds_source"):  # bounds suggested from the file's range: a statistic of the rows
        prm.pop("bounds", None)
    return {k: v for k, v in prm.items() if k not in _ROW_STATISTICS and "sha" not in k.lower()}


def storyboard_offered(ds) -> bool:
    """The storyboard figure draws every input row: offered for public data only, not uploads."""
    return ds.source != "upload"


#: Explore's Downloads caption (true for every source).
EXPLORE_CAPTION = (
    "These are a **simulation**: the configuration lists the seed streams, which replay the noise "
    "exactly, so the centers must not be published. Make a release on the **Release** page. For an "
    "upload nothing here contains its rows, their count or a fingerprint of them (the storyboard "
    "figure, which draws every row, is offered for generated and built-in data only); the "
    "configuration carries the file name, the column names and Λ, none of them private.")
