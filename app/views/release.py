"""Release: one deliberate private release, drawn once with the secure sampler (issue 10).

The user confirms the dataset, the declared public bounds (Λ, the declared n) and the row-level
budget; sees this session's composed total on the dataset BEFORE confirming; the release is drawn
once by ``dpviz.run`` with ``SecureRNG`` (OpenDP noise, no seed), booked in the session ledger and
offered as a seedless JSON export.
"""

from __future__ import annotations

import pandas as pd
import streamlit as st

import dpviz.privacy
import dpviz.privacy.release
import dpviz.registry
from app.components import data_source, modes, run, state

st.title("Release: publish one private result")
st.caption("Everything else in the app is a **simulation** (seeded, replayable: never publish it). "
           "A release is drawn once, from a cryptographically secure, floating-point-safe sampler "
           "(OpenDP), keeps no seed, and every release on the same data adds to this session's "
           "privacy total.")


_MESSAGE = "_release_message"  # (kind, text) left by the release callback for the next run


def _fmt(g) -> str:
    return f"ε = {g.eps:.3g}, δ = {g.delta:.2g}"


def _form(ds, radius: float):
    """The settings of the release; returns them as a dict."""
    registry = dpviz.registry
    specs = {s.name: s for s in registry.algorithms(private_only=True, applicable_to=int(ds.d))}
    p = state.params()
    c1, c2, c3 = st.columns(3)
    name = c1.selectbox("Algorithm", list(specs), format_func=lambda n: specs[n].title,
                        key="release_algorithm")
    k = c2.number_input("k (clusters)", min_value=1, max_value=50, value=int(p["k"]), step=1,
                        key="release_k")
    c3.markdown(f"Declared radius **Λ = {radius:g}** (rows outside are removed, not clipped)")
    c4, c5, c6 = st.columns(3)
    eps = c4.number_input("Row-level ε", min_value=0.01, max_value=50.0, value=1.0, step=0.1,
                          key="release_eps")
    delta = c5.select_slider("Row-level δ", options=[1e-10, 1e-9, 1e-8, 1e-7, 1e-6, 1e-5, 1e-4],
                             value=1e-6, format_func=lambda v: f"{v:.0e}", key="release_delta")
    n_decl = c6.number_input("Declared n (public; 0 = pay for a DP count)", min_value=0,
                             max_value=10**9, value=0, step=1000, key="release_n",
                             help="The dataset size as a PUBLIC fact (e.g. from the data's "
                                  "documentation). 0 spends 2% of ε on a Laplace count instead.")
    return dict(name=name, spec=specs[name], k=int(k), eps=float(eps), delta=float(delta),
                n_declared=int(n_decl) or None)


def _history(ds) -> None:
    done = modes.releases(ds.content_hash)
    if not done:
        return
    st.subheader("Releases on this dataset in this session")
    rows = [{"#": i + 1, "algorithm": e.label, "row-level ε": round(e.row.eps, 4),
             "row-level δ": f"{e.row.delta:.2g}"}
            for i, e in enumerate(modes.session_ledger().releases(ds.content_hash))]
    st.dataframe(rows, hide_index=True, key="release_history")
    res, text = done[-1]
    with st.container(key="release_output"):
        st.markdown("**Latest release** (private: safe to publish together with its statement)")
        if res.centers is not None:
            st.dataframe(pd.DataFrame(res.centers, columns=list(ds.feature_names)),
                         key="release_centers")
        else:
            st.markdown(f"The algorithm output ⊥ ({res.failure}): that is the release.")
        st.download_button("Download the release (JSON, no seed)", text,
                           file_name="dpviz_release.json", mime="application/json",
                           key="release_download", on_click="ignore", icon=":material/download:")
        st.caption("Besides the release, the file carries the dataset's name and column names "
                   "(not private: remove them before publishing if they are sensitive) and only the "
                   "declared size and bounds — no fingerprint of the rows, which would tell this "
                   "dataset from one with a row more or less.")


def main() -> None:
    choice = data_source.current()
    ds = choice.dataset
    if ds is None:
        st.info("No dataset yet: choose one on the **Data** page.")
        return
    radius = data_source.radius_for(ds)
    if radius is None:
        st.error("Declare the public radius Λ first (Data page).")
        return
    st.markdown(data_source.describe(ds))
    if ds.source == "builtin":
        st.caption("Built-in data is standardized with its own mean and sd (not private); a real "
                   "release would standardize with public constants.")
    elif "NOT private" in data_source.scaling_note(ds):
        st.warning("This upload was scaled with values measured on its own rows (its mean and sd, "
                   "or bounds suggested from its range): the guarantee below does not cover that "
                   "step. Declare the bounds yourself on the Data page for a real release.",
                   icon=":material/warning:")
    cfg = _form(ds, radius)
    target = dpviz.privacy.ApproxDP(cfg["eps"], cfg["delta"])
    ledger = modes.session_ledger()
    total_now = ledger.total(ds.content_hash)
    after = ledger.preview(ds.content_hash, target)
    with st.container(key="release_preview"):
        st.markdown(f"This release: **{_fmt(target)}** per row (add/remove one row). "
                    f"Session total on this dataset: {_fmt(total_now)} now → **{_fmt(after)}** "
                    "after this release (basic composition).")
        n_ref = cfg["n_declared"] or ds.n
        if cfg["delta"] > 1.0 / n_ref:
            st.warning(f"δ = {cfg['delta']:.0e} exceeds 1/n ≈ {1.0 / n_ref:.1e}: a mechanism that "
                       "publishes one random row outright meets such a δ. Choose δ ≪ 1/n.")
    ok_lambda = st.checkbox(f"Λ = {radius:g} is a public bound, not measured on these rows",
                            key="release_confirm_radius")
    ok_n = st.checkbox("The declared n is public (or I chose to pay for a DP count)",
                       key="release_confirm_n")
    ok_budget = st.checkbox(f"I accept the session total {_fmt(after)} on this dataset",
                            key="release_confirm_budget")
    # A callback: it runs before the page does, so the totals above are current after a release.
    st.button("Make the release (drawn once)", key="release_button", type="primary",
              disabled=not (ok_lambda and ok_n and ok_budget), icon=":material/lock:",
              on_click=_release, args=(ds, radius, cfg))
    kind, msg = st.session_state.pop(_MESSAGE, (None, None))
    if kind == "error":
        st.error(msg)
    elif kind == "success":
        st.success(msg)
    _history(ds)


def _release(ds, radius: float, cfg: dict) -> None:
    """Draw the release once, book it and export it (the button's callback)."""
    rel = dpviz.privacy.release
    try:
        res = dpviz.registry.run(cfg["name"], ds.X, cfg["k"], epsilon=cfg["eps"],
                                      delta=cfg["delta"], radius=radius, rng=rel.SecureRNG(),
                                      n_declared=cfg["n_declared"])
    except Exception as exc:  # ValueError: the settings; anything else (e.g. no secure sampler
        # for this algorithm's randomness) must not crash the page, and nothing is booked
        st.session_state[_MESSAGE] = ("error", run.error_text(exc) + " Nothing was booked.")
        return
    if res.simulation:  # e.g. an algorithm whose noise does not come from the secure sampler
        st.session_state[_MESSAGE] = (
            "error", f"{cfg['spec'].title} cannot make a release here: its noise does not come "
                     "from the secure sampler. Nothing was booked.")
        return
    guarantee = res.guarantee
    total = modes.session_ledger().add(ds.content_hash, guarantee, label=cfg["spec"].title,
                                       params={"k": cfg["k"], "n_declared": cfg["n_declared"]})
    text = rel.export_release(res, delta_prime=cfg["delta"] / 2,
                              # No fingerprint of the rows: a hash tells D from D ∪ {x} exactly,
                              # which would void the guarantee. Only declared, public quantities.
                              dataset={"name": ds.name, "d": ds.d, "radius": radius,
                                       "n_declared": res.params.get("n_declared")},
                              session_total=total, feature_names=list(ds.feature_names))
    modes.releases(ds.content_hash).append((res, text))
    st.session_state[_MESSAGE] = ("success", f"Released. Session total on this dataset: {_fmt(total)}.")


main()
