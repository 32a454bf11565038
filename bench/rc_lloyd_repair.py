"""Exploration only (issue 44, fifth stop): can a private choice remove ``rc_lloyd``'s merged mode?

Calibration tables only: the five recipe tables of ``bench/rc_lloyd_variants.py`` (data seed 301)
and the iris-sized corner (n ≤ 300, d ≤ 13) of ``bench/auto_calibrate.py``'s two small-table
designs (their own data seeds 201 and 202). Never iris, wine, breast cancer, digits or a held-out
table. Each variant below is ρ-zCDP and books every spend on a ledger that is checked to sum to
exactly the run's ρ (the script fails otherwise); none is shipped.

* ``base``: the fifth stop's shipped ``rc_lloyd`` (gauss_fit start at 0.3·ρ, axis split, 8 steps;
  ``start="gauss"`` since the sixth stop made the sign start the default).
* ``repair``: after step 2 of 8, the exponential mechanism chooses among the current centers and
  the *split candidates* built from released values only: for each center j of the closest
  released pair and each other center i, and each of gauss_fit's two top released axes v,
  c_j ← c_i + R₀·v and c_i ← c_i − R₀·v (center j leaves a cluster two centers share and splits
  the one center i may serve for two). The score is ``best_of``'s capped k-means cost
  (:func:`dpviz.clustering.best_of.clipped_cost`, cap τ = ``clip``·(2Λ)²): one row moves every
  score by ≤ τ, so Δ = τ; the mechanism is ε_s-bounded-range, hence ε_s²/8-zCDP (Cesar & Rogers
  2021, Lemma 3.2), ε_s = √(8·s·ρ). Budget: 0.3·ρ start + 8 steps of (1 − 0.3 − s)·ρ/8 + s·ρ
  selection = ρ (sequential composition, Bun & Steinke 2016, Lemma 2.3); the candidates read only
  releases (post-processing).
* ``restarts``: the start is shared; two step sequences (the second from the collapsed start split
  along the axes in reverse order) each at half the per-step budget; the exponential mechanism on
  the same capped cost picks one final answer. Budget 0.3·ρ + 2·8·(0.7 − s)·ρ/16 + s·ρ = ρ.
* ``--signals``: instead, for ``base`` only, what a *free* repair (post-processing of released
  centers and counts) could read: the median over merged and over whole draws of the closest
  released pair's distance (÷ Λ) and of the last step's smallest noisy count (÷ n). If they do not
  differ, no rule on released values can tell a merged answer from a whole one. And the gap between
  the medians of the capped cost of merged and whole answers, in units of the selection's noise
  scale 2τ/ε_s (at ``--share``, ``--clip``): the signal a private choice has to see.
* ``…-oracle``: the same candidates chosen by their exact (non-private) capped cost: a ceiling that
  says whether the candidate set could help at all, never a private method.

Each draw of each variant reads its algorithm stream ``harness:variants:<row>:<ε>:draw<j>`` (the
data's and the reference's streams are separate). "merged": two reference centers have the same
nearest answer center (``bench/rc_lloyd_modes.py``).

    PYTHONPATH=. .venv/bin/python bench/rc_lloyd_repair.py --draws 100
"""

from __future__ import annotations

import argparse
from collections.abc import Callable

import numpy as np

import dpviz
import dpviz.clustering.rc_lloyd as rl
from bench.auto_calibrate import recipe_row
from bench.harness import DELTA, excess_loss, stream
from bench.rc_lloyd_modes import covered
from bench.rc_lloyd_variants import CELLS, SEED
from dpviz.clustering.best_of import clipped_cost, score_sensitivity
from dpviz.clustering.gauss_fit import gauss_fit
from dpviz.data.bounds import clip_to_ball
from dpviz.metrics import reference_kmeans
from dpviz.privacy.accounting import bounded_range_eps
from dpviz.privacy.budget import ZCDP
from dpviz.privacy.ledger import Ledger
from dpviz.privacy.mechanisms import exponential_zcdp, gaussian

#: The iris-sized corner (n ≤ 300, d ≤ 13) of auto_calibrate's small-table designs, with their data seeds.
DESIGN_CELLS = ((("table_heavy", 147, 4, 4), 201), (("table_unbalanced", 104, 2, 4), 201),
                (("table_aniso", 284, 6, 10), 201), (("table_balanced", 188, 2, 3), 202),
                (("table_aniso", 154, 4, 5), 202), (("table_heavy", 135, 6, 2), 202),
                (("table_balanced", 222, 2, 5), 202), (("table_unbalanced", 132, 13, 4), 202),
                (("table_aniso", 129, 9, 6), 202))
START_SHARE, ITERS, REPAIR_AT, AXES = 0.3, 8, 2, 2


def split_candidates(C: np.ndarray, axes: np.ndarray, scale: float) -> list[np.ndarray]:
    """The current centers, then for j in the closest pair, i ≠ j, v in ``axes``' columns:
    c_j ← c_i + scale·v, c_i ← c_i − scale·v (released values only)."""
    k = C.shape[0]
    D = ((C[:, None] - C[None]) ** 2).sum(-1)
    D[np.diag_indices(k)] = np.inf
    out = [C]
    for j in np.unravel_index(np.argmin(D), D.shape):
        for i in np.flatnonzero(np.arange(k) != j):
            for v in axes.T:
                c = C.copy()
                c[j], c[i] = C[i] + scale * v, C[i] - scale * v
                out.append(c)
    return out


def steps(Xc: np.ndarray, C: np.ndarray, radius: float, radii: np.ndarray, rho_step: float,
          gen: np.random.Generator, ledger: Ledger,
          hook: Callable[[int, np.ndarray], np.ndarray] | None = None) -> np.ndarray:
    """rc_lloyd's steps (displacement sums and counts, count share 0.2), ``hook(t, C)`` before step t."""
    rho_sum, rho_count = 0.8 * rho_step, 0.2 * rho_step
    k = C.shape[0]
    for t, R in enumerate(radii):
        C = hook(t, C) if hook is not None else C
        _, sums, counts = rl.clipped_displacements(Xc, C, float(R))
        node = ledger.child(f"step {t + 1}", ZCDP(rho_step))
        ns = node.child("sums", ZCDP(rho_sum), composition="parallel")
        nc = node.child("counts", ZCDP(rho_count), composition="parallel")
        S = np.stack([gaussian(sums[j], sensitivity=float(R), rho=rho_sum, rng=gen, ledger=ns, name=f"s{j}")
                      for j in range(k)])  # loop over clusters (parallel composition)
        n_hat = np.array([gaussian(counts[j], sensitivity=1.0, rho=rho_count, rng=gen, ledger=nc,
                                   name=f"n{j}") for j in range(k)])
        ok = n_hat >= rl.MIN_COUNT
        C = C.copy()
        C[ok] = clip_to_ball(C[ok] + clip_to_ball(S[ok] / n_hat[ok, None], float(R)), radius)
    return C


def pick(Xc: np.ndarray, cands: list[np.ndarray], radius: float, clip: float, rho: float,
         gen: np.random.Generator, ledger: Ledger | None) -> int:
    """The exponential mechanism on −capped cost at ρ (books itself); ``ledger=None``: the oracle argmin."""
    costs = np.array([clipped_cost(Xc, c, radius, clip) for c in cands])
    if ledger is None:
        return int(np.argmin(costs))
    return exponential_zcdp(-costs, sensitivity=score_sensitivity(radius, clip), rho=rho, rng=gen,
                            ledger=ledger, name="selection")


def variant(X: np.ndarray, k: int, rho: float, radius: float, gen: np.random.Generator, kind: str,
            share: float, clip: float) -> tuple[np.ndarray, bool, Ledger]:
    """(centers, whether a non-default candidate was chosen, ledger) of ``kind`` ∈ {repair,
    restarts}[-oracle]; the ledger is checked to book exactly ρ (the oracle's selection is not
    private and books nothing, so its ledger holds (1 − share)·ρ)."""
    oracle = kind.endswith("-oracle")
    ledger = Ledger(kind, ZCDP(rho, 0.0))
    sel = None if oracle else ledger
    start = gauss_fit(X, k, rho=START_SHARE * rho, radius=radius, n_declared=X.shape[0], rng=gen)
    ledger.children.append(start.ledger)
    radii = rl.step_radii(radius, 0.2, 0.8, ITERS)
    axes = start.find("gaussian_fit").data["axes"]
    C0 = np.asarray(start.centers, dtype=np.float64)
    Xc = clip_to_ball(X, radius)
    rho_steps = (1.0 - START_SHARE - share) * rho
    chosen = 0
    if kind.startswith("repair"):
        def hook(t: int, C: np.ndarray) -> np.ndarray:
            nonlocal chosen
            if t != REPAIR_AT:
                return C
            cands = split_candidates(C, axes[:, :AXES], float(radii[0]))
            chosen = pick(Xc, cands, radius, clip, share * rho, gen, sel)
            return cands[chosen]
        C = steps(Xc, rl.split_coincident(C0, 0.5 * float(radii[0]), axes)[0], radius, radii,
                  rho_steps / ITERS, gen, ledger.child("steps"), hook)
    else:
        finals = [steps(Xc, rl.split_coincident(C0, 0.5 * float(radii[0]), a)[0], radius, radii,
                        rho_steps / (2 * ITERS), gen, ledger.child(f"sequence {r + 1}"))
                  for r, a in enumerate((axes, axes[:, ::-1]))]
        chosen = pick(Xc, finals, radius, clip, share * rho, gen, sel)
        C = finals[chosen]
    ledger.check()
    spent = ledger.total().rho + (share * rho if oracle else 0.0)
    if abs(spent - rho) > 1e-9 * rho:
        raise RuntimeError(f"{kind} booked ρ = {spent!r}, not {rho!r}")
    return C, chosen > 0, ledger


def split_medians(a: np.ndarray, merged: np.ndarray) -> str:
    """"median over merged draws / median over whole draws" (– for an empty group)."""
    return " / ".join(f"{np.median(a[s]):.3g}" if s.any() else "–" for s in (merged, ~merged))


def signals(cells: list, draws: int, share: float, clip: float) -> None:
    """The ``--signals`` table (module docstring)."""
    print(f"{draws} draws of rc_lloyd per cell; median over merged / whole draws\n")
    print("| cell (data seed) | ε | merged | closest released pair ÷ Λ | smallest noisy count ÷ n | "
          "capped-cost gap ÷ selection noise scale |\n|---|---|---|---|---|---|")
    for (recipe, n, d, k), seed in cells:
        row = recipe_row(recipe, n, d, k)
        X, k, radius = row.data(seed)
        ref = reference_kmeans(X, k, rng=stream(seed, "reference", row.name))
        for eps in (1.0, 3.0):
            merged, gap, low, cost = [], [], [], []
            for j in range(draws):
                res = dpviz.run("rc_lloyd", X, k, epsilon=eps, delta=DELTA, radius=radius, n_declared=n,
                                start="gauss", rng=stream(seed, "variants", row.name, f"{eps:g}", f"draw{j}"))
                D = np.sqrt(((res.centers[:, None] - res.centers[None]) ** 2).sum(-1))
                merged.append(covered(ref.centers, res.centers) < k)
                gap.append(D[np.triu_indices(k, 1)].min() / radius)
                low.append(min([s for s in res.trace if s.name == "rc_step"][-1].data["noisy_counts"]) / n)
                cost.append(clipped_cost(clip_to_ball(X, radius), res.centers, radius, clip))
            m = np.array(merged)
            g, c = (split_medians(np.array(a), m) for a in (gap, low))
            a = np.array(cost)
            scale = 2 * score_sensitivity(radius, clip) / bounded_range_eps(share * res.params["rho"])
            snr = (np.median(a[m]) - np.median(a[~m])) / scale if m.any() and (~m).any() else np.nan
            print(f"| {row.name} ({seed}) | {eps:g} | {m.mean():.0%} | {g} | {c} | {snr:.2g} |", flush=True)


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--draws", type=int, default=100)
    ap.add_argument("--share", type=float, default=0.1, help="the selection's share of ρ")
    ap.add_argument("--clip", type=float, default=0.0625, help="score cap as a fraction of (2Λ)²")
    ap.add_argument("--signals", action="store_true", help="the released-value signals of base (docstring)")
    args = ap.parse_args(argv)
    cells = [(c, SEED) for c in CELLS] + list(DESIGN_CELLS)
    if args.signals:
        signals(cells, args.draws, args.share, args.clip)
        return
    kinds = ("base", "repair", "restarts", "repair-oracle", "restarts-oracle")
    print(f"{args.draws} draws per cell; selection share {args.share:g}, score cap {args.clip:g}·(2Λ)²; "
          "loss median / p90, share of draws merged, share choosing a non-default candidate\n")
    print("| cell (data seed) | ε | " + " | ".join(kinds) + " |\n|---|---|" + "---|" * len(kinds))
    tally = {kind: [0, 0, 0] for kind in kinds[1:]}  # p90 lower, median ≤ 1.1× base, cells
    for (recipe, n, d, k), seed in cells:
        row = recipe_row(recipe, n, d, k)
        X, k, radius = row.data(seed)
        ref = reference_kmeans(X, k, rng=stream(seed, "reference", row.name))
        for eps in (1.0, 3.0):
            rho = dpviz.run("rc_lloyd", X, k, epsilon=eps, delta=DELTA, radius=radius, n_declared=n,
                            rng=0).params["rho"]
            out, base = [], (0.0, 0.0)
            for kind in kinds:
                loss, merged, moved = [], [], []
                for j in range(args.draws):
                    gen = stream(seed, "variants", row.name, f"{eps:g}", f"draw{j}")
                    if kind == "base":
                        C, m = dpviz.run("rc_lloyd", X, k, epsilon=eps, delta=DELTA, radius=radius,
                                         n_declared=n, start="gauss", rng=gen).centers, False
                    else:
                        C, m, _ = variant(X, k, rho, radius, gen, kind, args.share, args.clip)
                    loss.append(excess_loss(X, C, ref.cost))
                    merged.append(covered(ref.centers, C) < k)
                    moved.append(m)
                med, q90 = float(np.median(loss)), float(np.percentile(loss, 90))
                if kind == "base":
                    base = (med, q90)
                else:
                    t = tally[kind]
                    t[0] += q90 < base[1]
                    t[1] += med <= 1.1 * base[0]
                    t[2] += 1
                out.append(f"{med:.3g} / {q90:.3g}, {np.mean(merged):.0%}, {np.mean(moved):.0%}")
            print(f"| {row.name} ({seed}) | {eps:g} | " + " | ".join(out) + " |", flush=True)
    print()
    for kind, (lower, kept, cells) in tally.items():
        print(f"{kind}: p90 below base on {lower}/{cells} cells; median ≤ 1.1× base on {kept}/{cells}")


if __name__ == "__main__":
    main()
