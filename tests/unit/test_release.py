"""The release path (issue 10): simulations are replayable, releases are not.

A simulation (an int seed) stores its seed, and the seed gives back the exact non-private means;
a release (SecureRNG) stores no seed, draws independent noise every time, and exports without one.
"""

import json
import math

import numpy as np
import pytest

from dpviz._validation import check_rng
from dpviz.clustering.baselines import dp_lloyd, dp_lloyd_sigmas
from dpviz.privacy.budget import ZCDP, ApproxDP
from dpviz.privacy.ledger import Ledger
from dpviz.privacy.mechanisms import gaussian, laplace
from dpviz.privacy.release import SecureRNG, export_release, is_secure
from dpviz.result import Result

K, RHO, RADIUS = 3, 0.5, 1.0
INIT = np.array([[-0.4, 0.0], [0.4, 0.0], [0.0, 0.4]])  # public initial centers


@pytest.fixture(scope="module")
def data() -> np.ndarray:
    rng = np.random.default_rng(5)
    centers = np.array([[-0.5, 0.0], [0.5, 0.0], [0.0, 0.5]])
    return np.concatenate([c + rng.normal(0, 0.03, (400, 2)) for c in centers])


def _replay_means(res: Result, X: np.ndarray, seed: int) -> np.ndarray:
    """The attack: replay dp_lloyd's generator from the seed, subtract the noise (iters=1).

    The seed is keyed on the algorithm's public name (issue 24), which hides nothing: the attack
    derives the same stream."""
    gen = check_rng(seed, "algorithm:dp_lloyd")[0]
    sig_sum, sig_count = dp_lloyd_sigmas(rho=RHO, radius=RADIUS, iters=1)
    it = res.step("iteration").data
    means = np.empty((K, X.shape[1]))
    for j in range(K):
        noise_sum = gen.normal(0.0, sig_sum, size=X.shape[1])
        noise_count = float(gen.normal(0.0, sig_count, size=()))
        noisy_sum = it["centers"][j] * it["noisy_counts"][j]
        means[j] = (noisy_sum - noise_sum) / (it["noisy_counts"][j] - noise_count)
    return means


def _true_means(X: np.ndarray) -> np.ndarray:
    labels = np.argmin(((X[:, None, :] - INIT[None]) ** 2).sum(axis=2), axis=1)
    return np.stack([X[labels == j].mean(axis=0) for j in range(K)])


def test_simulation_seed_recovers_the_nonprivate_means(data) -> None:
    """Finding 1: from one seeded run and its seed the exact cluster means come back."""
    res = dp_lloyd(data, K, rho=RHO, radius=RADIUS, iters=1, init=INIT, rng=12345)
    assert res.simulation and res.seed == 12345
    means = _replay_means(res, data, res.seed)
    true = _true_means(data)
    np.testing.assert_allclose(means, true, atol=1e-9)  # noise sd is ~0.003: exact recovery
    assert np.max(np.abs(res.centers - true)) > 1e-4  # ...while the release itself is noisy


def test_release_carries_no_seed_and_is_not_a_simulation(data) -> None:
    res = dp_lloyd(data, K, rho=RHO, radius=RADIUS, iters=1, init=INIT, rng=SecureRNG())
    assert res.seed is None and not res.simulation
    assert "seed" not in json.dumps(dict(res.params), default=str)
    # The replay attack needs a seed; the one a seeded simulation would use gives garbage here.
    means = _replay_means(res, data, 12345)
    assert np.max(np.abs(means - _true_means(data))) > 1e-4


def test_result_with_a_seed_cannot_claim_to_be_a_release() -> None:
    with pytest.raises(ValueError, match="simulation"):
        Result(None, None, Ledger("x"), seed=3, simulation=False)


def test_unseeded_numpy_run_keeps_no_seed() -> None:
    gen, seed = check_rng(None, "algorithm:dp_lloyd")
    assert seed is None and isinstance(gen, np.random.Generator)
    s = SecureRNG()
    assert check_rng(s, "algorithm:dp_lloyd") == (s, None) and is_secure(s) and not is_secure(gen)


def test_two_releases_draw_independent_noise(data) -> None:
    a = dp_lloyd(data, K, rho=RHO, radius=RADIUS, iters=1, init=INIT, rng=SecureRNG())
    b = dp_lloyd(data, K, rho=RHO, radius=RADIUS, iters=1, init=INIT, rng=SecureRNG())
    assert not np.array_equal(a.centers, b.centers)
    # Noise of many releases of the same value: uncorrelated pairs, the calibrated sd.
    led = Ledger("t", None)
    s = SecureRNG()
    x = np.array([gaussian(np.zeros(2000), sensitivity=1.0, rho=0.5, rng=s, ledger=led, name="a")
                  for _ in range(2)])
    r = np.corrcoef(x[0], x[1])[0, 1]
    assert abs(r) < 4 / math.sqrt(2000)  # 4 sd of the null correlation
    sigma = 1.0 / math.sqrt(2 * 0.5)
    assert abs(x.std() / sigma - 1) < 0.05  # sd within 5% (4000 draws: 2.2% is 2 sd)
    assert led.children[0].noise_scale == sigma


def test_secure_laplace_scale_and_opendp_privacy_map() -> None:
    s = SecureRNG()
    led = Ledger("t", None)
    x = laplace(np.zeros(4000), sensitivity=2.0, eps=1.0, rng=s, ledger=led, name="l")
    # Lap(b) has mean |x| = b = Δ/ε = 2.
    assert abs(np.mean(np.abs(x)) / 2.0 - 1) < 0.06
    # OpenDP's own privacy map agrees with our Gaussian calibration: σ = Δ/√(2ρ) ⇒ ρ.
    from dpviz.privacy.release import _gaussian_measurement
    assert _gaussian_measurement(2.0).map(1.0) == pytest.approx(1.0 / (2 * 2.0**2))
    with pytest.raises(NotImplementedError, match="Gumbel"):
        s.gumbel(size=3)


def test_export_refuses_a_simulation_and_has_no_seed(data) -> None:
    import dpviz

    sim = dpviz.run("dp_lloyd", data, K, epsilon=2.0, delta=1e-6, radius=RADIUS, n_declared=len(data),
                    rng=7, iters=1)
    with pytest.raises(ValueError, match="simulation"):
        export_release(sim, dataset={"name": "x"})
    # A direct call has no plan built from declared inputs: refused (issue 34, finding A).
    direct = dp_lloyd(data, K, rho=RHO, radius=RADIUS, iters=1, rng=SecureRNG())
    with pytest.raises(ValueError, match="no budget plan built from declared inputs"):
        export_release(direct, delta_prime=1e-6, dataset={"name": "x"})
    rel = dpviz.run("dp_lloyd", data, K, epsilon=2.0, delta=1e-6, radius=RADIUS, n_declared=len(data),
                    rng=SecureRNG(), iters=1)
    text = export_release(rel, dataset={"name": "x", "sha256": "ab"}, session_total=ApproxDP(1.0, 1e-6))
    out = json.loads(text)
    assert "seed" not in text.lower()
    assert np.allclose(out["centers"], rel.centers)
    assert out["privacy"]["neighbouring_relation"].startswith("add/remove one row")
    assert out["privacy"]["zcdp_total"]["rho"] == pytest.approx(rel.ledger.total().rho)
    assert math.isfinite(out["privacy"]["row_level_eps"]) and out["ledger"][0]["label"] == "dp_lloyd"


def test_zcdp_budget_unchanged_by_secure_sampler() -> None:
    led = Ledger("t", ZCDP(0.3))
    gaussian(1.0, sensitivity=1.0, rho=0.3, rng=SecureRNG(), ledger=led, name="g")
    led.check()
    assert led.total() == ZCDP(0.3)


def test_friendlycore_release_end_to_end_keeps_no_seed() -> None:
    """The whole pipeline (pieces, oracle, private stage) runs on the release sampler."""
    from dpviz.clustering.friendlycore.pipeline import fc_clustering
    from dpviz.data.generators import fig6_blobs
    from dpviz.registry import run

    X = fig6_blobs(6000, k=4, rng=0).X
    res = fc_clustering(X, 4, rho=1.0, delta=1e-8, n_tuples=60, radius=1.0, r_min=1e-3,
                        rng=SecureRNG(), n_declared=6000)
    assert not res.simulation and res.seed is None and res.centers.shape == (4, 2)
    assert res.step("declared_size").data == dict(n_declared=6000, source="declared", rho=0.0,
                                                  sigma=None)
    reg = run("friendlycore", X, 4, epsilon=3.0, delta=1e-6, radius=1.0, rng=SecureRNG())
    assert not reg.simulation and reg.seed is None and reg.guarantee.eps <= 3.0 + 1e-9
    seeded = run("friendlycore", X, 4, epsilon=3.0, delta=1e-6, radius=1.0, rng=5, n_declared=6000)
    assert seeded.simulation  # a seeded registry run is a simulation
