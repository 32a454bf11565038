"""Release: one deliberate private release, drawn once with the secure sampler (issues 10, 25).

The user declares the dataset's identity (the ledger's key), confirms the declared public bounds
(Λ, the declared n) and the row-level budget, and sees the composed total on that identity —
every attempt on it, from this page, a server path or the command line, across sessions and
server restarts (:mod:`dpviz.privacy.ledger_store`) — BEFORE confirming. The release is drawn
once by ``dpviz.run`` with ``SecureRNG`` (OpenDP noise, no seed), as a background job of the one
job controller (:mod:`app.components.jobs`).

Issue 34: the attempt is booked WRITE-AHEAD — written to the persistent ledger at its full target
in the button's callback, before the worker reads a row — and marked with its outcome (released,
failed, refused, cancelled) in the worker's ``finally``; a server stopped mid-run leaves it open,
counted in full and shown "interrupted". The job lives in this session only (never matched with
another session's job, whatever the data); a server-wide lock per declared identity tells every
other session only "a release of this identity is running", and only this session can cancel its
run. While it runs the page shows public words and the elapsed time in whole minutes (no stage
name, no seconds: stage durations describe the data). The identity can be picked from the known
ones or typed; a new name close to a known one is flagged ("did you mean …") and needs an
explicit "this is another table" before anything runs. Failures show one generic message, a
cancel says what it cost, and only a release is shown and offered as a seedless JSON export with
the provenance of every public input.
"""

from __future__ import annotations

import uuid

import streamlit as st

import dpviz.privacy
import dpviz.privacy.declared
import dpviz.privacy.release
import dpviz.registry
from app.components import data_source, deployments, jobs, ledger_view, modes, safe, state
from app.components import segment_profiles as profiles
from app.components.keys import Key
from dpviz.data.columns import declared_units
from dpviz.privacy.accounting import compose_dp
from dpviz.privacy.ledger_store import OverBudgetError

# Session keys this module owns (declared here, issue 45 item 4; keys that more than one module
# uses are in app/components/keys.py).
_MESSAGE: Key[tuple] = Key(
    "_release_message", tuple, "(kind, text) left by the release callback for the next run")
_CLAMPED: Key[bool] = Key(
    "_release_eps_clamped", bool, "the last ε typed was below the minimum and was raised to it")
_ACCEPTED: Key[tuple] = Key(
    "_release_accepted", tuple, "(identity, ε, δ) of the total the accept box was ticked for")
_SEEN: Key[set] = Key(
    "_release_jobs_seen", set, "ids of the finished release jobs this session has shown")
RELEASE_KNOWN_ID: Key[str] = Key("release_known_id", str, "selectbox: a known dataset identity")
RELEASE_DATASET_ID: Key[str] = Key("release_dataset_id", str, "text_input: the dataset identity")
RELEASE_ALGORITHM: Key[str] = Key("release_algorithm", str, "selectbox: the algorithm released")
RELEASE_K: Key[int] = Key("release_k", int, "number_input: k, bound to the app's parameters")
RELEASE_EPS: Key[float] = Key("release_eps", float, "number_input: the row-level ε (≥ the minimum)")
RELEASE_DELTA: Key[float] = Key("release_delta", float, "select_slider: the row-level δ")
RELEASE_N: Key[int] = Key("release_n", int, "number_input: the declared n (0 = the data's)")
RELEASE_DEPLOY: Key[object] = Key("release_deploy", object, "prefix: the deployments expander's keys")
RELEASE_HISTORY: Key[object] = Key("release_history", object, "prefix: the identity's attempts table")
RELEASE_OUTPUT: Key[object] = Key("release_output", object, "container: the last release")
RELEASE_PROFILES: Key[object] = Key("release_profiles", object, "container: the segment profiles")
RELEASE_CENTERS: Key[object] = Key("release_centers", object, "dataframe: the released centers")
RELEASE_DOWNLOAD: Key[bool] = Key("release_download", bool, "download_button: the release's export")
RELEASE_PROVENANCE_WARNING: Key[object] = Key(
    "release_provenance_warning", object, "container: settings read from the data")
RELEASE_ACK_DATA: Key[bool] = Key(
    "release_ack_data", bool, "checkbox: settings read from the data are acknowledged")
RELEASE_INFEASIBLE: Key[object] = Key("release_infeasible", object, "container: why no release can run")
RELEASE_PREVIEW: Key[object] = Key("release_preview", object, "container: the release's statement preview")
RELEASE_CONFIRM_RADIUS: Key[bool] = Key("release_confirm_radius", bool, "checkbox: Λ is public")
RELEASE_CONFIRM_N: Key[bool] = Key("release_confirm_n", bool, "checkbox: the declared n is public")
RELEASE_CONFIRM_BUDGET: Key[bool] = Key(
    "release_confirm_budget", bool, "checkbox: the identity's new total is accepted")
RELEASE_BUTTON: Key[bool] = Key("release_button", bool, "button: make the release (drawn once)")
RELEASE_RUNNING: Key[object] = Key("release_running", object, "container: the running attempt")
RELEASE_PROGRESS: Key[object] = Key("release_progress", object, "prefix: the attempt's progress panel")
RELEASE_CANCEL: Key[bool] = Key("release_cancel", bool, "button: cancel the running attempt")
RELEASE_FAILED: Key[object] = Key("release_failed", object, "container: the failed attempt's sentence")
RELEASE_LOCKED: Key[object] = Key("release_locked", object, "container: another attempt runs")
RELEASE_NEAR_IDENTITY: Key[object] = Key(
    "release_near_identity", object, "container: 'did you mean' a known identity close to the new one")
RELEASE_NEW_IDENTITY: Key[bool] = Key(
    "release_new_identity", bool, "checkbox: the new identity is another table")
RELEASE_CHECK_AGAIN: Key[bool] = Key(
    "release_check_again", bool, "button: look again whether another session's release still runs")

st.title("Release: publish one private result")
st.caption("Everything else in the app is a **simulation** (seeded, replayable: never publish it). "
           "A release is drawn once, from a cryptographically secure, floating-point-safe sampler "
           "(OpenDP), keeps no seed, and every attempt on the same declared dataset adds to its "
           "privacy total.")


EPS_MIN = 0.01  # the smallest row-level ε the Release page accepts
#: The one message of every attempt that did not end in a release (no data-dependent text).
FAILED_TEXT = ("The attempt did not produce a release. It read the data, so it is booked at its "
               "full budget: {cost}. Nothing from the run is shown.")


#: What the page shows while a release runs: public words only (no branch, no counts, no rows).
RUNNING_TEXT = ("Drawing the private release once… It can take minutes on a large table; no progress "
                "counts, stage names or seconds are shown while it runs (they would describe the data). "
                "The attempt is already booked at its full target; its outcome is marked when it ends.")
#: What every other session sees while a release on the same identity runs (whatever its data).
LOCKED_TEXT = ("A release of this dataset identity is running: a new attempt can start when it ends "
               "(its booking is already in the total above). This page does not follow it: check "
               "again later (when it started or ends is not shown to other sessions).")
#: The message of a cancelled attempt (booked at the full target: the run had read the rows).
CANCELLED_TEXT = ("Cancelled: the attempt was booked at {cost}, because the run had started reading the "
                  "data. Nothing from the run is shown or exported.")
#: The Cancel button's tooltip: the library stops only between its stages.
CANCEL_HELP = ("Cancels at the next stage boundary (the library cannot stop inside a stage, so the "
               "current stage finishes first). The attempt is booked at its full target (ε, δ) "
               "whatever, and nothing from the run is shown or exported.")
#: Before the run reports its first stage.
STARTING = "starting"
SLOT = "release"  # the job controller's slot (app.components.jobs)
_PICK_NEW = "— type a name —"  # the known-identity picker's first option


def _clamp_eps() -> None:
    """``on_change`` of the ε field: a value below :data:`EPS_MIN` (0 included) is raised to it in
    the field itself, so what the field shows is what the statement and the release use; the
    value is the app's target ε from then on (Explore, Data, Budget, Compare read it)."""
    low = float(st.session_state[RELEASE_EPS]) < EPS_MIN
    st.session_state[_CLAMPED] = low
    if low:
        st.session_state[RELEASE_EPS] = EPS_MIN
    state.update(eps=float(st.session_state[RELEASE_EPS]))


#: The row-level δ a release may state (at most 10⁻⁴; the page warns above 1/n).
RELEASE_DELTAS = (1e-10, 1e-9, 1e-8, 1e-7, 1e-6, 1e-5, 1e-4)
EPS_MAX = 50.0  # the ε field's upper end


def _delta_options(delta: float) -> list[float]:
    """The δ choices: the fixed ones, and the app's δ where it falls if it is one a release may state."""
    return sorted(set(RELEASE_DELTAS) | ({float(delta)} if delta <= RELEASE_DELTAS[-1] else set()))


def _seed_from_settings() -> None:
    """Start the form at the settings the user made elsewhere (issue 36: ε started at 1 whatever
    Explore said): k, the target ε and δ, the app's parameters (a δ above 10⁻⁴ shows as 10⁻⁴)."""
    state.seed_widget("k", RELEASE_K, int)
    state.seed_widget("eps", RELEASE_EPS, lambda v: min(max(float(v), EPS_MIN), EPS_MAX))
    state.seed_widget("delta", RELEASE_DELTA, lambda v: min(float(v), RELEASE_DELTAS[-1]))


def _pick_identity() -> None:
    """``on_change`` of the known-identity picker: the picked name fills the identity field."""
    pick = st.session_state.get(RELEASE_KNOWN_ID)
    if pick and pick != _PICK_NEW:
        st.session_state[RELEASE_DATASET_ID] = pick


def _typed_identity() -> None:
    """``on_change`` of the identity field: a name typed here was given to this session, so the
    picker offers it from now on (issue 46: a session lists only its own identities)."""
    ledger_view.remember(st.session_state.get(RELEASE_DATASET_ID))


def _fmt(g) -> str:
    return f"ε = {g.eps:.3g}, δ = {g.delta:.2g}"


def _form(ds, radius: float):
    """The settings of the release; returns them as a dict."""
    registry = dpviz.registry
    specs = {s.name: s for s in registry.algorithms(private_only=True, applicable_to=int(ds.d))}
    p = state.params()
    # This session's identities only (issue 46): the server's full list is the operator's
    # (`dpviz ledger list`), never shown to a session.
    known = ledger_view.own_identities()
    if known:
        st.selectbox("Your dataset identities (pick one, or type a name below)", [_PICK_NEW, *known],
                     key=RELEASE_KNOWN_ID, on_change=_pick_identity,
                     help="The identities you typed or released on in this session: pick the one of "
                          "this table so its releases compose. Other sessions' identities are not "
                          "listed; type the exact name you were given.")
    dataset_id = st.text_input(
        "Dataset identity (declared; required)", key=RELEASE_DATASET_ID, max_chars=200,
        placeholder="e.g. customers 2026-Q1", help=ledger_view.IDENTITY_HELP,
        on_change=_typed_identity)
    c1, c2, c3 = st.columns(3)
    name = c1.selectbox("Algorithm", list(specs), format_func=lambda n: specs[n].title,
                        key=RELEASE_ALGORITHM)
    _seed_from_settings()
    k = c2.number_input("k (clusters)", min_value=1, max_value=50, step=1, key=RELEASE_K,
                        on_change=state.on_change("k", RELEASE_K, int))
    c3.markdown(f"Declared radius **Λ = {radius:g}** (rows outside are removed, not clipped)")
    c4, c5, c6 = st.columns(3)
    # min_value 0, not EPS_MIN: the browser refused a typed 0 silently (it kept showing 0 while
    # the statement used the previous ε, issue 27); the callback clamps it where the user sees it.
    eps = c4.number_input("Row-level ε", min_value=0.0, max_value=EPS_MAX, step=0.1,
                          key=RELEASE_EPS, on_change=_clamp_eps)
    if st.session_state.get(_CLAMPED):
        c4.warning(f"ε must be positive (ε = 0 promises no privacy loss, so no release can meet "
                   f"it): set to the smallest ε here, {EPS_MIN:g}.", icon=":material/warning:")
    delta = c5.select_slider("Row-level δ", options=_delta_options(p["delta"]),
                             format_func=lambda v: f"{v:.0e}", key=RELEASE_DELTA,
                             on_change=state.on_change("delta", RELEASE_DELTA, float))
    n_decl = c6.number_input("Declared n (public; 0 = pay for a DP count)", min_value=0,
                             max_value=10**9, value=0, step=1000, key=RELEASE_N,
                             help="The dataset size as a PUBLIC fact (e.g. from the data's "
                                  "documentation). 0 spends 2% of ε on a Laplace count instead.")
    # not lazy: opening it must not rerun the page (a rerun would interrupt a release in progress)
    deployments.beside_expander(max(float(eps), EPS_MIN), key=RELEASE_DEPLOY, lazy=False)
    return dict(name=name, spec=specs[name], k=int(k), eps=float(eps), delta=float(delta),
                n_declared=int(n_decl) or None, identity=ledger_view.identity(dataset_id),
                declared_id=dataset_id)


def _history(ds, identity: str) -> None:
    ledger_view.attempts_table(identity, key=RELEASE_HISTORY)
    done = modes.releases(f"id:{identity}")
    if not done:
        return
    res, text, method = done[-1]
    with st.container(key=RELEASE_OUTPUT):
        st.markdown(f"**Latest release** — a **private release** (safe to publish with its statement), "
                    f"made by **{safe.md(method)}**")
        table, how = profiles.segment_profiles(res, ds)
        if table is not None:
            with st.container(key=RELEASE_PROFILES):
                st.markdown("**Segment profiles**")
                st.dataframe(table, hide_index=True, key=RELEASE_CENTERS)
                st.caption(safe.md(how))
        else:
            st.markdown("The algorithm output ⊥: that is the release.")
        st.download_button("Download the release (JSON, no seed)", text,
                           file_name="dpviz_release.json", mime="application/json",
                           key=RELEASE_DOWNLOAD, on_click="ignore", icon=":material/download:")
        st.caption("Besides the release, the file carries the dataset's name and column names "
                   "(not private: remove them before publishing if they are sensitive), the declared "
                   "size and bounds and where each public input came from — no fingerprint of the "
                   "rows, which would tell this dataset from one with a row more or less.")


def _accept(current: tuple) -> None:
    """The accept box's callback: remember which total was accepted."""
    if st.session_state.get(RELEASE_CONFIRM_BUDGET):
        st.session_state[_ACCEPTED] = current
    else:
        st.session_state.pop(_ACCEPTED, None)


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
    st.markdown(data_source.describe_public(ds))
    cfg = _form(ds, radius)
    prov = data_source.provenance(ds, n_declared=cfg["n_declared"])
    from_data = data_source.data_derived(prov)
    ok_data = True
    if from_data:
        with st.container(key=RELEASE_PROVENANCE_WARNING):
            st.warning("**Read from the data, not declared:** " + "; ".join(
                f"{safe.md(k)} — {safe.md(prov[k]['note'])}" for k in from_data) + ". The guarantee below "
                "does not cover these inputs: the release depends on them without noise. Declare them "
                "yourself on the Data page, or acknowledge it (the export records the acknowledgement).",
                icon=":material/warning:")
            ok_data = st.checkbox("I release anyway with inputs read from the data (recorded in the "
                                  "export, next to the statement)", key=RELEASE_ACK_DATA)
    identity = cfg["identity"]
    if identity is None:
        st.info("Declare the dataset's identity above: it is the key of the privacy ledger, so every "
                "release of this table, however it reaches the app, adds to one total.")
        return
    target = dpviz.privacy.ApproxDP(cfg["eps"], cfg["delta"])
    try:
        the_plan = plan_of(ds, radius, cfg)
    except ValueError as exc:
        with st.container(key=RELEASE_INFEASIBLE):
            st.error(f"These declared settings cannot make a release: {safe.md(exc)} Nothing is run "
                     "and nothing is booked: change the declared inputs above.")
        return
    try:
        total_now = ledger_view.total(identity)
    except (OSError, ValueError) as exc:
        st.error(f"The privacy ledger cannot be read ({safe.md(exc)}): no release until it can.")
        return
    after = compose_dp(total_now, target)
    with st.container(key=RELEASE_PREVIEW):
        st.markdown(ledger_view.identity_note(identity))
        st.markdown(f"This release: **{_fmt(target)}** per row (add/remove one row). "
                    f"Total on this dataset identity: {_fmt(total_now)} now → **{_fmt(after)}** "
                    "after this attempt (basic composition; every attempt counts, whatever its "
                    "outcome).")
        if the_plan is not None:
            g = the_plan.guarantee
            st.markdown(f"The run's budget plan (what the export states): **ε = {g.eps:.3g}, "
                        f"δ = {g.delta:.2g}** per row, within the target.")
            st.caption(safe.md(" ".join(the_plan.lines)))
        if cfg["n_declared"] and cfg["delta"] > 1.0 / cfg["n_declared"]:
            st.warning(f"δ = {cfg['delta']:.0e} exceeds 1/n ≈ {1.0 / cfg['n_declared']:.1e} (declared n): "
                       "a mechanism that publishes one random row outright meets such a δ. Choose "
                       "δ ≪ 1/n.")
    ok_lambda = st.checkbox(f"Λ = {radius:g} is a public bound, not measured on these rows",
                            key=RELEASE_CONFIRM_RADIUS)
    ok_n = st.checkbox("The declared n is public (or I chose to pay for a DP count)",
                       key=RELEASE_CONFIRM_N)
    current = (identity, after.eps, after.delta)
    if st.session_state.get(_ACCEPTED) != current:  # the total changed: accept it anew
        st.session_state[RELEASE_CONFIRM_BUDGET] = False
        st.session_state.pop(_ACCEPTED, None)
    ok_budget = st.checkbox(f"I accept the total {_fmt(after)} on this dataset identity",
                            key=RELEASE_CONFIRM_BUDGET, on_change=_accept, args=(current,))
    ok_name = ledger_view.near_identity_ok(cfg["declared_id"], box=RELEASE_NEAR_IDENTITY,
                                           confirm=RELEASE_NEW_IDENTITY)
    job = _own_job(identity)
    busy = jobs.running(SLOT) is not None or jobs.locked(lock_name(identity))
    # A callback: it starts the job before the page runs, so the page already shows it running.
    st.button("Make the release (drawn once)", key=RELEASE_BUTTON, type="primary",
              disabled=busy or not (ok_lambda and ok_n and ok_budget and ok_data and ok_name),
              icon=":material/lock:", on_click=_release, args=(ds, radius, cfg, prov, from_data))
    if jobs.running(SLOT) is not None:
        with st.container(key=RELEASE_RUNNING):
            st.caption(RUNNING_TEXT)
            jobs.panel(SLOT, key=RELEASE_PROGRESS, stop_label="Cancel", stop_key=RELEASE_CANCEL,
                       text=progress_text, stop_help=CANCEL_HELP)
        if jobs.running(SLOT) is None:  # it ended while the page was drawn: show its outcome now
            st.rerun()
    elif jobs.locked(lock_name(identity)):  # whoever runs it, whatever their data
        _locked_notice(lock_name(identity))
    elif job is not None and job.done.is_set():
        _deliver(job, identity)
    kind, msg = st.session_state.pop(_MESSAGE, (None, None))
    if kind == "error":
        with st.container(key=RELEASE_FAILED):
            st.error(msg)
    elif kind == "success":
        st.success(msg)
    _history(ds, identity)


def _locked_notice(name: tuple) -> None:
    """The one sentence other sessions see while the identity is locked. Not polled (issue 46): a
    notice that redrew the page the second the lock freed told every other session when that run
    ended, to the second; this one changes only when this session itself reruns."""
    with st.container(key=RELEASE_LOCKED):
        st.info(LOCKED_TEXT)
        st.button("Check again", key=RELEASE_CHECK_AGAIN, icon=":material/refresh:")


def lock_name(identity: str) -> tuple:
    """The server-wide lock of a declared identity (the only thing other sessions can see)."""
    return ("release", identity)


def plan_of(ds, radius: float, cfg: dict):
    """The run's budget plan from DECLARED inputs only (no row is read): None when no size is
    declared (the plan then depends on the DP count, drawn inside the run). Raises ValueError when
    the declared inputs cannot work, so such settings are refused before any row is read and
    nothing is booked (issue 25, finding 2: only attempts that read the data are booked)."""
    if cfg["n_declared"] is None:
        return None
    registry = dpviz.registry
    pub = registry.Public(n_declared=int(cfg["n_declared"]), d=int(ds.d), k=int(cfg["k"]),
                          radius=float(radius))
    return registry.plan(cfg["name"], cfg["eps"], cfg["delta"], pub)


def method_name(res, title: str) -> str:
    """Which method produced the centers: the algorithm, ``auto``'s public choice, or a fallback."""
    choice = res.find("auto_choice")
    if choice is not None:
        chosen = dpviz.registry.get(choice.data["algorithm"]).title
        title = f"{title} → {chosen}"
    fb = res.find("fallback")
    if fb is not None and fb.data.get("used"):
        return f"{title}: its fallback ({fb.data.get('method') or 'grid summary'})"
    return title


def _release(ds, radius: float, cfg: dict, prov: dict, from_data: list[str]) -> None:
    """The button's callback: check what can be checked before reading any row (nothing booked
    when it refuses), then start the attempt as this session's release job (:func:`_attempt`)."""
    target = dpviz.privacy.ApproxDP(cfg["eps"], cfg["delta"])
    busy = ("error", "A release of this dataset identity is running: nothing new was started.")
    if jobs.locked(lock_name(cfg["identity"])):  # said first: its write-ahead booking moved the total
        st.session_state[_MESSAGE] = busy
        return
    try:
        ledger_view.store().ensure_writable()  # bookable before reading
        after = compose_dp(ledger_view.total(cfg["identity"]), target)
    except (OSError, ValueError):
        st.session_state[_MESSAGE] = ("error", "The privacy ledger cannot be read or written: "
                                               "nothing was run.")
        return
    try:
        plan_of(ds, radius, cfg)  # declared inputs only: refused here, nothing read, nothing booked
    except ValueError:
        st.session_state[_MESSAGE] = ("error", "These declared settings cannot make a release: "
                                               "nothing was run or booked.")
        return
    if st.session_state.get(_ACCEPTED) != (cfg["identity"], after.eps, after.delta):
        # another session (or the command line) booked on this identity since the box was ticked
        st.session_state[_MESSAGE] = ("error", "The total on this dataset identity changed since you "
                                               "accepted it: nothing was run. Accept the new total.")
        return
    if jobs.running(SLOT) is not None:  # this session's (perhaps on another identity)
        st.session_state[_MESSAGE] = busy
        return
    store = ledger_view.store()
    run = dpviz.registry.run  # resolved here, on the page's thread
    token = uuid.uuid4().hex  # this attempt's lock token and job id (known to this session only)
    if not jobs.lock(lock_name(cfg["identity"]), token):  # one running release per identity
        st.session_state[_MESSAGE] = busy
        return
    unlock = jobs.unlocker(lock_name(cfg["identity"]), token)
    try:  # WRITE-AHEAD: booked at the full target before the worker reads a row, only within the
        # accepted total, checked and booked in one step under the identity's lock in the store
        # (so it holds across server replicas sharing a PostgreSQL ledger, issue 46)
        attempt = ledger_view.open_attempt(cfg["identity"], algorithm=cfg["spec"].title,
                                           epsilon=target.eps, delta=target.delta, surface="release-page",
                                           within=(after.eps, after.delta))
    except OverBudgetError:
        unlock()
        st.session_state[_MESSAGE] = ("error", "The total on this dataset identity changed since you "
                                               "accepted it: nothing was run. Accept the new total.")
        return
    except (OSError, ValueError):
        unlock()
        st.session_state[_MESSAGE] = ("error", "The privacy ledger cannot be written: nothing was run.")
        return
    info = {"id": token, "attempt": attempt}
    try:
        jobs.start(SLOT, job_key(cfg["identity"]),
                   lambda job: _attempt(job, run, store, ds, radius, cfg, prov, from_data, target, unlock),
                   info=info)
    except BaseException:  # the worker never started: no row was read; still marked, never lost
        store.close_attempt(cfg["identity"], attempt, "failed")
        unlock()
        raise


def job_key(identity: str) -> tuple:
    """The release job's key in this session's slot (never shared with another session)."""
    return ("release", identity)


def _attempt(job: jobs.Job, run, store, ds, radius: float, cfg: dict, prov: dict,
             from_data: list[str], target, unlock) -> dict:
    """The background worker (no Streamlit): draw the release once and mark the attempt (booked
    write-ahead by the callback) whatever happens — a release, a failure, a cancel at a stage
    boundary, or anything raised — then free the identity's lock."""
    rel = dpviz.privacy.release

    def progress(stage: str) -> None:  # kept, never shown while running (finding G)
        job.message = stage

    res, failed = None, False
    try:
        res = run(cfg["name"], ds.X, cfg["k"], epsilon=cfg["eps"], delta=cfg["delta"], radius=radius,
                  rng=rel.SecureRNG(), n_declared=cfg["n_declared"], progress=progress, cancel=job.cancel)
    except dpviz.registry.RunCancelledError:
        pass
    except Exception:
        failed = True
    finally:
        # Marked whatever happens from here (the booking itself is already on disk). A Cancel
        # pressed after the last boundary still drops the result.
        if job.cancel.is_set():
            res, failed = None, False
        try:
            job.result = _settle(store, ds, radius, cfg, prov, from_data, target, res, failed,
                                 job.info["attempt"])
        finally:
            unlock()
    return job.result


def _native(res):
    """The run's plan, whose budget the ledger store keeps in the mechanism's own terms (issue 38)."""
    the_plan = getattr(res, "plan", None)
    return the_plan if the_plan is not None and the_plan.budget is not None else None


def _settle(store, ds, radius: float, cfg: dict, prov: dict, from_data: list[str], target, res,
            failed: bool, attempt: str) -> dict:
    """Mark the attempt (booked write-ahead) with its outcome and make its export (no Streamlit:
    it runs in the worker's ``finally``). Returns what the page shows: ``kind`` (success /
    error), ``text`` and, for a release only, ``release`` = (Result, export JSON, method)."""
    rel = dpviz.privacy.release

    def book(cost, outcome: str):
        # a release states its cost and keeps its plan's native budget (ρ, ε₀ or (ε, δ)) beside it
        extra = ({"epsilon": cost.eps, "delta": cost.delta, "native": _native(res)}
                 if outcome == "release" else {})
        store.close_attempt(cfg["identity"], attempt, outcome, **extra)
        return dpviz.privacy.ApproxDP(*store.total(cfg["identity"]))

    if res is None and not failed:
        total = book(target, "cancelled")
        return {"kind": "error", "outcome": "cancelled", "release": None,
                "text": CANCELLED_TEXT.format(cost=_fmt(target))
                + f" Total on this dataset identity: {_fmt(total)}."}
    if res is None or res.simulation or res.seed is not None or res.guarantee is None:
        # a failure, or a run that came back replayable: never publish it
        outcome = "failed" if res is None else "refused"
        total = book(target, outcome)
        return {"kind": "error", "outcome": outcome, "release": None,
                "text": FAILED_TEXT.format(cost=_fmt(target))
                + f" Total on this dataset identity: {_fmt(total)}."}
    cost = res.guarantee
    total = book(cost, "release")
    dataset = {"name": ds.name, "identity": cfg["declared_id"].strip(), "d": ds.d, "radius": radius,
               "n_declared": res.params.get("n_declared"), "provenance": prov,
               "read_from_the_data_acknowledged": list(from_data) or None}
    provenance = dpviz.privacy.declared.Provenance.of(
        {k: v["note"] for k, v in prov.items()}, **{k: v["source"] for k, v in prov.items()})
    ack = (f"acknowledged on the Release page: {', '.join(from_data)} read from the data"
           if from_data else None)
    text = rel.export_release(res,  # the statement is the run's plan (res.plan)
                              provenance=provenance, acknowledge_data_derived=ack,
                              units=declared_units(ds.params),
                              # No fingerprint of the rows: a hash tells D from D ∪ {x} exactly,
                              # which would void the guarantee. Only declared, public quantities.
                              dataset=dataset, session_total=total, feature_names=list(ds.feature_names))
    return {"kind": "success", "outcome": "release", "text": f"Released. Total on this dataset identity: "
            f"{_fmt(total)}.", "release": (res, text, method_name(res, cfg["spec"].title))}


def coarse_elapsed(seconds: float) -> str:
    """Elapsed time in whole minutes ("under a minute", "about 3 minutes"): coarse on purpose, so
    the page never times a stage to the second (stage durations describe the data)."""
    minutes = int(seconds // 60)
    if minutes < 1:
        return "under a minute"
    return "about 1 minute" if minutes == 1 else f"about {minutes} minutes"


def progress_text(job: jobs.Job) -> str:
    """The running release's progress line: public words and the elapsed time in whole minutes;
    no stage name, no count, no branch, no outcome before the end (issue 34, finding G)."""
    if job.cancel.is_set():
        return f"Cancelling at the next stage boundary… · running for {coarse_elapsed(job.elapsed)}"
    return f"Drawing the release · running for {coarse_elapsed(job.elapsed)}"


def _own_job(identity: str) -> jobs.Job | None:
    """This session's release job on ``identity`` (another session's is never shown here)."""
    own = jobs.current(SLOT)
    return own if own is not None and own.key == job_key(identity) else None


def _deliver(job: jobs.Job, identity: str) -> None:
    """A finished release job, once per session: its message, and the release itself (a cancel,
    a failure or a refused run shows nothing of the run)."""
    seen = st.session_state.setdefault(_SEEN, set())
    if job.info["id"] in seen:
        return
    seen.add(job.info["id"])
    out = job.result
    if out is None:  # the booking itself failed (e.g. the ledger became unwritable)
        st.session_state[_MESSAGE] = ("error", "The attempt could not be booked in the privacy ledger "
                                               f"({safe.md(job.error or 'interrupted')}). Nothing is shown.")
        return
    if out["release"] is not None:
        modes.releases(f"id:{identity}").append(out["release"])
    st.session_state[_MESSAGE] = (out["kind"], out["text"])


main()
