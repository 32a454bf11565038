"""Exploration only (issue 44, third and fourth stops): ``rc_lloyd`` against variants of its start
and steps, on calibration-recipe tables (data seed 301; never an evaluation or held-out table).

* ``base``: the fourth and fifth stops' ``rc_lloyd`` (the gauss start, ``start="gauss"``;
  coincident start centers moved along ± the noisy second moment's top eigenvectors,
  :func:`dpviz.clustering.rc_lloyd.split_coincident`, and 8 steps);
* ``third_stop``: the third stop's ``rc_lloyd`` (repeats moved along public random directions,
  patched in here from a public stream of its own; 4 steps);
* ``axis_split_4``: the axis split with 4 steps; ``random_split_8``: the random split with 8 steps;
* ``sign``: the sixth stop's default, the sign start (:func:`dpviz.clustering.rc_lloyd.sign_start`)
  with 8 steps.

A variant patched in here is not shipped: a change to ``rc_lloyd`` must be re-measured on every
calibration cell and refitted before ``auto`` may choose it.

    PYTHONPATH=. .venv/bin/python bench/rc_lloyd_variants.py --draws 100
"""

from __future__ import annotations

import argparse
from collections.abc import Callable

import numpy as np

import dpviz
import dpviz.clustering.rc_lloyd as rl
from bench.auto_calibrate import recipe_row
from bench.harness import DELTA, excess_loss, stream
from dpviz.metrics import reference_kmeans

CELLS = (("table_balanced", 160, 4, 3), ("table_aniso", 180, 13, 3), ("table_heavy", 250, 6, 4),
         ("table_unbalanced", 400, 10, 4), ("table_balanced", 300, 20, 5))
VARIANTS: dict[str, dict] = {"base": dict(start="gauss"), "third_stop": dict(iters=4, start="gauss"),
                             "axis_split_4": dict(iters=4, start="gauss"),
                             "random_split_8": dict(start="gauss"), "sign": dict(start="sign")}
RANDOM_SPLIT = ("third_stop", "random_split_8")
SEED = 301


def random_split(gen: np.random.Generator) -> Callable[..., tuple[np.ndarray, int]]:
    """The third stop's ``split_coincident``: repeats moved along public random directions."""
    def split(C: np.ndarray, scale: float, axes: np.ndarray) -> tuple[np.ndarray, int]:
        C = C.copy()
        _, first = np.unique(C, axis=0, return_index=True)
        repeat = np.setdiff1d(np.arange(C.shape[0]), first)
        if repeat.size:
            U = gen.standard_normal((repeat.size, C.shape[1]))
            C[repeat] += scale * U / np.linalg.norm(U, axis=1, keepdims=True)
        return C, int(repeat.size)
    return split


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--draws", type=int, default=100)
    args = ap.parse_args(argv)
    axis_split = rl.split_coincident
    print(f"{args.draws} draws per cell; loss median / p90\n")
    print("| cell | ε | " + " | ".join(VARIANTS) + " |\n|---|---|" + "---|" * len(VARIANTS))
    for recipe, n, d, k in CELLS:
        row = recipe_row(recipe, n, d, k)
        X, k, radius = row.data(SEED)
        ref = reference_kmeans(X, k, rng=stream(SEED, "reference", row.name)).cost
        for eps in (1.0, 3.0):
            out = []
            for name, params in VARIANTS.items():
                rl.split_coincident = random_split(stream(SEED, "random-split", row.name, f"{eps:g}")) \
                    if name in RANDOM_SPLIT else axis_split
                losses = [excess_loss(X, dpviz.run("rc_lloyd", X, k, epsilon=eps, delta=DELTA, radius=radius,
                                                   n_declared=n, rng=stream(SEED, "variants", row.name,
                                                                            f"{eps:g}", f"draw{j}"),
                                                   **params).centers, ref)
                          for j in range(args.draws)]
                out.append(f"{np.median(losses):.3g} / {np.percentile(losses, 90):.3g}")
            print(f"| {row.name} | {eps:g} | " + " | ".join(out) + " |", flush=True)
    rl.split_coincident = axis_split


if __name__ == "__main__":
    main()
