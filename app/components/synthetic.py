"""The Generate page's download: a synthetic dataset whose first line states its guarantee (issue 14)."""

from __future__ import annotations

import csv
import io

import numpy as np

from app.components.safe import csv_cell


def guarantee_text(result, mode: str, of: str = "the digits") -> str:
    """One line: the row-level (ε, δ) of a DPGM result, the account it comes from, and the mode."""
    acc = result.account
    clustering = " + DP k-means" if result.params.k > 1 else ""
    return (f"({acc.eps:.3g}, {acc.setting.delta:g})-DP per row of {of} (add/remove one row), "
            f"{acc.guarantee.upper()} account (dp-accounting) of {result.steps_run} DP-SGD steps "
            f"({acc.setting.epochs:.3g} epochs){clustering}; {mode}")


def synthetic_csv(result, n: int, seed: int, guarantee: str) -> bytes:
    """n synthetic rows (pixels, component) as CSV; the first line is ``# <guarantee>``."""
    synthetic, component = result.sample(n, rng=seed)
    buf = io.StringIO()
    buf.write(f"# {guarantee}\n")
    buf.write(",".join([f"pixel_{j}" for j in range(synthetic.shape[1])] + ["component"]) + "\n")
    np.savetxt(buf, np.column_stack([synthetic, component]).astype(np.int64), fmt="%d", delimiter=",")
    return buf.getvalue().encode()


def synthetic_table_csv(result, n: int, seed: int, guarantee: str, box, feature_names) -> bytes:
    """n synthetic rows in the data's units (decoder means mapped back from the public box) and
    their component, as CSV; the first line is ``# <guarantee>``. Column names come from the user's
    file: quoted by the csv writer and formula-safe (:func:`csv_cell`)."""
    U, component = result.sample(n, rng=seed, binary=False)
    values = box.decode(U)
    names = list(feature_names) or [f"x{j + 1}" for j in range(values.shape[1])]
    buf = io.StringIO()
    buf.write(f"# {guarantee}\n")
    w = csv.writer(buf, lineterminator="\n")
    w.writerow([csv_cell(c) for c in [*names, "component"]])
    np.savetxt(buf, np.column_stack([values, component]), fmt=["%.6g"] * values.shape[1] + ["%d"],
               delimiter=",")
    return buf.getvalue().encode()
