"""DPGM pieces: DPNorm (Alg. 3), the VAE's per-example gradients, DP-SGD (Alg. 4), DPGM (Alg. 1)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from dpviz.generative.dpgm import DPGMParams, TrainProgress, dpgm
from dpviz.generative.dpnorm import dp_norm, norm_histogram
from dpviz.generative.dpsgd import dp_sgd_step
from dpviz.generative.models import VAE, Adam
from dpviz.privacy.ledger import Ledger


class _Recorder:
    """An optimizer that records the noisy gradient it is handed instead of stepping."""

    def __init__(self) -> None:
        self.grads: list[dict[str, np.ndarray]] = []

    def step(self, params: dict[str, np.ndarray], grads: dict[str, np.ndarray]) -> None:
        self.grads.append({k: v.copy() for k, v in grads.items()})


def _binary(n: int, m: int, seed: int) -> np.ndarray:
    return (np.random.default_rng(seed).random((n, m)) < 0.3).astype(float)


# ----------------------------------------------------------------------------- DPNorm


def test_norm_histogram_bins_are_left_open_right_closed() -> None:
    edges, counts = norm_histogram(np.array([0.0, 0.1, 0.1000001, 0.25, 1.0, 1.5]), C_max=1.0, w=10)
    np.testing.assert_allclose(edges, np.arange(11) / 10)
    # 0 falls in no bin (C_0 = 0 is open), 0.1 is in bin 1 = (0, 0.1], 1.0 in bin 10, 1.5 > C_max in none.
    expected = np.zeros(10)
    expected[[0, 1, 2, 9]] = [1, 1, 1, 1]
    np.testing.assert_array_equal(counts, expected)


def test_dp_norm_noise_scale_mode_and_ledger() -> None:
    norms = np.concatenate([np.full(40, 2.35), np.full(10, 0.5), np.full(5, 20.0)])
    ledger = Ledger("t")
    r = dp_norm(norms, sigma_C=1e-9, rng=np.random.default_rng(0), ledger=ledger)
    assert r.C_s == pytest.approx(2.4) and r.j_star == 24  # upper edge of the true mode bin (2.3, 2.4]
    spend = next(s for _, s in ledger.spends())
    assert spend.sensitivity == 1.0 and spend.noise_scale == pytest.approx(math.sqrt(2) * 1e-9)
    assert spend.budget.rho == pytest.approx(1 / (4 * 1e-18))
    # The noise actually drawn has std √2σ_C.
    diffs = np.concatenate([dp_norm(norms, sigma_C=4.0, rng=np.random.default_rng(s)).noisy_counts
                            - r.counts for s in range(40)])
    assert diffs.std() == pytest.approx(math.sqrt(2) * 4.0, rel=0.04)
    with pytest.raises(ValueError, match="'sigma_C' parameter of dp_norm"):
        dp_norm(norms, sigma_C=0.0, rng=np.random.default_rng(0))


# ----------------------------------------------------------------------------- VAE gradients


def _flat_grad(model: VAE, x: np.ndarray, e: np.ndarray) -> np.ndarray:
    g = model.forward_backward(x[None], e[None]).weighted_sum(np.ones(1))
    return np.concatenate([g[k].ravel() for k in model.params])


def test_vae_gradient_matches_finite_differences_and_ghost_norms() -> None:
    rng = np.random.default_rng(0)
    model = VAE.init(5, hidden=4, latent=2, rng=rng)
    for key in ("b1", "bm", "bv", "b2", "b3"):  # off the ReLU kink at 0 (an all-zero row hits it)
        model.params[key] = rng.normal(0.0, 0.3, model.params[key].shape)
    X = _binary(3, 5, 1)
    E = rng.normal(size=(3, 2))
    per = model.forward_backward(X, E)
    norms = per.grad_norms()
    for i in range(3):
        g = _flat_grad(model, X[i], E[i])
        assert norms[i] == pytest.approx(np.linalg.norm(g), rel=1e-10)
        # Central differences of the per-example loss, parameter by parameter.
        num = []
        for key, val in model.params.items():
            for j in range(val.size):
                old = val.flat[j]
                val.flat[j] = old + 1e-6
                up = model.forward_backward(X[i:i + 1], E[i:i + 1]).loss[0]
                val.flat[j] = old - 1e-6
                down = model.forward_backward(X[i:i + 1], E[i:i + 1]).loss[0]
                val.flat[j] = old
                num.append((up - down) / 2e-6)
            assert key in model.params
        np.testing.assert_allclose(g, np.array(num), rtol=1e-5, atol=1e-6)
    # The clipped sum is the sum of the per-example gradients times their factors.
    c = np.array([0.5, 1.0, 0.25])
    s = per.weighted_sum(c)
    brute = sum(ci * _flat_grad(model, X[i], E[i]) for i, ci in enumerate(c))
    np.testing.assert_allclose(np.concatenate([s[k].ravel() for k in model.params]), brute, rtol=1e-10)


def test_vae_sample_shapes_and_binary() -> None:
    model = VAE.init(64, rng=np.random.default_rng(0))
    assert model.n_params == 27_268  # 64–200–2 VAE, note §3.6
    x = model.sample(7, np.random.default_rng(1))
    assert x.shape == (7, 64) and set(np.unique(x)) <= {0.0, 1.0}


# ----------------------------------------------------------------------------- DP-SGD


def test_dp_sgd_step_clips_sums_and_divides_by_expected_size() -> None:
    model = VAE.init(6, hidden=5, latent=2, rng=np.random.default_rng(0))
    X = _binary(9, 6, 2)
    rec = _Recorder()
    C, L = 0.7, 4.0
    rep = dp_sgd_step([model], [rec], [X], [L], sigma_C=4.0, sigma_G=1e-12, rng=np.random.default_rng(5),
                      fixed_clip=C)
    E = np.random.default_rng(5).normal(size=(9, 2))  # the step's first draw is the ε of each row
    brute = np.zeros(model.n_params)
    for i in range(9):
        g = _flat_grad(model, X[i], E[i])
        brute += g / max(1.0, np.linalg.norm(g) / C)  # Alg. 4, line 5
    got = np.concatenate([rec.grads[0][k].ravel() for k in model.params])
    np.testing.assert_allclose(got, brute / L, rtol=1e-8, atol=1e-12)
    assert rep.C_s == C and rep.batch_size == 9 and rep.noise_std == pytest.approx(math.sqrt(2) * 1e-12 * C)


def test_dp_sgd_noise_std_is_sqrt2_sigma_g_c_s_over_l() -> None:
    model = VAE.init(64, rng=np.random.default_rng(0))
    rec = _Recorder()
    sigma_G, C, L = 1.3, 2.0, 16.0
    dp_sgd_step([model], [rec], [np.zeros((0, 64))], [L], sigma_C=4.0, sigma_G=sigma_G,
                rng=np.random.default_rng(1), fixed_clip=C)
    noise = np.concatenate([v.ravel() for v in rec.grads[0].values()])
    assert noise.std() == pytest.approx(math.sqrt(2) * sigma_G * C / L, rel=0.02)  # 27k draws


def test_dp_sgd_adaptive_bound_is_dpnorm_of_the_batch_norms() -> None:
    model = VAE.init(64, hidden=20, rng=np.random.default_rng(0))
    X = _binary(200, 64, 3)
    rep = dp_sgd_step([model.copy()], [Adam()], [X], [200.0], sigma_C=1e-9, sigma_G=1.0,
                      rng=np.random.default_rng(2), C_max=1000.0, w=1000)
    norms = model.forward_backward(X, np.random.default_rng(2).normal(size=(200, 2))).grad_norms()
    # σ_C → 0: the upper edge of the fullest unit-width bin of the true norms (before the update).
    counts = np.bincount(np.ceil(norms).astype(int), minlength=1001)
    assert rep.C_s == pytest.approx(float(np.argmax(counts)))


# ----------------------------------------------------------------------------- DPGM


def test_dpgm_runs_accounts_and_samples() -> None:
    X = np.vstack([_binary(60, 16, 4), 1 - _binary(60, 16, 5)])
    pub = np.vstack([X[0], X[-1]])
    calls: list[TrainProgress] = []
    p = DPGMParams(k=2, T_K=3, sigma_K=2.0, batch_size=20, epochs=2, hidden=16, n_features=32)
    r = dpgm(X, params=p, public_init=pub, n_declared=120, delta=1e-5, rng=0, progress=calls.append)
    assert r.steps_run == 2 * 6 and not r.cancelled  # q = 20/120 → ⌈1/q⌉ = 6 steps per epoch
    assert [c.step for c in calls] == [6, 12] and calls[-1].epoch == pytest.approx(2.0)
    assert r.weights.sum() == pytest.approx(1.0) and r.weights.shape == (2,)
    assert r.account.guarantee == "pld" and r.account.setting.T_S == 12 and r.account.setting.T_K == 3
    assert r.account.eps == r.account.pld < r.account.rdp
    assert r.clip_bounds.shape == (12,) and np.all(r.clip_bounds > 0)
    S, comp = r.sample(50, rng=1)
    assert S.shape == (50, 16) and set(np.unique(comp)) <= {0, 1}
    # k-means spends T_K/(2σ_K²) in the ledger.
    km = next(n for n in r.ledger.nodes() if n.name == "kernel k-means")
    assert km.total().rho == pytest.approx(3 / (2 * 4.0))


def test_dpgm_cancel_stops_and_accounts_for_steps_run() -> None:
    X = _binary(100, 16, 6)
    state = {"n": 0}

    def cancel() -> bool:
        state["n"] += 1
        return state["n"] > 7

    p = DPGMParams(k=1, batch_size=10, epochs=5, hidden=8)
    r = dpgm(X, params=p, public_init=None, n_declared=100, delta=1e-5, rng=0, cancel=cancel)
    assert r.cancelled and r.steps_run == 7
    assert r.account.setting.T_S == 7 and r.account.setting.T_K == 0


def test_dpgm_one_model_schedule_is_flagged_and_validation() -> None:
    X = np.vstack([_binary(50, 8, 7), 1 - _binary(50, 8, 8)])
    p = DPGMParams(k=2, T_K=2, sigma_K=1.0, batch_size=10, epochs=1, hidden=8, n_features=16,
                   schedule="one_model")
    r = dpgm(X, params=p, public_init=np.vstack([X[0], X[-1]]), n_declared=100, delta=1e-5, rng=3)
    assert r.account.guarantee == "one_model" and r.account.eps == r.account.one_model
    assert r.account.one_model > r.account.rdp
    with pytest.raises(ValueError, match=r"'public_init' parameter of dpgm must be a finite \(2, 8\)"):
        dpgm(X, params=p, public_init=None, n_declared=100, delta=1e-5)
    with pytest.raises(ValueError, match="'schedule' parameter of DPGMParams"):
        DPGMParams(schedule="uniform")  # type: ignore[arg-type]


# ----------------------------------------------------------------------------- RBM


def test_rbm_per_example_norms_and_clipped_sum_match_brute_force() -> None:
    from dpviz.generative.models import RBM

    rng = np.random.default_rng(0)
    model = RBM.init(7, hidden=5, rng=rng, n_chains=6)
    model.params["W"] = rng.normal(0, 0.5, (7, 5))
    X = _binary(4, 7, 9)
    per = model.per_example(X, np.random.default_rng(1))  # advances the chains one Gibbs step
    sig = lambda z: 1 / (1 + np.exp(-z))  # noqa: E731
    V = model.chains
    Pn = sig(V @ model.params["W"] + model.params["c"])
    M_W, M_b, M_c = V.T @ Pn / V.shape[0], V.mean(0), Pn.mean(0)
    grads = []
    for x in X:
        ph = sig(x @ model.params["W"] + model.params["c"])
        g = np.concatenate([-(np.outer(x, ph) - M_W).ravel(), -(x - M_b), -(ph - M_c)])
        grads.append(g)
    G = np.array(grads)
    np.testing.assert_allclose(per.grad_norms(), np.linalg.norm(G, axis=1), rtol=1e-10)
    c = np.array([1.0, 0.5, 0.2, 0.0])
    s = per.weighted_sum(c)
    flat = np.concatenate([s["W"].ravel(), s["b"], s["c"]])
    np.testing.assert_allclose(flat, c @ G, rtol=1e-10, atol=1e-12)
    assert model.n_params == 7 * 5 + 7 + 5


def test_dpgm_trains_an_rbm_mixture() -> None:
    X = np.vstack([_binary(60, 16, 4), 1 - _binary(60, 16, 5)])
    p = DPGMParams(k=1, model="rbm", batch_size=20, epochs=1, hidden=8, lr=0.01)
    r = dpgm(X, params=p, public_init=None, n_declared=120, delta=1e-5, rng=0, X_public=X[:10])
    S, _ = r.sample(5, rng=0)
    assert S.shape == (5, 16) and r.steps_run == 6 and r.account.setting.T_S == 6
    with pytest.raises(ValueError, match="'model' parameter of DPGMParams"):
        DPGMParams(model="gan")


def test_public_marginals_set_the_decoder_bias() -> None:
    X = _binary(40, 6, 1)
    pub = np.array([[1, 0, 0, 1, 1, 0], [1, 1, 0, 0, 1, 0]], dtype=float)
    p = DPGMParams(k=1, batch_size=10, epochs=0.25, hidden=4)  # one step: the bias barely moves
    r = dpgm(X, params=p, public_init=None, n_declared=40, delta=1e-5, rng=0, X_public=pub)
    marg = np.clip(pub.mean(0), 0.01, 0.99)
    assert r.steps_run == 1
    np.testing.assert_allclose(r.models[0].params["b3"], np.log(marg / (1 - marg)), atol=0.0011)  # Adam: ≤ lr
    with pytest.raises(ValueError, match="'X_public' parameter of dpgm must have 6 columns"):
        dpgm(X, params=p, public_init=None, n_declared=40, delta=1e-5, X_public=pub[:, :3])


def test_dpgm_with_the_release_sampler_is_not_a_simulation() -> None:
    from dpviz.privacy.release import SecureRNG

    X = _binary(30, 6, 2)
    p = DPGMParams(k=1, batch_size=10, epochs=1, hidden=4)
    r = dpgm(X, params=p, public_init=None, n_declared=30, delta=1e-5, rng=SecureRNG())
    assert not r.simulation and r.seed is None and r.steps_run == 3
    assert all(np.all(np.isfinite(v)) for v in r.models[0].params.values())


def test_dpgm_params_hints_validate() -> None:
    from dpviz.registry import param_fields

    hints = {f.name: h for f, h in param_fields(DPGMParams)}
    assert hints["schedule"].choices == ("parallel", "one_model") and hints["sigma_G"].scale == "log"
    msg = r"'k' parameter of DPGMParams must be an int in the range \[1, 50\]"
    with pytest.raises(ValueError, match=msg):
        DPGMParams(k=0)
    with pytest.raises(ValueError, match="'adaptive_clip' parameter of DPGMParams must be a bool"):
        DPGMParams(adaptive_clip=1)  # type: ignore[arg-type]
