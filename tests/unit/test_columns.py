"""Upload hygiene (issue 16, analyst): likely id/label columns, a text preview, filling missing
values with a declared constant, and scaling by declared bounds vs by the data (not private)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from dpviz.data import load_csv
from dpviz.data.columns import (
    SCALED_BY_BOUNDS,
    SCALED_BY_DATA,
    likely_id_columns,
    scale_by_bounds,
    scale_by_data,
    suggest_bounds,
)


def _csv() -> bytes:
    rng = np.random.default_rng(3)
    n = 200
    lines = ["customer_id,rownum,age,income,segment,target,note"]
    for i in range(n):
        age = "" if i % 20 == 7 else f"{rng.normal(40, 10):.1f}"
        lines.append(f"{1000 + 7 * i},{i + 1},{age},{rng.normal(50_000, 9_000):.0f},"
                     f"{rng.integers(0, 4)},{rng.integers(0, 3)},hello")
    return ("\n".join(lines) + "\n").encode()


def test_likely_ids_by_name_and_by_values():
    v = np.column_stack([np.arange(60.0), np.arange(60.0)[::-1] * 3, np.r_[np.arange(59.0), np.nan],
                         np.random.default_rng(0).permutation(60).astype(float),
                         np.arange(60) % 4, np.random.default_rng(1).normal(size=60)])
    names = ["customerId", "count_down", "x", "shuffled", "segment", "income"]
    got = likely_id_columns(v, names)
    assert set(got) == {"customerId", "count_down", "x", "shuffled", "segment"}
    assert "identifier" in got["customerId"] and "only go up" in got["count_down"]
    assert "only go up" in got["x"]  # the missing cell is ignored
    assert "different whole number" in got["shuffled"] and "4 different" in got["segment"]
    assert likely_id_columns(v[:, :1], ["label"]) == {"label": "its name 'label' says it is a label"}
    assert likely_id_columns(v[:, 5:6], ["y"]) == {}  # a coordinate called y is a feature


def test_load_csv_flags_ids_gives_a_text_preview_and_fills_missing_with_a_constant():
    raw = _csv()
    first = load_csv(raw)
    ids = dict(first.likely_ids)
    assert set(ids) == {"customer_id", "rownum", "segment", "target"}
    assert first.preview[0] == ("customer_id", "rownum", "age", "income", "segment", "target", "note")
    assert len(first.preview) == 6 and first.preview[1][6] == "hello"
    assert dict(first.missing_by_column)["age"] == 10
    dropped = load_csv(raw, columns=["age", "income"])
    assert dropped.dataset.n == 190 and dropped.dropped_rows == 10
    filled = load_csv(raw, columns=["age", "income"], impute={"age": 40.0})
    assert filled.dataset.n == 200 and filled.dropped_rows == 0
    assert filled.dataset.X[7, 0] == 40.0 and filled.dataset.params["imputed"] == {"age": 40.0}
    assert any("declared constants" in m for m in filled.messages)
    with pytest.raises(ValueError, match="not one of the chosen columns"):
        load_csv(raw, columns=["income"], impute={"age": 1})
    with pytest.raises(ValueError, match="finite number"):
        load_csv(raw, columns=["age"], impute={"age": "nan"})


def test_scale_by_declared_bounds_is_exact_clips_and_declares_lambda():
    ds = load_csv(_csv(), columns=["age", "income"], impute={"age": 40.0}).dataset
    out = scale_by_bounds(ds, [0, 0], [100, 100_000])
    assert np.allclose(out.X, np.clip((ds.X - [50, 50_000]) / [50, 50_000], -1, 1), atol=0, rtol=0)
    assert out.radius == math.sqrt(2) and out.params["scaled"] == SCALED_BY_BOUNDS
    assert out.params["bounds"] == {"age": [0.0, 100.0], "income": [0.0, 100_000.0]}
    tight = scale_by_bounds(ds, [30, 0], [50, 100_000])
    assert np.abs(tight.X).max() == 1.0 and tight.params["rows_clipped_to_bounds"] > 0
    with pytest.raises(ValueError, match="above its lower bound"):
        scale_by_bounds(ds, [0, 5], [100, 5])


def test_scale_by_data_says_not_private_and_suggested_bounds_round_outward():
    ds = load_csv(_csv(), columns=["age", "income"], impute={"age": 40.0}).dataset
    z = scale_by_data(ds)
    assert z.params["scaled"] == SCALED_BY_DATA and "NOT private" in SCALED_BY_DATA
    assert z.radius is None
    assert np.allclose(z.X.mean(axis=0), 0, atol=1e-12) and np.allclose(z.X.std(axis=0), 1)
    lo, hi = suggest_bounds(np.array([[12.34, -0.0567], [98.7, 5120.0]]))
    assert lo.tolist() == pytest.approx([12.0, -0.057]) and hi.tolist() == pytest.approx([99.0, 5200.0])
