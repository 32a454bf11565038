"""Algorithms 1 and 2: the private hierarchical partition and the candidate set of random shifts.

Balcan, Dick, Liang, Mou, Zhang, ICML 2017, §4.1 (Alg. 1 ``private_partition``) and §4.2 (Alg. 2
``candidate``); engineer's note §3.1–3.2, §8.1.

Algorithm 1 splits every active cube into its 2^p children and activates a child with probability
f(m) = P[m + Lap(1/ε′) > γ], m the child's point count (note §3.1, "noisy-threshold form"). We draw
exactly that: Laplace noise on the vector of counts of the non-empty children (ℓ1 sensitivity 1
under add/remove: one row is in one child per level), and for the empty children — which a pure
ε-DP mechanism must also be able to activate (the authors' code skips them, note §4 item 5) — the
NUMBER of activated empty children per parent, Binomial(2^p − #non-empty, f(0)), then that many
distinct empty children uniformly. The 2^p children are never enumerated.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from dpviz.privacy.budget import ApproxDP
from dpviz.privacy.ledger import Ledger
from dpviz.privacy.mechanisms import laplace

#: Largest expected number of activated empty children per call we agree to sample one by one.
_MAX_EMPTY_DRAWS = 1_000_000


def log_activation_probability(m: np.ndarray | float, eps_level: float, gamma: float) -> np.ndarray:
    """log f(m) of Alg. 1: f(m) = ½·exp(−ε′(γ − m)) if m ≤ γ else 1 − ½·exp(ε′(γ − m)).

    This is P[m + Lap(1/ε′) > γ] exactly (note §3.1); computed in logs since f(0) can be 1e-120.
    """
    m = np.asarray(m, dtype=np.float64)
    z = eps_level * (gamma - m)
    low = math.log(0.5) - np.maximum(z, 0.0)
    high = np.log1p(-0.5 * np.exp(np.minimum(z, 0.0)))
    return np.where(m <= gamma, low, high)


def activation_probability(m: np.ndarray | float, eps_level: float, gamma: float) -> np.ndarray:
    """f(m) of Alg. 1 (see :func:`log_activation_probability`)."""
    return np.exp(log_activation_probability(m, eps_level, gamma))


def sample_empty_count(n_empty: int, log_f0: float, rng: np.random.Generator) -> int:
    """N₀ ~ Binomial(n_empty, f(0)): how many of a cube's empty children activate.

    ``n_empty`` may exceed int64 (2^p − m with p ≈ 90 in the theory profile); then the successes
    are found by geometric skips (the gap to the next success is Geometric(f(0))), which is exact
    and takes about n_empty·f(0) + 1 draws.
    """
    if n_empty <= 0:
        return 0
    f0 = math.exp(log_f0)
    if n_empty < 2**62:
        return int(rng.binomial(int(n_empty), f0))
    if f0 == 0.0:
        return 0
    # Decided on the public number of children 2^p (n_empty = 2^p minus the few non-empty ones),
    # not on n_empty itself, so the refusal does not move with one row.
    if 2.0 ** math.ceil(math.log2(n_empty + 1)) * f0 > _MAX_EMPTY_DRAWS:
        raise ValueError(
            f"The partition would activate about {n_empty * f0:.3g} empty cubes: γ is far too low for "
            f"p = {int(math.log2(n_empty + 1))}. Raise the threshold γ (gamma_mult) or lower p."
        )
    return geometric_skip_count(n_empty, f0, rng)


def geometric_skip_count(n_empty: int, f0: float, rng: np.random.Generator) -> int:
    """Binomial(n_empty, f0) by geometric skips: exact for any n_empty (a Python int), O(n_empty·f0 + 1)."""
    neg_log1m = -math.log1p(-f0)  # > 0
    remaining = float(n_empty)
    count = 0
    while True:
        gap = math.floor(-math.log(1.0 - rng.random()) / neg_log1m) + 1.0  # Geometric(f0) ≥ 1
        if gap > remaining:
            return count
        remaining -= gap
        count += 1


def _row_keys(parent: np.ndarray, bits: np.ndarray) -> np.ndarray:
    """One opaque key per (parent, child-bits) row, for grouping and set membership."""
    packed = np.packbits(bits, axis=1)
    head = parent.astype(">i8").view(np.uint8).reshape(-1, 8)
    raw = np.ascontiguousarray(np.concatenate([head, packed], axis=1))
    return raw.view(np.dtype((np.void, raw.shape[1]))).ravel()


#: Largest p for which a child is keyed by the integer parent·2^p + code (below: always for the
#: practical profile, p ≤ 12); larger p (the theory profile) uses the byte keys of ``_row_keys``.
INT_KEY_MAX_P = 20


def _group_int(parent: np.ndarray, bits: np.ndarray,
               n_parents: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Group rows by (parent cube, child bits) with integer keys, in the same order as sorting
    ``_row_keys`` (parent, then the bits with coordinate 0 most significant): (group parent,
    group bits, row → group, group counts). A bincount over parent·2^p + code when that range is
    small (O(n), no sort), else np.unique on int64 (a numeric sort, ~5× faster than byte keys)."""
    n, p = bits.shape
    code = np.zeros(n, dtype=np.int64)
    for j in range(p):  # loop over the p ≤ INT_KEY_MAX_P coordinates: coordinate 0 most significant
        code |= bits[:, j].astype(np.int64) << (p - 1 - j)
    key = parent.astype(np.int64) * (1 << p) + code
    size = n_parents * (1 << p)
    if size <= 4 * n + 1_000_000:
        full = np.bincount(key, minlength=size)
        uniq = np.flatnonzero(full)
        counts = full[uniq]
        pos = np.empty(size, dtype=np.int64)
        pos[uniq] = np.arange(uniq.size)
        inverse = pos[key]
    else:
        uniq, inverse, counts = np.unique(key, return_inverse=True, return_counts=True)
    g_bits = ((uniq[:, None] >> (p - 1 - np.arange(p))[None, :]) & 1).astype(bool)
    return uniq >> p, g_bits, inverse.ravel(), counts


def _draw_empty_children(
    n_draw: int, p: int, taken: np.ndarray, rng: np.random.Generator
) -> np.ndarray:
    """``n_draw`` distinct child bit-vectors (n_draw, p), uniform among those not in ``taken``."""
    taken_keys = {row.tobytes() for row in np.packbits(taken, axis=1)}
    out: list[np.ndarray] = []
    seen: set[bytes] = set()
    while len(out) < n_draw:
        cand = rng.random((2 * (n_draw - len(out)) + 4, p)) < 0.5
        packed = np.packbits(cand, axis=1)
        for row, key in zip(cand, (packed[i].tobytes() for i in range(packed.shape[0])), strict=True):
            if key in taken_keys or key in seen:
                continue
            seen.add(key)
            out.append(row)
            if len(out) == n_draw:
                break
    return np.array(out, dtype=bool).reshape(n_draw, p)


@dataclass(frozen=True)
class PartitionTree:
    """The output of one call of Alg. 1 (DP-safe: every field is a function of the noisy decisions).

    Attributes
    ----------
    centers : (m, p) array
        The centers of every cube that was active at some level (the candidate set of this call).
    level : (m,) int array
        The depth of each center's cube (0 = the root cube).
    lo, edge : (p,) array, float
        The root cube [lo, lo + edge]^p; a cube at depth a has edge ``edge / 2**a``.
    active_per_level : tuple of int
        How many cubes were active at each depth.
    empty_activated : int
        How many of them were empty children activated by the Binomial draw (privacy at work).
    counts : tuple of (int array, bool array)
        NOT private (debug): per decision round, the true counts of the non-empty children and
        whether each was activated.
    """

    centers: np.ndarray
    level: np.ndarray
    lo: np.ndarray
    edge: float
    active_per_level: tuple[int, ...]
    empty_activated: int
    counts: tuple[tuple[np.ndarray, np.ndarray], ...]


def private_partition(
    Y: np.ndarray,
    *,
    lo: np.ndarray,
    edge: float,
    eps_level: float,
    gamma: float,
    n_rounds: int,
    rng: np.random.Generator,
    ledger: Ledger,
    eps_charge: float | None = None,
) -> PartitionTree:
    """Alg. 1: activate children by noisy count, level by level, from the root cube [lo, lo+edge]^p.

    Parameters
    ----------
    Y : (n, p) array
        Rows inside the root cube (the caller guarantees it; the root is public).
    eps_level : float
        ε′, the budget of one round of decisions (Laplace scale 1/ε′ on the counts).
    gamma : float
        The activation threshold γ.
    n_rounds : int
        Decision rounds; centers of depths 0..n_rounds are output. A round with no active cube
        stops early and its ε′ is recorded as reserved, so every branch spends the same.
    eps_charge : float, optional
        The total this call is accounted for (default n_rounds·ε′); any excess over the rounds'
        spends is recorded as reserved (the theory profile's ε′ = ε/(2 log n) leaves slack).

    Privacy
    -------
    n_rounds·ε′-DP under add/remove of one row: one row is in exactly one child per level, so the
    vector of counts of a level has ℓ1 sensitivity 1 (Laplace, ε′); empty children are decided by
    the same rule (count 0), drawn in aggregate. Alg. 1, Thm 2.

    References
    ----------
    Balcan et al. 2017, §4.1, Alg. 1; engineer's note §3.1 (noisy-threshold form, BFS reading).
    """
    n, p = Y.shape
    log_f0 = float(log_activation_probability(0.0, eps_level, gamma))
    n_children = 2**p  # Python int: exact for any p
    active = np.zeros((1, p), dtype=np.int64)  # cube indices at the current depth
    alive = np.arange(n)
    cube_of = np.zeros(n, dtype=np.int64)
    centers = [lo + 0.5 * edge]
    levels = [0]
    per_level = [1]
    empty_total = 0
    debug: list[tuple[np.ndarray, np.ndarray]] = []
    rounds_done = 0
    for a in range(n_rounds):
        if active.shape[0] == 0:
            break
        e_a = edge / 2.0**a
        mids = lo + (active + 0.5) * e_a  # (m, p) centers of the active cubes
        bits = Y[alive] >= mids[cube_of]
        if p <= INT_KEY_MAX_P:
            g_parent, g_bits, inverse, counts = _group_int(cube_of, bits, active.shape[0])
            uniq = g_parent
        else:
            keys = _row_keys(cube_of, bits)
            uniq, first, inverse, counts = np.unique(keys, return_index=True, return_inverse=True,
                                                     return_counts=True)
            g_parent = cube_of[first]
            g_bits = bits[first]
        noisy = laplace(counts.astype(np.float64), sensitivity=1.0, eps=eps_level, rng=rng,
                        ledger=ledger, name=f"level {a + 1} counts",
                        note=f"noisy counts of the non-empty children; activate iff > γ={gamma:.4g}; "
                             "empty children decided by the same rule in aggregate (Binomial)")
        rounds_done += 1
        on = np.asarray(noisy) > gamma
        debug.append((counts.astype(np.int64), on))
        nonempty = np.bincount(g_parent, minlength=active.shape[0])
        new_parts = [2 * active[g_parent[on]] + g_bits[on]]
        if n_children < 2**62:
            n_empty = rng.binomial(n_children - nonempty, math.exp(log_f0))
        else:
            n_empty = [sample_empty_count(n_children - int(c), log_f0, rng) for c in nonempty]
        for j in np.flatnonzero(n_empty):  # active cubes with an activated empty child (rare)
            n0 = int(n_empty[j])
            if n0:
                taken = g_bits[g_parent == j]
                new_parts.append(2 * active[j] + _draw_empty_children(n0, p, taken, rng))
                empty_total += n0
        new_active = np.concatenate(new_parts, axis=0) if new_parts else np.zeros((0, p), np.int64)
        # Rows in activated non-empty children stay alive; their new cube is that child's position.
        group_pos = np.full(uniq.shape[0], -1, dtype=np.int64)
        group_pos[on] = np.arange(int(on.sum()))
        keep = on[inverse]
        alive = alive[keep]
        cube_of = group_pos[inverse[keep]]
        active = new_active
        if active.shape[0]:
            centers.extend(lo + (active + 0.5) * (edge / 2.0 ** (a + 1)))
            levels.extend([a + 1] * active.shape[0])
        per_level.append(int(active.shape[0]))
    unused = (n_rounds - rounds_done) * eps_level
    if eps_charge is not None:
        unused = eps_charge - rounds_done * eps_level
    if unused > 0:
        ledger.record("reserved (rounds not run)", "reserved", ApproxDP(unused),
                      note="accounted on every branch: the partition may stop early")
    return PartitionTree(
        centers=np.asarray(centers, dtype=np.float64).reshape(-1, p),
        level=np.asarray(levels, dtype=np.int64),
        lo=np.asarray(lo, dtype=np.float64),
        edge=float(edge),
        active_per_level=tuple(per_level),
        empty_activated=empty_total,
        counts=tuple(debug),
    )


@dataclass(frozen=True)
class CandidateSet:
    """The output of Alg. 2 (DP-safe).

    Attributes
    ----------
    centers : (m, p) array
        The candidates, clipped to the projected ball of radius Λ_p (post-processing; the local
        search sensitivity needs them inside, note §8.4 A7).
    shift : (m,) int array
        Which random shift (partition) produced each candidate.
    level : (m,) int array
        The depth of the cube it is the center of.
    trees : tuple of PartitionTree
        One per shift.
    shifts : (R, p) array
        The public random shifts v.
    n_before_subsample : int
        |C| before the public cap ``max_candidates`` (a uniform subsample is post-processing).
    """

    centers: np.ndarray
    shift: np.ndarray
    level: np.ndarray
    trees: tuple[PartitionTree, ...]
    shifts: np.ndarray
    n_before_subsample: int


def candidate(
    Y: np.ndarray,
    *,
    radius_p: float,
    n_shifts: int,
    eps_level: float,
    gamma: float,
    n_rounds: int,
    rng: np.random.Generator,
    ledger: Ledger,
    eps_call: float | None = None,
    max_candidates: int = 0,
) -> CandidateSet:
    """Alg. 2: the union of ``n_shifts`` private partitions of randomly shifted root cubes.

    The root cube is [−2Λ_p, 2Λ_p]^p + v with v ~ U([−Λ_p, Λ_p]^p), which always contains the
    ball of radius Λ_p (note §8.4 A4: the printed [−Λ, Λ]^d + v does not, a typo fixed here).

    Privacy
    -------
    Sum over shifts of each partition's charge (basic composition, Thm 4), under add/remove.
    """
    p = Y.shape[1]
    trees = []
    shifts = rng.uniform(-radius_p, radius_p, size=(n_shifts, p))
    for r in range(n_shifts):  # loop over shifts (R), vectorized inside
        node = ledger.child(f"shift {r + 1}", note="Alg. 1 on a randomly shifted root cube")
        lo = shifts[r] - 2.0 * radius_p
        trees.append(private_partition(Y, lo=lo, edge=4.0 * radius_p, eps_level=eps_level,
                                       gamma=gamma, n_rounds=n_rounds, rng=rng, ledger=node,
                                       eps_charge=eps_call))
    C = np.concatenate([t.centers for t in trees], axis=0)
    shift = np.concatenate([np.full(t.centers.shape[0], r) for r, t in enumerate(trees)])
    level = np.concatenate([t.level for t in trees])
    norms = np.linalg.norm(C, axis=1)
    C = C * np.minimum(1.0, radius_p / np.maximum(norms, np.finfo(float).tiny))[:, None]
    m = C.shape[0]
    if max_candidates and m > max_candidates:
        pick = np.sort(rng.choice(m, size=max_candidates, replace=False))
        C, shift, level = C[pick], shift[pick], level[pick]
    return CandidateSet(centers=C, shift=shift, level=level, trees=tuple(trees), shifts=shifts,
                        n_before_subsample=m)
