import numpy as np
import pytest

from dpviz.privacy import ZCDP, ApproxDP, Ledger, gaussian


def test_sequential_total_adds_and_parallel_takes_max():
    root = Ledger("root", ZCDP(1.0, 1e-6))
    a = root.child("a", ZCDP(0.4, 5e-7))
    a.record("x", "gaussian", ZCDP(0.1))
    a.record("y", "gaussian", ZCDP(0.3))
    a.record_event("event", 5e-7)
    par = root.child("lloyd", ZCDP(0.6, 5e-7), composition="parallel")
    for i in range(3):
        c = par.child(f"cluster {i}")
        c.record("sum", "gaussian", ZCDP(0.6))
        c.record_event("n̂", 5e-7)
    total = root.total()
    assert total.rho == pytest.approx(1.0)
    assert total.delta == pytest.approx(1e-6)
    root.check()


def test_check_fails_loudly_on_overspend():
    root = Ledger("root", ZCDP(0.5, 0.0))
    root.record("too much", "gaussian", ZCDP(0.6))
    with pytest.raises(RuntimeError, match="spent"):
        root.check()


def test_units_are_inherited_and_filterable():
    root = Ledger("root", ZCDP(1.0, 1e-6))
    t = root.child("tuples", unit="tuple")
    t.child("core").record("scores", "gaussian", ZCDP(0.5, 0.0))
    root.record("lloyd", "gaussian", ZCDP(0.25))
    root.record("dp", "laplace", ApproxDP(0.5))  # ε-DP counts as ε²/2 = 0.125
    assert root.total("tuple").rho == pytest.approx(0.5)
    assert root.total("row").rho == pytest.approx(0.375)
    assert [s.unit for _, s in root.spends()] == ["tuple", "row", "row"]


def test_gaussian_records_sigma_formula_and_noise_has_that_std():
    rng = np.random.default_rng(0)
    led = Ledger("root", ZCDP(0.5))
    out = gaussian(np.zeros(200_000), sensitivity=3.0, rho=0.5, rng=rng, ledger=led, name="g")
    spend = next(s for _, s in led.spends())
    expected = 3.0 / np.sqrt(2 * 0.5)
    assert spend.noise_scale == pytest.approx(expected, rel=1e-12)
    assert spend.sensitivity == 3.0
    assert np.std(out) == pytest.approx(expected, rel=0.01)  # 200k draws: sd of the sd ≈ 0.16%


def test_to_rows_has_one_row_per_node_and_spend_with_totals():
    root = Ledger("root", ZCDP(1.0, 1e-6))
    c = root.child("c")
    c.record("x", "gaussian", ZCDP(0.7), noise_scale=2.0)
    root.record_event("e", 1e-6)
    rows = root.to_rows()
    assert len(rows) == 4
    by_label = {r["label"]: r for r in rows}
    assert by_label["root"]["rho"] == pytest.approx(0.7)
    assert by_label["c"]["parent"] == "root"
    assert by_label["x"]["noise_scale"] == 2.0
    ids = [r["id"] for r in rows]
    assert len(set(ids)) == len(ids)
