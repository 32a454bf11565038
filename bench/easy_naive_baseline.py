"""§7's naive baseline: add Gaussian noise to every sample (local model), then fit
sklearn.mixture.GaussianMixture — it fails to separate even well-separated mixtures.

Data: N samples of a uniform mixture of k (default 2) standard Gaussians N(R·e_i, I_d), d = max(2, k),
clipped to B(0, Λ), Λ = R + 4. Each sample gets N(0, σ²I) with σ the analytic Gaussian σ for ℓ2 sensitivity
2Λ at (ε, δ) = (1, 1e-6) (any two points of the ball are 2Λ apart), which makes the released
multiset (ε, δ)-DP for one row. Success: the fitted means classify every true sample perfectly
(each Gaussian's samples nearest to one mean, distinct means). With k = 2 in the plane a random
bisector separates two compact clusters fairly often, so this rate is not zero by chance; the
labelling accuracy (best matching; 0.5 is chance) and the error of the fitted means relative to
R (matched) show whether the mixture was actually learned.

    PYTHONPATH=. .venv/bin/python bench/easy_naive_baseline.py --quick
    PYTHONPATH=. .venv/bin/python bench/easy_naive_baseline.py --seeds 20
"""

from __future__ import annotations

import argparse

import numpy as np
from sklearn.mixture import GaussianMixture

from dpviz.data.bounds import clip_to_ball
from dpviz.metrics import center_error, labeling_failure, nearest_center
from dpviz.privacy.mechanisms import gaussian_sigma_dp

EPS, DELTA, D = 1.0, 1e-6, 2


def run(N: int, R: float, seed: int, K: int) -> tuple[bool, float, float]:
    rng = np.random.default_rng(seed)
    d = max(D, K)
    lab = rng.integers(0, K, N)
    X = rng.normal(size=(N, d))
    X[np.arange(N), lab] += R
    radius = R + 4.0
    X = clip_to_ball(X, radius)
    sigma = gaussian_sigma_dp(2.0 * radius, EPS, DELTA)
    Z = X + rng.normal(0.0, sigma, size=X.shape)
    gm = GaussianMixture(K, random_state=seed).fit(Z)
    pred, _ = nearest_center(X, gm.means_)
    ok = all(np.unique(pred[lab == i]).size == 1 for i in range(K)) and np.unique(pred).size == K
    mu = R * np.eye(K, d)
    return ok, 1.0 - labeling_failure(lab, pred), center_error(mu, gm.means_) / R


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, default=20)
    ap.add_argument("--N", type=int, nargs="+", default=[1_000, 10_000, 100_000, 1_000_000])
    ap.add_argument("--R", type=float, nargs="+", default=[2.0**4, 2.0**8, 2.0**12])
    ap.add_argument("--k", type=int, default=2)
    ap.add_argument("--quick", action="store_true", help="10 seeds, N ≤ 10⁵")
    args = ap.parse_args()
    if args.quick:
        args.seeds, args.N = 10, [1_000, 10_000, 100_000]
    print(f"(ε, δ) = ({EPS}, {DELTA}) per sample; k = {args.k}, d = {max(D, args.k)}; {args.seeds} seeds")
    print("| R | σ/R | N | perfect classification rate | mean labelling accuracy | mean ‖μ̂ − μ‖/R |")
    print("|---|---|---|---|---|---|")
    for R in args.R:
        sigma = gaussian_sigma_dp(2.0 * (R + 4.0), EPS, DELTA)
        for N in args.N:
            res = [run(N, R, s, args.k) for s in range(args.seeds)]
            rate = np.mean([r[0] for r in res])
            acc = np.mean([r[1] for r in res])
            err = np.mean([r[2] for r in res])
            print(f"| {R:g} | {sigma / R:.3g} | {N:,} | {rate:.2f} | {acc:.3f} | {err:.3g} |", flush=True)


if __name__ == "__main__":
    main()
