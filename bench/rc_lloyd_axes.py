"""Does ``rc_lloyd``'s start release a direction that separates the clusters? (issue 44, sixth stop)

For each calibration-recipe cell (the tables of ``bench/rc_lloyd_repair.py``: the five recipe
tables of ``bench/rc_lloyd_variants.py``, data seed 301, and the iris-sized corner of
``bench/auto_calibrate.py``'s two small-table designs; never an evaluation or held-out table) and
each start, the |cos| between the start's released top axis and the reference solution's top
between-cluster direction (the top eigenvector of Σ_j w_j (c_j − x̄)(c_j − x̄)ᵀ over the reference
centers c_j with weights w_j): ``gauss`` reads gauss_fit's noisy second moment's (Λ² sensitivity),
``sign`` the spatial sign covariance's (sensitivity 1). A random unit axis in d dimensions has
median |cos| ≈ 0.67/√d. Also the share of draws whose start kept no direction (collapsed) and whose
answer merged two reference clusters. Both starts read the same draw streams
(``harness:axes:<row>:<ε>:draw<j>``).

    PYTHONPATH=. .venv/bin/python bench/rc_lloyd_axes.py --draws 100
"""

from __future__ import annotations

import argparse

import numpy as np

import dpviz
from bench.auto_calibrate import recipe_row
from bench.harness import DELTA, stream
from bench.rc_lloyd_modes import covered
from bench.rc_lloyd_repair import DESIGN_CELLS
from bench.rc_lloyd_variants import CELLS, SEED
from dpviz.geometry import nearest_center
from dpviz.metrics import reference_kmeans

STEP = {"gauss": "gaussian_fit", "sign": "sign_axes"}


def between_axis(X: np.ndarray, centers: np.ndarray) -> np.ndarray:
    """The top eigenvector of the reference centers' weighted scatter about the data mean."""
    w = np.bincount(nearest_center(X, centers)[0], minlength=centers.shape[0]) / X.shape[0]
    D = centers - X.mean(axis=0)
    return np.linalg.eigh((D.T * w) @ D)[1][:, -1]


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--draws", type=int, default=100)
    args = ap.parse_args(argv)
    print(f"{args.draws} draws per cell and start; |cos(released top axis, between-cluster axis)| "
          "median / 10th percentile, collapsed, merged\n")
    print("| cell (data seed) | ε | gauss | sign |\n|---|---|---|---|")
    for (recipe, n, d, k), seed in [(c, SEED) for c in CELLS] + list(DESIGN_CELLS):
        row = recipe_row(recipe, n, d, k)
        X, k, radius = row.data(seed)
        ref = reference_kmeans(X, k, rng=stream(seed, "reference", row.name))
        vb = between_axis(X, ref.centers)
        for eps in (1.0, 3.0):
            out = []
            for start, step in STEP.items():
                cos, collapsed, merged = [], [], []
                for j in range(args.draws):
                    res = dpviz.run("rc_lloyd", X, k, epsilon=eps, delta=DELTA, radius=radius, n_declared=n,
                                    start=start, rng=stream(seed, "axes", row.name, f"{eps:g}", f"draw{j}"))
                    fit = res.find(step).data
                    cos.append(abs(float(fit["axes"][:, 0] @ vb)))
                    collapsed.append(fit["directions"] == 0)
                    merged.append(covered(ref.centers, res.centers) < k)
                out.append(f"{np.median(cos):.2f} / {np.percentile(cos, 10):.2f}, {np.mean(collapsed):.0%}, "
                           f"{np.mean(merged):.0%}")
            print(f"| {row.name} ({seed}) | {eps:g} | " + " | ".join(out) + " |", flush=True)


if __name__ == "__main__":
    main()
