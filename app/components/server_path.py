"""A table on this server, opened by path (a local install): one streamed private release (issue 17).

Uploads stop at a browser's size; a triage table of 10⁷ rows lives on disk. When the environment
variable ``DPVIZ_SERVER_DATA_DIR`` names a directory, the Data page offers a text input for a
Parquet/CSV file or directory INSIDE it (resolved with symlinks and ``..``; anything outside is
refused). Off by default: a public deployment must not read its server's files.

Explore holds its rows in memory and cannot take 10⁷ of them, so a server table gets the streamed
path of the command line (:func:`dpviz.large.run.run_stream`): the declared size n and radius Λ are
public inputs, the file is read in chunks (FriendlyCore, DP-Lloyd, or ``auto``'s public choice),
the noise comes from the release sampler, and the result is a release — its centres, its row-level
guarantee, its ledger and a JSON download. Every attempt that starts reading the file is booked
in the persistent ledger of the dataset identity the user declares
(:mod:`dpviz.privacy.ledger_store`; it composes with Release-page and command-line attempts on the
same identity), whatever its outcome: a release, a failure, a simulation refused, or a Cancel (or
any other click), which stops the run and releases nothing. It is booked WRITE-AHEAD, at its full
target before the first row is read, then marked with its outcome: a server stopped mid-run
leaves it open, counted as spent (issue 34, finding B). While it runs the page shows only
public quantities (no branch names, no chunk counter: those tell how many rows the file has and
which path the data sent the algorithm down); a failure shows one generic message.

Everything quoted from the path or the file (names, columns, messages) is shown as text.
"""

from __future__ import annotations

import json
import os
import types
from pathlib import Path
from typing import Any

import streamlit as st

from app.components import classroom, ledger_view, safe
from app.components.keys import Key
from dpviz.privacy.accounting import compose_dp
from dpviz.privacy.budget import ApproxDP

# Session keys this module owns (declared here, issue 45 item 4; keys that more than one module
# uses are in app/components/keys.py).
SRV_RESULT: Key[object] = Key("_srv_result", object, "the server path's last streamed release")
SRV_RUNNING: Key[object] = Key("_srv_running", object, "the server path's running attempt")
SRV_FAILED: Key[str] = Key("_srv_failed", str, "the server path's failure sentence")
SRV_PANEL: Key[object] = Key("srv_panel", object, "container: the server path's panel")
SRV_PATH: Key[str] = Key("srv_path", str, "text_input: the path inside the server data directory")
SRV_COLUMNS: Key[list] = Key("srv_columns", list, "multiselect: the numeric columns to cluster on")
SRV_ERROR: Key[object] = Key("srv_error", object, "container: the path's or the run's error")
SRV_CANCELLED: Key[object] = Key("srv_cancelled", object, "container: an interrupted run was booked")
SRV_RUN: Key[bool] = Key("srv_run", bool, "button: make the streamed release (drawn once)")
SRV_HISTORY: Key[object] = Key("srv_history", object, "prefix: the identity's attempts table")
SRV_DATASET_ID: Key[str] = Key("srv_dataset_id", str, "text_input: the dataset identity")
SRV_ALGORITHM: Key[str] = Key("srv_algorithm", str, "selectbox: the streamed algorithm")
SRV_K: Key[int] = Key("srv_k", int, "number_input: k")
SRV_EPS: Key[float] = Key("srv_eps", float, "number_input: the row-level ε")
SRV_N: Key[int] = Key("srv_n", int, "number_input: the declared n (a public fact)")
SRV_RADIUS: Key[float] = Key("srv_radius", float, "number_input: the declared Λ (a public fact)")
SRV_DELTA: Key[float] = Key("srv_delta", float, "select_slider: the row-level δ")
SRV_CONFIRM: Key[bool] = Key("srv_confirm", bool, "checkbox: n and Λ are public facts")
SRV_NEAR_IDENTITY: Key[object] = Key(
    "srv_near_identity", object, "container: 'did you mean' a known identity close to the new one")
SRV_NEW_IDENTITY: Key[bool] = Key(
    "srv_new_identity", bool, "checkbox: the new identity is another table")
SRV_PREVIEW: Key[object] = Key("srv_preview", object, "container: the release's statement preview")
SRV_CANCEL: Key[bool] = Key("srv_cancel", bool, "button: cancel the running streamed release")
SRV_OUTPUT: Key[object] = Key("srv_output", object, "container: the last streamed release")
SRV_CENTERS: Key[object] = Key("srv_centers", object, "dataframe: the released segment profiles")
SRV_DOWNLOAD: Key[bool] = Key("srv_download", bool, "download_button: the release as JSON")

ENV = "DPVIZ_SERVER_DATA_DIR"
#: A Dask scheduler address (tcp://host:8786): the chunk and piece work runs on that cluster
#: (``--scheduler`` of the command line); unset: local threads. Server configuration, never a widget.
SCHEDULER_ENV = "DPVIZ_SCHEDULER"
#: The algorithms with a streamed implementation (``auto`` streams when its public choice does).
ALGORITHMS = {"auto": "auto (public choice rule)", "dp_lloyd": "DP-Lloyd", "friendlycore": "FriendlyCore"}
_RESULT, _RUNNING, _FAILED = SRV_RESULT, SRV_RUNNING, SRV_FAILED
#: The one message of every streamed attempt that did not end in a release (no data-dependent text).
FAILED_TEXT = ("The streamed run did not produce a release (the file could not be read to the end "
               "with these columns, or the algorithm could not finish). It read the data, so it is "
               "booked at its full budget: ε = {eps:.3g}, δ = {delta:.2g}. Total on “{identity}”: "
               "ε = {teps:.3g}, δ = {tdelta:.2g}.")


def root() -> Path | None:
    """The directory server paths are restricted to, or None (the feature is off; always off in
    classroom mode, which has no releases and no persistent ledger: issue 37)."""
    value = os.environ.get(ENV, "").strip()
    if not value or classroom.on():
        return None
    base = Path(value).expanduser().resolve()
    return base if base.is_dir() else None


def resolve(text: str, base: Path) -> Path:
    """``text`` (relative to ``base``, or absolute) as a real path inside ``base``.

    Raises ValueError for an empty path, a path that leaves ``base`` (``..``, an absolute path
    elsewhere, a symlink pointing out) or one that does not exist.
    """
    text = (text or "").strip()
    if not text:
        raise ValueError("Enter the path of a .parquet, .pq or .csv file, or of a directory of them.")
    if "\x00" in text:
        raise ValueError("The path contains a NUL character.")
    p = Path(text).expanduser()
    real = (p if p.is_absolute() else base / p).resolve()
    if not real.is_relative_to(base):
        raise ValueError(f"{text!r} is outside the server data directory; only paths inside it open.")
    if not real.exists():
        raise ValueError(f"No such file or directory in the server data directory: {text!r}.")
    return real


def open_table(text: str, base: Path, columns: list[str] | None = None):
    """The :class:`dpviz.large.TableSource` of a server path, after the loader's checks.

    Every file must lie inside ``base`` (a directory's files too: a symlink out is refused), the
    files must share their columns, and the chosen columns must be numeric.
    """
    from dpviz.large import TableSource

    path = resolve(text, base)
    src = TableSource(path, columns=columns)
    for f in src.files:
        if not Path(f).resolve().is_relative_to(base):
            raise ValueError(f"{Path(f).name!r} links outside the server data directory.")
    return src


def numeric_columns(src) -> list[str]:
    """The columns of the table's first file with a numeric type (Parquet: its schema; CSV: the
    types pyarrow infers from the first block, as the upload offers only numeric columns)."""
    import pyarrow as pa

    f = src.files[0]
    if src.kind == "parquet":
        import pyarrow.parquet as pq

        schema = pq.read_schema(f)
    else:
        import pyarrow.csv as pcsv

        with pcsv.open_csv(f) as reader:
            schema = reader.schema
    return [fld.name for fld in schema if pa.types.is_integer(fld.type) or pa.types.is_floating(fld.type)
            or pa.types.is_decimal(fld.type)]


def describe(src, text: str) -> str:
    """One line about the table: its path, format and columns (no row count: nothing is read)."""
    return (f"**{safe.md(text)}** · {len(src.files)} {src.kind} file(s) · d = {src.d} · columns "
            f"{safe.md(', '.join(src.columns))}")


# ----------------------------------------------------------------------------- the panel


def scheduler() -> str | None:
    """The Dask scheduler the server's releases run on (``DPVIZ_SCHEDULER``), or None (threads)."""
    return os.environ.get(SCHEDULER_ENV, "").strip() or None


def enabled() -> bool:
    return root() is not None


def panel() -> None:
    """The Data page's section: path → columns → public inputs → streamed release."""
    base = root()
    if base is None:
        return
    with st.container(key=SRV_PANEL, border=True):
        st.subheader("A large table on this server (streamed release)")
        st.caption(
            "For a local install: open a Parquet or CSV file (or a directory of them) inside the "
            "server's data directory, too large to upload. Explore holds its rows in memory and "
            "cannot take tens of millions of rows, so the app streams the file in chunks and makes "
            "ONE private release, as `python -m dpviz run` does: nothing is shown from the rows "
            "themselves, and the size n and the radius Λ are declared by you (public), never read "
            "from the file.")
        text = st.text_input("Path inside the server data directory", key=SRV_PATH,
                             placeholder="e.g. triage/2026.parquet")
        if not text:
            return
        try:
            src = open_table(text, base)
            numeric = numeric_columns(src)
            if not numeric:
                raise ValueError("The table has no numeric column.")
        except ValueError as exc:
            with st.container(key=SRV_ERROR):
                st.error(f"Could not open **{safe.md(text)}**: {safe.md(exc)}")
            return
        cols = st.multiselect("Numeric columns to cluster on", numeric, default=numeric, key=SRV_COLUMNS,
                              help="Only numeric columns are offered. Each row is one person. A row with "
                                   "a missing or non-finite value in a chosen column is dropped (per row).")
        if not cols:
            st.error("Pick at least one numeric column.")
            return
        try:
            src = open_table(text, base, cols)
        except ValueError as exc:
            with st.container(key=SRV_ERROR):
                st.error(f"Could not open **{safe.md(text)}**: {safe.md(exc)}")
            return
        st.markdown(describe(src, text))
        if scheduler() is not None:
            st.caption(f"Runs on the Dask cluster at `{safe.md(scheduler())}` (server configuration).")
        cfg = _form(src)
        interrupted = st.session_state.pop(_RUNNING, None)
        if interrupted is not None:
            with st.container(key=SRV_CANCELLED):
                st.warning("The previous run was cancelled before it finished: nothing was released. "
                           "It had started reading the file, so it is booked at its full budget "
                           f"({interrupted}).")
        failed = st.session_state.pop(_FAILED, None)
        if failed is not None:
            with st.container(key=SRV_ERROR):
                st.error(failed)
        ready = cfg is not None
        if st.button("Make the streamed release (drawn once)", key=SRV_RUN, type="primary",
                     disabled=not ready, icon=":material/lock:") and ready:
            _run(src, text, cfg)
        _show()
        identity = ledger_view.identity(st.session_state.get(SRV_DATASET_ID))
        if identity is not None:
            ledger_view.attempts_table(identity, key=SRV_HISTORY)


def _form(src) -> dict[str, Any] | None:
    dataset_id = st.text_input("Dataset identity (declared; required)", key=SRV_DATASET_ID,
                               max_chars=200, placeholder="e.g. triage 2026", help=ledger_view.IDENTITY_HELP)
    identity = ledger_view.identity(dataset_id)
    c1, c2, c3 = st.columns(3)
    name = c1.selectbox("Algorithm (streamed)", list(ALGORITHMS), format_func=ALGORITHMS.get,
                        key=SRV_ALGORITHM)
    k = c2.number_input("k (clusters)", min_value=1, max_value=200, value=8, step=1, key=SRV_K)
    eps = c3.number_input("Row-level ε", min_value=0.01, max_value=50.0, value=1.0, step=0.1,
                          key=SRV_EPS)
    c4, c5, c6 = st.columns(3)
    n_decl = c4.number_input("Declared n (public)", min_value=0, max_value=10**12, value=0, step=1000,
                             key=SRV_N, help="The number of rows as a PUBLIC fact (e.g. from the "
                                               "data's documentation); the file's row count is never read.")
    radius = c5.number_input("Public radius Λ (rows with norm > Λ are removed)", min_value=0.0,
                             max_value=1e12, value=None, format="%.6g", key=SRV_RADIUS,
                             placeholder="from domain knowledge")
    delta = c6.select_slider("Row-level δ", options=[1e-10, 1e-9, 1e-8, 1e-7, 1e-6, 1e-5],
                             value=1e-8, format_func=lambda v: f"{v:.0e}", key=SRV_DELTA)
    ok_public = st.checkbox("n and Λ are public facts, not measured on these rows", key=SRV_CONFIRM)
    ok_name = (ledger_view.near_identity_ok(dataset_id, box=SRV_NEAR_IDENTITY,
                                            confirm=SRV_NEW_IDENTITY)
               if identity is not None else True)
    missing = [m for m, bad in (("declare the dataset identity", identity is None),
                                ("confirm the new identity or use the known one", not ok_name),
                                ("declare n ≥ 1", n_decl < 1), ("declare Λ > 0", not radius),
                                ("confirm that n and Λ are public", not ok_public)) if bad]
    if identity is not None:
        try:
            now = ledger_view.total(identity)
        except (OSError, ValueError) as exc:
            st.error(f"The privacy ledger cannot be read ({safe.md(exc)}): no release until it can.")
            return None
        with st.container(key=SRV_PREVIEW):
            st.markdown(ledger_view.identity_note(identity))
            after = compose_dp(now, ApproxDP(float(eps), float(delta)))  # basic composition
            st.markdown(f"Total on this dataset identity: ε = {now.eps:.3g}, δ = {now.delta:.2g} now → "
                        f"**ε = {after.eps:.3g}, δ = {after.delta:.2g}** "
                        "after this attempt (basic composition; every attempt counts, whatever its outcome).")
    if missing:
        st.caption("To continue: " + "; ".join(missing) + ".")
        return None
    if name == "auto":
        from dpviz.clustering.auto import choose_from
        from dpviz.large.run import STREAMED

        # Out of core, auto chooses among the streamed algorithms (dpviz.large.run.run_stream).
        st.caption(choose_from(STREAMED, int(n_decl), src.d, int(k), float(eps), float(delta)).sentence)
    return dict(name=name, k=int(k), eps=float(eps), delta=float(delta), n_declared=int(n_decl),
                radius=float(radius), identity=identity)


def _open(cfg: dict[str, Any]) -> str:
    """Book the streamed attempt WRITE-AHEAD at its full target, before the file is read (issue
    34, finding B); returns its id. OSError when the ledger cannot be written."""
    return ledger_view.open_attempt(  # this session's: its time is shown to it only (issue 46)
        cfg["identity"], algorithm=f"{ALGORITHMS[cfg['name']]} (streamed)", epsilon=cfg["eps"],
        delta=cfg["delta"], surface="server-path")


def _book(cfg: dict[str, Any], attempt: str, outcome: str, eps: float | None = None,
          delta: float | None = None, native: Any = None) -> tuple[float, float]:
    """Mark the attempt with its outcome (a release at its guarantee, with its plan's native
    budget: ρ, ε₀ or (ε, δ), issue 38); returns the new total."""
    store = ledger_view.store()
    cost = {} if eps is None else {"epsilon": eps, "delta": delta, "native": native}
    store.close_attempt(cfg["identity"], attempt, outcome, **cost)
    return store.total(cfg["identity"])


def _failed(cfg: dict[str, Any], attempt: str, outcome: str) -> None:
    teps, tdelta = _book(cfg, attempt, outcome)
    st.session_state[_FAILED] = FAILED_TEXT.format(eps=cfg["eps"], delta=cfg["delta"], teps=teps,
                                                   tdelta=tdelta, identity=safe.md(cfg["identity"]))


def _run(src, text: str, cfg: dict[str, Any]) -> None:
    """Stream the release; Cancel (a rerun) stops it before anything is kept, and books it.

    The page shows a fixed text while the run lasts: the library's progress messages name the
    branch ("pass 2 (Lloyd sums)" or "fallback …") and count chunks (≈ the row count), so they are
    not shown. The progress callback only gives Streamlit a point to stop at (a Cancel click).
    """
    from dpviz.large.run import run_stream, streamed_choice
    from dpviz.privacy.release import SecureRNG

    if streamed_choice(cfg["name"], cfg["n_declared"], src.d, cfg["k"], cfg["eps"], cfg["delta"]) is None:
        st.error(f"{ALGORITHMS[cfg['name']]} has no streamed implementation on these inputs.")
        return  # decided from declared inputs only: nothing read, nothing booked
    try:
        ledger_view.store().ensure_writable()
        attempt = _open(cfg)  # write-ahead: booked at the full target before reading
    except (OSError, ValueError):
        st.error("The privacy ledger's directory cannot be written: nothing was run.")
        return
    cost = f"ε = {cfg['eps']:.3g}, δ = {cfg['delta']:.2g}"
    st.session_state[_RUNNING] = cost  # still set on the next run if this one is interrupted
    st.session_state.pop(_RESULT, None)
    status = st.empty()
    message = (f"Streaming the table for one private release (declared n = {cfg['n_declared']:,}) … "
               "this can take minutes; the page shows no progress counts (they would describe the file).")
    status.info(message, icon=":material/hourglass_top:")
    cancel = st.empty()  # shown while the run lasts
    cancel.button("Cancel", key=SRV_CANCEL,
                  help="Stops the run; nothing is released, the attempt is booked.")
    finished = False

    def progress(_msg: str) -> None:
        status.info(message, icon=":material/hourglass_top:")  # the same public text: a Cancel stops here

    try:
        res = run_stream(src, cfg["k"], epsilon=cfg["eps"], delta=cfg["delta"], radius=cfg["radius"],
                         n_declared=cfg["n_declared"], algorithm=cfg["name"], rng=SecureRNG(),
                         scheduler=scheduler(), progress=progress)
        finished = True
    except Exception:  # the table or the algorithm: it read the data, so it is booked
        finished = True
        st.session_state.pop(_RUNNING, None)
        _failed(cfg, attempt, "failed")
        st.rerun()  # shows the one generic message (panel())
    finally:
        if not finished:  # a Cancel click (Streamlit's rerun/stop request) left mid-run: mark it
            _book(cfg, attempt, "cancelled")
    st.session_state.pop(_RUNNING, None)
    cancel.empty()
    status.empty()
    if res.simulation or res.seed is not None or res.guarantee is None:  # never publish replayable noise
        _failed(cfg, attempt, "refused")
        st.rerun()
    g = res.guarantee
    plan = getattr(res, "plan", None)
    teps, tdelta = _book(cfg, attempt, "release", g.eps, g.delta,
                         plan if plan is not None and plan.budget is not None else None)
    st.session_state[_RESULT] = (res, _document(res, src, cfg), text, list(src.columns),
                                 ApproxDP(teps, tdelta))
    st.rerun()  # the totals and the attempts table above were drawn before this attempt


def _document(res, src, cfg: dict[str, Any]) -> str:
    """The release JSON of the command line (centres, statement, ledger, public inputs; no seed)."""
    from dpviz.cli import release_document
    from dpviz.registry import get

    spec = get(cfg["name"])
    args = types.SimpleNamespace(epsilon=cfg["eps"], delta=cfg["delta"], k=cfg["k"], radius=cfg["radius"],
                                 n_declared=cfg["n_declared"])
    doc = release_document(res, spec, args, spec.make_params(), src.d, src.columns, "stream")
    return json.dumps(doc, indent=1, ensure_ascii=False)


def _show() -> None:
    got = st.session_state.get(_RESULT)
    if got is None:
        return
    res, text, path, columns, total = got
    g = res.guarantee
    with st.container(key=SRV_OUTPUT):
        st.success(f"Released: ({g.eps:.4g}, {g.delta:.3g})-differentially private for adding or "
                   f"removing one row of {safe.md(path)}, given the declared n and Λ. Total on this "
                   f"dataset identity: ε = {total.eps:.3g}, δ = {total.delta:.2g} (basic composition "
                   "over every attempt).")
        choice = res.find("auto_choice")
        if choice is not None:
            st.caption(safe.md(choice.data["sentence"]))
        if res.centers is not None:
            from app.components import segment_profiles as profiles

            raw = types.SimpleNamespace(params={}, source="server", d=len(columns), feature_names=columns)
            table, how = profiles.segment_profiles(res, raw, [safe.csv_cell(c) for c in columns])
            st.markdown("**Segment profiles** (a private release)")
            st.dataframe(table, hide_index=True, key=SRV_CENTERS)
            st.caption(safe.md(how))
        else:
            st.markdown(f"The algorithm output ⊥ ({safe.md(res.failure)}): that is the release.")
        st.download_button("Download the release (JSON, no seed)", text, file_name="dpviz_release.json",
                           mime="application/json", key=SRV_DOWNLOAD, on_click="ignore",
                           icon=":material/download:")
        st.caption("The file carries the path's column names and the declared inputs; no seed, no "
                   "timing and nothing counted from the rows without noise.")
