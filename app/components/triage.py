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
from app.components import cache, data_source, run, safe, state
from dpviz.privacy.budget import ZCDP

_APPLIED = "_triage_applied"
_NAMES = {"k": "k (clusters)", "t": "t (pieces)", "rho": "ρ"}


def _cfg(ds) -> run.RunConfig | None:
    radius = data_source.radius_for(ds)
    return None if radius is None else run.RunConfig.from_params(state.params(), radius)


def verdict(ds, cfg: run.RunConfig) -> dpviz.triage.Verdict:
    """The verdict for ``cfg`` on ``ds`` (cached per session on the run's public knobs and the rows)."""
    def stage(k: int, t: int):
        return run.tuple_stage(ds, replace(cfg, k=k, t=t))

    def compute():
        return dpviz.triage.triage(ds.X, k=cfg.k, t=cfg.t, rho=cfg.rho, delta=cfg.delta,
                                   radius=cfg.radius, r_min=cfg.r_min, preset=cfg.preset,
                                   fallback=cfg.fallback, oracle=cfg.oracle, n_declared=ds.n,
                                   stage_fn=stage)

    return cache.memo("triage", (*cfg.private_key(ds), cfg.oracle), compute)


def row_level(ds, cfg: run.RunConfig, changes: dict) -> str:
    """The per-row (ε, δ) FriendlyCore's run would state with ``changes`` applied (public inputs
    only: the run's budget plan, ``registry.plan_at_budget``, with δ′ = δ as Explore's readout uses)."""
    k, t, rho = changes.get("k", cfg.k), changes.get("t", cfg.t), changes.get("rho", cfg.rho)
    spec = dpviz.registry.get("friendlycore")

    def compute():
        pub = dpviz.registry.Public(n_declared=int(ds.n), d=int(ds.d), k=int(k), radius=cfg.radius)
        params = spec.make_params(n_tuples=int(t), oracle=cfg.oracle, preset=cfg.preset,
                                  fallback=cfg.fallback, r_min=cfg.r_min)
        return dpviz.registry.plan_at_budget(spec, ZCDP(float(rho), cfg.delta), pub, params).guarantee

    try:
        g = cache.memo("triage_eps", (ds.n, ds.d, k, t, rho, cfg.delta, cfg.radius, cfg.oracle,
                                      cfg.preset, cfg.fallback, cfg.r_min), compute)
    except ValueError as exc:  # settings the registry's form refuses (e.g. r_min from a huge Λ)
        return f"no row-level statement for these settings: {safe.md(exc)}"
    return f"row-level ε = {g.eps:.3g}, δ = {g.delta:.2g} per row"


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
    with st.container(key="triage_verdict", border=True):
        st.markdown("#### Triage: will FriendlyCore's core form here?")
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
            with st.container(key="triage_k_note"):
                st.info(note)
                st.button(f"Set k = {ds.k}", key="triage_k_data", on_click=_apply,
                          args=({"k": int(ds.k)},), icon=":material/tune:")
        (st.success if v.success else st.warning)(v.headline)
        st.caption(f"At k = {v.k}, t = {v.t}, ρ = {v.rho:.3g}, δ = {v.delta:g} "
                   f"({row_level(ds, cfg, {})}).")
        st.markdown(f"**Public** · {v.public_line.removeprefix('From public inputs only: ')}")
        st.markdown(f"**Non-private diagnostic of your data** (for your eyes; not released, not "
                    f"used by the run) · {v.data_line.removeprefix('Non-private diagnostic of your data: ')}")
        if v.suggestions:
            st.markdown("**Suggestions** (checked on the same non-private diagnostic):")
        for i, s in enumerate(v.suggestions):
            label = "public inputs" if s.source == "public" else "your data (non-private)"
            if s.changes:
                text = s.text if "rho" not in s.changes else \
                    f"{s.text.removesuffix('.')} ({row_level(ds, cfg, s.changes)})."
                st.button(text, key=f"triage_apply_{i}", on_click=_apply, args=(s.changes,),
                          help=f"Sets {', '.join(_NAMES.get(c, c) for c in s.changes)} for Explore "
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
    with st.container(key="clustering_verdict", border=True):
        st.markdown("#### Will private clustering be useful here?")
        done = cache.peek("clustering_verdict", key)
        if done is None:
            if not st.button(f"Check (k = {p['k']}, target row-level ε = {p['eps']:g})",
                             key="clustering_verdict_run", icon=":material/rule:",
                             help="Runs the best registered method for these inputs (what `auto` "
                                  "runs) a few seeded times per ε on your rows: a non-private "
                                  "diagnostic for you, never released."):
                return
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
