"""The Generate page's download: a synthetic dataset whose first line states its guarantee (issue 14)."""

from __future__ import annotations

import io

import numpy as np


def guarantee_text(result, mode: str) -> str:
    """One line: the row-level (ε, δ) of a DPGM result, the account it comes from, and the mode."""
    acc = result.account
    clustering = " + DP k-means" if result.params.k > 1 else ""
    return (f"({acc.eps:.3g}, {acc.setting.delta:g})-DP per row of the digits (add/remove one row), "
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
