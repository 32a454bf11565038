"""§7 of Cohen et al. 2021: the sample complexity of privately separating a Gaussian mixture.

Data: a uniform mixture of k standard Gaussians N(R·e_i, I_d). Tuples: k-means++ (+ Lloyd) on t
random pieces (dpviz.clustering.tuples.compute_tuples). Success: the k-tuple algorithm's output Y is
a *perfect classifier* of the samples (every sample of Gaussian i is nearest to the same y, a
different y for each i). Privacy: the k-tuple algorithm at ε = 1, δ = 1e-6 (β = 0.05), as in §7.

PrivatekNoisyCenters (run): t = n_min tuples (the smallest t that is private, §7 [S-skel]) and
γ = 2·10⁻³/k [OURS; keeps σ_i/λ̂_i ≈ 0.1–0.2]; the samples per tuple s run over powers of 2, and
the table gives the smallest total N = t·s whose success rate over --seeds seeds is ≥ 1 − β.
Rows are assigned to pieces independently, so a piece holds Binomial(N, 1/t) ≈ s rows. Each cell
also prints the bound s_pred = k·χ²_d(1 − τ₁/(2tk))/(γR)² under which the test cannot pass
(a tuple center is off by ‖N(0, 2k/s·I_d)‖ and must fall in a ball of radius γ·R√2); cells whose
N would exceed --max-total are not run and show that bound instead ("bound only").

PrivatekAverages (bound only, too large to run on 2 cores): t = n_min = max(2ℓ+2, 2t₀) tuples at
Λ/r_min = 10³ (note §6) times max(2k, s_pred at γ = 0.1) samples per tuple. --averages-demo runs
it once per seed at k = 2, d = 2 on *simulated* tuples (each the per-Gaussian empirical means of a
piece: what k-means++ returns at this separation) to show it succeeds at that count.

    PYTHONPATH=. .venv/bin/python bench/easy_sample_complexity.py --quick
    PYTHONPATH=. .venv/bin/python bench/easy_sample_complexity.py --k 2 3 5 --d 2 10 100 --seeds 20
    PYTHONPATH=. .venv/bin/python bench/easy_sample_complexity.py --no-grid --averages-demo 2
    PYTHONPATH=. .venv/bin/python bench/easy_sample_complexity.py --bounds-only
    PYTHONPATH=. .venv/bin/python bench/easy_sample_complexity.py --cells 2,100,12 --bisect 0.125
"""

from __future__ import annotations

import argparse
import math
import sys
import time

import numpy as np
from scipy.stats import chi2

from dpviz.clustering.easy_instances import averages_plan, noisy_centers_plan, private_k_averages
from dpviz.clustering.easy_instances.aggregators import private_k_noisy_centers
from dpviz.clustering.tuples import compute_tuples
from dpviz.metrics import nearest_center

EPS, DELTA, BETA = 1.0, 1e-6, 0.05
LAMBDA_OVER_RMIN = 1e3


def mixture(N: int, k: int, d: int, R: float, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    lab = rng.integers(0, k, N)
    X = rng.normal(size=(N, d))
    X[np.arange(N), lab] += R
    return X, lab


def perfect(X: np.ndarray, lab: np.ndarray, Y: np.ndarray | None, k: int) -> bool:
    """Every sample of Gaussian i nearest to one y, distinct across i."""
    if Y is None:
        return False
    pred, _ = nearest_center(X, Y)
    first = np.full(k, -1)
    for i in range(k):  # loop over components
        vals = np.unique(pred[lab == i])
        if vals.size != 1:
            return False
        first[i] = vals[0]
    return np.unique(first).size == k


def s_pred(k: int, d: int, R: float, gamma: float, t: int, tau1: float) -> float:
    """Samples per tuple below which the test cannot pass (≤ τ₁ of t tuples may be bad): every
    tuple center within γλ = γR√2 of Y's, ‖N(0, 2k/s·I_d)‖ ≤ γR√2 with probability 1 − τ₁/(2tk);
    and every piece must hold all k Gaussians, k(1 − 1/k)^s ≤ τ₁/(2t)."""
    q = 1.0 - tau1 / (2.0 * t * k)
    tight = k * chi2.ppf(q, d) / (gamma * R) ** 2
    cover = math.log(2.0 * k * t / tau1) / math.log(k / (k - 1.0)) if k > 1 else 1.0
    return max(tight, cover)


def noisy_cell(k: int, d: int, R: float, t: int, gamma: float, seeds: int, max_total: int,
               tau1: float, bisect_rel: float = 0.0, s_start: int = 0) -> tuple[str, str, float]:
    """(minimal N or '> cap', the rate at it, seconds). s runs on a doubling grid from 2k; with
    ``bisect_rel`` > 0 a bisection on s then narrows the bracket to that relative width. A cell whose
    bound t·s_pred exceeds ``max_total`` is not run: its bound is reported, labelled as such."""
    sp = s_pred(k, d, R, gamma, t, tau1)
    allowed = seeds - math.ceil((1 - BETA) * seeds)  # failures tolerated at rate ≥ 1 − β
    start = time.perf_counter()

    def rate(s: int) -> float:
        ok = fail = 0
        for seed in range(seeds):
            # independent streams for the data and the algorithm (issue 28; before, one Generator
            # seeded 1_000_003·seed + s drew the data and then the algorithm's noise)
            X, lab = mixture(t * s, k, d, R, np.random.default_rng(np.random.SeedSequence([0xDA7A, seed, s])))
            rng = np.random.default_rng(np.random.SeedSequence([0xA160, seed, s]))
            st = compute_tuples(X, k, n_tuples=t, rng=rng)
            r = private_k_noisy_centers(st.tuples, eps=EPS, delta=DELTA, beta=BETA, gamma=gamma, rng=rng,
                                        valid=st.valid)
            if perfect(X, lab, r.centers, k):
                ok += 1
            else:
                fail += 1
                if fail > allowed:
                    break  # cannot reach 1 − β any more
        # progress on stderr, so a cell stopped by a time limit still shows its bracket
        print(f"# k={k} d={d} R={R:g} s={s}: {ok} of {ok + fail} seeds perfect"
              f"{' (stopped: > β failures)' if fail > allowed else ''}", file=sys.stderr, flush=True)
        return ok / seeds

    s = s_start or max(2 * k, 2 ** math.floor(math.log2(max(sp / 8.0, 1.0))))
    if t * max(sp, 2 * k) > max_total:
        return f"bound, not run: ≥ {t * max(sp, 2 * k):.2g}", "—", 0.0
    found: tuple[int, float] | None = None
    failed = 0  # largest s seen to fail (0: none yet)
    r0 = rate(s)
    if r0 >= 1 - BETA:
        found = (s, r0)
        while s > 2 * k:  # walk down while it still succeeds
            r1 = rate(s // 2)
            if r1 < 1 - BETA:
                failed = s // 2
                break
            s //= 2
            found = (s, r1)
    else:
        failed = s
        while t * s * 2 <= max_total:
            s *= 2
            r1 = rate(s)
            if r1 >= 1 - BETA:
                found = (s, r1)
                break
            failed = s
    if found is not None and failed and bisect_rel > 0:
        # bisection on s (N = t·s) inside the doubling bracket (failed, found], to bisect_rel of s
        lo, (hi, r_hi) = failed, found
        while hi - lo > max(1, int(bisect_rel * hi)):
            mid = (lo + hi) // 2
            r_mid = rate(mid)
            if r_mid >= 1 - BETA:
                hi, r_hi = mid, r_mid
            else:
                lo = mid
        found = (hi, r_hi)
    secs = time.perf_counter() - start
    if found is None:
        return f"> {max_total:.2g} (cap; bound {t * sp:.2g})", "—", secs
    return f"{t * found[0]:,} (s = {found[0]})", f"{found[1]:.2f}", secs


def averages_bound(k: int, d: int, R: float) -> tuple[int | None, float]:
    radius = R + 10.0
    p = averages_plan(1000, k, d, eps=EPS, delta=DELTA, beta=BETA, gamma=0.1, radius=radius,
                      r_min=radius / LAMBDA_OVER_RMIN)
    if p.n_min is None:
        return None, math.inf
    pp = averages_plan(p.n_min, k, d, eps=EPS, delta=DELTA, beta=BETA, gamma=0.1, radius=radius,
                       r_min=radius / LAMBDA_OVER_RMIN)
    s = max(2 * k, math.ceil(s_pred(k, d, R, 0.1, p.n_min, pp.test.tau1)))
    return p.n_min, p.n_min * s


def bounds_table(ks: list[int], ds: list[int], exps: range) -> None:
    """The feasibility bounds only (no runs): t = n_min and N = t·s_pred for both aggregators."""
    print("| k | d | R | NoisyCenters t, γ | NoisyCenters N bound | Averages t = n_min | Averages N bound |")
    print("|---|---|---|---|---|---|---|")
    for k in ks:
        gamma = 2e-3 / k
        t = noisy_centers_plan(1000, k, eps=EPS, delta=DELTA, beta=BETA, gamma=gamma).n_min
        tp = noisy_centers_plan(t, k, eps=EPS, delta=DELTA, beta=BETA, gamma=gamma).test
        for d in ds:
            if d < k:
                continue  # the means R·e_i need d ≥ k
            for e in exps:
                R = 2.0**e
                nb = t * max(2 * k, s_pred(k, d, R, gamma, t, tp.tau1))
                ta, na = averages_bound(k, d, R)
                print(f"| {k} | {d} | 2^{e} | {t}, {gamma:.2g} | {nb:.2g} | {ta:,} | {na:.2g} |")


def averages_demo(R: float, seeds: int) -> None:
    k, d = 2, 2
    radius = 2.0 * R
    p = averages_plan(1000, k, d, eps=EPS, delta=DELTA, beta=BETA, gamma=0.1, radius=radius,
                      r_min=radius / LAMBDA_OVER_RMIN)
    t = p.n_min
    pp = averages_plan(t, k, d, eps=EPS, delta=DELTA, beta=BETA, gamma=0.1, radius=radius,
                       r_min=radius / LAMBDA_OVER_RMIN)
    s = 2 ** math.ceil(math.log2(s_pred(k, d, R, 0.1, t, pp.test.tau1)))  # every piece holds both
    mu = R * np.eye(k, d)
    print(f"\nPrivatekAverages demo: k = 2, d = 2, R = {R:g}, t = n_min = {t:,} simulated tuples of s = {s} "
          f"samples (N = {t * s:,}), Λ = {radius:g}, r_min = Λ/10³")
    print("| seed | outcome | max ‖â_i − μ_i‖ | seconds |")
    print("|---|---|---|---|")
    for seed in range(seeds):
        rng = np.random.default_rng(np.random.SeedSequence([0xDA7A, seed]))  # the simulated tuples
        counts = rng.multinomial(s, np.full(k, 1.0 / k), size=t)  # (t, k)
        c = np.maximum(counts, 1)
        T = mu[None] + rng.normal(size=(t, k, d)) / np.sqrt(c)[:, :, None]
        T = np.clip(T, -radius / math.sqrt(d), radius / math.sqrt(d))
        valid = counts.min(axis=1) > 0  # a piece missing a Gaussian: k-means would split another one
        order = np.argsort(rng.random((t, k)), axis=1)
        T = np.take_along_axis(T, order[:, :, None], axis=1)
        t0 = time.perf_counter()
        r = private_k_averages(T, eps=EPS, delta=DELTA, radius=radius, r_min=radius / LAMBDA_OVER_RMIN,
                               rng=np.random.default_rng(np.random.SeedSequence([0xA160, seed])), valid=valid)
        secs = time.perf_counter() - t0
        err = (np.linalg.norm(r.centers[:, None] - mu[None], axis=2).min(axis=1).max() if r.ok else math.nan)
        print(f"| {seed} | {r.failure or 'success'} | {err:.3g} | {secs:.1f} |")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--k", type=int, nargs="+", default=[2, 3, 5])
    ap.add_argument("--d", type=int, nargs="+", default=[2, 10, 100])
    ap.add_argument("--R-exp", type=int, nargs=2, default=[4, 12], metavar=("LO", "HI"),
                    help="R = 2^LO, 2^(LO+step), ..., 2^HI")
    ap.add_argument("--R-step", type=int, default=2)
    ap.add_argument("--seeds", type=int, default=20)
    ap.add_argument("--max-total", type=float, default=2**21, help="largest N = t·s actually run")
    ap.add_argument("--quick", action="store_true", help="k = 2; d ∈ {2, 10}; N ≤ 2^20")
    ap.add_argument("--averages-demo", type=int, default=0, metavar="SEEDS",
                    help="run PrivatekAverages on simulated tuples at k = d = 2, R = 2^10")
    ap.add_argument("--no-grid", action="store_true", help="skip the table (with --averages-demo)")
    ap.add_argument("--bounds-only", action="store_true", help="print the feasibility bounds, run nothing")
    ap.add_argument("--bisect", type=float, default=0.0, metavar="REL",
                    help="after the doubling search, bisect s to this relative width (e.g. 0.125)")
    ap.add_argument("--s-start", type=int, default=0, metavar="S",
                    help="first samples-per-tuple of the search (default ≈ s_pred/8); for a cell a "
                         "previous run stopped at a known failing s")
    ap.add_argument("--cells", nargs="+", default=None, metavar="K,D,E",
                    help="run only these cells (k, d, R = 2^E), e.g. 2,100,12 3,100,12")
    args = ap.parse_args()
    if args.quick:
        args.k, args.d, args.max_total = [2], [2, 10], 2**20
    if args.bounds_only:
        bounds_table(args.k, args.d, range(args.R_exp[0], args.R_exp[1] + 1, args.R_step))
        return
    if args.no_grid:
        averages_demo(2.0**10, args.averages_demo)
        return
    print(f"ε = {EPS}, δ = {DELTA}, β = {BETA}; success = perfect classification in ≥ {1 - BETA:.0%} of "
          f"{args.seeds} seeds; N = total samples")
    print("| k | d | R | NoisyCenters t = n_min, γ | NoisyCenters minimal N | rate | seconds |"
          " Averages t = n_min | Averages N (bound) |")
    print("|---|---|---|---|---|---|---|---|---|")
    if args.cells:
        cells = [tuple(int(v) for v in c.split(",")) for c in args.cells]
    else:
        cells = [(k, d, e) for k in args.k for d in args.d
                 for e in range(args.R_exp[0], args.R_exp[1] + 1, args.R_step)]
    for k, d, e in cells:
        gamma = 2e-3 / k
        plan = noisy_centers_plan(1000, k, eps=EPS, delta=DELTA, beta=BETA, gamma=gamma)
        t = plan.n_min
        tp = noisy_centers_plan(t, k, eps=EPS, delta=DELTA, beta=BETA, gamma=gamma).test
        if d < k:
            print(f"| {k} | {d} | 2^{e} | skipped: the means R·e_i need d ≥ k |")
            continue
        R = 2.0**e
        n_cell, rate, secs = noisy_cell(k, d, R, t, gamma, args.seeds, int(args.max_total), tp.tau1,
                                        bisect_rel=args.bisect, s_start=args.s_start)
        ta, na = averages_bound(k, d, R)
        print(f"| {k} | {d} | 2^{e} | {t}, {gamma:.2g} | {n_cell} | {rate} | {secs:.0f} | {ta:,} | "
              f"{na:.2g} (bound, not run) |", flush=True)
    if args.averages_demo:
        averages_demo(2.0**10, args.averages_demo)


if __name__ == "__main__":
    main()
