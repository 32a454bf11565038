"""Why ``rc_lloyd``'s loss is bimodal on the smallest tables (issue 44, the 1.25× misses).

For each (table, ε) cell, many independent draws of ``rc_lloyd`` at the budget the harness gives
it, read through the run's own trace: did the start keep any direction of its noisy matrix
(``gauss_fit``'s second moment with ``--start gauss``, the spatial sign covariance with the
default ``--start sign``), or was every eigenvalue under the noise edge, so the start is the noisy
mean with its k − 1 repeats split apart (``rc_lloyd.split_coincident``)? Does the
answer cover every cluster of the reference solution (each reference center's nearest answer
center distinct), or did two reference clusters end up served by one center ("merged")? Draws
come from their own stream (``harness:modes:<row>:<ε>:draw<j>``), the data's and the reference's
from the harness's.

    PYTHONPATH=. .venv/bin/python bench/rc_lloyd_modes.py --cells iris:1 iris:3 wine:3 diabetes:3 --draws 200
    (the third and fourth stops' files were written with the gauss start: add --start gauss)
"""

from __future__ import annotations

import argparse

import numpy as np

import dpviz
from bench.harness import DELTA, excess_loss, stream
from bench.small_tables import ROWS
from dpviz.geometry import nearest_center
from dpviz.metrics import reference_kmeans


def covered(reference: np.ndarray, centers: np.ndarray) -> int:
    """How many distinct answer centers are nearest to the reference centers (k: none merged)."""
    return int(np.unique(nearest_center(reference, centers)[0]).size)


def cell(name: str, eps: float, draws: int, start: str = "sign") -> dict[str, float]:
    """The diagnosis of one cell over ``draws`` independent runs."""
    row = ROWS[name]
    X, k, radius = row.data(0)
    ref = reference_kmeans(X, k, rng=stream(0, "reference", row.name))
    loss, collapsed, merged = [], [], []
    for j in range(draws):
        res = dpviz.run("rc_lloyd", X, k, epsilon=eps, delta=DELTA, radius=radius, n_declared=X.shape[0],
                        start=start, rng=stream(0, "modes", row.name, f"{eps:g}", f"draw{j}"))
        loss.append(excess_loss(X, res.centers, ref.cost))
        fit = res.find("gaussian_fit" if start == "gauss" else "sign_axes")
        collapsed.append(fit.data["directions"] == 0)
        merged.append(covered(ref.centers, res.centers) < k)
    a, c, m = np.array(loss), np.array(collapsed), np.array(merged)
    q = np.percentile(a, [10, 50, 90])
    return dict(q10=q[0], med=q[1], p90=q[2], collapsed=c.mean(), merged=m.mean(),
                merged_if_collapsed=m[c].mean() if c.any() else np.nan,
                merged_if_direction=m[~c].mean() if (~c).any() else np.nan,
                med_merged=np.median(a[m]) if m.any() else np.nan,
                med_whole=np.median(a[~m]) if (~m).any() else np.nan)


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--cells", nargs="*", default=["iris:1", "iris:3", "wine:3", "diabetes:3"],
                    help="table:ε pairs (tables of bench/small_tables.py)")
    ap.add_argument("--draws", type=int, default=200)
    ap.add_argument("--start", default="sign", choices=("sign", "gauss"),
                    help="rc_lloyd's start (the third to fifth stops' files: gauss)")
    args = ap.parse_args(argv)
    print(f"{args.draws} draws of rc_lloyd (start={args.start}) per cell\n")
    print("| table | ε | loss p10 / median / p90 | start collapsed (no direction kept) | answer merged two "
          "clusters | merged if collapsed / if a direction was kept | median loss merged / whole |")
    print("|---|---|---|---|---|---|---|")
    for spec in args.cells:
        name, eps = spec.rsplit(":", 1)
        r = cell(name, float(eps), args.draws, args.start)
        print(f"| {name} | {float(eps):g} | {r['q10']:.3g} / {r['med']:.3g} / {r['p90']:.3g} | "
              f"{r['collapsed']:.0%} | {r['merged']:.0%} | {r['merged_if_collapsed']:.0%} / "
              f"{r['merged_if_direction']:.0%} | {r['med_merged']:.3g} / {r['med_whole']:.3g} |", flush=True)


if __name__ == "__main__":
    main()
