"""Generate: a private mixture of generative networks on binarized digits (Acs et al., TKDE; issue 14).

DPGM (``dpviz.generative.dpgm``) trains in a background thread: a progress bar, a Cancel button
(a ``threading.Event`` passed as ``cancel``), then the headline ε with the account that is the
guarantee, the paper's (looser) number, ε vs epochs, a grid of synthetic digits per cluster and a
CSV download of the synthetic dataset that states its guarantee on its first line.

Every run here is a seeded simulation (badged). The data are either scikit-learn's digits binarized
at 0.5 with a public split (``binary_digits(0.15, rng=0)``), or the Data page's current dataset: a
declared share of its rows is held out as PUBLIC (no privacy: k-means seeds, decoder bias and the
per-column box that scales the rows to [0, 1]), and the private run uses the rest, whose count is
the declared size. Tabular results are a scatter of synthetic vs real rows per cluster (images for
64-column, 8×8 digit-like data) and a CSV in the data's units.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import Any

import numpy as np
import streamlit as st

from app.components import a11y, cache, data_source, jobs, modes, safe
from app.components.keys import Key
from app.components.synthetic import guarantee_text, synthetic_csv, synthetic_table_csv
from dpviz.generative import AcsSetting, DPGMParams, binary_digits, calibrate_sigma_g, dpgm
from dpviz.generative.data import UnitBox, encoded_without_public, tabular_split
from dpviz.viz.acs import epsilon_vs_epochs_figure, sample_grid_figure, synthetic_scatter_figure

# Session keys this module owns (declared here, issue 45 item 4; keys that more than one module
# uses are in app/components/keys.py).
CANCEL: Key[object] = Key(
    "dpgm_cancel_event", object, "the Event the next training receives; Cancel sets it")
SOURCE: Key[str] = Key("dpgm_data", str, "radio: the built-in digits or the Data page's data")
PUBLIC_PCT: Key[int] = Key("dpgm_public_pct", int, "slider: the share of the rows declared public")
GEN_BADGE: Key[object] = Key("dpgm_simulation", object, "the page's simulation badge")
GEN_FORM: Key[object] = Key("dpgm_form", object, "form: the training settings")
GEN_K: Key[int] = Key("dpgm_k", int, "number_input: clusters k")
GEN_EPS: Key[float] = Key("dpgm_eps", float, "select_slider: the row-level ε target")
GEN_EPOCHS: Key[int] = Key("dpgm_epochs", int, "number_input: epochs")
GEN_SEED: Key[int] = Key("dpgm_seed", int, "number_input: the training seed")
GEN_TRAIN: Key[bool] = Key("dpgm_train", bool, "form_submit_button: train")
GEN_CANCEL: Key[bool] = Key("dpgm_cancel", bool, "button: cancel the training")
GEN_PROGRESS: Key[object] = Key("generate_progress", object, "container: the training's progress bar")
GEN_ERROR: Key[str] = Key("_gen_error", str, "why the last Train did not start (None: it did)")
GEN_EPSILON: Key[object] = Key("dpgm_epsilon", object, "container: the run's spent ε")
GEN_EPS_CURVE: Key[object] = Key("dpgm_eps_curve", object, "chart: ε spent against training steps")
GEN_SAMPLES: Key[object] = Key("dpgm_samples", object, "chart: the synthetic samples")
GEN_DOWNLOAD: Key[bool] = Key("dpgm_download", bool, "download_button: the synthetic rows as CSV")

DELTA = 1e-5
BATCH = 64  # expected batch L: q = L / n_declared
SIGMA_K, SIGMA_C, T_K = 3.0, 4.0, 5
EPS_GRID = (2.0, 3.0, 5.0, 8.0, 10.0, 20.0, 50.0)
SLOT = "generate"  # the page's job (app.components.jobs)
GRID_SAMPLES = 10  # synthetic images per cluster in the grid
SOURCES = {"digits": "Binarized digits (built-in, 15% public split)", "data": "The Data page's dataset"}
PUBLIC_SPLIT_SEED = 0


@st.cache_resource(show_spinner="Loading digits…")
def _split():
    return binary_digits(0.15, rng=0)


@dataclass(frozen=True)
class GenInput:
    """What DPGM trains on: private rows in [0, 1] (binary for digits), public rows, how to map back."""

    X: np.ndarray
    X_public: np.ndarray | None
    box: UnitBox | None  # None: the binarized digits (0/1 pixels, no mapping)
    image: bool
    description: str
    feature_names: tuple[str, ...] = ()
    of: str = "the digits"

    @property
    def n_declared(self) -> int:
        return int(self.X.shape[0])

    def public_init(self, k: int, rng: int) -> np.ndarray:
        """k distinct random public records (footnote 3)."""
        gen = np.random.default_rng(rng)
        return self.X_public[gen.choice(self.X_public.shape[0], size=k, replace=False)]


def _digits_input() -> GenInput:
    split = _split()
    return GenInput(split.X, split.X_public, None, True,
                    f"scikit-learn digits binarized at 0.5; {split.X_public.shape[0]} rows held out as "
                    f"public (k-means seeds, decoder bias), **declared size n = {split.X.shape[0]}** private "
                    "rows, 64 pixels.")


def _data_input(pct: int) -> tuple[GenInput | None, str | None]:
    """The Data page's dataset with ``pct``% of its rows declared public (or an explanation why not)."""
    ds = data_source.current().dataset
    if ds is None:
        return None, "No dataset yet: choose one on the Data page."
    radius = data_source.radius_for(ds)
    if pct == 0 and radius is None:
        return None, ("This dataset has no public radius Λ, and no rows are declared public: declare a Λ on "
                      "the Data page or some public rows here, so the rows can be scaled without reading "
                      "them.")
    if ds.n < 4:
        return None, "The dataset is too small to train on (fewer than 4 rows)."

    def build() -> GenInput:
        if pct > 0:
            split, box = tabular_split(ds.X, pct / 100.0, rng=PUBLIC_SPLIT_SEED)
            X, P = split.X, split.X_public
            public = (f"**{P.shape[0]:,} rows ({pct}%, drawn once at random with seed "
                      f"{PUBLIC_SPLIT_SEED}) are declared PUBLIC: they get no privacy** (k-means seeds, "
                      "decoder bias, and the per-column box that scales the rows to [0, 1]); ")
        else:
            X, box = encoded_without_public(ds.X, radius)
            P = None
            public = (f"no rows declared public (columns scaled to [0, 1] by the box [−Λ, Λ], "
                      f"Λ = {radius:g}); ")
        image = ds.d == 64
        return GenInput(X, P, box, image,
                        f"{safe.md(ds.name)} from the Data page; {public}**declared size n = "
                        f"{X.shape[0]:,}** private rows, {ds.d} columns"
                        + (" (shown as 8×8 images)" if image else "") + ".",
                        tuple(ds.feature_names), f"the Data page's dataset ({X.shape[0]:,} private rows)")

    return cache.memo("gen_input", (ds.content_hash, int(pct), radius if pct == 0 else None), build), None


def _setting(n_declared: int, k: int, epochs: float, sigma_g: float = 1.0) -> AcsSetting:
    """The public accounting inputs of the run dpgm will make (as dpgm builds them)."""
    return AcsSetting(sigma_C=SIGMA_C, sigma_K=SIGMA_K, sigma_G=sigma_g, q=min(1.0, BATCH / n_declared),
                      T_K=T_K if k > 1 else 0, epochs=epochs, delta=DELTA)


@st.cache_data(show_spinner="Calibrating σ_G to the ε target…")
def _sigma_g(n_declared: int, k: int, epochs: float, eps: float) -> float:
    return calibrate_sigma_g(_setting(n_declared, k, epochs), eps, k=k)


@st.cache_data(show_spinner="ε vs epochs (four accountants)…")
def _eps_curve(n_declared: int, k: int, epochs: float, sigma_g: float):
    grid = sorted({max(1.0, round(epochs * f)) for f in (0.25, 0.5, 1.0)} | {2.0 * epochs})
    return epsilon_vs_epochs_figure(_setting(n_declared, k, epochs, sigma_g), grid, k=k)


def _train(job: jobs.Job, inp: GenInput, params: DPGMParams) -> Any:
    """The background worker: public progress (step counts) only; never touches Streamlit."""
    def progress(p) -> None:
        job.step, job.total = p.step, p.total_steps

    cfg = job.info
    init = inp.public_init(params.k, rng=cfg["seed"]) if params.k > 1 else None
    return dpgm(inp.X, params=params, public_init=init, n_declared=cfg["n_declared"], delta=DELTA,
                rng=cfg["seed"], X_public=inp.X_public, progress=progress, progress_every=1,
                cancel=job.cancel)


def _start(config: dict[str, Any], sigma_g: float, inp: GenInput) -> None:
    params = DPGMParams(k=config["k"], T_K=T_K, sigma_K=SIGMA_K, sigma_C=SIGMA_C, sigma_G=sigma_g,
                        batch_size=float(BATCH), epochs=float(config["epochs"]), lr=3e-3, n_features=50)
    jobs.start(SLOT, ("dpgm", id(inp), tuple(sorted((k, v) for k, v in config.items() if k != "input"))),
               lambda job: _train(job, inp, params), cancel=st.session_state[CANCEL], info=config)


def _results(job: jobs.Job) -> None:
    res = job.result
    acc = res.account
    cfg = job.info
    mode = "simulation (seeded)" if res.simulation else "release"
    if res.cancelled:
        total = round(res.extra["steps_per_epoch"] * cfg["epochs"])
        st.warning(f"Training was **cancelled** after {res.steps_run} of {total} DP-SGD steps. "
                   f"The account below covers only the {res.steps_run} steps that ran "
                   f"({acc.setting.epochs:.3g} epochs), plus the clustering.", icon=":material/cancel:")
    with st.container(key=GEN_EPSILON):
        c1, c2, c3 = st.columns(3)
        c1.metric("ε per row (the guarantee)", f"{acc.eps:.3g}", help=f"δ = {acc.setting.delta:g}")
        looser = acc.paper.eps >= acc.eps
        c2.metric("the paper's (looser) bound" if looser else "the paper's bound (not the guarantee)",
                  f"{acc.paper.eps:.3g}")
        c3.metric("target ε", f"{cfg['eps']:g}")
        st.markdown(f"**Guarantee:** ε = {acc.eps:.3g} at δ = {acc.setting.delta:g} from the "
                    f"**{acc.guarantee.upper()}** account (dp-accounting, add/remove of one row, noise as "
                    f"drawn; `res.account.guarantee = {acc.guarantee!r}`). The paper's accountant "
                    f"(Theorem 4) gives ε = {acc.paper.eps:.3g}: "
                    + ("the paper's (looser) bound, shown for comparison only." if looser else
                       "shown for comparison only; it is not the guarantee."))
        st.caption(f"{mode}: σ_G = {res.params.sigma_G:.3g} (calibrated to the target ε on the RDP "
                   f"account), σ_K = {SIGMA_K:g}, σ_C = {SIGMA_C:g}, T_K = {T_K}, q = {res.extra['q']:.3g}, "
                   f"{res.steps_run} steps in {res.extra['train_seconds']:.1f} s.")
    a11y.chart(_eps_curve(cfg["n_declared"], cfg["k"], float(cfg["epochs"]), res.params.sigma_G),
               key=GEN_EPS_CURVE)
    st.caption("ε vs epochs for this configuration (public inputs only). The guarantee is the lower of "
               "RDP and PLD; the paper's accountant is dotted.")
    inp: GenInput = cfg["input"]
    if inp.box is not None:
        _user_results(job, inp, mode)
        return
    rng = np.random.default_rng(cfg["seed"])
    rows = [m.sample(GRID_SAMPLES, rng, binary=False) for m in res.models]  # loop over k
    labels = [f"cluster {i} (w={w:.2f})" for i, w in enumerate(res.weights)]
    grid = sample_grid_figure(rows, row_labels=labels,
                              title=f"Synthetic digits per cluster — {mode}, ε = {acc.eps:.3g}")
    grid.update_layout(height=90 + 75 * len(rows))  # readable 8×8 images at any k
    a11y.chart(grid, key=GEN_SAMPLES)
    st.caption("Each row: pixel probabilities from one cluster's VAE decoder (the models are DP outputs; "
               "w is the noisy cluster weight used to draw the synthetic rows).")
    text = guarantee_text(res, mode)
    n = cfg["n_declared"]
    st.download_button("Download the synthetic dataset (CSV)", synthetic_csv(res, n, cfg["seed"], text),
                       file_name="dpviz_synthetic_digits.csv", mime="text/csv", key=GEN_DOWNLOAD)
    st.caption(safe.md(f"{n} synthetic rows (64 binary pixels and the component). Guarantee: {text}."
                       " The first line of the file states it."))


def _user_results(job: jobs.Job, inp: GenInput, mode: str) -> None:
    """The Data page's dataset: synthetic vs real per cluster (images for 8×8 data) and the CSV."""
    res, cfg = job.result, job.info
    acc = res.account
    n = cfg["n_declared"]
    rng = np.random.default_rng(cfg["seed"])
    if inp.image:  # decoder means mapped back, shown on the public box's scale
        lo, hi = float(inp.box.lo.min()), float(inp.box.hi.max())
        rows = [(inp.box.decode(m.sample(GRID_SAMPLES, rng, binary=False)) - lo) / (hi - lo)
                for m in res.models]  # loop over k
        labels = [f"cluster {i} (w={w:.2f})" for i, w in enumerate(res.weights)]
        fig = sample_grid_figure(rows, row_labels=labels,
                                 title=f"Synthetic 8×8 rows per cluster — {mode}, ε = {acc.eps:.3g}")
        fig.update_layout(height=90 + 75 * len(rows))
    else:
        U, comp = res.sample(min(n, 3000), rng=cfg["seed"], binary=False)
        fig = synthetic_scatter_figure(inp.box.decode(inp.X), inp.box.decode(U), comp,
                                       title=f"Synthetic rows per cluster vs the real rows — {mode}, "
                                             f"ε = {acc.eps:.3g}")
    a11y.chart(fig, key=GEN_SAMPLES)
    st.caption("Synthetic rows: decoder means of each cluster's VAE at random latent points, mapped back "
               "from [0, 1] to the data's units (DP outputs; w is the noisy cluster weight). The grey real "
               "rows are a non-private view for you, the data owner.")
    text = guarantee_text(res, mode, of=inp.of)
    csv = synthetic_table_csv(res, n, cfg["seed"], text, inp.box, inp.feature_names)
    st.download_button("Download the synthetic dataset (CSV)", csv, file_name="dpviz_synthetic_data.csv",
                       mime="text/csv", key=GEN_DOWNLOAD)
    st.caption(safe.md(f"{n} synthetic rows ({inp.X.shape[1]} columns and the component). Guarantee: {text}."
                       " The first line of the file states it."))


st.title("Generate: a private mixture of generative networks")
st.caption("Acs, Melis, Castelluccia, De Cristofaro. Differentially Private Mixture of Generative Neural "
           "Networks. IEEE TKDE. DP kernel k-means on public seeds, then one VAE per cluster trained with "
           "DP-SGD; synthetic rows drawn per cluster with the noisy cluster weights.")
modes.simulation_badge(GEN_BADGE)

st.session_state.setdefault(CANCEL, threading.Event())
st.session_state.setdefault(SOURCE, "digits")
source = st.radio("Data", list(SOURCES), format_func=SOURCES.get, key=SOURCE, horizontal=True,
                  help="The built-in binarized digits, or the dataset chosen on the Data page.")
inp: GenInput | None
input_error = None
if source == "digits":
    inp = _digits_input()
else:
    st.session_state.setdefault(PUBLIC_PCT, 15)
    pct = st.slider("Rows declared PUBLIC (%)", 0, 50, step=5, key=PUBLIC_PCT,
                    help="DPGM starts k-means from k public records and scales each column to [0, 1] by the "
                         "public rows' range. Declare rows public only if they really are: they get no "
                         "privacy. At 0%, k must be 1 and the columns are scaled by the declared Λ.")
    inp, input_error = _data_input(int(pct))
n_declared = inp.n_declared if inp is not None else 0


def _source_key() -> tuple:
    """What the trained model's data was: the source and, for the Data page's, its content and
    public share (a result shown beside other data would be stale)."""
    if st.session_state.get(SOURCE) == "digits":
        return ("digits",)
    ds = data_source.current().dataset
    return ("data", None if ds is None else ds.content_hash, st.session_state.get(PUBLIC_PCT))


def _on_train() -> None:
    """The Train button's callback: runs before the page, so the page already shows the job running."""
    job = jobs.current(SLOT)
    if job is not None and job.running:
        return
    ss = st.session_state
    if job is not None and job.cancel is ss[CANCEL]:  # a finished job's event is spent (maybe set)
        ss[CANCEL] = threading.Event()
    if inp is None:
        return
    config = dict(k=int(ss[GEN_K]), eps=float(ss[GEN_EPS]), epochs=int(ss[GEN_EPOCHS]),
                  seed=int(ss[GEN_SEED]), n_declared=n_declared, input=inp, source=_source_key())
    if config["k"] > 1 and (inp.X_public is None or inp.X_public.shape[0] < config["k"]):
        have = 0 if inp.X_public is None else inp.X_public.shape[0]
        ss[GEN_ERROR] = (f"k = {config['k']} clusters start from {config['k']} public records, and "
                            f"{have} rows are declared public: declare more public rows or set k = 1.")
        return
    try:
        sigma_g = _sigma_g(n_declared, config["k"], float(config["epochs"]), config["eps"])
    except ValueError as exc:
        ss[GEN_ERROR] = str(exc)
        return
    ss[GEN_ERROR] = None
    _start(config, sigma_g, inp)


job = jobs.current(SLOT)
if job is not None and job.info.get("source") != _source_key():
    # The data changed under a trained (or training) model: its results are of other data
    # (issue 27: stale digit results stayed after switching to the Data page's dataset).
    jobs.forget(SLOT)
    job = None
running = job is not None and job.running

if input_error:
    st.info(input_error)
with st.form(GEN_FORM):
    if inp is not None:
        st.markdown(f"**Data:** {inp.description} δ = {DELTA:g}.")
    c1, c2, c3, c4 = st.columns(4)
    c1.number_input("clusters k", 1, 10, 2, key=GEN_K)
    c2.select_slider("row-level ε target", EPS_GRID, value=10.0, key=GEN_EPS)
    c3.number_input("epochs", 1, 50, 5, key=GEN_EPOCHS)
    c4.number_input("seed", 0, 2**31 - 1, 0, key=GEN_SEED)
    st.form_submit_button("Train", key=GEN_TRAIN, disabled=running or inp is None, on_click=_on_train)

if st.session_state.get(GEN_ERROR):
    st.error(safe.md(st.session_state[GEN_ERROR]))

if running:
    jobs.panel(SLOT, key=GEN_PROGRESS, unit="DP-SGD step", stop_label="Cancel", stop_key=GEN_CANCEL)
elif job is not None:
    st.session_state[CANCEL] = threading.Event()  # the finished job's event is spent; the next gets a new one
    if job.error is not None:
        st.error(safe.md(f"Training failed: {job.error}"))
    else:
        _results(job)
else:
    st.info("Choose k, the ε target and the epochs, then **Train** (a few seconds at the defaults).")
