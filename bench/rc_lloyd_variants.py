"""Exploration only (issue 44, third stop): ``rc_lloyd`` against three variants of its start and
steps, on calibration-recipe tables (data seed 301; never an evaluation or held-out table).

* ``eigsplit``: coincident start centers moved along the noisy second moment's eigenvectors
  (±v₁, ±v₂, …; post-processing of gauss_fit's release) instead of public random directions;
  ``eigsplit_wide`` also with step_frac = 0.3;
* ``start0.15``: start_share = 0.15; ``iters6``: six steps.

The variants are patched in here (not shipped): a change to ``rc_lloyd`` must be re-measured on
every calibration cell and refitted before ``auto`` may choose it.

    PYTHONPATH=. .venv/bin/python bench/rc_lloyd_variants.py --draws 100
"""

from __future__ import annotations

import argparse
from collections.abc import Callable

import numpy as np

import dpviz
import dpviz.clustering.gauss_fit as gf
import dpviz.clustering.rc_lloyd as rl
from bench.auto_calibrate import recipe_row
from bench.harness import DELTA, excess_loss, stream
from dpviz.metrics import reference_kmeans

CELLS = (("table_balanced", 160, 4, 3), ("table_aniso", 180, 13, 3), ("table_heavy", 250, 6, 4),
         ("table_unbalanced", 400, 10, 4), ("table_balanced", 300, 20, 5))
VARIANTS: dict[str, dict] = {"base": {}, "eigsplit": {}, "start0.15": dict(start_share=0.15),
                             "iters6": dict(iters=6), "eigsplit_wide": dict(step_frac=0.3)}
SEED = 301


def eigen_split(noisy_cov: Callable[[], np.ndarray | None]):
    """A ``split_coincident`` that moves the repeats along the noisy second moment's eigenvectors."""
    def split(C: np.ndarray, scale: float, gen: np.random.Generator) -> tuple[np.ndarray, int]:
        C = C.copy()
        _, first = np.unique(C, axis=0, return_index=True)
        repeat = np.setdiff1d(np.arange(C.shape[0]), first)
        cov = noisy_cov()
        if repeat.size and cov is not None:
            lam, vec = np.linalg.eigh(cov)
            vec = vec[:, np.argsort(lam)[::-1]]
            for i, r in enumerate(repeat):  # loop over ≤ k repeats: ±v1, ±v2, ...
                C[r] += scale * (1 if i % 2 == 0 else -1) * vec[:, (i // 2) % vec.shape[1]]
        return C, int(repeat.size)
    return split


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--draws", type=int, default=100)
    args = ap.parse_args(argv)
    stash: dict[str, np.ndarray] = {}
    quantize, random_split = gf.quantize_gaussian, rl.split_coincident

    def keep_cov(mean, cov, k, edge, gen):  # the released noisy covariance, kept for the split
        stash["cov"] = cov
        return quantize(mean, cov, k, edge, gen)
    gf.quantize_gaussian = keep_cov
    print(f"{args.draws} draws per cell; loss median / p90\n")
    print("| cell | ε | " + " | ".join(VARIANTS) + " |\n|---|---|" + "---|" * len(VARIANTS))
    for recipe, n, d, k in CELLS:
        row = recipe_row(recipe, n, d, k)
        X, k, radius = row.data(SEED)
        ref = reference_kmeans(X, k, rng=stream(SEED, "reference", row.name)).cost
        for eps in (1.0, 3.0):
            out = []
            for name, params in VARIANTS.items():
                rl.split_coincident = eigen_split(lambda: stash.get("cov")) if name.startswith("eigsplit") \
                    else random_split
                losses = [excess_loss(X, dpviz.run("rc_lloyd", X, k, epsilon=eps, delta=DELTA, radius=radius,
                                                   n_declared=n, rng=stream(SEED, "variants", row.name,
                                                                            f"{eps:g}", f"draw{j}"),
                                                   **params).centers, ref)
                          for j in range(args.draws)]
                out.append(f"{np.median(losses):.3g} / {np.percentile(losses, 90):.3g}")
            print(f"| {row.name} | {eps:g} | " + " | ".join(out) + " |", flush=True)
    rl.split_coincident = random_split


if __name__ == "__main__":
    main()
