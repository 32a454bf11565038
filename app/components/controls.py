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


def rho_slider(key: str = "rho_slider", *, label: str = "Privacy budget ρ (zCDP)") -> float:
    """The log-scale ρ slider with "more privacy ↔ more accuracy" end labels."""
    rho = float(state.get("rho"))
    options = _with(RHO_GRID, rho)
    state.seed_widget("rho", key)
    st.select_slider(
        label, options=options, format_func=fmt_rho, key=key,
        on_change=state.on_change("rho", key, float),
        help="ρ-zCDP: smaller ρ adds more noise (stronger privacy). The slider is logarithmic: "
             "each step multiplies ρ by about 1.26. Moving it reruns only the private stage.",
    )
    # One element for both end labels: every element of the live fragment is re-rendered by
    # the browser on each move.
    st.markdown("<div style='display:flex;justify-content:space-between;font-size:0.875rem;"
                "opacity:0.7'><span>← more privacy (more noise)</span>"
                "<span>more accuracy (less privacy) →</span></div>", unsafe_allow_html=True)
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


def epsilon_readout(rho: float, delta: float, statement=None, *, key: str = "eps_readout",
                    n_declared: int | None = None) -> None:
    """ρ → ε: the paper's conversion and, once a run exists, the row-level statement; warns
    when the row-level δ exceeds 1/n (a δ that large allows publishing a random row)."""
    with st.container(key=key):
        c1, c2 = st.columns(2)
        paper = f"{statement.paper_dp.eps:.3g}" if statement is not None else "—"
        c1.metric("ε per tuple (paper)", paper,
                  help="Public guarantee: (ρ, δ)-zCDP converted to (ε, 2δ)-DP with the tight "
                       "conversion (Canonne-Kamath-Steinke 2020), δ′ = δ. This is the unit the "
                       "paper's theorem uses: one k-tuple of the derived database.")
        if statement is not None:
            c2.metric("ε per row (you)", f"{statement.row.eps:.3g}",
                      help="Public guarantee for adding or removing one row of your data: the "
                           "tuple stage through group privacy (one row replaces one tuple), "
                           f"composed with the row-level steps; δ = {statement.row.delta:.2g}.")
        else:
            c2.metric("ε per row (you)", "—", help="Shown after a run (needs its ledger).")
        # Both numbers come from the run's ledger (row_level_statement), never from the sliders.
        st.caption("Privacy guarantees (public, computed from ρ and δ only — never from the data): "
                   "what a release with these settings would promise. This seeded run is a "
                   "simulation, not a release.")
        if statement is not None and statement.row.delta >= 0.5:
            st.warning(f"At this budget the per-row guarantee is vacuous (δ = "
                       f"{statement.row.delta:.2g}): it promises nothing for one person.",
                       icon=":material/warning:")
        elif statement is not None and n_declared and statement.row.delta > 1.0 / n_declared:
            st.warning(f"The per-row δ = {statement.row.delta:.2g} exceeds 1/n = "
                       f"{1.0 / n_declared:.2g}: a mechanism that publishes one random row outright "
                       "meets such a δ, so the guarantee is weak. Lower ρ or δ.",
                       icon=":material/warning:")
