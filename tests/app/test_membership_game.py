"""Issue 36: the Learn page's membership game — you guess whether Alice's row is in, against a real
private release (``dpviz.run``), and after the rounds see your hit rate beside the best any
attacker can do at that (ε, δ)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from apptest_helpers import container, has_container, metric, open_app

import dpviz
from app.components import membership

GAME = "_membership_game"


@pytest.mark.parametrize("eps", [0.0, 0.1, 1.0, 3.0, 10.0])
@pytest.mark.parametrize("delta", [0.0, 1e-5, 0.05])
def test_the_bound_is_the_best_accuracy_the_dp_testing_region_allows(eps: float, delta: float):
    """(e^ε + δ)/(1 + e^ε) equals the largest (TPR + 1 − FPR)/2 over all (FPR, TPR) with
    TPR ≤ e^ε·FPR + δ and 1 − FPR ≤ e^ε·(1 − TPR) + δ (Kairouz et al. 2015, Thm 2.1), found here
    by brute force over a fine grid of FPR."""
    fpr = np.linspace(0.0, 1.0, 200_001)
    tpr = np.minimum.reduce([np.exp(eps) * fpr + delta,
                             1.0 - (1.0 - fpr - delta) * np.exp(-eps),
                             np.ones_like(fpr)])
    best = float(np.max((tpr + 1.0 - fpr) / 2.0))
    assert membership.attacker_bound(eps, delta) == pytest.approx(best, abs=1e-5)
    assert membership.attacker_bound(0.0, 0.0) == 0.5  # a coin flip


def test_a_round_is_a_dpviz_run_on_the_world_the_coin_chose():
    key, eps = 2026, 3.0
    r = membership.play_round(key, 4, eps)
    data = np.random.default_rng(np.random.SeedSequence(key, spawn_key=(4, membership.DATA)))
    np.testing.assert_array_equal(r.others, membership.others_rows(data))
    X = np.vstack([r.others, membership.ALICE]) if r.inside else r.others
    noise = np.random.default_rng(np.random.SeedSequence(key, spawn_key=(4, membership.NOISE)))
    direct = dpviz.run("dp_lloyd", X, 1, epsilon=eps, delta=membership.DELTA, radius=1.0,
                       n_declared=membership.N_DECLARED, rng=noise, iters=1)
    np.testing.assert_array_equal(r.centers, direct.centers)
    assert (r.eps, r.delta) == (direct.guarantee.eps, direct.guarantee.delta)
    assert r.eps == pytest.approx(eps, rel=1e-4) and r.delta <= membership.DELTA
    assert np.linalg.norm(membership.ALICE) <= 1.0  # inside the declared Λ: her row is used


def test_the_coin_the_data_and_the_noise_are_three_streams():
    """Round r's coin comes from its own spawn key: the same data can come with either coin, and
    the coins of a game are not the data stream's draws."""
    key = 7
    coins = [membership.play_round(key, i, 1.0).inside for i in range(40)]
    firsts = [np.random.default_rng(np.random.SeedSequence(key, spawn_key=(i, membership.DATA)))
              .random() < 0.5 for i in range(40)]
    assert 5 < sum(coins) < 35  # a fair coin over 40 rounds (fixed key)
    assert coins != firsts
    assert len({membership.DATA, membership.COIN, membership.NOISE}) == 3


def test_an_attacker_does_better_than_chance_at_eps_10_and_never_beats_the_bound():
    """400 rounds at ε = 10 (fixed key): guessing "in" when the release is nearer the center
    with Alice than the one without is right well above half the time, and below the bound
    (≈ 1 at ε = 10) — and at ε = 0.1 it is a coin flip within sampling error."""
    def rate(eps: float) -> float:
        hits = []
        for i in range(400):
            r = membership.play_round(11, i, eps)
            out_c, in_c = membership.noiseless_centers(r.others, r.alice)
            says_in = np.linalg.norm(r.centers[0] - in_c) < np.linalg.norm(r.centers[0] - out_c)
            hits.append(says_in == r.inside)
        return float(np.mean(hits))

    high, low = rate(10.0), rate(0.1)
    assert 0.6 < high <= membership.attacker_bound(10.0, membership.DELTA)
    assert abs(low - 0.5) < 0.08  # sd of 400 coin flips: 2.5 points
    assert low <= membership.attacker_bound(0.1, membership.DELTA) + 0.08


def _play(at, *, right: bool) -> None:
    """Play every round, guessing the coin right (or wrong) each time."""
    for _ in range(membership.ROUNDS):
        game = at.session_state[GAME]
        coin = membership.play_round(game["key"], len(game["guesses"]), game["eps"]).inside
        at.button(key="mi_guess_in" if coin == right else "mi_guess_out").click().run()
        assert not at.exception


def test_the_game_shows_a_release_takes_guesses_and_scores_them_against_the_bound():
    at = open_app("learn")
    assert not at.exception
    assert has_container(at, "learn_mia_badge")  # a simulation, and it says so
    assert any(c.value.replace("\\", "").startswith("Chart: Round 1: the private center is at")
               for c in container(at, "mi_round_alt").caption)  # (Markdown-escaped)
    _play(at, right=True)
    assert metric(at, f"Your hit rate, {membership.ROUNDS} rounds") == "100%"
    eps, delta = at.session_state[GAME]["guarantee"]
    assert eps == pytest.approx(1.0, rel=1e-4)
    assert metric(at, "Best possible attacker") == f"{(math.exp(eps) + delta) / (1 + math.exp(eps)):.1%}"
    assert metric(at, "Best possible attacker") == "73.1%"
    # 10 of 10 beats the 73.1% bound: said to be luck, with its chance, never "meets the bound"
    words = " ".join(str(m.value) for m in container(at, "mi_result").markdown)
    luck = sum(math.comb(10, j) * 0.731**j * 0.269 ** (10 - j) for j in range(10, 11))
    assert "above the 73.1% bound, by luck" in words, words
    assert f"with probability {luck:.0%}" in words, words
    assert "meets the bound" not in " ".join(str(m.value) for m in at.markdown)

    at.button(key="mi_again").click().run()
    at.select_slider(key="learn_mia_eps").set_value(10.0).run()
    _play(at, right=False)
    assert metric(at, f"Your hit rate, {membership.ROUNDS} rounds") == "0%"
    assert metric(at, "Best possible attacker") == "100.0%"


def test_the_coin_is_not_in_the_link_and_a_new_eps_starts_a_new_game():
    one, two = open_app("learn", seed="5"), open_app("learn", seed="5")
    k1, k2 = one.session_state[GAME]["key"], two.session_state[GAME]["key"]
    assert k1 != k2  # OS entropy per session: the same link gives another game
    assert str(k1) not in " ".join(f"{k}={v}" for k, v in one.query_params.items())
    one.button(key="mi_guess_in").click().run()
    assert len(one.session_state[GAME]["guesses"]) == 1
    one.select_slider(key="learn_mia_eps").set_value(5.0).run()
    game = one.session_state[GAME]
    assert game["eps"] == 5.0 and game["guesses"] == [] and game["key"] != k1


@pytest.mark.parametrize(("hits", "p"), [(8, 0.731), (10, 0.5), (0, 0.9), (7, 0.731)])
def test_the_chance_of_a_lucky_run_is_the_binomial_tail(hits: int, p: float):
    """P[Binomial(10, p) ≥ hits], checked against a simulation of 200,000 ten-round games."""
    rng = np.random.default_rng(43)
    games = (rng.random((200_000, 10)) < p).sum(axis=1)
    assert membership.chance_at_least(hits, 10, p) == pytest.approx(np.mean(games >= hits), abs=4e-3)
    if hits / 10 > p:
        assert "by luck" in membership.verdict(hits, 10, p)
    else:
        assert "within the bound" in membership.verdict(hits, 10, p)

