"""Reusable controls: the budget (log-ρ slider, δ as a power of ten, ρ → ε readout).

Each control owns one widget key (listed in ``app/main.py``) and is bound to one canonical
parameter in :mod:`app.components.state`.
"""

from __future__ import annotations

import math

import streamlit as st

from app.components import state

#: ρ on a log grid: 10 steps per decade from 10⁻³ to 10 (values rounded to 3 digits).
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


def feasibility_sentence(mark: float | None, t: int) -> str:
    """One sentence on the slider's mark: from where this simulation's core forms."""
    if mark is None:
        return (f"At no ρ on this slider does the core of t = {t} pieces form in this simulation "
                "(the noise on each piece's count of agreeing pieces exceeds what t pieces can "
                "give): the backup method answers; raise t or n.")
    return (f"▲ ρ = {fmt_rho(mark)}: from here up FriendlyCore's core forms in this simulation; "
            "below it the backup method answers.")


def rho_slider(key: str = "rho_slider", *, label: str = "Privacy budget ρ (zCDP)",
               mark: float | None = None, t: int | None = None) -> float:
    """The log-scale ρ slider with "more privacy ↔ more accuracy" end labels and, when ``t`` is
    given, a mark at ``mark``: the smallest ρ from which FriendlyCore's core forms in this
    simulation (``run.core_rho``: the run's own decision), with one sentence of why."""
    rho = float(state.get("rho"))
    options = _with(RHO_GRID, rho)
    state.seed_widget("rho", key)
    why = "" if t is None else (
        "\n\n" + feasibility_sentence(mark, t) + " The mark is found by running the private stage as "
        "each slider step does (a non-private diagnostic of this seeded simulation; other noise may "
        f"move it a step). Below it the noise on how many of the t = {t} pieces agree hides the "
        "agreement FriendlyCore must detect.")
    st.select_slider(
        label, options=options, format_func=fmt_rho, key=key,
        on_change=state.on_change("rho", key, float),
        help="ρ-zCDP: smaller ρ adds more noise (stronger privacy). The slider is logarithmic: "
             "each step multiplies ρ by about 1.26. Moving it reruns only the private stage." + why,
    )
    # One element for both end labels: every element of the live fragment is re-rendered by
    # the browser on each move.
    tick = ""
    if t is not None and mark is not None:
        pos = 100.0 * options.index(float(mark)) / (len(options) - 1)  # the mark is on RHO_GRID
        tick = (f"<div style='position:relative;height:1.1rem;font-size:0.8rem'><span "
                f"style='position:absolute;left:{pos:.1f}%;transform:translateX(-50%);"
                f"white-space:nowrap;color:#D55E00'>▲ core forms from ρ ≈ {fmt_rho(mark)}</span>"
                "</div>")
    st.markdown(tick + "<div style='display:flex;justify-content:space-between;font-size:0.875rem;"
                "opacity:0.7'><span>← more privacy (more noise)</span>"
                "<span>more accuracy (less privacy) →</span></div>", unsafe_allow_html=True)
    if t is not None and mark is None:  # no tick to show: say so in words
        st.caption(feasibility_sentence(mark, t))
    return float(state.get("rho"))


def _neighbours(grid: tuple[float, ...], value: float) -> tuple[float, ...]:
    """The slider's values one step below and above ``value`` (where they exist)."""
    options = _with(grid, value)
    i = options.index(float(value))
    return tuple(options[j] for j in (i - 1, i + 1) if 0 <= j < len(options))


def rho_neighbours(rho: float) -> tuple[float, ...]:
    """The ρ slider's values one step below and above ``rho``."""
    return _neighbours(RHO_GRID, rho)


def delta_neighbours(delta: float) -> tuple[float, ...]:
    """The δ slider's values one step below and above ``delta``."""
    return _neighbours(DELTA_GRID, delta)


def delta_select(key: str = "delta_select", *, label: str = "δ (failure probability)") -> float:
    """δ as a power of ten."""
    delta = float(state.get("delta"))
    state.seed_widget("delta", key)
    st.select_slider(
        label, options=_with(DELTA_GRID, delta), format_func=fmt_delta, key=key,
        on_change=state.on_change("delta", key, float),
        help="The δ of (ρ, δ)-zCDP: the probability that FriendlyCore's high-probability events "
             "fail. Keep it well below 1/n. The same δ′ = δ is used to convert to (ε, δ)-DP.",
    )
    return float(state.get("delta"))


def _fmt_row(eps: float, delta: float) -> str:
    return f"ε = {eps:.3g} · δ = {delta:.2g}"


def epsilon_readout(rho: float, delta: float, statement=None, *, key: str = "eps_readout",
                    n_declared: int | None = None) -> None:
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
                       "guarantee is weak. Lower ρ or δ.", icon=":material/warning:")


#: The label of the main privacy number (tests and the browser find it by this text).
ROW_METRIC = "Privacy per row of your data"

_TARGET_MSG = "_eps_target_msg"


def target_epsilon(calibrate, *, key: str = "eps_target") -> None:
    """"I need ε = 1: what ρ?" — a row-level (ε, δ) target; the button sets the ρ and δ sliders
    to the largest budget whose row-level guarantee meets it.

    ``calibrate(eps, delta)`` returns a :class:`dpviz.registry.Calibration` (the registry's
    bisection on the algorithm's public guarantee; raises ValueError for an unreachable target).
    """
    def apply() -> None:
        eps = st.session_state.get(key)
        delta = float(st.session_state.get(f"{key}_delta", 1e-6))
        if eps is None:
            st.session_state[_TARGET_MSG] = ("error", None, "Type the row-level ε you need first.")
            return
        try:
            cal = calibrate(float(eps), delta)
        except ValueError as exc:
            st.session_state[_TARGET_MSG] = ("error", None, str(exc))
            return
        budget = cal.budget
        # Explore's sliders spend (ρ, δ) and state them with δ′ = δ: they express the plan only
        # when its own δ equals its δ′ (and is positive).
        if budget.delta <= 0 or cal.delta_prime != budget.delta:
            st.session_state[_TARGET_MSG] = ("error", None, f"No budget with δ > 0 meets ε = {eps:g}, "
                                             f"δ = {delta:g} per row: raise ε or δ.")
            return
        state.update(rho=float(budget.rho), delta=float(budget.delta))
        g = cal.guarantee
        text = (f"ρ = {budget.rho:.4g} and δ = {budget.delta:.2g} give ({g.eps:.3g}, {g.delta:.2g})-DP "
                f"per row, within your target (ε = {eps:g}, δ = {delta:g}).")
        st.session_state[_TARGET_MSG] = ("success", float(budget.rho), text)

    with st.expander("I need a given ε: what ρ?", expanded=_TARGET_MSG in st.session_state):
        c1, c2 = st.columns(2)
        c1.number_input("Target ε per row", min_value=0.01, max_value=1000.0, value=None,
                        placeholder="e.g. 1", format="%.3g", key=key,
                        help="The row-level ε you need (adding or removing one row of your data).")
        c2.select_slider("Target δ per row", options=list(DELTA_GRID), value=1e-6,
                         format_func=fmt_delta, key=f"{key}_delta")
        st.button("Set ρ for this target", key=f"{key}_apply", on_click=apply,
                  icon=":material/tune:")
        msg = st.session_state.get(_TARGET_MSG)
        if msg is not None and msg[1] not in (None, float(state.get("rho"))):
            msg = None  # the slider moved since: the sentence no longer describes this ρ
        if msg is not None:
            (st.success if msg[0] == "success" else st.error)(msg[2])
