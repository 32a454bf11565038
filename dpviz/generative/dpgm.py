"""DPGM: a private mixture of generative networks (Acs et al., TKDE, §4, Algorithm 1).

1. Cluster the private rows with DP kernel k-means (Alg. 2) from k public records; the released
   noisy cluster sizes n̂_i of the last iteration are the mixture weights (post-processing; the
   paper's |D̂_i| are private — note §6.4(8)).
2. Train one generative model per cluster (a VAE, or an RBM with PCD) with DP-SGD (Alg. 4):
   Poisson batches at rate q = L/n_declared, per-example clipping at the DPNorm bound, Gaussian
   noise √2σ_G·C_s.
   * ``schedule="parallel"`` (default, rigorous): every step samples all rows and updates every
     model on its own rows (note §6.4(9) option a). The paper's accountant covers it.
   * ``schedule="one_model"`` (the paper's Alg. 1, line 4): each step picks model s with
     probability n̂_s/Σn̂ and samples its cluster at rate q/p_s. The index s is revealed, and the
     guarantee is the mixture bound of ``one_model_epsilon`` (≈ k times the per-step cost), not
     the paper's number.
3. Draw synthetic records: a component with probability n̂_i/Σn̂ (§4.4; the printed "1/|D̂_i|" is a
   typo), then a sample from its VAE.

Privacy unit: one row, add/remove. The guarantee is ``DPGMResult.account.eps`` at
``account.setting.delta`` (see :func:`dpviz.generative.accountant.acs_account`).

References: Acs, Melis, Castelluccia, De Cristofaro, "Differentially Private Mixture of Generative
Neural Networks", IEEE TKDE, Alg. 1, §4.4, §5.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from threadpoolctl import threadpool_limits

from dpviz._validation import RngLike, check_data, check_rng, check_scalar, is_simulation
from dpviz.clustering.kernel_kmeans import kernel_kmeans_sigma
from dpviz.generative.accountant import (
    AcsAccount,
    AcsSetting,
    Schedule,
    acs_account,
    one_model_epsilon,
    pld_epsilon,
    rdp_epsilon,
)
from dpviz.generative.dpsgd import StepReport, dp_sgd_step
from dpviz.generative.models import RBM, SGD, VAE, Adam
from dpviz.privacy.budget import ApproxDP
from dpviz.privacy.ledger import Ledger
from dpviz.registry import check_hinted, hint


@dataclass(frozen=True)
class DPGMParams:
    """Parameters of a DPGM run (paper defaults where the paper states them); fields carry UI hints
    (:func:`dpviz.registry.hint`) for a form."""

    k: int = field(default=10, metadata=hint(low=1, high=50, step=1, label="clusters k",
                                             help="generative models in the mixture (1: no clustering)"))
    T_K: int = field(default=20, metadata=hint(low=1, high=50, step=1, label="k-means iterations T_K"))
    sigma_K: float = field(default=40.0, metadata=hint(  # noqa: N815 - the paper's σ_𝒦
        low=0.1, high=1000.0, scale="log", label="σ_K", help="k-means noise: std √2σ_K on sizes and sums"))
    sigma_C: float = field(default=4.0, metadata=hint(  # noqa: N815 - the paper's σ_𝒞
        low=0.1, high=100.0, scale="log", label="σ_C", help="DPNorm noise: std √2σ_C per histogram bin"))
    sigma_G: float = field(default=1.0, metadata=hint(  # noqa: N815 - the paper's σ_𝒢
        low=0.1, high=100.0, scale="log", label="σ_G", help="gradient noise: std √2σ_G·C_s"))
    batch_size: float = field(default=32.0, metadata=hint(low=1.0, high=10_000.0, step=1.0,
                                                          label="expected batch L", help="q = L/n"))
    epochs: float = field(default=20.0, metadata=hint(low=0.01, high=1000.0, label="epochs",
                                                      help="one epoch is ⌈1/q⌉ DP-SGD steps"))
    C_max: float = field(default=10.0, metadata=hint(low=0.01, high=1e4, scale="log", label="C_max",
                                                     help="largest clipping bound DPNorm considers"))
    w: int = field(default=100, metadata=hint(low=1, high=10_000, step=1, label="DPNorm bins w"))
    adaptive_clip: bool = field(default=True, metadata=hint(help="clip at the DPNorm bound (Alg. 4)"))
    fixed_clip: float = field(default=1.0, metadata=hint(low=1e-3, high=1e4, scale="log",
                                                         help="clipping bound when not adaptive"))
    lr: float = field(default=1e-3, metadata=hint(low=1e-5, high=1.0, scale="log", label="learning rate"))
    hidden: int = field(default=200, metadata=hint(low=1, high=2000, step=1, label="hidden units"))
    latent: int = field(default=2, metadata=hint(low=1, high=64, step=1, label="VAE latent dimension"))
    n_features: int = field(default=200, metadata=hint(low=1, high=5000, step=1, label="RFF dimension d"))
    gamma: float | None = None
    schedule: Schedule = field(default="parallel", metadata=hint(
        choices=("parallel", "one_model"),
        help="parallel: every model each step (rigorous); one_model: the paper's Alg. 1 line 4"))
    model: str = field(default="vae", metadata=hint(choices=("vae", "rbm"), help="generative model"))

    def __post_init__(self) -> None:
        f = "DPGMParams"
        check_hinted(self, f)
        check_scalar(self.k, "k", f, low=1, high=1000, integer=True)
        check_scalar(self.T_K, "T_K", f, low=1, high=1000, integer=True)
        for name in ("sigma_K", "sigma_C", "sigma_G"):  # below 0.1 no accountant gives a useful bound
            check_scalar(getattr(self, name), name, f, low=0.1, high_open=True)
        for name in ("batch_size", "C_max", "fixed_clip", "lr"):
            check_scalar(getattr(self, name), name, f, low=0.0, low_open=True, high_open=True)
        check_scalar(self.epochs, "epochs", f, low=0.0, high=10_000.0, low_open=True)
        for name in ("w", "hidden", "latent", "n_features"):
            check_scalar(getattr(self, name), name, f, low=1, high=100_000, integer=True)
        if self.gamma is not None:
            check_scalar(self.gamma, "gamma", f, low=0.0, low_open=True, high_open=True)
        if self.model not in ("vae", "rbm"):
            raise ValueError(f"The 'model' parameter of DPGMParams must be 'vae' or 'rbm'. "
                             f"Got {self.model!r} instead.")
        if self.schedule not in ("parallel", "one_model"):
            raise ValueError(f"The 'schedule' parameter of DPGMParams must be 'parallel' or 'one_model'. "
                             f"Got {self.schedule!r} instead.")


@dataclass(frozen=True)
class TrainProgress:
    """Passed to the progress callback: public quantities only (step counts and C_s)."""

    step: int
    total_steps: int
    epoch: float
    C_s: float


@dataclass(frozen=True)
class DPGMResult:
    """A trained private mixture.

    ``models`` and ``weights`` (n̂_i⁺/Σn̂⁺) are DP outputs, as are ``cluster_centers`` (feature space),
    ``noisy_counts`` and the per-step ``clip_bounds``. ``labels`` (cluster of each private row) and
    ``step_reports`` diagnostics are internal. ``account`` holds every ε and flags the guarantee;
    ``cancelled`` is True when training stopped early (the account then covers the steps run).
    ``simulation`` is False only when every noise draw came from the release sampler
    (:class:`dpviz.privacy.release.SecureRNG`); a seeded run must not be published.
    """

    models: tuple[VAE, ...] | tuple[RBM, ...]
    weights: np.ndarray
    noisy_counts: np.ndarray
    cluster_centers: np.ndarray | None
    labels: np.ndarray
    account: AcsAccount
    ledger: Ledger
    clip_bounds: np.ndarray
    step_reports: tuple[StepReport, ...]
    params: DPGMParams
    steps_run: int
    cancelled: bool
    seed: int | None
    extra: dict[str, Any] = field(default_factory=dict)
    simulation: bool = True

    def sample(self, n: int, rng: RngLike = None, *, binary: bool = True) -> tuple[np.ndarray, np.ndarray]:
        """n synthetic records and their components: component i w.p. ``weights[i]`` (§4.4)."""
        gen, _ = check_rng(rng, "generative:dpgm_sample")
        comp = gen.choice(len(self.models), size=n, p=self.weights)
        out = np.empty((n, self.models[0].m))
        for i, model in enumerate(self.models):  # loop over k
            idx = np.flatnonzero(comp == i)
            if idx.size:
                out[idx] = model.sample(idx.size, gen, binary=binary)
        return out, comp


def _is_cancelled(cancel: Any) -> bool:
    if cancel is None:
        return False
    if hasattr(cancel, "is_set"):
        return bool(cancel.is_set())
    return bool(cancel())


def dpgm(
    X: np.ndarray,
    *,
    params: DPGMParams,
    public_init: np.ndarray | None,
    n_declared: int,
    delta: float,
    rng: RngLike = None,
    progress: Callable[[TrainProgress], None] | None = None,
    progress_every: int = 0,
    cancel: Any = None,
    X_public: np.ndarray | None = None,
) -> DPGMResult:
    """Train DPGM (Algorithm 1) on binary rows X.

    Parameters
    ----------
    X : (n, m) array with entries in {0, 1}
        The private records.
    params : DPGMParams
    public_init : (k, m) array or None
        k PUBLIC records for the k-means initialisation (ignored, may be None, when k = 1: the
        "VAE without clustering" of Fig. 4(b)).
    n_declared : int
        Declared (public) dataset size: q = batch_size / n_declared, and one epoch is ⌈1/q⌉ steps.
    delta : float
        δ of the reported (ε, δ).
    rng : Generator, int or None
    progress : callable, optional
        Called with a :class:`TrainProgress` every ``progress_every`` steps (default: each epoch)
        and at the end.
    cancel : threading.Event or callable returning bool, optional
        Checked before every step; when set, training stops and the account covers the steps run.
    X_public : (n_pub, m) array, optional
        A PUBLIC split: the decoders' output biases start at the logits of its pixel marginals
        (clipped to [0.01, 0.99]), so training starts from the independent-marginals model. Not in
        the paper; free (public data).

    Returns
    -------
    DPGMResult

    Privacy
    -------
    (ε, δ)-DP under add/remove of one row with ε = ``result.account.eps``: the PLD account of
    k-means + T_S subsampled steps for the parallel schedule, the one-model mixture bound for the
    paper's schedule.

    References
    ----------
    Acs et al., TKDE, Alg. 1, Alg. 2, Alg. 4, Theorem 4.
    """
    func = "dpgm"
    X = check_data(X, func, allow_empty=False)
    n, m = X.shape
    n_declared = check_scalar(n_declared, "n_declared", func, low=1, high_open=True, integer=True)
    delta = check_scalar(delta, "delta", func, low=0.0, high=1.0, low_open=True, high_open=True)
    gen, seed = check_rng(rng, "generative:dpgm")
    p = params
    q = min(1.0, p.batch_size / n_declared)
    k = p.k
    ledger = Ledger(func)

    # ---- 1. clustering (Alg. 1 line 1 = Alg. 2), or one cluster
    if k > 1:
        P = np.asarray(public_init, dtype=np.float64) if public_init is not None else None
        if P is None or P.shape != (k, m) or not np.all(np.isfinite(P)):
            raise ValueError(f"The 'public_init' parameter of {func} must be a finite ({k}, {m}) array of "
                             f"public records when k > 1. Got {None if P is None else P.shape}.")
        loop = kernel_kmeans_sigma(X, P, sigma_K=p.sigma_K, n_features=p.n_features, gamma=p.gamma,
                                   iters=p.T_K, rng=gen, ledger=ledger)
        labels = loop.labels
        n_hat = loop.history[-1][1]
        centers = loop.centers
    else:
        labels = np.zeros(n, dtype=np.int64)
        n_hat = np.array([float(n_declared)])
        centers = None
    pos = np.maximum(n_hat, 0.0)
    weights = pos / pos.sum() if pos.sum() > 0 else np.full(k, 1.0 / k)
    members = [np.flatnonzero(labels == i) for i in range(k)]  # loop over k

    # ---- 2. DP-SGD (Alg. 1 lines 2–6)
    bias = None
    if X_public is not None:
        Pm = check_data(X_public, func, allow_empty=False)
        if Pm.shape[1] != m:
            raise ValueError(f"The 'X_public' parameter of {func} must have {m} columns. Got {Pm.shape[1]}.")
        marg = np.clip(Pm.mean(axis=0), 0.01, 0.99)
        bias = np.log(marg / (1.0 - marg))
    if p.model == "vae":  # §3.2: Adam
        models: list[VAE] | list[RBM] = [VAE.init(m, hidden=p.hidden, latent=p.latent, rng=gen,
                                                  output_bias=bias) for _ in range(k)]
        opts: list[Adam] | list[SGD] = [Adam(lr=p.lr) for _ in range(k)]
    else:  # §3.1, §6: PCD, plain SGD (paper: η = 0.01)
        models = [RBM.init(m, hidden=p.hidden, rng=gen, output_bias=bias) for _ in range(k)]
        opts = [SGD(lr=p.lr) for _ in range(k)]
    setting_full = AcsSetting(sigma_C=p.sigma_C, sigma_K=p.sigma_K, sigma_G=p.sigma_G, q=q,
                              T_K=p.T_K if k > 1 else 0, epochs=p.epochs, delta=delta,
                              dpnorm_in_sgd=p.adaptive_clip)
    total = setting_full.T_S
    spe = setting_full.steps_per_epoch
    every = progress_every or spe
    fixed = None if p.adaptive_clip else p.fixed_clip
    sel = weights if p.schedule == "one_model" else None
    reports: list[StepReport] = []
    clip_bounds = np.empty(total)
    steps = 0
    cancelled = False
    # Tiny matmuls: BLAS threads only add contention (measured 10× slower on a loaded 2-core box).
    t_start, c_start = time.perf_counter(), time.process_time()
    with threadpool_limits(1):
        for t in range(total):
            if _is_cancelled(cancel):
                cancelled = True
                break
            if sel is None:
                # Alg. 4 line 1 for all of D at once: Poisson sample at rate q, split by cluster.
                take = gen.random(n) < q
                batches = [X[idx[take[idx]]] for idx in members]
                expected = [max(q * (pos[i] if k > 1 else n_declared), 1.0) for i in range(k)]
                rep = dp_sgd_step(models, opts, batches, expected, sigma_C=p.sigma_C, sigma_G=p.sigma_G,
                                  rng=gen, C_max=p.C_max, w=p.w, fixed_clip=fixed)
            else:
                # Alg. 1 line 4: model s w.p. n̂_s/Σn̂, its cluster sampled at rate q/p_s (per-row rate q).
                s = int(gen.choice(k, p=sel))
                q_s = min(1.0, q / sel[s])
                idx = members[s]
                batch = X[idx[gen.random(idx.size) < q_s]]
                rep = dp_sgd_step([models[s]], [opts[s]], [batch], [max(q_s * pos[s], 1.0)],
                                  sigma_C=p.sigma_C, sigma_G=p.sigma_G, rng=gen, C_max=p.C_max, w=p.w,
                                  fixed_clip=fixed)
            reports.append(rep)
            clip_bounds[t] = rep.C_s
            steps = t + 1
            if progress is not None and (steps % every == 0 or steps == total):
                progress(TrainProgress(steps, total, steps / spe, rep.C_s))

    train_seconds, train_cpu = time.perf_counter() - t_start, time.process_time() - c_start

    # ---- accounting of what actually ran
    setting = AcsSetting(sigma_C=p.sigma_C, sigma_K=p.sigma_K, sigma_G=p.sigma_G, q=q,
                         T_K=p.T_K if k > 1 else 0, epochs=steps / spe, delta=delta,
                         dpnorm_in_sgd=p.adaptive_clip)
    p_min = float(weights[weights > 0].min()) if p.schedule == "one_model" else None
    account = acs_account(setting, k=k, schedule=p.schedule, p_min=p_min)
    sgd_only = AcsSetting(sigma_C=p.sigma_C, sigma_K=p.sigma_K, sigma_G=p.sigma_G, q=q, T_K=0,
                          epochs=steps / spe, delta=delta, dpnorm_in_sgd=p.adaptive_clip)
    if not steps:
        sgd_eps = 0.0
    elif account.guarantee == "one_model":
        sgd_eps = one_model_epsilon(sgd_only, p_min if p_min is not None else 1.0 / k)
    else:
        sgd_eps = min(pld_epsilon(sgd_only), rdp_epsilon(sgd_only))
    ledger.record("DP-SGD", "subsampled gaussian", ApproxDP(sgd_eps, delta if steps else 0.0),
                  sensitivity=None, noise_scale=math.sqrt(2.0) * p.sigma_G,
                  note=f"{steps} Poisson-sampled steps at q={q:.4g} ({p.schedule} schedule), DPNorm "
                       f"σ_C={p.sigma_C:g}, noise √2σ_G·C_s; ε by {account.guarantee} accounting. The "
                       f"whole run's guarantee is the composed ε={account.eps:.4g} (not this ledger's sum).")
    return DPGMResult(tuple(models), weights, np.asarray(n_hat, dtype=np.float64), centers, labels,
                      account, ledger, clip_bounds[:steps], tuple(reports), p, steps, cancelled, seed,
                      extra=dict(q=q, n_declared=n_declared, steps_per_epoch=spe,
                                 train_seconds=train_seconds, train_cpu_seconds=train_cpu),
                      simulation=is_simulation(gen))
