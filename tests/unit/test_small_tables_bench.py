"""Issue 44's table statistics: draws in batches continue the same streams, the bootstrap interval
of auto ÷ best, and the chance of "within 1.25×" when auto runs exactly its choice."""

from __future__ import annotations

import numpy as np

from bench.harness import Row, Runner
from bench.small_tables import chance_at_least, null_within, ratio_interval, table


def _row() -> Row:
    def make(rng: np.random.Generator) -> tuple[np.ndarray, int, float]:
        X = np.concatenate([rng.normal(-0.5, 0.1, (40, 2)), rng.normal(0.5, 0.1, (40, 2))])
        return X, 2, 1.0
    return Row("tiny", make, "two blobs")


def test_a_second_batch_of_draws_continues_the_first_batchs_streams() -> None:
    row = _row()
    whole = Runner(epsilons=(1.0,), draws=5, verbose=False).run_row(row, (0,), ["rc_lloyd"])
    later = Runner(epsilons=(1.0,), draws=2, first_draw=3, verbose=False).run_row(row, (0,), ["rc_lloyd"])
    assert [r.draw for r in later] == [3, 4]
    assert [r.loss for r in later] == [r.loss for r in whole[3:]]
    assert len({r.loss for r in whole}) == 5  # the draws are independent, not one stream repeated


def test_ratio_interval_is_exact_for_constant_losses_and_narrow_for_many_draws() -> None:
    ci = ratio_interval([0.2] * 30, [[0.1] * 30, [0.5] * 30])
    np.testing.assert_allclose(ci, [[2.0, 2.0], [2.0, 2.0]])
    gen = np.random.default_rng(1)
    same = [list(gen.lognormal(0.0, 0.3, 400)) for _ in range(2)]
    ci = ratio_interval(same[0], [same[1]])
    observed = np.array([np.median(same[0]) / np.median(same[1]),
                         np.percentile(same[0], 90) / np.percentile(same[1], 90)])
    assert np.all(ci[:, 0] < observed) and np.all(observed < ci[:, 1])
    assert np.all(ci[:, 1] - ci[:, 0] < 0.25)  # 400 draws of a 0.3 log-sd: a narrow interval
    few = ratio_interval(same[0][:20], [same[1][:20]])
    assert np.all(few[:, 1] - few[:, 0] > ci[:, 1] - ci[:, 0])  # 20 draws: wider


def test_null_within_is_certain_for_one_constant_and_impossible_against_a_better_label() -> None:
    np.testing.assert_allclose(null_within([0.3] * 20, [0.3] * 20, [[0.9] * 20]), [1.0, 1.0])
    np.testing.assert_allclose(null_within([0.3] * 20, [0.3] * 20, [[0.1] * 20]), [0.0, 0.0])
    gen = np.random.default_rng(2)
    spread = list(gen.choice([0.1, 1.0], 60))  # bimodal: the p90 of 30 draws sits on 1.0 almost always
    p = null_within(spread[:30], spread[30:], [])
    assert 0.0 < p[0] < 1.0  # the median of a half-half mixture flips between the modes


def test_the_table_counts_a_miss_and_prints_the_interval() -> None:
    recs = [dict(table="iris", epsilon=1.0, label=lab, loss=loss, chosen="rc_lloyd" if lab == "auto" else "")
            for lab, loss in (("auto", 0.5), ("rc_lloyd", 0.2), ("origin", 3.3)) for _ in range(10)]
    text = table(recs)
    assert "median 0/1, p90 0/1" in text
    assert "2.50–2.50; 2.50–2.50" in text
    assert "missed 1.25×: iris ε=1" in text


def test_chance_at_least_is_the_poisson_binomial_tail() -> None:
    assert chance_at_least([0.5, 0.5], 1) == 0.75
    assert chance_at_least([1.0, 1.0, 0.0], 2) == 1.0
    assert chance_at_least([1.0, 1.0, 0.0], 3) == 0.0
    assert abs(chance_at_least([0.9] * 18, 17) - (0.9 ** 18 + 18 * 0.9 ** 17 * 0.1)) < 1e-12
