"""The Data page's triage verdict: will FriendlyCore's core form here, and what to change if not.

The verdict (:func:`dpviz.triage.triage`) is computed on the same cached, seeded tuple stage
Explore runs (``run.tuple_stage``), so its prediction is about the very pieces the run will use.
Two kinds of statement are labelled apart: "public" (n/t, the budget's margins, from declared
inputs) and "non-private diagnostic of your data" (whether the pieces agree; for the data owner
only, never released). A suggestion changes the run's knobs only when its button is clicked, and
the page then says what changed.
"""

from __future__ import annotations

import math
from dataclasses import replace

import streamlit as st

import dpviz.registry
import dpviz.triage
from app.components import cache, controls, data_source, safe, state
from app.components.friendlycore import run
from app.components.keys import Key

# Session keys this module owns (declared here, issue 45 item 4; keys that more than one module
# uses are in app/components/keys.py).
_APPLIED: Key[str] = Key("_triage_applied", str, "the Data verdict's last applied change")
_ASKED: Key[bool] = Key(
    "_clustering_verdict_asked", bool, "the Data page's Check was pressed once (verdicts re-run on change)")
TRIAGE_VERDICT: Key[object] = Key("triage_verdict", object, "container: the Data page's settings verdict")
TRIAGE_K_NOTE: Key[object] = Key("triage_k_note", object, "container: the data's own k differs from k")
TRIAGE_K_DATA: Key[bool] = Key("triage_k_data", bool, "button: set k to the data's own k")
TRIAGE_APPLY: Key[bool] = Key(
    "triage_apply_", bool, "prefix: button, apply the verdict's i-th suggested change, triage_apply_<i>")
CLUSTERING_VERDICT: Key[object] = Key(
    "clustering_verdict", object, "container: whether the data has a private clustering (Check)")
CLUSTERING_VERDICT_RUN: Key[bool] = Key("clustering_verdict_run", bool, "button: Check")

_NAMES = {"k": "k (clusters)", "t": "t (pieces)", "eps": "row-level ε", "delta": "row-level δ"}


def _cfg(ds) -> run.RunConfig | None:
    """Explore's run at the app's one budget, the row-level target (ε, δ) (never a ρ of its own)."""
    radius = data_source.radius_for(ds)
    if radius is None:
        return None
    cfg = run.RunConfig.from_params(state.params(), radius).with_t(ds)
    rho = state.link_rho()  # an old link's ρ: the same run as Explore's
    return cfg if rho is None else replace(cfg, rho=rho, eps=None)


def verdict(ds, cfg: run.RunConfig) -> dpviz.triage.Verdict:
    """The verdict for ``cfg`` on ``ds`` (cached per session on the run's public knobs and the rows)."""
    def stage(k: int, t: int):
        return run.tuple_stage(ds, replace(cfg, k=k, t=t))

    own = run.fc_plan(ds, cfg).budget  # the run's own budget: its plan's, at the target

    def compute():
        return dpviz.triage.triage(ds.X, k=cfg.k, t=cfg.t, rho=own.rho, delta=own.delta,
                                   radius=cfg.radius, r_min=cfg.r_min, preset=cfg.preset,
                                   fallback=cfg.fallback, oracle=cfg.oracle, n_declared=ds.n,
                                   stage_fn=stage)

    return cache.memo("triage", (*cfg.private_key(ds), cfg.oracle), compute)


def row_level(ds, cfg: run.RunConfig, changes: dict) -> str:
    """The per-row (ε, δ) FriendlyCore's run would state with ``changes`` applied: its budget plan
    at the row-level target (``run.fc_plan``, the registry's ``plan``), as Explore states it. A ρ
    change is first converted into the target it stands for (:func:`targets`)."""
    at = replace(cfg, k=int(changes.get("k", cfg.k)), t=int(changes.get("t", cfg.t)),
                 delta=float(changes.get("delta", cfg.delta)))
    if "eps" in changes:
        at = at.at_eps(float(changes["eps"]))
    try:
        g = run.fc_plan(ds, at).guarantee
    except ValueError as exc:  # settings the registry's form refuses (e.g. t·k above n)
        return f"no row-level statement for these settings: {safe.md(exc)}"
    return f"row-level ε = {g.eps:.3g}, δ = {g.delta:.2g} per row"


def targets(ds, cfg: run.RunConfig, changes: dict) -> dict | None:
    """A suggestion's changes in the app's one budget (issue 33): a suggested own ρ becomes the
    smallest row-level ε of Explore's slider above the current one, at the selected δ, whose plan
    (``run.fc_plan``) gets the same prediction (the core forms); found by bisection over the grid
    (the prediction grows with ε). None if no ε of the slider does (then the suggestion cannot be
    met at this δ by ε alone)."""
    out = {key: value for key, value in changes.items() if key != "rho"}
    # Sound territory only (issue 36): a suggestion states δ ≤ 1/(10n) and ε ≤ 10, never a δ the
    # Release page calls unsafe (above 1/n) nor an ε that hardly protects a row.
    sound = dpviz.triage.sound_delta(cfg.delta, int(ds.n))
    if sound < cfg.delta:
        out["delta"] = sound
    if "rho" not in changes:
        return out
    at = replace(cfg, k=int(out.get("k", cfg.k)), t=int(out.get("t", cfg.t)), delta=sound)
    grid = [e for e in controls.EPS_GRID if (cfg.eps or 0.0) < e <= MAX_SOUND_EPS]

    def ok(i: int) -> bool:
        try:
            return verdict(ds, at.at_eps(grid[i])).success
        except ValueError:
            return False

    if not grid or not ok(len(grid) - 1):
        return None
    lo, hi = -1, len(grid) - 1  # invariant: fails at lo (or lo = -1), succeeds at hi
    while hi - lo > 1:
        mid = (lo + hi) // 2
        lo, hi = (lo, mid) if ok(mid) else (mid, hi)
    return out | {"eps": float(grid[hi])}


def _apply(changes: dict) -> None:
    before = state.params()
    said = [f"{_NAMES.get(key, key)} {before[key]:g} → {value:g}" for key, value in changes.items()]
    state.update(**changes)
    st.session_state[_APPLIED] = "Applied: " + ", ".join(said) + "."


def panel(ds) -> None:
    """The verdict box with its suggestion buttons (nothing before Λ is declared)."""
    cfg = _cfg(ds)
    if cfg is None or ds is None:
        return
    with st.container(key=TRIAGE_VERDICT, border=True):
        st.markdown("### Triage: will FriendlyCore's core form here?")
        try:
            with st.spinner("Checking the pieces (non-private diagnostic)…"):
                v = verdict(ds, cfg)
        except ValueError as exc:  # an infeasible (k, t) for this n: the library's message
            st.warning(f"No verdict for k = {cfg.k}, t = {cfg.t}: {exc}")
            return
        applied = st.session_state.pop(_APPLIED, None)
        if applied:
            st.success(applied + " Open Explore to run FriendlyCore with it.",
                       icon=":material/check:")
        note = data_source.k_note(ds, cfg.k)
        if note:
            with st.container(key=TRIAGE_K_NOTE):
                st.info(note)
                st.button(f"Set k = {ds.k}", key=TRIAGE_K_DATA, on_click=_apply,
                          args=({"k": int(ds.k)},), icon=":material/tune:")
        (st.success if v.success else st.warning)(v.headline)
        target = (f"the row-level target ε = {cfg.eps:g}, δ = {cfg.delta:g}" if cfg.eps else
                  f"an old link's own budget ρ = {cfg.rho:g}, δ = {cfg.delta:g}")
        st.caption(f"At k = {v.k}, t = {v.t}, {target} ({row_level(ds, cfg, {})}; FriendlyCore's own "
                   f"ρ = {v.rho:.3g}, from its plan).")
        st.markdown(f"**Public** · {v.public_line.removeprefix('From public inputs only: ')}")
        st.markdown(f"**Non-private diagnostic of your data** (for your eyes; not released, not "
                    f"used by the run) · {v.data_line.removeprefix('Non-private diagnostic of your data: ')}")
        if v.suggestions:
            st.markdown("**Suggestions** (checked on the same non-private diagnostic):")
        for i, s in enumerate(v.suggestions):
            label = "public inputs" if s.source == "public" else "your data (non-private)"
            changes = targets(ds, cfg, s.changes) if s.changes else None
            if s.changes and changes is None:  # a ρ no row-level ε of the slider plans at this δ
                rest = {key: value for key, value in s.changes.items() if key != "rho"}
                why = (f"at δ = {dpviz.triage.sound_delta(cfg.delta, int(ds.n)):.2g} no row-level ε up to "
                       f"{MAX_SOUND_EPS:g} (sound territory) plans a budget at which the core is "
                       "predicted to form (the plan's own δ shrinks as ε grows)")
                if rest:
                    st.button(f"{s.text.removesuffix('.')} — the ρ part cannot be met: {why}; this sets "
                              f"{', '.join(f'{_NAMES.get(c, c)} = {v:g}' for c, v in rest.items())} only.",
                              key=f"{TRIAGE_APPLY}{i}", on_click=_apply, args=(rest,),
                              help=f"Sets {', '.join(_NAMES.get(c, c) for c in rest)} for Explore "
                                   f"(based on {label}).", icon=":material/tune:")
                else:
                    st.caption(f"{s.text.removesuffix('.')} — but {why}: raise t or n (based on {label}).")
            elif changes:
                text = s.text if "eps" not in changes else \
                    (f"{s.text.removesuffix('.')}: Explore's row-level ε = {changes['eps']:g} at δ = "
                     f"{changes.get('delta', cfg.delta):.2g} ({row_level(ds, cfg, changes)}).")
                st.button(text, key=f"{TRIAGE_APPLY}{i}", on_click=_apply, args=(changes,),
                          help=f"Sets {', '.join(_NAMES.get(c, c) for c in changes)} for Explore "
                               f"(based on {label}).", icon=":material/tune:")
            else:
                st.caption(f"{s.text} (based on {label})")


def clustering_panel(ds) -> None:
    """The verdict about private clustering (any registered method, what ``auto`` runs): one
    sentence, computed on request (a non-private diagnostic of seeded runs on the rows)."""
    radius = data_source.radius_for(ds)
    if radius is None:
        return
    p = state.params()
    key = (ds.content_hash, int(p["k"]), float(p["delta"]), float(p["eps"]), float(radius))
    with st.container(key=CLUSTERING_VERDICT, border=True):
        st.markdown("### Will private clustering be useful here?")
        done = cache.peek("clustering_verdict", key)
        if done is None:
            # once asked, a change of k or ε (the Data page's own controls) re-runs it (issue 36)
            if not (st.session_state.get(_ASKED) or st.button(
                             f"Check (k = {p['k']}, target row-level ε = {p['eps']:g})",
                             key=CLUSTERING_VERDICT_RUN, icon=":material/rule:",
                             help="Runs the best registered method for these inputs (what `auto` "
                                  "runs) a few seeded times per ε on your rows: a non-private "
                                  "diagnostic for you, never released.")):
                return
            st.session_state[_ASKED] = True
            with st.spinner("Seeded runs at ε = 0.1 … 10 (non-private diagnostic)…"):
                done = dpviz.triage.clustering_verdict(
                    ds.X, int(p["k"]), radius=float(radius), n_declared=int(ds.n),
                    delta=float(p["delta"]), target_eps=float(p["eps"]))
            cache.put("clustering_verdict", key, done)
        (st.success if done.epsilon is not None else st.warning)(done.sentence)
        if done.target_eps > MAX_SOUND_EPS:
            st.error(f"Your target ε = {done.target_eps:g} is above 10: a guarantee that weak "
                     "(e^ε ≈ {:.3g}) hardly protects a row.".format(math.exp(min(done.target_eps, 700))))


MAX_SOUND_EPS = dpviz.triage.MAX_SOUND_EPS
