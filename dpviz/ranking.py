"""Compare's ranking: a summary of the whole ε range, each cell's spread, ties shown as ties.

Issue 43: a ranking by the median at one ε over 3–5 runs put a method that fails at every smaller
ε above one that never fails. The rule here reads every ε of a sweep (:func:`dpviz.sweeps.sweep`):

1. **Reach**: the smallest row-level ε of the sweep at which the method's median normalized loss
   1 − X/Y (Tsfadia et al. 2022, §6.2) is at most :data:`TARGET_LOSS` (∞ when no ε reaches it).
   A smaller reach is better: the method is useful at a smaller budget.
2. **Mean loss over the range** (the tie-break): the area under the median curve over log ε
   (trapezoids), divided by the range's log width: the average median loss across the budgets
   compared (one ε: its median). A cell the method cannot run ("cannot meet" the target, or
   refused) counts as no answer, loss 1.
3. **Ties**: methods with the same reach whose mean losses lie within :data:`TIE_LOSS` of the
   best of their group share one rank ("1=", "1="); the next rank skips (competition ranking).

Each cell is shown as its median with its q10–q90 spread over the draws, and a median that
rises with ε by more than :data:`RISE_LOSS` carries a note with both cells' spreads: a rising
median is almost always a bimodal cell (some draws merge clusters), not a method that gets worse
with more budget, and the spread says which.

Everything here is a pure function of a sweep frame (a simulation: non-private diagnostics of
seeded runs, never a release).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd

from dpviz.sweeps import REFERENCE, summarize

#: A method "reaches" an ε when its median normalized loss there is at most this.
TARGET_LOSS = 0.1
#: Methods with the same reach whose mean losses over the range differ by at most this tie.
TIE_LOSS = 0.01
#: A median that rises by more than this from a smaller ε to a larger one gets a note.
RISE_LOSS = 0.05
#: The spread shown for every cell: the 10% and 90% quantiles of its draws.
SPREAD = (0.1, 0.9)


@dataclass(frozen=True)
class Rule:
    """The ranking rule's constants (the page states them in words: :func:`rule_text`)."""

    target: float = TARGET_LOSS
    tie: float = TIE_LOSS
    rise: float = RISE_LOSS


def rule_text(rule: Rule = Rule()) -> str:
    """The rule in words, for the page."""
    return (f"Ranked by the smallest row-level ε at which the method's median normalized loss is "
            f"at most {rule.target:g} (its *reach*; a smaller reach is better); a tie on reach is "
            f"broken by the mean of the median loss over the whole ε range (log scale). Methods "
            f"with the same reach and mean losses within {rule.tie:g} of each other are tied and "
            "share a rank (shown as “2=”). A cell a method cannot run counts as loss 1.")


def reach(epsilons: np.ndarray, medians: np.ndarray, target: float = TARGET_LOSS) -> float:
    """The smallest ε whose median is ≤ ``target`` (inf if none); NaN medians never reach."""
    ok = np.asarray(medians, dtype=float) <= target
    return float(np.min(np.asarray(epsilons, dtype=float)[ok])) if ok.any() else math.inf


def mean_loss(epsilons: np.ndarray, medians: np.ndarray) -> float:
    """The area under the median curve over log ε divided by the range's log width (the mean
    median loss across the range); a NaN median (a cell not run) counts as 1."""
    e = np.asarray(epsilons, dtype=float)
    order = np.argsort(e)
    e = e[order]
    m = np.nan_to_num(np.asarray(medians, dtype=float)[order], nan=1.0)
    if e.size == 1:
        return float(m[0])
    x = np.log(e)
    return float(np.sum((m[1:] + m[:-1]) / 2 * np.diff(x)) / (x[-1] - x[0]))


def tie_groups(keys: list[tuple[float, float]], tie: float = TIE_LOSS) -> list[int]:
    """Competition ranks (1-based) of ``keys`` = (reach, mean loss), already sorted best first: a
    key ties the first of its group when it has the same reach and a mean loss within ``tie``."""
    ranks: list[int] = []
    lead = None
    for i, (r, m) in enumerate(keys):
        if lead is not None and r == lead[1] and m - lead[2] <= tie + 1e-12:
            ranks.append(lead[0])
            continue
        lead = (i + 1, r, m)
        ranks.append(i + 1)
    return ranks


def _rise_note(eps: list[float], med: list[float], lo: list[float], hi: list[float], rise: float) -> str:
    """A note when the median rises with ε: the largest rise and both cells' spreads."""
    pairs = [(med[j] - med[i], i, j) for i in range(len(eps)) for j in range(i + 1, len(eps))
             if np.isfinite(med[i]) and np.isfinite(med[j]) and med[j] - med[i] > rise]
    if not pairs:
        return ""
    _, i, j = max(pairs, key=lambda t: (t[0], -t[1]))  # the largest rise, from the smallest ε
    wide = " (a wide spread: some draws fail, others do not)" if hi[j] - lo[j] > 0.5 else ""
    return (f"median rises with ε ({med[i]:.2f} at ε = {eps[i]:g} → {med[j]:.2f} at ε = {eps[j]:g}); "
            f"its draws spread q10–q90 {lo[i]:.2f}–{hi[i]:.2f} and {lo[j]:.2f}–{hi[j]:.2f}{wide}. More "
            "budget does not make a method worse: read the spread, not the median alone")


def short(v: float) -> str:
    """A loss to two decimals without trailing zeros (0.00 → "0", 0.10 → "0.1", 0.756 → "0.76")."""
    text = f"{v:.2f}".rstrip("0").rstrip(".")
    return "0" if text in ("", "-0") else text


def cell_text(median: float, lo: float, hi: float) -> str:
    """One cell: the median and its q10–q90 spread ("0.76 (0.75–0.96)", "0 (0–0.01)"); "—" when
    not run."""
    if not np.isfinite(median):
        return "—"
    return f"{short(median)} ({short(lo)}–{short(hi)})"


def rank_methods(frame: pd.DataFrame, *, metric: str = "loss", rule: Rule = Rule()) -> pd.DataFrame:
    """The private methods of an ε sweep ranked by :func:`rule_text`'s rule, one row each.

    Columns: ``rank`` ("1", "2=", …), ``method`` (its title), ``algorithm``, ``reach`` (ε or inf),
    ``mean loss``, ``runs`` (the fewest draws in any of its cells), one ``"ε = <v>"`` column per ε
    (:func:`cell_text`: median and q10–q90), and ``note`` (a rising median, else ""). The
    non-private reference's median is a last row (rank "—"). ``attrs["tied"]`` lists the tied
    groups (sets of titles), ``attrs["rule"]`` the rule.
    """
    qlo, qhi = (f"q{100 * q:g}" for q in SPREAD)
    summ = summarize(frame, metric=metric, quantiles=SPREAD)
    cols = ["rank", "method", "algorithm", "reach", "mean loss", "runs"]
    if summ.empty:
        return pd.DataFrame(columns=[*cols, "note"])
    priv = summ[summ["private"].astype(bool)]
    eps = sorted(float(e) for e in priv["epsilon"].unique())
    rows = []
    for name, g in priv.groupby("algorithm", sort=False):
        g = g.set_index(g["epsilon"].astype(float)).reindex(eps)
        med, lo, hi = (g[c].to_numpy(float) for c in ("median", qlo, qhi))
        rows.append({
            "method": str(priv.loc[priv["algorithm"] == name, "title"].iloc[0]), "algorithm": name,
            "reach": reach(np.array(eps), med, rule.target), "mean loss": mean_loss(np.array(eps), med),
            "runs": int(np.nanmin(g["runs"].to_numpy(float))) if g["runs"].notna().any() else 0,
            **{f"ε = {e:g}": cell_text(m, a, b) for e, m, a, b in zip(eps, med, lo, hi, strict=True)},
            "note": _rise_note(eps, list(med), list(lo), list(hi), rule.rise)})
    rows.sort(key=lambda r: (r["reach"], r["mean loss"], r["method"]))
    ranks = tie_groups([(r["reach"], r["mean loss"]) for r in rows], rule.tie)
    counts = {k: ranks.count(k) for k in ranks}
    for r, k in zip(rows, ranks, strict=True):
        r["rank"] = f"{k}=" if counts[k] > 1 else str(k)
    ref = summ[~summ["private"].astype(bool)]
    for _, r in ref.iterrows():
        title = str(r["title"])
        rows.append({"rank": "—", "method": title if "non-private" in title else f"{title} ({REFERENCE})",
                     "algorithm": r["algorithm"], "reach": math.nan, "mean loss": float(r["median"]),
                     "runs": int(r["runs"]),
                     **{f"ε = {e:g}": cell_text(float(r["median"]), float(r[qlo]), float(r[qhi]))
                        for e in eps}, "note": "no privacy: the same at every ε"})
    out = pd.DataFrame(rows, columns=[*cols, *(f"ε = {e:g}" for e in eps), "note"])
    out.attrs["rule"] = rule
    out.attrs["tied"] = [set(out.loc[out["rank"] == f"{k}=", "method"]) for k in sorted(set(ranks))
                         if counts[k] > 1]
    return out
