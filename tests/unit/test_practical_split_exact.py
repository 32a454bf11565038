"""The practical optimizer's cached margin brackets change no number (issue 27, ε step ≤ 0.3 s).

A calibration evaluates the practical split at ~50 totals ρ; the optimizer now answers most of its
"does this part reach the target margin?" questions from a bracket of the part's ρ cached per test
and target (a margin depends on its part only). This checks the answers, hence every fraction,
are bit-identical to evaluating each margin, on random public inputs.
"""

from __future__ import annotations

import math

from hypothesis import given, settings
from hypothesis import strategies as st

from dpviz.clustering.friendlycore import budget as fcb
from dpviz.clustering.friendlycore.budget import practical_split
from dpviz.privacy.budget import ZCDP


def _direct_split(*, t, k, rho, delta, r_min, radius, fallback):
    """The optimizer as it was: every candidate fraction's margin evaluated (ZCDP.split)."""
    fb = fcb._FALLBACK_SHARE if fallback else 0.0
    proto = fcb.FCSplit(rho={"match_core": 0.25, "find_diam": 0.25, "dist_core": 0.25,
                             "tuple_avg": 0.125, "lloyd": 0.125})
    c = max(1.0, proto.core_guess * t)
    q = max(1, fcb.find_diam_calls(r_min, 2.0 * radius, 1.5))
    total = ZCDP(rho, delta)

    def needed(name, target):
        key = fcb.MARGIN_PART[name]

        def reaches(f):
            part = total.split({key: f}, {key: fcb.PAPER_DELTA.get(key, 0.0)})[key]
            # the practical split runs both filters with the known size n̄ = t (issue 33)
            return fcb._margin(name, part, t=t, c=c, k=k, beta=proto.diam_beta, q=q,
                               known=True) >= target
        return fcb._fraction_needed(reaches)

    room = 1.0 - fb - sum(fcb._MIN_SHARE.values())

    def needs(s):
        return {name: needed(name, s * fcb._TARGET_MARGIN[name]) for name in fcb.MARGIN_PART}

    need = needs(1.0)
    if sum(need.values()) > room:
        lo, hi = -3.0, 1.0
        for _ in range(16):
            mid = (lo + hi) / 2
            lo, hi = (mid, hi) if sum(needs(mid).values()) <= room else (lo, mid)
        need = needs(lo)
        if sum(need.values()) > room:
            need = {name: room / 3 for name in fcb.MARGIN_PART}
    return need


@settings(max_examples=60, deadline=None)
@given(t=st.integers(20, 3000), k=st.integers(1, 20),
       log_rho=st.floats(math.log(1e-4), math.log(50.0)),
       log_delta=st.floats(math.log(1e-12), math.log(1e-2)),
       r_min=st.sampled_from([1e-4, 1e-3, 1e-2]), fallback=st.booleans())
def test_cached_brackets_give_the_same_fractions_bit_for_bit(t, k, log_rho, log_delta, r_min, fallback):
    kw = dict(t=t, k=k, rho=math.exp(log_rho), delta=math.exp(log_delta), r_min=r_min, radius=1.0,
              fallback=fallback)
    split = practical_split(**kw)
    need = _direct_split(**kw)
    assert split.rho["match_core"] == need[fcb.MARGIN_MATCH]
    assert split.rho["dist_core"] == need[fcb.MARGIN_DIST]
    assert split.rho["find_diam"] == need[fcb.MARGIN_DIAM]
