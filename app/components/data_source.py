"""Which dataset the app is looking at: resolved from the canonical parameters.

``current()`` returns the dataset for the URL parameters (generated, built-in, or the session's
uploaded one). Generation errors keep the previous dataset on screen with the error beside it.
"""

from __future__ import annotations

import inspect
from dataclasses import dataclass
from typing import Any

import streamlit as st

import dpviz.data
from app.components import cache, classroom, keys, safe, state
from app.components.keys import Key
from dpviz.data import columns as _columns

# Session keys this module owns (declared here, issue 45 item 4; keys that more than one module
# uses are in app/components/keys.py).
_LAST_GOOD: Key[object] = Key("_last_dataset", object, "the last dataset that loaded")
_ACTIVE_UPLOAD: Key[object] = Key("_active_upload", object, "this session's uploaded dataset")


#: Widget-level knobs and the generator keyword each maps to.
_KNOB_KWARGS = {"d": "d", "gk": "k", "sep": "separation"}


@dataclass(frozen=True)
class DataChoice:
    """The resolved dataset (None if there is none yet), an error and a notice to show."""

    dataset: Any | None
    error: str | None = None
    notice: str | None = None


def generator_knobs(gen: str) -> set[str]:
    """Which of the knobs d, gk (k), sep (separation) the generator ``gen`` accepts."""
    spec = dpviz.data.GENERATORS[gen]
    sig = inspect.signature(spec.func).parameters
    return {knob for knob, kw in _KNOB_KWARGS.items() if kw in sig}


def generator_kwargs(p: dict[str, Any]) -> dict[str, Any]:
    knobs = generator_knobs(p["gen"])
    return {_KNOB_KWARGS[k]: p[k] for k in sorted(knobs)}


@st.cache_resource(max_entries=12, show_spinner="Generating data…")
def _generate(gen: str, n: int, kwargs_items: tuple, seed: int):
    spec = dpviz.data.GENERATORS[gen]
    return spec(n, rng=seed, **dict(kwargs_items))


@st.cache_resource(max_entries=8, show_spinner="Loading the built-in dataset…")
def _builtin(name: str):
    return dpviz.data.BUILTIN[name]()


def generate(p: dict[str, Any]):
    """The generated dataset for parameters ``p`` (cached; raises ValueError on bad parameters)."""
    data = dpviz.data
    if p["gen"] not in data.GENERATORS:
        raise ValueError(f"Unknown generator {p['gen']!r}. Available: {', '.join(data.GENERATORS)}.")
    return _generate(p["gen"], int(p["n"]), tuple(sorted(generator_kwargs(p).items())),
                     int(p["dseed"]))


def builtin(name: str):
    data = dpviz.data
    if name not in data.BUILTIN:
        raise ValueError(f"Unknown built-in dataset {name!r}. Available: {', '.join(data.BUILTIN)}.")
    return _builtin(name)


# ----------------------------------------------------------------------------- uploads


def remember_upload(dataset) -> None:
    """Keep an uploaded (and bounded) dataset in this session and make it the active one."""
    cache.put("upload", dataset.content_hash, dataset)
    st.session_state[_ACTIVE_UPLOAD] = dataset.content_hash


def active_upload():
    h = st.session_state.get(_ACTIVE_UPLOAD)
    return None if h is None else cache.peek("upload", h)


# ----------------------------------------------------------------------------- resolution


def current() -> DataChoice:
    """The dataset the parameters point at; on error, the last good one plus the error."""
    if []:
        return DataChoice(None, error=None, notice=None)
    if state.get("src") == "upload" and classroom.on():  # a class's server takes no uploads
        state.update(src="generate")
    p = state.params()
    last = st.session_state.get(_LAST_GOOD)
    try:
        if p["src"] == "generate":
            ds = generate(p)
        elif p["src"] == "builtin":
            ds = builtin(p["builtin"])
        else:
            ds = active_upload()
            if ds is None:
                fallback = last if last is not None and last.source != "upload" else None
                return DataChoice(
                    fallback,
                    notice="No uploaded dataset in this session yet. Uploads are never stored or "
                    "shared: a link carries parameters (some set from the upload, as the Data page "
                    "says) but not the rows, so upload the file on the Data page (Upload a CSV) to "
                    "see or reproduce the view.",
                )
    except ValueError as exc:
        return DataChoice(last, error=safe.md(exc))  # may quote a URL value: shown as text
    st.session_state[_LAST_GOOD] = ds
    _apply_link_suggestions(ds)
    return DataChoice(ds)


def _apply_link_suggestions(ds) -> None:
    """The knobs a link to a built-in table left out (:func:`state._note_link_suggestions`),
    set once to the table's :func:`suggestions` (t at the link's k when it gave one)."""
    missing = st.session_state.pop(keys.LINK_SUGGESTS, ())
    if not missing or ds.source != "builtin":
        return
    sg = suggestions(ds, None if "k" in missing else int(state.get("k")))
    state.update(**{name: sg[name] for name in missing if name in sg})


def suggestions(ds, k: int | None = None) -> dict:
    """A dataset's public suggestions for the run knobs: k (its classes or generated clusters),
    r_min = 10⁻³·Λ and t (with ``k``, default the suggested or current k); Λ back to the declared."""
    out: dict = {"radius": None}
    if ds.k:
        out["k"] = int(ds.k)
    if ds.radius:
        out["rmin"] = float(f"{ds.radius * 1e-3:.3g}")
    k = k if k is not None else out.get("k", state.get("k"))
    # The paper's t = 200, but keep at least ~5k rows per piece so the oracle can find k clusters
    # (small data gets fewer pieces; FriendlyCore may then fail and say so). Only from a PUBLIC
    # size: a recipe's n (generated, built-in) or the n the user declared for an upload. An
    # upload's row count is a statistic of its rows (issue 25, finding 4): without a declared n,
    # t stays at the paper's public default 200.
    n_public = ds.n if ds.source != "upload" else ds.params.get("n_declared")
    out["t"] = min(200, max(2, int(n_public) // (5 * k))) if n_public else 200
    return out


def radius_for(ds, p: dict[str, Any] | None = None) -> float | None:
    """The public Λ for a run: the user's declared value, else the dataset's declared one."""
    p = state.params() if p is None else p
    return p["radius"] if p["radius"] is not None else ds.radius


#: How :func:`describe` labels an upload's row count: it is read from the rows, not declared.
TRUE_N_LABEL = "the true row count: a non-private diagnostic, never on the Release page"


def describe(ds) -> str:
    """One line about a dataset (its recipe and facts) for the simulation pages and the Data page.

    An upload's n is its TRUE row count, read from the rows: labelled as a non-private diagnostic.
    The Release page (and anything it exports) uses :func:`describe_public` instead."""
    src = {"generated": "generated", "builtin": "built-in", "upload": "uploaded"}[ds.source]
    lam = "not declared" if ds.radius is None else f"{ds.radius:.4g}"
    note = (" · standardized with its own mean and sd (not private: fine for a public benchmark, "
            "not for your data)") if ds.source == "builtin" else scaling_note(ds)
    n = f"n = {ds.n:,}" + (f" ({TRUE_N_LABEL})" if ds.source == "upload" else "")
    return f"**{safe.md(ds.name)}** · {src} · {n} · d = {ds.d} · declared Λ = {lam}{note}"


def scaling_note(ds) -> str:
    """How an upload was scaled and filled, in the words the privacy statement needs."""
    prm = ds.params
    parts = []
    if prm.get("imputed"):
        parts.append("missing values filled with declared constants")
    scaled = prm.get("scaled")
    if scaled == "declared public bounds":
        src = prm.get("bounds_source")
        parts.append("scaled into [−1, 1] by bounds " + (
            "suggested from this file's range (NOT private: the guarantee does not cover the "
            "bounds)" if src else "you declared (public)"))
    elif scaled:
        parts.append("standardized with this file's own mean and sd (NOT private: the guarantee "
                     "does not cover the scaling)")
    return "".join(f" · {p}" for p in parts)


def k_note(ds, k: int) -> str | None:
    """A notice when k differs from the dataset's suggested k (its classes or generated clusters):
    k = 8 on iris's 3 classes releases 8 centers, several splitting a class or on top of another,
    so the picture seems to show fewer (issue 16). Public: the suggestion is part of the recipe."""
    if ds is None or not ds.k or int(k) == int(ds.k):
        return None
    if ds.labels is None and ds.true_centers is None:  # e.g. uniform data: no groups to match
        return None
    what = "classes" if ds.source == "builtin" else "clusters"
    return (f"This dataset has {ds.k} {what}; the run asks for k = {k} centers, so "
            + ("several centers split one group or sit almost on top of each other (the picture "
               "seems to show fewer)." if k > ds.k else "some groups must share a center.")
            + f" Set k = {ds.k} in the sidebar (or on the Data page) to match.")


# ----------------------------------------------------------------------------- provenance
# Where every public input of a release came from (issue 25, finding 4): "declared" (by the user
# or a public recipe), "dp_estimate" (paid from the budget) or "data" (READ FROM THE ROWS: not
# covered by the guarantee). The shape is ``dpviz.privacy.declared.Provenance.as_dict()``'s
# ({input: {"source": ..., "note": ...}}), so the library's type can take it over unchanged.

#: ``ds.params["radius_source"]`` when Λ was filled from the upload's own maximum row norm.
RADIUS_FROM_DATA = "data"


def provenance(ds, p: dict[str, Any] | None = None, *,
               n_declared: int | None = None) -> dict[str, dict[str, str]]:
    """{public input: {"source": declared | dp_estimate | data, "note": how}} for a release on
    ``ds`` with Λ from :func:`radius_for` and the declared n (None: a DP count)."""
    p = state.params() if p is None else p
    prm = ds.params
    out: dict[str, dict[str, str]] = {}
    if p.get("radius") is not None:
        out["radius"] = {"source": "declared", "note": "typed in the sidebar"}
    elif prm.get("radius_source") == RADIUS_FROM_DATA:
        out["radius"] = {"source": "data", "note": "filled from the upload's own largest row norm"}
    else:
        out["radius"] = {"source": "declared", "note": {
            "generated": "the recipe's bound", "builtin": "√d of the public box [−1, 1]^d",
            "upload": "typed on the Data page"}[ds.source]}
    scaled = prm.get("scaled")
    if ds.source == "builtin":
        out["scaling"] = {"source": "data", "note": "standardized with the dataset's own mean and sd"}
    elif scaled == _columns.SCALED_BY_BOUNDS:
        out["bounds"] = ({"source": "data", "note": "suggested from the file's own range"}
                         if prm.get("bounds_source") else {"source": "declared", "note": "per-column bounds"})
    elif scaled:
        out["scaling"] = {"source": "data", "note": "standardized with the file's own mean and sd"}
    if prm.get("imputed"):
        out["missing values"] = {"source": "declared", "note": "filled with declared constants"}
    out["n"] = ({"source": "declared", "note": "typed on the Release page"} if n_declared
                else {"source": "dp_estimate", "note": "a DP count paid from the budget"})
    return out


def data_derived(prov: dict[str, dict[str, str]]) -> list[str]:
    """The inputs of ``prov`` read from the data."""
    return [k for k, v in prov.items() if v["source"] == "data"]


def describe_public(ds) -> str:
    """:func:`describe` without the row count (the Release page: the true n is not public)."""
    src = {"generated": "generated", "builtin": "built-in", "upload": "uploaded"}[ds.source]
    n = f" · n = {ds.n:,} (from the recipe)" if ds.source == "generated" else ""
    return f"**{safe.md(ds.name)}** · {src}{n} · d = {ds.d}"
