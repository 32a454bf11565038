"""A small Bernoulli VAE in numpy with per-example gradient norms and clipped gradient sums.

Architecture (Acs et al., TKDE, §3.2 and §6): single-layer encoder and decoder with ``hidden``
ReLU units and a ``latent``-dimensional Gaussian latent space (paper: 200 and 2). For binary
records the decoder outputs Bernoulli logits (sigmoid), μ and log σ² are linear heads (the paper's
"ReLU for all neurons" applies to the hidden layers; note §3.6).

Per-example loss ℒ(θ, x) = −ELBO = Σ_j BCE(logit_j, x_j) + KL(N(μ, σ²) ‖ N(0, I)), one
reparametrised draw z = μ + σ·ε per example.

DP-SGD needs each example's gradient norm and the sum of clipped gradients. Every dense layer is
used once per example, so its per-example weight gradient is the outer product a_i δ_iᵀ of the
layer input and the output gradient: ‖a_i δ_iᵀ‖² = ‖a_i‖²‖δ_i‖² (and ‖δ_i‖² for the bias), and the
clipped sum is Aᵀ(c ⊙ Δ) — no per-example tensor is ever built ("ghost norms"; Goodfellow 2015).

References: Kingma & Welling 2014 (VAE); Goodfellow 2015 (per-example gradient norms); Acs et al.
§3.2.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

#: (weight, bias) parameter names of the dense layers, in order.
LAYERS = (("W1", "b1"), ("Wm", "bm"), ("Wv", "bv"), ("W2", "b2"), ("W3", "b3"))


def _softplus(x: np.ndarray) -> np.ndarray:
    return np.logaddexp(0.0, x)


def _sigmoid(x: np.ndarray) -> np.ndarray:
    return 0.5 * (1.0 + np.tanh(0.5 * x))


@dataclass
class VAE:
    """Parameters of an m–hidden–latent Bernoulli VAE (mutable: DP-SGD updates them in place)."""

    params: dict[str, np.ndarray]

    @classmethod
    def init(cls, m: int, *, hidden: int = 200, latent: int = 2, rng: np.random.Generator,
             output_bias: np.ndarray | None = None) -> VAE:
        """He-normal weights, zero biases (drawn from ``rng``, never from private data).

        ``output_bias`` sets the decoder's output bias (e.g. the logits of PUBLIC pixel marginals, so
        training starts from the independent-marginals model; not in the paper).
        """

        def dense(n_in: int, n_out: int) -> tuple[np.ndarray, np.ndarray]:
            return rng.normal(0.0, math.sqrt(2.0 / n_in), (n_in, n_out)), np.zeros(n_out)

        p: dict[str, np.ndarray] = {}
        for (w, b), (i, o) in zip(LAYERS, ((m, hidden), (hidden, latent), (hidden, latent),
                                           (latent, hidden), (hidden, m)), strict=True):
            p[w], p[b] = dense(i, o)
        p["Wv"] *= 0.1  # start near unit posterior variance
        if output_bias is not None:
            p["b3"] = np.asarray(output_bias, dtype=np.float64).copy()
        return cls(p)

    @property
    def m(self) -> int:
        return self.params["W1"].shape[0]

    @property
    def latent(self) -> int:
        return self.params["Wm"].shape[1]

    @property
    def n_params(self) -> int:
        return sum(v.size for v in self.params.values())

    def copy(self) -> VAE:
        return VAE({k: v.copy() for k, v in self.params.items()})

    def decode(self, z: np.ndarray) -> np.ndarray:
        """Bernoulli means p(x = 1 | z), shape (n, m)."""
        p = self.params
        h2 = np.maximum(z @ p["W2"] + p["b2"], 0.0)
        return _sigmoid(h2 @ p["W3"] + p["b3"])

    def sample(self, n: int, rng: np.random.Generator, *, binary: bool = True) -> np.ndarray:
        """n records: z ~ N(0, I), x ~ Bernoulli(decoder(z)) (or the means if ``binary=False``)."""
        probs = self.decode(rng.normal(size=(n, self.latent)))
        return (rng.random(probs.shape) < probs).astype(np.float64) if binary else probs

    def forward_backward(self, X: np.ndarray, eps: np.ndarray) -> PerExample:
        """Per-example losses and the (input, output-gradient) factors of every dense layer."""
        p = self.params
        h1_pre = X @ p["W1"] + p["b1"]
        h1 = np.maximum(h1_pre, 0.0)
        mu = h1 @ p["Wm"] + p["bm"]
        lv_pre = h1 @ p["Wv"] + p["bv"]
        lv = np.clip(lv_pre, -20.0, 20.0)  # guards exp(); the gradient is 0 where the clip is active
        std = np.exp(0.5 * lv)
        z = mu + std * eps
        h2_pre = z @ p["W2"] + p["b2"]
        h2 = np.maximum(h2_pre, 0.0)
        logits = h2 @ p["W3"] + p["b3"]
        rec = (_softplus(logits) - X * logits).sum(axis=1)
        kl = 0.5 * (np.exp(lv) + mu * mu - 1.0 - lv).sum(axis=1)
        # Backward, one row per example.
        d_logits = _sigmoid(logits) - X
        d_h2 = (d_logits @ p["W3"].T) * (h2_pre > 0)
        d_z = d_h2 @ p["W2"].T
        d_mu = d_z + mu
        d_lv = (d_z * eps * 0.5 * std + 0.5 * (np.exp(lv) - 1.0)) * (np.abs(lv_pre) < 20.0)
        d_h1 = (d_mu @ p["Wm"].T + d_lv @ p["Wv"].T) * (h1_pre > 0)
        factors = ((X, d_h1), (h1, d_mu), (h1, d_lv), (z, d_h2), (h2, d_logits))
        return PerExample(rec + kl, factors)

    def per_example(self, X: np.ndarray, rng: np.random.Generator) -> PerExample:
        """One reparametrisation draw ε ~ N(0, I) per row, then :meth:`forward_backward`.

        ε is not privacy noise: with the release sampler it comes from a fresh OS-entropy Generator.
        """
        src = np.random.default_rng() if getattr(rng, "is_secure_sampler", False) else rng
        return self.forward_backward(X, src.normal(size=(X.shape[0], self.latent)))

    def apply(self, grads: dict[str, np.ndarray], optimizer: Adam | SGD) -> None:
        optimizer.step(self.params, grads)


@dataclass(frozen=True)
class PerExample:
    """Per-example losses and layer factors (A, Δ): example i's gradient of layer l is A_l[i]ᵀΔ_l[i]."""

    loss: np.ndarray
    factors: tuple[tuple[np.ndarray, np.ndarray], ...]

    def grad_norms(self) -> np.ndarray:
        """‖∇_θ ℒ(θ, x_i)‖₂ per example: Σ_l ‖a_i‖²‖δ_i‖² + ‖δ_i‖² (weights and biases)."""
        sq = np.zeros(self.loss.shape[0])
        for A, D in self.factors:
            dd = np.einsum("ij,ij->i", D, D)
            sq += np.einsum("ij,ij->i", A, A) * dd + dd
        return np.sqrt(sq)

    def weighted_sum(self, c: np.ndarray) -> dict[str, np.ndarray]:
        """Σ_i c_i ∇_θ ℒ(θ, x_i) per parameter (c_i = clipping factors): Aᵀ(c ⊙ Δ)."""
        out: dict[str, np.ndarray] = {}
        for (w, b), (A, D) in zip(LAYERS, self.factors, strict=True):
            cD = D * c[:, None]
            out[w] = A.T @ cD
            out[b] = cD.sum(axis=0)
        return out


@dataclass
class Adam:
    """Adam (Kingma & Ba 2015); applied to the noisy gradient it is post-processing."""

    lr: float = 1e-3
    beta1: float = 0.9
    beta2: float = 0.999
    eps: float = 1e-8
    t: int = 0
    m: dict[str, np.ndarray] = field(default_factory=dict)
    v: dict[str, np.ndarray] = field(default_factory=dict)

    def step(self, params: dict[str, np.ndarray], grads: dict[str, np.ndarray]) -> None:
        self.t += 1
        for k, g in grads.items():
            m = self.m.setdefault(k, np.zeros_like(g))
            v = self.v.setdefault(k, np.zeros_like(g))
            m *= self.beta1
            m += (1.0 - self.beta1) * g
            v *= self.beta2
            v += (1.0 - self.beta2) * g * g
            mhat = m / (1.0 - self.beta1**self.t)
            vhat = v / (1.0 - self.beta2**self.t)
            params[k] -= self.lr * mhat / (np.sqrt(vhat) + self.eps)


@dataclass
class SGD:
    """Plain gradient descent θ ← θ − η·g̃ (the paper's RBM uses η = 0.01)."""

    lr: float = 0.01

    def step(self, params: dict[str, np.ndarray], grads: dict[str, np.ndarray]) -> None:
        for k, g in grads.items():
            params[k] -= self.lr * g


# ----------------------------------------------------------------------------- RBM


@dataclass
class RBM:
    """A binary RBM E(v, h) = −vᵀWh − bᵀv − cᵀh trained with persistent contrastive divergence.

    Acs et al. §3.1 (energy printed with v_ij for w_ij — a typo), settings §6: 200 hidden units,
    W ~ N(0, 0.01²) (std 0.01), zero biases, η = 0.01. The number of persistent chains and Gibbs
    steps is unstated (note §6.4(16)); here ``n_chains`` chains advance one Gibbs step per update.
    The chains never see private rows (they are driven by the released parameters only).

    Per-example gradient of −log p(x) (PCD estimate): g_W = −(x p_hᵀ − M_W), g_b = −(x − M_b),
    g_c = −(p_h − M_c), with p_h = σ(c + Wᵀx) and M the chain means of v′p_h(v′)ᵀ, v′, p_h(v′).
    """

    params: dict[str, np.ndarray]
    chains: np.ndarray

    @classmethod
    def init(cls, m: int, *, hidden: int = 200, rng: np.random.Generator, n_chains: int = 64,
             output_bias: np.ndarray | None = None) -> RBM:
        p = {"W": rng.normal(0.0, 0.01, (m, hidden)), "b": np.zeros(m), "c": np.zeros(hidden)}
        if output_bias is not None:
            p["b"] = np.asarray(output_bias, dtype=np.float64).copy()
        chains = (rng.random((n_chains, m)) < _sigmoid(p["b"])).astype(np.float64)
        return cls(p, chains)

    @property
    def m(self) -> int:
        return self.params["W"].shape[0]

    @property
    def n_params(self) -> int:
        return sum(v.size for v in self.params.values())

    def _gibbs(self, V: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        p = self.params
        H = (rng.random((V.shape[0], p["c"].size)) < _sigmoid(V @ p["W"] + p["c"])).astype(np.float64)
        return (rng.random(V.shape) < _sigmoid(H @ p["W"].T + p["b"])).astype(np.float64)

    def per_example(self, X: np.ndarray, rng: np.random.Generator) -> RBMPerExample:
        """Advance the persistent chains one Gibbs step, then the per-example PCD gradients."""
        p = self.params
        self.chains = self._gibbs(self.chains, rng)
        Ph_neg = _sigmoid(self.chains @ p["W"] + p["c"])
        M_W = self.chains.T @ Ph_neg / self.chains.shape[0]
        return RBMPerExample(X, _sigmoid(X @ p["W"] + p["c"]), M_W, self.chains.mean(axis=0),
                             Ph_neg.mean(axis=0))

    def sample(self, n: int, rng: np.random.Generator, *, binary: bool = True,
               steps: int = 200) -> np.ndarray:
        """n records from ``steps`` Gibbs steps started at Bernoulli(σ(b)); means p(v | h) if not binary."""
        p = self.params
        V = (rng.random((n, self.m)) < _sigmoid(p["b"])).astype(np.float64)
        for _ in range(steps - 1):
            V = self._gibbs(V, rng)
        H = (rng.random((n, p["c"].size)) < _sigmoid(V @ p["W"] + p["c"])).astype(np.float64)
        probs = _sigmoid(H @ p["W"].T + p["b"])
        return (rng.random(probs.shape) < probs).astype(np.float64) if binary else probs

    def apply(self, grads: dict[str, np.ndarray], optimizer: Adam | SGD) -> None:
        optimizer.step(self.params, grads)


@dataclass(frozen=True)
class RBMPerExample:
    """Per-example PCD gradients of an RBM, in factored form (no (n, m, h) tensor)."""

    X: np.ndarray
    Ph: np.ndarray
    M_W: np.ndarray
    M_b: np.ndarray
    M_c: np.ndarray

    def grad_norms(self) -> np.ndarray:
        """‖x p_hᵀ − M_W‖² = ‖x‖²‖p_h‖² − 2xᵀM_W p_h + ‖M_W‖², plus ‖x − M_b‖² and ‖p_h − M_c‖²."""
        X, P = self.X, self.Ph
        w = (np.einsum("ij,ij->i", X, X) * np.einsum("ij,ij->i", P, P)
             - 2.0 * np.einsum("ij,ij->i", X @ self.M_W, P) + float(np.sum(self.M_W * self.M_W)))
        b = ((X - self.M_b) ** 2).sum(axis=1)
        c = ((P - self.M_c) ** 2).sum(axis=1)
        return np.sqrt(np.maximum(w, 0.0) + b + c)

    def weighted_sum(self, c: np.ndarray) -> dict[str, np.ndarray]:
        """Σ_i c_i g_i: −(Xᵀ diag(c) P − (Σc) M_W), −(Σ c_i x_i − (Σc) M_b), −(Σ c_i p_i − (Σc) M_c)."""
        s = float(c.sum())
        return {"W": -(self.X.T @ (self.Ph * c[:, None]) - s * self.M_W),
                "b": -(c @ self.X - s * self.M_b),
                "c": -(c @ self.Ph - s * self.M_c)}
