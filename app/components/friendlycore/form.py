"""FriendlyCore's own fields in Explore's sidebar form (``app/components/explore_form.py``): t,
the oracle, r_min and the budget-split preset (flat URL parameters ``t``, ``oracle``, ``rmin``,
``preset``; ``friendlycore.<field>`` in links). Drawn only when FriendlyCore is the algorithm.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import streamlit as st

from app.components.friendlycore import knobs
from app.components.keys import Key

# Session keys this module owns (declared here, issue 45 item 4; keys that more than one module
# uses are in app/components/keys.py).
EX_T: Key[int] = Key("ex_t", int, "sidebar form (FriendlyCore): t, 0 = automatic")
EX_ORACLE: Key[str] = Key("ex_oracle", str, "sidebar form (FriendlyCore): the oracle")
EX_RMIN: Key[float] = Key("ex_rmin", float, "sidebar form (FriendlyCore): r_min")
EX_PRESET: Key[str] = Key("ex_preset", str, "sidebar form (FriendlyCore): the budget split")

ORACLES = {"kmeans++": "k-means++ (scikit-learn KMeans)", "pca": "PCA oracle (Gaussian mixtures)"}
PRESETS = {"practical": "practical (tuned, sound)", "paper": "paper-formal constants",
           "reference": "reference"}

#: Parameter → (widget key, conversion of the widget's value) of this family's fields: the
#: parameters' names and types from the knobs' table (:mod:`app.components.friendlycore.knobs`).
FIELDS: dict[str, tuple[str, Callable[[Any], Any]]] = {
    knob.param: (widget, knob.kind) for knob, widget in (
        (knobs.T, EX_T), (knobs.ORACLE, EX_ORACLE), (knobs.R_MIN, EX_RMIN), (knobs.PRESET, EX_PRESET))}
#: Whole-number fields checked by the form itself: (parameter, widget key, label, low, high).
#: None here: t has its own check (0 is automatic, :func:`check`).
LIMITS: tuple[tuple[str, str, str, int, int], ...] = ()


def check() -> dict[str, str]:
    """Messages of this family's fields out of range (by widget key): t not 0 (automatic) and
    not a whole number from 2 to 5,000; r_min ≤ 0."""
    errors = {}
    t = st.session_state.get(EX_T)
    if EX_T in st.session_state and (t is None or not float(t).is_integer()
                                       or not (t == 0 or 2 <= t <= 5000)):
        shown = "empty" if t is None else f"{t:g}"
        errors[EX_T] = (f"t must be a whole number from 2 to 5,000 (got {shown}), or 0 for "
                          "automatic; nothing was changed and the previous result stays.")
    rmin = st.session_state.get(EX_RMIN, 1.0)
    if rmin is None or not rmin > 0:
        errors[EX_RMIN] = "r_min must be above 0; nothing was changed."
    return errors


def beside_k(message: Callable[[str], None]) -> None:
    """The fields in the column beside k, and under it (t, the oracle)."""
    st.number_input("t (tuples)", step=10, key=EX_T,
                    help="Number of pieces, 2 to 5,000, or 0 for automatic (chosen from the "
                         "declared n and k by FriendlyCore's own rule, public inputs only). Each "
                         "piece needs at least k rows; the paper uses t = 200. More tuples make the "
                         "private filters work with less ρ but leave fewer rows per piece.")
    message(EX_T)


def under_k() -> None:
    st.selectbox("Oracle (non-private, per piece)", list(ORACLES), format_func=ORACLES.get,
                 key=EX_ORACLE)


def after_radius(message: Callable[[str], None]) -> None:
    """The fields after the public radius (r_min, the preset)."""
    st.number_input("r_min (smallest radius searched)", format="%.4g", key=EX_RMIN)
    message(EX_RMIN)
    st.selectbox("Budget split preset", list(PRESETS), format_func=PRESETS.get, key=EX_PRESET)
