"""Acs et al. (TKDE), Fig. 4 and Figs. 5–6 analogues on binarised digits, and DP-SGD speed.

Data as in bench/acs_kmeans.py (1,528 private rows, 15% public, m = 64). DPGM with one 64–200–2
VAE per cluster, DP-SGD with DPNorm clipping (σ_C = 4, C_max = 10, w = 100), Adam lr 3e-3, batch
L = 64, the parallel schedule; decoder output biases start at the logits of the PUBLIC split's pixel
marginals (our addition: without it 20 epochs of DP-SGD do not reach the independent-marginals fit).
The clustering noise is set for digits (≈ 160 rows per cluster; the paper's
σ_K = 40 is tuned for 6,000): see --sigma-k. ε is the guarantee of ``acs_account`` (row-level,
add/remove, δ = 1e-5); the paper's accountant and the one-model bound are printed beside it.

* Fig. 4 analogue: 8 samples (Bernoulli means) per cluster for k = 10 and 8 × 10 for k = 1
  ("VAE without clustering"), next to real rows; saved as a PNG grid (--png).
* Figs. 5–6 analogue: 1,000 random counting queries in 5 subsets of 200; subset i has query
  lengths uniform in [1, i·max‖x‖₁/5]; items drawn without replacement from the 64. AND (a row
  contains all items; the paper's "visited these cells") and OR semantics. Relative error
  |Q(D̂) − Q(D)| / max(Q(D), 0.1%·|D|), synthetic D̂ of |D| rows. Reference: |D| rows resampled
  from the PUBLIC split (what public data alone gives).
* Speed: one DP-SGD epoch (k = 1, and k = 10 in parallel).

    PYTHONPATH=. .venv/bin/python bench/acs_dpgm.py --png docs/acs_fig4.png     # 2 seeds
    PYTHONPATH=. .venv/bin/python bench/acs_dpgm.py --quick                     # 1 seed, 5 epochs
    PYTHONPATH=. .venv/bin/python bench/acs_dpgm.py --model rbm --lr 0.01 --seeds 1 --no-speed \
        --png docs/acs_fig4_rbm.png                                             # Fig. 4(d): RBM
"""

from __future__ import annotations

import argparse
import os
import time

import numpy as np

from dpviz.generative.data import binary_digits
from dpviz.generative.dpgm import DPGMParams, DPGMResult, dpgm

DELTA = 1e-5


def counting_workload(m: int, max_len: int, rng: np.random.Generator, n_queries: int = 1000,
                      subsets: int = 5) -> list[list[np.ndarray]]:
    """Per subset i (1-based), n/subsets item sets with |set| ~ U[1, i·max_len/subsets] (Figs. 5–6)."""
    out = []
    for i in range(1, subsets + 1):
        hi = max(1, int(i * max_len / subsets))
        out.append([rng.choice(m, size=int(rng.integers(1, hi + 1)), replace=False)
                    for _ in range(n_queries // subsets)])
    return out


def answers(X: np.ndarray, queries: list[np.ndarray], mode: str) -> np.ndarray:
    B = X.astype(bool)
    if mode == "and":
        return np.array([np.count_nonzero(B[:, q].all(axis=1)) for q in queries], dtype=float)
    return np.array([np.count_nonzero(B[:, q].any(axis=1)) for q in queries], dtype=float)


def relative_errors(real: np.ndarray, synth: np.ndarray, workload: list[list[np.ndarray]],
                    mode: str) -> list[float]:
    s = 0.001 * real.shape[0]  # sanity bound 0.1%·|D|
    errs = []
    for qs in workload:
        a, b = answers(real, qs, mode), answers(synth, qs, mode) * real.shape[0] / synth.shape[0]
        errs.append(float(np.mean(np.abs(b - a) / np.maximum(a, s))))
    return errs


def train(split, k: int, args, seed: int) -> tuple[DPGMResult, float]:
    p = DPGMParams(k=k, T_K=args.t_k, sigma_K=args.sigma_k, sigma_C=4.0, sigma_G=args.sigma_g,
                   batch_size=args.batch, epochs=args.epochs, lr=args.lr, n_features=args.d,
                   schedule="parallel", model=args.model)
    t = time.perf_counter()
    r = dpgm(split.X, params=p, public_init=split.public_init(k, rng=seed) if k > 1 else None,
             n_declared=split.X.shape[0], delta=DELTA, rng=seed, X_public=split.X_public)
    return r, time.perf_counter() - t


def save_grid(path: str, rows: list[np.ndarray], scale: int = 4) -> None:
    """Rows of 8×8 images (values in [0, 1]) as one grayscale PNG (white background, dark ink)."""
    from PIL import Image

    pad = 1
    n_cols = max(r.shape[0] for r in rows)
    H, W = len(rows) * (8 + pad) + pad, n_cols * (8 + pad) + pad
    canvas = np.ones((H, W))
    for i, r in enumerate(rows):
        for j, img in enumerate(r):
            y, x = pad + i * (8 + pad), pad + j * (8 + pad)
            canvas[y:y + 8, x:x + 8] = 1.0 - img.reshape(8, 8)
    im = Image.fromarray((canvas * 255).astype(np.uint8)).resize((W * scale, H * scale), Image.NEAREST)
    im.save(path)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="1 seed, 5 epochs")
    ap.add_argument("--seeds", type=int, default=2)
    ap.add_argument("--epochs", type=float, default=20.0)
    ap.add_argument("--batch", type=float, default=64.0)
    ap.add_argument("--lr", type=float, default=3e-3)
    ap.add_argument("--d", type=int, default=50, help="RFF dimension of the clustering")
    ap.add_argument("--sigma-k", type=float, default=3.0)
    ap.add_argument("--t-k", type=int, default=5)
    ap.add_argument("--sigma-g", type=float, default=1.0)
    ap.add_argument("--png", default="")
    ap.add_argument("--model", choices=("vae", "rbm"), default="vae")
    ap.add_argument("--no-speed", action="store_true", help="skip the one-epoch timings")
    args = ap.parse_args()
    if args.quick:
        args.seeds, args.epochs = 1, 5.0
    split = binary_digits(0.15, rng=0)
    n = split.X.shape[0]
    wl_rng = np.random.default_rng(7)
    max_len = int(split.X.sum(axis=1).max())
    workload = counting_workload(64, max_len, wl_rng)
    print(f"model = {args.model}, lr = {args.lr:g}")
    print(f"private n = {n}, q = {args.batch / n:.4f}, epochs = {args.epochs:g}, σ_G = {args.sigma_g:g}, "
          f"σ_K = {args.sigma_k:g}, T_K = {args.t_k}, max‖x‖₁ = {max_len}, {args.seeds} seed(s)")
    errs: dict[str, dict[str, list[list[float]]]] = {}
    grids: dict[int, list[np.ndarray]] = {}
    for k in (10, 1):
        for seed in range(args.seeds):
            r, dt = train(split, k, args, seed)
            acc = r.account
            if seed == 0:
                print(f"\nk = {k}: trained in {dt:.1f} s ({r.steps_run} steps); ε = {acc.eps:.3f} "
                      f"({acc.guarantee}; RDP {acc.rdp:.3f}, paper's accountant {acc.paper.eps:.3f}, "
                      f"one-model schedule would be {acc.one_model:.3f}) at δ = {DELTA:g}; "
                      f"mixture weights {np.round(r.weights, 3).tolist()}; "
                      f"mean C_s {r.clip_bounds.mean():.2f}")
                rng = np.random.default_rng(100)
                if k > 1:
                    grids[k] = [m.sample(8, rng, binary=False) for m in r.models]
                else:
                    grids[k] = [r.models[0].sample(8, rng, binary=False) for _ in range(10)]
            synth, _ = r.sample(n, rng=seed)
            for mode in ("and", "or"):
                errs.setdefault(f"DPGM k={k}", {}).setdefault(mode, []).append(
                    relative_errors(split.X, synth, workload, mode))
    pub_rng = np.random.default_rng(0)
    for _ in range(args.seeds):
        ref = split.X_public[pub_rng.integers(0, split.X_public.shape[0], n)]
        for mode in ("and", "or"):
            errs.setdefault("public resample", {}).setdefault(mode, []).append(
                relative_errors(split.X, ref, workload, mode))
    for mode in ("and", "or"):
        print(f"\nCounting queries ({mode.upper()}), mean relative error per query-length subset "
              f"(sanity bound {0.001 * n:.2f}), mean over seeds:\n")
        print("| method | 20% | 40% | 60% | 80% | 100% |")
        print("|---|---|---|---|---|---|")
        for name, by_mode in errs.items():
            e = np.mean(np.array(by_mode[mode]), axis=0)
            print(f"| {name} | " + " | ".join(f"{v:.3f}" for v in e) + " |")
    # Speed of one DP-SGD epoch.
    for k in () if args.no_speed else (1, 10):
        a = argparse.Namespace(**{**vars(args), "epochs": 1.0})
        r, dt = train(split, k, a, 0)
        print(f"\nspeed: one DP-SGD epoch, k = {k}: wall {r.extra['train_seconds']:.2f} s, CPU "
              f"{r.extra['train_cpu_seconds']:.2f} s for {r.steps_run} steps (whole call incl. k-means and "
              f"accounting {dt:.2f} s); load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    if args.png:
        rng = np.random.default_rng(5)
        real = [split.X[rng.choice(n, 8, replace=False)] for _ in range(10)]
        save_grid(args.png.replace(".png", "_real.png"), real)
        save_grid(args.png.replace(".png", "_k10.png"), grids[10])
        save_grid(args.png.replace(".png", "_k1.png"), grids[1])
        print(f"\nsaved {args.png.replace('.png', '_{real,k10,k1}.png')}")


if __name__ == "__main__":
    main()
