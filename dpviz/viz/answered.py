"""Who answered a run: the algorithm's own private structure, its backup, or nobody (⊥).

Every label that names an algorithm next to released centers (Explore's panel and tiles, Present's
two sides, Compare's and Budget's hovers, the exports) reads :func:`answered_by`, so a run whose
own structure did not form (FriendlyCore's core) is never titled with the algorithm's name alone
when its backup (the private grid coreset) released the centers (issue 33, item 4).

Read from the released trace only: the spec's ``structure_step`` (``AlgorithmSpec.structure_ok``)
and the fallback step's ``used`` bit and ``method``, both private outputs of the run.
"""

from __future__ import annotations

from typing import Any

import pandas as pd

from dpviz.registry import GRID_CORESET, Answer, answered_by, backup_name


def _base(name: Any) -> str:
    return str(name).split("|")[0]


def answered_texts(frame: pd.DataFrame, axis: str) -> dict[tuple[str, float], str]:
    """Per (algorithm, budget on ``axis``): who answered its runs, from the frame's ``answered_by``
    column, e.g. "answered by: grid coreset (FriendlyCore clustering's backup) in 5 of 8 runs,
    FriendlyCore clustering in 3". Split lines ("…|alone", "…|with fallback") read their base
    algorithm's runs. Runs that did not happen (refused, infeasible) and frames stored before the
    column existed give no text."""
    if frame.empty or "answered_by" not in frame:
        return {}
    out: dict[tuple[str, float], str] = {}
    known = frame[frame["answered_by"].notna()]  # runs that happened (not refused, not infeasible)
    f = known.assign(_base=known["algorithm"].map(_base), _who=known["answered_by"].astype(str))
    for (name, x), g in f.groupby(["_base", axis], sort=False):
        counts = g["_who"].value_counts()
        n = len(g)
        parts = [f"{who} in {int(c)}" + (f" of {n} runs" if i == 0 else "")
                 for i, (who, c) in enumerate(counts.items())]
        out[(str(name), float(x))] = "answered by: " + ", ".join(parts)
    return out


def answered_text(texts: dict[tuple[str, float], str], name: Any, x: Any) -> str:
    """The hover line of one point (empty when unknown)."""
    try:
        return texts.get((_base(name), float(x)), "")
    except (TypeError, ValueError):
        return ""


__all__ = ["GRID_CORESET", "Answer", "answered_by", "answered_text", "answered_texts", "backup_name"]
