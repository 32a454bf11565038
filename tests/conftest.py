"""Shared fixtures. ``DPVIZ_SEEDS=0,1,2`` sweeps the seed fixture over several seeds."""

from __future__ import annotations

import os

import numpy as np
import pytest

_SEEDS = [int(s) for s in os.environ.get("DPVIZ_SEEDS", "0").split(",") if s.strip()]


@pytest.fixture(params=_SEEDS)
def seed(request: pytest.FixtureRequest) -> int:
    return request.param


@pytest.fixture
def rng(seed: int) -> np.random.Generator:
    return np.random.default_rng(seed)
