"""Algorithm 3: private local search (``localswap``) over a candidate set by the exponential mechanism.

Balcan, Dick, Liang, Mou, Zhang, ICML 2017, §4.3, Alg. 3 (engineer's note §3.3, §8.1). Every step
draws one swap (x ∈ Z, y ∈ C \\ Z) with probability ∝ exp(−ε_step·(L(Z − x + y) − L(Z))/(2·4Λ_p²)),
by Gumbel-max on the log-scores; a final exponential mechanism picks one iterate Z^(t), t = 1..T₃.

All k·|C| swap losses of a step come from one pass over the (n, |C|) distance matrix W by the
nearest/second-nearest identity (note §8.1): with d₁, d₂ the distances to the nearest and second
nearest current center and cl(x) the rows whose nearest center is x,

    L(Z − x + y) = Σ_i min(d₁ᵢ, W_iy) − Σ_{i∈cl(x)} min(d₁ᵢ, W_iy) + Σ_{i∈cl(x)} min(d₂ᵢ, W_iy),

so a step costs O(|C|·n) (plus a k×n by n×|C| product), not O(k²·|C|·n).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.sparse import csr_matrix

from dpviz.privacy.budget import ApproxDP
from dpviz.privacy.ledger import Ledger
from dpviz.privacy.mechanisms import exponential

#: Largest n·|C| for which the distance matrix W is kept in memory (float32: 4 bytes each).
W_CACHE_ENTRIES = 150_000_000

#: Rows per chunk when scoring swaps.
_ROW_CHUNK = 8192


def sqdist(P: np.ndarray, C: np.ndarray) -> np.ndarray:
    """Squared distances (len(P), len(C)), float64, by the Gram form ‖p‖² − 2p·c + ‖c‖² (clamped ≥ 0).

    The coordinate-by-coordinate form used before is exact but made p passes over an (n, |C|)
    array: 2.4× slower at 20 000 × 400, p = 6 (0.52 vs 1.23 s, load ≈ 19); one BLAS thread or
    several made no difference there (0.58 vs 0.52 s). Rows and candidates lie in B(0, Λ_p), so the
    cancellation error is ~1e-14·Λ_p² (2.8e-14 on that draw).
    """
    D = np.einsum("ij,ij->i", P, P)[:, None] - 2.0 * P @ C.T + np.einsum("ij,ij->i", C, C)[None, :]
    return np.maximum(D, 0.0, out=D)


class _Distances:
    """W = squared distances from the rows to the candidates: cached (float32) or recomputed by chunk."""

    def __init__(self, Y: np.ndarray, C: np.ndarray, cache_entries: int = W_CACHE_ENTRIES) -> None:
        self.Y, self.C = Y, C
        self.n, self.m = Y.shape[0], C.shape[0]
        self.W: np.ndarray | None = None
        if self.n * self.m <= cache_entries:
            self.W = np.empty((self.n, self.m), dtype=np.float32)
            for s in range(0, self.n, _ROW_CHUNK):
                self.W[s : s + _ROW_CHUNK] = sqdist(Y[s : s + _ROW_CHUNK], C)

    def chunks(self):
        for s in range(0, self.n, _ROW_CHUNK):
            if self.W is not None:
                yield s, self.W[s : s + _ROW_CHUNK]
            else:
                yield s, sqdist(self.Y[s : s + _ROW_CHUNK], self.C).astype(np.float32)

    def columns(self, idx: np.ndarray) -> np.ndarray:
        """W[:, idx] (n, len(idx)) in float64."""
        if self.W is not None:
            return self.W[:, idx].astype(np.float64)
        return sqdist(self.Y, self.C[idx])


def nearest_two(DZ: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per row: index of the nearest column, its distance d₁ and the second smallest d₂ (inf if k = 1)."""
    nearest = np.argmin(DZ, axis=1)
    d1 = DZ[np.arange(DZ.shape[0]), nearest]
    if DZ.shape[1] == 1:
        return nearest, d1, np.full_like(d1, np.inf)
    d2 = np.partition(DZ, 1, axis=1)[:, 1]
    return nearest, d1, d2


def swap_losses(dist: _Distances, z_idx: np.ndarray) -> tuple[np.ndarray, float]:
    """(k, |C|) matrix of L(Z − z_j + y) for every position j and candidate y, and L(Z).

    One pass over W by the nearest/second-nearest identity (module docstring). Positions are
    indices into Z, so a Z with repeated candidates (Alg. 3 draws Z^(0) i.i.d.) is handled: d₂ of a
    row is the second smallest over the other positions.
    """
    k = z_idx.shape[0]
    nearest, d1, d2 = nearest_two(dist.columns(z_idx))
    d1f, d2f = d1.astype(np.float32), d2.astype(np.float32)
    A = np.zeros(dist.m)
    BE = np.zeros((k, dist.m))
    for s, Wc in dist.chunks():  # float32 work arrays, float64 accumulators
        e = slice(s, s + Wc.shape[0])
        t1 = np.minimum(Wc, d1f[e, None])
        t2 = np.minimum(Wc, d2f[e, None])
        A += t1.sum(axis=0, dtype=np.float64)
        t2 -= t1
        c = Wc.shape[0]
        onehot = csr_matrix((np.ones(c, dtype=np.float32), (nearest[e], np.arange(c))), shape=(k, c))
        BE += onehot @ t2  # sparse: O(c·|C|), single-threaded
    return A[None, :] + BE, float(d1.sum())


def brute_force_swap_losses(Y: np.ndarray, C: np.ndarray, z_idx: np.ndarray) -> np.ndarray:
    """The same (k, |C|) matrix by rescoring every swap from scratch (O(k²·|C|·n); tests only)."""
    k, m = z_idx.shape[0], C.shape[0]
    out = np.empty((k, m))
    for j in range(k):
        for y in range(m):
            Z = C[np.r_[z_idx[:j], y, z_idx[j + 1 :]]]
            out[j, y] = sqdist(Y, Z).min(axis=1).sum()
    return out


@dataclass(frozen=True)
class LocalSearch:
    """The output of Alg. 3.

    Attributes
    ----------
    z_idx : (k,) int array
        The chosen iterate Z^(t*) as candidate indices (DP-safe).
    path : (T₃ + 1, k) int array
        Every iterate Z^(0..T₃) (DP-safe: each step is an exponential-mechanism output).
    swaps : (T₃, 2) int array
        Per step, the position x replaced and the candidate y brought in (DP-safe).
    chosen_t : int
        The iterate picked by the final exponential mechanism, in 1..T₃ (DP-safe).
    losses : (T₃ + 1,) array
        NOT private (debug): L(Z^(t)) on the projected rows.
    p_chosen, p_max : (T₃,) arrays
        NOT private (debug): probability of the swap drawn and of the likeliest swap per step.
    last_probs : (k, |C|) array
        NOT private (debug): the swap probabilities of the last step.
    final_probs : (T₃,) array
        NOT private (debug): the final selection's probabilities over t = 1..T₃.
    """

    z_idx: np.ndarray
    path: np.ndarray
    swaps: np.ndarray
    chosen_t: int
    losses: np.ndarray
    p_chosen: np.ndarray
    p_max: np.ndarray
    last_probs: np.ndarray
    final_probs: np.ndarray


def _softmax(logits: np.ndarray) -> np.ndarray:
    z = logits - np.max(logits)
    w = np.exp(z)
    return w / w.sum()


def localswap(
    Y: np.ndarray,
    C: np.ndarray,
    *,
    k: int,
    T3: int,
    eps: float,
    radius_p: float,
    rng: np.random.Generator,
    ledger: Ledger,
    sample_rate: float = 1.0,
) -> LocalSearch:
    """Alg. 3 on rows Y (norm ≤ Λ_p) and candidates C (norm ≤ Λ_p): T₃ swaps, then pick one iterate.

    With ``sample_rate`` q < 1 (public: chosen from the declared n, never the rows), every one of
    the T₃ + 1 exponential mechanisms scores a FRESH Poisson subsample of the rows (each row kept
    with probability q) at ε_s = ln(1 + (e^{ε_step} − 1)/q), which Poisson subsampling amplifies
    back to ε_step under add/remove (Li, Qin & Su 2012; Balle, Barthe & Gaboardi 2018, Thm 10):
    the same guarantee, the same signal-to-noise in expectation (ε_s·q·ΔL ≈ ε_step·ΔL for small
    ε_step), and q times the work. The final selection scores all iterates on one more subsample.

    Each of the T₃ + 1 exponential mechanisms gets ε/(T₃ + 1); the utility (minus the loss, or
    minus its increment) has sensitivity 4Λ_p² under add/remove (a row and a center both lie in the
    ball of radius Λ_p, so one row's squared distance is in [0, 4Λ_p²]). The probability of a swap
    is ∝ exp(−ε·ΔL/(8Λ_p²(T₃+1))), exactly the paper's exp(−ε·ΔL/(8Λ²(T+1))).

    Privacy
    -------
    ε-DP under add/remove of one row (basic composition of T₃ + 1 exponential mechanisms,
    Thm 6). Z^(0) is drawn uniformly from C, which is already private.

    References
    ----------
    Balcan et al. 2017, §4.3, Alg. 3, Thm 6; Gupta et al. 2010 (private local search); note §8.1.
    """
    m = C.shape[0]
    eps_step = eps / (T3 + 1)
    sens = 4.0 * radius_p**2
    sub = 0.0 < sample_rate < 1.0
    eps_mech = float(np.log1p(np.expm1(eps_step) / sample_rate)) if sub else eps_step
    scratch = Ledger("subsampled mechanism (booked amplified)")

    def draw(scores: np.ndarray, name: str, note: str) -> int:
        if not sub:
            return exponential(scores, sensitivity=sens, eps=eps_step, rng=rng, ledger=ledger, name=name,
                               note=note)
        ledger.record(name, "exponential", ApproxDP(eps_step, 0.0), sensitivity=sens,
                      noise_scale=2.0 * sens / eps_mech,
                      note=f"{note}; on a Poisson subsample (rate q = {sample_rate:.4g}) at ε_s = "
                           f"{eps_mech:.4g}, amplified to ε = ln(1 + q(e^ε_s − 1)) = {eps_step:.4g}")
        return exponential(scores, sensitivity=sens, eps=eps_mech, rng=rng, ledger=scratch, name=name)

    def rows() -> np.ndarray:
        return Y[rng.random(Y.shape[0]) < sample_rate] if sub else Y

    dist = None if sub else _Distances(Y, C)
    z = rng.integers(0, m, size=k)  # Z^(0): k i.i.d. uniform candidates (note §8.4 A11)
    path = [z.copy()]
    swaps = np.zeros((T3, 2), dtype=np.int64)
    losses: list[float] = []
    p_chosen = np.zeros(T3)
    p_max = np.zeros(T3)
    last_probs = np.zeros((k, m))
    for t in range(T3):
        L_swap, L_cur = swap_losses(_Distances(rows(), C) if sub else dist, z)
        losses.append(L_cur / (sample_rate if sub else 1.0))
        scores = -(L_swap - L_cur)
        scores[:, np.unique(z)] = -np.inf  # y ∈ C \ Z (Alg. 3)
        flat = scores.ravel()
        if not np.any(np.isfinite(flat)):  # |C| ≤ distinct(Z): no swap exists; keep Z (public fact)
            flat = np.zeros_like(flat)
        pick = draw(flat, f"swap {t + 1}", "exponential mechanism over k·|C| swaps")
        probs = _softmax(eps_mech * flat / (2.0 * sens))
        p_chosen[t], p_max[t] = probs[pick], probs.max()
        if t == T3 - 1:
            last_probs = probs.reshape(k, m)
        j, y = divmod(pick, m)
        L_next = float(L_swap[j, y])  # L(Z^(t+1)), read off the swap matrix
        z = z.copy()
        z[j] = y
        swaps[t] = (j, y)
        path.append(z.copy())
        if t == T3 - 1:
            losses.append(L_next / (sample_rate if sub else 1.0))
    if sub:  # every iterate rescored on one fresh subsample (losses per step came from different ones)
        Ys = rows()
        P = np.array(path[1:])
        final_L = np.array([sqdist(Ys, C[zz]).min(axis=1).sum() if Ys.shape[0] else 0.0 for zz in P])
    else:
        final_L = np.array(losses[1:])
    t_pick = draw(-final_L, "select iterate", "exponential mechanism over t = 1..T₃ by −L(Z^(t))")
    final_probs = _softmax(eps_mech * -final_L / (2.0 * sens))
    return LocalSearch(z_idx=path[t_pick + 1], path=np.array(path), swaps=swaps, chosen_t=t_pick + 1,
                       losses=np.array(losses), p_chosen=p_chosen, p_max=p_max,
                       last_probs=last_probs, final_probs=final_probs)
