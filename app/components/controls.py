"""Reusable controls: the budget (the row-level ε slider, δ as a power of ten, the own-budget readout).

Each control owns one widget key (listed in ``app/main.py``) and is bound to one canonical
parameter in :mod:`app.components.state`.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import streamlit as st

from app.components import keys, state
from app.components.keys import Key

# Session keys this module owns (declared here, issue 45 item 4; keys that more than one module
# uses are in app/components/keys.py).
DELTA_SELECT: Key[float] = Key("delta_select", float, "select_slider: δ, powers of ten")
RHO_ENTRY: Key[float] = Key(
    "rho_entry", float, "number_input: a zCDP ρ typed by the user (with δ), converted once")
RHO_ENTRY_NOTE: Key[str] = Key(
    "_rho_entry_note", str, "the sentence of the last typed ρ's conversion (ρ, δ → ε, δ)")
RHO_ENTRY_NOTE_BOX: Key[object] = Key(
    "rho_entry_note", object, "container: the sentence of the last typed ρ's conversion")

#: ρ on a log grid: 10 steps per decade from 10⁻³ to 10 (values rounded to 3 digits); the Learn
#: and Budget pages' ρ axes.
RHO_GRID: tuple[float, ...] = tuple(float(f"{10 ** (i / 10):.3g}") for i in range(-30, 11))
#: δ as powers of ten.
DELTA_GRID: tuple[float, ...] = tuple(10.0 ** -e for e in range(3, 13))

_SUPERSCRIPT = str.maketrans("-0123456789", "⁻⁰¹²³⁴⁵⁶⁷⁸⁹")


def fmt_rho(v: float) -> str:
    return f"{v:g}"


def fmt_delta(v: float) -> str:
    """1e-06 → 10⁻⁶ (exact powers of ten), otherwise scientific notation."""
    e = math.log10(v)
    if abs(e - round(e)) < 1e-9:
        return "10" + str(round(e)).translate(_SUPERSCRIPT)
    return f"{v:.2g}"


def _with(grid: tuple[float, ...], value: float) -> list[float]:
    """The grid, plus ``value`` if a URL or a Budget click put an off-grid value there."""
    return sorted(set(grid) | {float(value)})


#: The row-level ε (Explore's main control for every algorithm) on a log-like grid. Its low end
#: 0.02 is where the default lesson's answer is visibly wrong (issue 43: normalized loss 0.86 at
#: ε = 0.02, 0.31 at 0.1, 0.000 at 3 on 150,000 rows; bench/teaching_default.py --losses).
EPS_GRID: tuple[float, ...] = (0.02, 0.05, 0.1, 0.2, 0.3, 0.5, 0.7, 1.0, 1.5, 2.0, 3.0, 5.0, 7.0, 10.0,
                               15.0, 20.0, 30.0)

def fmt_eps(v: float) -> str:
    return f"{v:.3g}"


def feasibility_sentence(mark: float | None, t: int) -> str:
    """One sentence on the slider's mark: from where this simulation's core forms."""
    if mark is None:
        return (f"At no ε on this slider does the core of t = {t} pieces form in this simulation "
                "(the noise on each piece's count of agreeing pieces exceeds what t pieces can "
                "give): the backup method answers; raise t or n.")
    return (f"▲ ε = {fmt_eps(mark)}: from here up FriendlyCore's core forms in this simulation; "
            "below it the backup method answers.")


def eps_slider(key: str = keys.EPS_SLIDER, *, mark: float | None = None, t: int | None = None,
               label: str = "Row-level privacy ε (the guarantee for one row of your data)") -> float:
    """The row-level ε slider, every algorithm's main control (with δ, :func:`delta_select`): the
    algorithm's own budget is planned from it (:func:`dpviz.registry.plan`) and shown as a readout.
    With ``t`` (FriendlyCore) a mark at ``mark``: the smallest ε from which its core forms in this
    simulation (``run.core_eps``: the run's own decision), with one sentence of why."""
    eps = float(state.get("eps"))
    options = _with(EPS_GRID, eps)
    state.seed_widget("eps", key)
    why = "" if t is None else (
        "\n\n" + feasibility_sentence(mark, t) + " The mark is found by running the private stage as "
        "each slider step does (a non-private diagnostic of this seeded simulation; other noise may "
        f"move it a step). Below it the noise on how many of the t = {t} pieces agree hides the "
        "agreement FriendlyCore must detect.")
    st.select_slider(
        label, options=options, format_func=fmt_eps, key=key, on_change=state.on_change("eps", key, float),
        help="The algorithm's own budget is calibrated so that adding or removing any one row changes "
             "the odds of any outcome by at most e^ε (except with probability δ). Smaller ε adds more "
             "noise (stronger privacy). Moving it reruns only the private stage." + why,
    )
    # One element for both end labels: every element of the live fragment is re-rendered by
    # the browser on each move.
    tick = ""
    if t is not None and mark is not None and float(mark) in options:
        pos = 100.0 * options.index(float(mark)) / (len(options) - 1)  # the mark is on EPS_GRID
        tick = (f"<div style='position:relative;height:1.1rem;font-size:0.8rem'><span "
                f"style='position:absolute;left:{pos:.1f}%;transform:translateX(-50%);"
                f"white-space:nowrap;color:#B34700'>▲ core forms from ε ≈ {fmt_eps(mark)}</span>"
                "</div>")
    elif t is not None:  # no tick to show: say so in one short line (the help has the sentence)
        tick = ("<div style='height:1.1rem;font-size:0.8rem;color:#B34700'>▲ the core forms at no ε "
                "of this slider here (backup answers; see ?)</div>")
    st.markdown(tick + "<div style='display:flex;justify-content:space-between;font-size:0.875rem;"
                "opacity:0.7'><span>← more privacy (more noise)</span>"
                "<span>more accuracy (less privacy) →</span></div>", unsafe_allow_html=True)
    return float(state.get("eps"))


def eps_neighbours(eps: float) -> tuple[float, ...]:
    """The ε slider's values one step below and above ``eps``."""
    return _neighbours(EPS_GRID, eps)


def _neighbours(grid: tuple[float, ...], value: float) -> tuple[float, ...]:
    """The slider's values one step below and above ``value`` (where they exist)."""
    options = _with(grid, value)
    i = options.index(float(value))
    return tuple(options[j] for j in (i - 1, i + 1) if 0 <= j < len(options))


def rho_neighbours(rho: float) -> tuple[float, ...]:
    """The ρ grid's values one step below and above ``rho`` (the Learn page's ρ slider)."""
    return _neighbours(RHO_GRID, rho)


def delta_neighbours(delta: float) -> tuple[float, ...]:
    """The δ slider's values one step below and above ``delta``."""
    return _neighbours(DELTA_GRID, delta)


def delta_select(key: str = DELTA_SELECT, *, label: str = "δ (failure probability)") -> float:
    """δ as a power of ten."""
    delta = float(state.get("delta"))
    state.seed_widget("delta", key)
    st.select_slider(
        label, options=_with(DELTA_GRID, delta), format_func=fmt_delta, key=key,
        on_change=state.on_change("delta", key, float),
        help="The row-level δ: the probability that the guarantee fails for one row. Keep it well "
             "below 1/n. The algorithm's plan splits it between its own δ and the conversion's δ′.",
    )
    return float(state.get("delta"))


#: The largest row-level δ the app takes as a target (the ``delta`` parameter's range).
MAX_TARGET_DELTA = 0.1


def _convert_typed_rho(guarantee: Callable[[float, float], Any]) -> None:
    """``rho_entry``'s callback: the typed ρ (with the selected δ) converted once by the plan's rule
    (``guarantee(rho, delta)``: ``budget_from_rho`` → ``plan_at_budget``) into the row-level target
    (ε, δ) the run is then planned from; the note says both. A budget whose row-level δ is above
    :data:`MAX_TARGET_DELTA` promises next to nothing per row: refused, with the reason."""
    rho, delta = st.session_state.get(RHO_ENTRY), float(state.get("delta"))
    if rho is None or not rho > 0:
        return
    try:
        g = guarantee(float(rho), delta)
    except ValueError as exc:
        st.session_state[RHO_ENTRY_NOTE] = f"ρ = {rho:g} was not converted: {exc}"
        return
    if g.delta > MAX_TARGET_DELTA:
        st.session_state[RHO_ENTRY_NOTE] = (
            f"ρ = {rho:g} (δ = {fmt_delta(delta)}) guarantees only δ = {g.delta:.2g} per row (above "
            f"{MAX_TARGET_DELTA:g}): no target is set from it; lower ρ.")
        return
    state.update(eps=float(g.eps), delta=float(g.delta))
    st.session_state[RHO_ENTRY_NOTE] = (
        f"Typed ρ = {rho:g} with δ = {fmt_delta(delta)}: converted once by the plan's rule into the "
        f"row-level target ε = {g.eps:.3g}, δ = {g.delta:.2g}, which the run is planned from (its own "
        "budget is the readout below).")


def rho_entry(guarantee: Callable[[float, float], Any], *, title: str = "Think in zCDP? Type a ρ") -> None:
    """A ρ the user types (with δ), for users who think in zCDP: converted once into the
    row-level target by the plan's rule (:func:`_convert_typed_rho`); the page shows both."""
    with st.expander(title):
        st.number_input("ρ (zCDP, with the δ above)", min_value=0.0, value=None, format="%.4g",
                        key=RHO_ENTRY, on_change=_convert_typed_rho, args=(guarantee,),
                        help="Converted once into the row-level (ε, δ) this own budget guarantees "
                             "(dpviz.registry.budget_from_rho, then the plan's guarantee); the ε "
                             "slider and δ then show that target. No ρ is kept.")
        note = st.session_state.get(RHO_ENTRY_NOTE)
        if note:
            with st.container(key=RHO_ENTRY_NOTE_BOX):
                st.caption(note)


def _fmt_row(eps: float, delta: float) -> str:
    return f"ε = {eps:.3g} · δ = {delta:.2g}"


def own_budget_readout(title: str, budget_kind: str, plan) -> None:
    """The algorithm's own budget under the row-level ε slider: a readout, not a control, from the
    run's ONE budget plan (:func:`dpviz.registry.plan`; ``plan.budget``, e.g. ρ for a zCDP
    algorithm)."""
    budget = None if plan is None else plan.budget
    if budget is None:
        return
    kinds = {"zcdp": "ρ-zCDP", "pure": "pure ε-DP", "approx": "(ε, δ)-DP"}
    kind = kinds.get(budget_kind, budget_kind)
    if hasattr(budget, "rho"):
        text = f"ρ = {budget.rho:.4g} (own δ = {budget.delta:.2g}, δ′ = {plan.delta_prime:.2g})"
    else:
        text = str(budget)
    st.caption(f"{title}'s own budget ({kind}), planned for this row-level target: **{text}**")


def epsilon_readout(statement=None, *, key: str = keys.EPS_READOUT, n_declared: int | None = None) -> None:
    """The privacy of this budget in words, per ROW of the user's data: the row-level (ε, δ) as
    the main number, how strong that is (:func:`dpviz.viz.privacy.strength_band`), the odds
    sentence, and the paper's per-tuple ε as a secondary line. Every number comes from the run's
    ledger (``row_level_statement``), never from the data."""
    from dpviz.viz.privacy import STRENGTH_HELP, strength_band

    with st.container(key=key):
        if statement is None:
            st.metric(ROW_METRIC, "—", help="Shown after a run (needs its ledger).")
            return
        row = statement.row
        st.metric(ROW_METRIC, _fmt_row(row.eps, row.delta),
                  help="Public guarantee for adding or removing one row of your data: the tuple "
                       "stage through group privacy (one row replaces one tuple), composed with "
                       "the row-level steps; tight zCDP → DP conversion (Canonne-Kamath-Steinke "
                       f"2020) with δ′ = {statement.delta_prime:.2g}.")
        band = strength_band(row.eps, row.delta, n_declared)
        st.markdown(f"Privacy strength: **{band.band}** ({band.reason}).", help=STRENGTH_HELP)
        st.caption(statement.odds_sentence)
        st.caption(f"Paper's unit, one k-tuple of the derived database: ε = "
                   f"{statement.paper_dp.eps:.3g} per tuple (δ = {statement.paper_dp.delta:.2g}). "
                   "Computed from ρ and δ only; this seeded run is a simulation, not a release.")
        if row.delta >= 0.5:
            st.warning(f"At this budget the per-row guarantee is vacuous (δ = {row.delta:.2g}): "
                       "it promises nothing for one person.", icon=":material/warning:")
        elif n_declared and row.delta > 1.0 / n_declared:
            st.warning(f"The per-row δ = {row.delta:.2g} exceeds 1/n = {1.0 / n_declared:.2g}: a "
                       "mechanism that publishes one random row outright meets such a δ, so the "
                       "guarantee is weak. Lower ε or δ.", icon=":material/warning:")


#: The label of the main privacy number (tests and the browser find it by this text).
ROW_METRIC = "Privacy per row of your data"
