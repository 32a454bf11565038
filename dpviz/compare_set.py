"""Compare's default methods: a public rule from the data's declared shape (issue 43).

The set depends on public inputs only — the declared n, the dimension d, k, the compared row-level
ε range, δ and the user's target ε — never on the rows, and is, in this order:

1. ``auto`` (the public choice rule, :mod:`dpviz.clustering.auto`);
2. the registered methods the calibration rates best for this shape: at each ε of the range, the
   :data:`PER_EPS` labels with the least risk regret on the nearest calibration cells
   (:func:`dpviz.clustering.auto.choose_from`, each after removing the ones before it); of these,
   the :data:`MOST` that are in the top at the most ε (ties: the better rank at the smallest ε);
3. every method Data's Check can name for this shape: Data's Check
   (:func:`dpviz.triage.clustering_verdict`) names ``auto``'s choice at one ε of
   :data:`dpviz.triage.SOUND_EPS` or at the target ε, at δ = :func:`dpviz.triage.sound_delta`;
   all of those are in, so the method it names is always compared;
4. FriendlyCore (Tsfadia et al. 2022), the paper this app teaches;
5. one classic baseline, :data:`CLASSIC` (DP-Lloyd: Blum, Dwork, McSherry, Nissim 2005; Su et al.
   2016), and the non-private k-means++ reference (not ranked: the line every curve is read
   against).
"""

from __future__ import annotations

from collections.abc import Sequence

from dpviz.clustering.auto import choose, choose_from
from dpviz.registry import algorithms
from dpviz.triage import MAX_SOUND_EPS, SOUND_EPS, sound_delta

#: How many of the calibration's best labels are read at each ε.
PER_EPS = 2
#: How many of the calibration's best methods the set keeps (besides those Data's Check names).
MOST = 3
#: The classic baseline every default comparison shows.
CLASSIC = "dp_lloyd"
#: The paper's method and the non-private reference.
FRIENDLYCORE, REFERENCE_NAME, AUTO = "friendlycore", "kmeans++", "auto"


def calibrated_best(n: int, d: int, k: int, epsilons: Sequence[float], delta: float) -> list[str]:
    """Rule 2: the :data:`MOST` registered methods most often among the calibration's
    :data:`PER_EPS` best for (n, d, k) over ``epsilons``."""
    pool = tuple(s.name for s in algorithms(applicable_to=d) if s.is_private and s.name != AUTO)
    seen: dict[str, tuple[int, float, int]] = {}  # name → (−times in the top, first rank, order)
    for e in sorted(epsilons):
        rest = pool
        for place in range(PER_EPS):
            try:
                name = choose_from(rest, n, d, k, float(e), delta).algorithm
            except ValueError:  # no calibrated method left for this shape
                break
            times, first, order = seen.get(name, (0, place, len(seen)))
            seen[name] = (times - 1, min(first, place), order)
            rest = tuple(a for a in rest if a != name)
    return sorted(seen, key=lambda a: seen[a])[:MOST]


def named_by_check(n: int, d: int, k: int, delta: float, target_eps: float) -> list[str]:
    """Rule 3: every method Data's Check can name for this shape (its ε grid and the target)."""
    grid = sorted({*SOUND_EPS, *([float(target_eps)] if target_eps <= MAX_SOUND_EPS else [])})
    dl = sound_delta(delta, n)
    return list(dict.fromkeys(choose(n, d, k, e, dl).algorithm for e in grid))


def default_methods(n: int, d: int, k: int, epsilons: Sequence[float], delta: float,
                    target_eps: float) -> list[str]:
    """Compare's default methods for the declared shape (the module docstring's rule), registry
    names in the order shown; only methods registered for d."""
    served = {s.name for s in algorithms(applicable_to=d)}
    picks = [AUTO, *calibrated_best(n, d, k, epsilons, delta),
             *named_by_check(n, d, k, delta, target_eps), FRIENDLYCORE, CLASSIC, REFERENCE_NAME]
    return [a for a in dict.fromkeys(picks) if a in served]


def rule_text() -> str:
    """The rule in words, for the page."""
    return (f"The default methods follow from the data's declared shape (n, d, k) and the ε range, "
            f"never from the rows: `auto`; the {MOST} registered methods the public calibration "
            f"most often rates among its {PER_EPS} best over the range; every method Data's Check "
            "can name for this shape; FriendlyCore; one classic baseline (DP-Lloyd); and the "
            "non-private k-means++ reference.")
