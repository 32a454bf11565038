"""Issue 24, finding 1: the same int seed to a data generator and to an algorithm.

    PYTHONPATH=. .venv/bin/python bench/seed_collision.py

``ball_mixture(n, d=20, k=8, rng=s)`` draws its centers with ``uniform_ball(k, d, ·, gen)`` as its
first draws; DP-Lloyd's public start is ``uniform_ball(k, d, Λ, gen)`` as *its* first draws. Before
seeds were domain-separated (dpviz._validation.check_rng), the same int ``s`` gave both the same
stream: the start was the true centers times 8/7 and one noisy Lloyd step scored ≈ 4e-4 relative
excess loss, against 8–12 with any other seed (commit c0e8a0a, before the fix). Since the fix both
columns are 8–12 and the cosine is far from 1. Prints, per data seed, DP-Lloyd's loss with the
same seed and with a different one, and the largest cosine between the start and a true center.
"""

from __future__ import annotations

import numpy as np
from sklearn.cluster import KMeans

import dpviz
from dpviz._validation import check_rng
from dpviz.clustering.baselines import dp_lloyd_init
from dpviz.data.ball_mixture import ball_mixture


def main() -> None:
    n, d, k = 100_000, 20, 8
    for s in (0, 1, 2):
        ds = ball_mixture(n, d=d, k=k, rng=s)
        X = ds.X
        ref = KMeans(k, n_init=3, random_state=123).fit(X).inertia_
        row = []
        for alg_seed in (s, s + 100):
            r = dpviz.run("dp_lloyd", X, k, epsilon=1.0, delta=1e-6, radius=1.0, rng=alg_seed,
                          iters=1, n_declared=n)
            cost = ((X[:, None, :] - r.centers[None]) ** 2).sum(-1).min(1).sum()
            row.append((cost - ref) / ref)
        gen, _ = check_rng(s, "algorithm:dp_lloyd")  # the stream dpviz.run("dp_lloyd", rng=s) starts from
        start, _ = dp_lloyd_init(k, d, 1.0, None, gen, "dp_lloyd")
        C = ds.true_centers
        cos = (start @ C.T) / np.outer(np.linalg.norm(start, axis=1), np.linalg.norm(C, axis=1))
        print(f"data seed {s}: DP-Lloyd (1 it.) same seed {row[0]:.3g}, seed {s + 100} {row[1]:.3g}; "
              f"max cosine(start, true center) {cos.max():.4f}")


if __name__ == "__main__":
    main()
