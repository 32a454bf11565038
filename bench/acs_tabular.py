"""DPGM on tabular data, as the Generate page runs it on the Data page's dataset (issue 14).

Data: `fig6_blobs(3000, k=4, rng=1)` (2 columns, 4 blobs); 15% declared PUBLIC (seed 0), whose
per-column range (±5%) is the box that scales every row to [0, 1]; DPGM on the other 2,550 rows with
the page's settings (L = 64, σ_K = 3, σ_C = 4, T_K = 5, d = 50, lr 3e-3, σ_G calibrated to ε = 10 at
δ = 1e-5). Synthetic rows: decoder means at random latent points, mapped back to the data's units.

Quality (NON-private evaluation): k-means++ fitted on the synthetic rows, its cost on the REAL
private rows divided by the cost of k-means++ fitted on the real rows (1 = as good), and the
per-column standard deviation of synthetic vs real rows.

    PYTHONPATH=. .venv/bin/python bench/acs_tabular.py           # k ∈ {1, 4}, 5 and 20 epochs
    PYTHONPATH=. .venv/bin/python bench/acs_tabular.py --quick   # 5 epochs only
"""

from __future__ import annotations

import argparse
import os
import time

from sklearn.cluster import KMeans

from dpviz.data import fig6_blobs
from dpviz.generative import AcsSetting, DPGMParams, calibrate_sigma_g, dpgm
from dpviz.generative.data import tabular_split
from dpviz.metrics import kmeans_cost

EPS, DELTA, BATCH = 10.0, 1e-5, 64


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="5 epochs only")
    args = ap.parse_args()
    ds = fig6_blobs(3000, k=4, rng=1)
    split, box = tabular_split(ds.X, 0.15, rng=0)
    n = split.X.shape[0]
    real = box.decode(split.X)
    ref = kmeans_cost(real, KMeans(4, n_init=3, random_state=0).fit(real).cluster_centers_)
    print(f"{n} private rows, {split.X_public.shape[0]} public; target ε = {EPS:g}, δ = {DELTA:g}\n")
    print("| k | epochs | ε (account) | real cost at synthetic k-means / non-private | synthetic sd "
          "| real sd "
          "| CPU s |")
    print("|---|---|---|---|---|---|---|")
    for k in (1, 4):
        for epochs in ((5,) if args.quick else (5, 20)):
            s = AcsSetting(sigma_C=4.0, sigma_K=3.0, sigma_G=1.0, q=BATCH / n, T_K=5 if k > 1 else 0,
                           epochs=epochs, delta=DELTA)
            p = DPGMParams(k=k, T_K=5, sigma_K=3.0, sigma_C=4.0, sigma_G=calibrate_sigma_g(s, EPS, k=k),
                           batch_size=float(BATCH), epochs=float(epochs), lr=3e-3, n_features=50)
            c = time.process_time()
            res = dpgm(split.X, params=p, public_init=split.public_init(k, rng=0) if k > 1 else None,
                       n_declared=n, delta=DELTA, rng=0, X_public=split.X_public)
            cpu = time.process_time() - c
            S = box.decode(res.sample(n, rng=0, binary=False)[0])
            C = KMeans(4, n_init=3, random_state=0).fit(S).cluster_centers_
            print(f"| {k} | {epochs} | {res.account.eps:.3g} ({res.account.guarantee}) | "
                  f"{kmeans_cost(real, C) / ref:.2f} | {S.std(0).round(3).tolist()} | "
                  f"{real.std(0).round(3).tolist()} | {cpu:.1f} |", flush=True)
    print(f"\nload average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")


if __name__ == "__main__":
    main()
