"""FriendlyCore's refactors move no number: today's fixed-seed runs equal the pinned ones.

The pins (``data/fc_pins.*``) were written by ``_fc_pins.py`` on main at 8d1b23e, before the
issue-11 library clean-ups, and re-written once when issue 24 keyed every int seed on its consumer
(a pure stream derivation: the same data, the same branches); see that module. Re-written once
more, intentionally, by issue 33: the practical split's FriendlyCore filters now run with the
known size n̄ = t (no n̂ draw, exact Gaussian tail) and its Lloyd floor is 0.05, which changes the
noise draws, the split and the ledger rows of every practical run (the paper preset's run moves
not at all: its ledger and draws are as pinned). The streamed runs' match-core note is pinned as it is now.
Every numeric value of every trace step, ledger row
(ρ, δ, σ, sensitivity), parameter and the centers must agree to 1e-12 relative; every string,
None, boolean, step name and long integer array (by digest) exactly.
"""

from __future__ import annotations

import json

import numpy as np
import pytest
from _fc_pins import JSON, NPZ, all_fingerprints

#: Intended changes since the pins were last written (none: issue 33 re-wrote them).
INTENDED: dict[str, str] = {}


@pytest.fixture(scope="module")
def today():
    return all_fingerprints()


@pytest.fixture(scope="module")
def pinned():
    with np.load(NPZ) as z:
        num = {key: z[key] for key in z.files}
    other = json.loads(JSON.read_text())
    assert {key: other[key] for key in INTENDED} == dict.fromkeys(INTENDED, "")  # what they were
    return num, other | INTENDED


def test_same_keys_and_strings(today, pinned):
    num, other = today
    assert sorted(num) == sorted(pinned[0])
    assert json.loads(json.dumps(other, ensure_ascii=False)) == pinned[1]


def test_same_numbers_to_1e_12(today, pinned):
    num, _ = today
    bad = []
    for key, want in pinned[0].items():
        got = num[key]
        if got.shape != want.shape or got.dtype.kind != want.dtype.kind:
            bad.append(f"{key}: shape/dtype {got.shape} {got.dtype} != {want.shape} {want.dtype}")
        elif not np.allclose(got, want, rtol=1e-12, atol=0.0, equal_nan=True):
            bad.append(f"{key}: max |Δ| {np.nanmax(np.abs(got - want))}")
    assert not bad, "\n".join(bad[:20])


def test_the_pins_cover_both_branches(pinned):
    other = pinned[1]
    assert other["ok|failure"] is None and other["stream_ok|failure"] is None
    assert other["bot_nofallback|failure"] == "FC_kTupleClustering output ⊥"
    used = {key.split("|")[0]: v for key, v in other.items() if key.endswith(":fallback/used")}
    assert used == {"ok": False, "ok_dp_count": False, "bot_fallback": True, "bot_nofallback": False,
                    "paper_preset": True, "bot_fallback_d5": True, "stream_ok": False, "stream_bot": True,
                    "registry": False, "registry_bot": True}
