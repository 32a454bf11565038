import pytest

from dpviz.privacy import ZCDP, ApproxDP


def test_split_named_fractions():
    parts = ZCDP(1.0, 1e-8).split({"core": 0.1, "avg": 0.9}, {"core": 0.5, "avg": 0.5})
    assert parts["core"] == ZCDP(0.1, 5e-9)
    assert parts["avg"].rho == pytest.approx(0.9)
    assert parts["avg"].delta == pytest.approx(5e-9)


def test_split_delta_defaults_to_rho_fractions_and_missing_names_get_zero():
    parts = ZCDP(2.0, 1e-6).split({"a": 0.25, "b": 0.75})
    assert parts["a"] == ZCDP(0.5, 2.5e-7)
    parts = ZCDP(1.0, 1e-6).split({"a": 1.0}, {"b": 1.0})
    assert parts["a"] == ZCDP(1.0, 0.0) and parts["b"] == ZCDP(0.0, 1e-6)


@pytest.mark.parametrize(
    "fractions, match",
    [({"a": 0.6, "b": 0.5}, "sum to at most 1"), ({"a": -0.1}, "must be a float in"), ({}, "at least one")],
)
def test_split_rejects_bad_fractions(fractions, match):
    with pytest.raises(ValueError, match=match):
        ZCDP(1.0, 1e-6).split(fractions)


@pytest.mark.parametrize("rho, delta", [(-1.0, 0.0), (float("inf"), 0.0), (1.0, 1.0), (1.0, -1e-9)])
def test_zcdp_validation(rho, delta):
    with pytest.raises(ValueError, match="ZCDP budget"):
        ZCDP(rho, delta)


def test_approxdp_to_zcdp_is_eps_squared_over_two():
    assert ApproxDP(0.5, 1e-6).to_zcdp() == ZCDP(0.125, 1e-6)
    with pytest.raises(ValueError, match="'eps'"):
        ApproxDP(-0.1)
