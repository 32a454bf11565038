"""The app's parameters: one canonical dict in session state, mirrored to the URL query string.

Every parameter that changes what the app shows (data recipe, budget, algorithm knobs, seed)
lives in ``st.session_state["params"]``. On the first run of a session the URL query string is
read into it (invalid values are ignored with a notice); at the end of every run (and of every
fragment rerun) it is written back to ``st.query_params``, so a copied link reproduces the
same view. Widgets never own a parameter: they are seeded from the canonical value and their
``on_change`` callback (or the form's submit callback) writes it back.

Uploaded data is never in the URL: a link to an uploaded dataset carries its parameters only.
"""

from __future__ import annotations

import math
import os
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import streamlit as st

import dpviz
from app.components import keys
from app.components.friendlycore import knobs as fc_knobs
from app.components.keys import Key

#: The one algorithm the app names outside its family folder: Explore's default (issue 33).
DEFAULT_ALGORITHM = "friendlycore"

# Session keys this module owns (declared here, issue 45 item 4; keys that more than one module
# uses are in app/components/keys.py).
_PARAMS_KEY: Key[dict] = Key("params", dict, "the canonical parameters (app/components/state.py)")
_NOTICES_KEY: Key[list] = Key("_url_notices", list, "URL values that were ignored, shown once")
_LAST_QUERY_KEY: Key[dict] = Key("_last_query", dict, "the query string the app last wrote")
#: The one old-link reader of ρ (issue 33): a link made with the old ρ slider (flat ``rho=`` or
#: ``<algorithm>.rho=``) carries an own budget ρ (with the link's δ). It is kept here, and only
#: here, until a target is set (ε or δ moved, :func:`update`): the algorithm's page, which knows
#: the dataset's public inputs, converts it by the plan's rule (``dpviz.registry.budget_from_rho``
#: then ``plan_at_budget``) into the row-level ε the slider shows, and runs that same budget, so an
#: old link opens the same run. ρ is no parameter, no URL key the app writes, no readout.
LINK_RHO: Key[float] = Key(
    "_link_rho", float, "an old link's own budget ρ while it applies (the one old-link reader)")


def _is_rho_key(url_name: str) -> bool:
    """``rho`` or ``<algorithm>.rho`` (not a registered parameter of that name): an old link's ρ."""
    return url_name == "rho" or (url_name.endswith(".rho") and _spec_field(url_name) is None)


def _number(text: str, what: str) -> float:
    """``float(text)``, with a message in the page's words (not Python's "could not convert")."""
    try:
        return float(text)
    except ValueError:
        raise ValueError(f"must be {what}") from None


def _float_in(low: float, high: float, *, low_open: bool = False) -> Callable[[str], float]:
    def parse(text: str) -> float:
        bracket = "(" if low_open else "["
        v = _number(text, f"a number in {bracket}{low:g}, {high:g}]")
        if not math.isfinite(v) or v < low or v > high or (low_open and v == low):
            bracket = "(" if low_open else "["
            raise ValueError(f"must be a number in {bracket}{low:g}, {high:g}]")
        return v

    return parse


def _int_in(low: int, high: int) -> Callable[[str], int]:
    def parse(text: str) -> int:
        v = _number(text, f"an integer in [{low}, {high}]")
        if not v.is_integer() or v < low or v > high:
            raise ValueError(f"must be an integer in [{low}, {high}]")
        return int(v)

    return parse


def _choice(*options: str) -> Callable[[str], str]:
    def parse(text: str) -> str:
        if text not in options:
            raise ValueError(f"must be one of {', '.join(options)}")
        return text

    return parse


def _any_name(text: str) -> str:
    text = text.strip()
    if not text or len(text) > 64:
        raise ValueError("must be a short name")
    return text


def _optional_radius(text: str) -> float | None:
    if text.strip() in ("", "auto", "none", "None"):
        return None
    return _float_in(0.0, 1e12, low_open=True)(text)


def _int_or_automatic(low: int, high: int, automatic: int) -> Callable[[str], int]:
    """An integer in [low, high], or ``automatic`` (t = 0: the algorithm's own choice from the
    declared n and k)."""
    what = f"{automatic} (automatic) or an integer in [{low}, {high}]"

    def parse(text: str) -> int:
        v = _number(text, what)
        if not v.is_integer() or not (v == automatic or low <= v <= high):
            raise ValueError(f"must be {what}")
        return int(v)

    return parse


def _knob_parser(knob: fc_knobs.Knob) -> Callable[[str], Any]:
    """How a link's text is read for one of FriendlyCore's knobs: its bounds from the one table
    (:mod:`app.components.friendlycore.knobs`)."""
    if knob.kind is bool:
        return lambda text: _bool(text)
    if knob.kind is str:
        return _choice(*knob.bounds)
    low, high = knob.bounds
    if knob.kind is int:
        return _int_in(int(low), int(high)) if knob.automatic is None else \
            _int_or_automatic(int(low), int(high), knob.automatic)
    return _float_in(float(low), float(high), low_open=knob.low_open)


@dataclass(frozen=True)
class Param:
    """One URL-backed parameter: its default and how to read it from a query string."""

    name: str
    default: Any
    parse: Callable[[str], Any]
    help: str = ""
    group: str = "run"  # "data" | "run" | "budget" | "compare"

    def format(self, value: Any) -> str:
        if value is None:
            return "auto"
        if isinstance(value, bool):
            return "true" if value else "false"
        if isinstance(value, float):
            return repr(value)  # shortest exact round-trip
        return str(value)


def _knob_param(knob: fc_knobs.Knob) -> Param:
    """The canonical parameter of one of FriendlyCore's knobs (its flat name, default, bounds)."""
    return Param(knob.param, knob.default, _knob_parser(knob), knob.help)


# Data recipe. ``gen`` and ``builtin`` are checked against the registries at load time.
_DATA_PARAMS = (
    Param("src", "generate", _choice("generate", "builtin", "upload"), "data source", "data"),
    Param("gen", "fig6_blobs", _any_name, "generator", "data"),
    # The default lesson (issue 33): Fig. 6 blobs at 150,000 rows and t = 1,500 pieces, where
    # FriendlyCore's core forms from the row-level ε = 5 of the slider and not below
    # (bench/teaching_default.py, docs/fc_clustering.md).
    Param("n", 150_000, _int_in(50, 500_000), "rows to generate", "data"),
    Param("d", 2, _int_in(1, 200), "dimension", "data"),
    Param("gk", 8, _int_in(1, 50), "clusters to generate", "data"),
    Param("sep", 1.0, _float_in(0.05, 20.0), "separation (multiplies center spread)", "data"),
    Param("dseed", 0, _int_in(0, 2**31 - 1), "data seed", "data"),
    Param("builtin", "iris", _any_name, "built-in dataset", "data"),
)
# The private run (Explore) and the sweep (Budget).
_RUN_PARAMS = (
    Param("delta", 1e-6, _float_in(0.0, 0.1, low_open=True), "δ"),
    Param("k", 8, _int_in(1, 50), "clusters"),
    _knob_param(fc_knobs.T),
    Param("radius", None, _optional_radius, "public radius Λ (auto = the dataset's declared Λ)"),
    _knob_param(fc_knobs.R_MIN),
    _knob_param(fc_knobs.ORACLE),
    _knob_param(fc_knobs.FALLBACK),
    _knob_param(fc_knobs.PRESET),
    Param("seed", 0, _int_in(0, 2**31 - 1), "run seed"),
    # Which registered algorithm Explore shows (old links carry none: FriendlyCore), and the
    # row-level ε target every algorithm is calibrated to (Explore's main control).
    Param("alg", DEFAULT_ALGORITHM, lambda text: _algorithm(text), "algorithm (dpviz.algorithms())"),
    Param("eps", 3.0, _float_in(0.0, 1e3, low_open=True), "row-level ε target"),
)


def _bool(text: str) -> bool:
    if text not in ("true", "false", "True", "False", "1", "0"):
        raise ValueError("must be true or false")
    return text in ("true", "True", "1")


def _algorithm(text: str) -> str:
    names = [a.name for a in dpviz.algorithms()]
    if text not in names:
        raise ValueError(f"must be one of {', '.join(names)}")
    return text


# ----------------------------------------------------------------------------- per-algorithm keys
# An algorithm's own parameters live in the URL as ``<algorithm>.<field>`` (e.g. ``balcan.T3``),
# so two algorithms never share a key and adding one adds no entry here.


def algorithm_key(name: str, field: str) -> str:
    return f"{name}.{field}"


def _spec_field(key: str):
    """(spec, dataclass field) of a namespaced key, or None if it names no registered parameter."""
    name, _, fname = key.partition(".")
    if not fname:
        return None
    try:
        spec = dpviz.registry.get(name)
    except ValueError:
        return None
    for f, _hint in dpviz.registry.param_fields(spec.params):
        if f.name == fname:
            return spec, f
    return None


def _parse_field(f, text: str) -> Any:
    """A URL string as the type of the field's default; the spec validates the value itself."""
    default = f.default
    if isinstance(default, bool):
        if text not in ("true", "false", "True", "False", "1", "0"):
            raise ValueError("must be true or false")
        return text in ("true", "True", "1")
    if isinstance(default, int):
        v = float(text)
        if not v.is_integer():
            raise ValueError("must be an integer")
        return int(v)
    if isinstance(default, float):
        v = float(text)
        if not math.isfinite(v):
            raise ValueError("must be a finite number")
        return v
    return text


def algorithm_params(name: str, p: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """The non-default parameters of algorithm ``name`` set in the canonical dict."""
    p = params() if p is None else p
    prefix = f"{name}."
    return {k[len(prefix):]: v for k, v in p.items() if k.startswith(prefix)}
def _algorithms(text: str) -> str:
    """A comma-separated list of registry names, with parameters when they have them
    (``friendlycore[preset=paper]``); old links' names are read by ``dpviz.registry.registry_name``."""
    algos = [dpviz.registry.registry_name(a) for a in text.split(",") if a.strip()]
    bad = []
    for a in algos:
        try:
            dpviz.registry.resolve_name(a)
        except (ValueError, TypeError):
            bad.append(a)
    if bad or not algos:
        known = sorted(s.name for s in dpviz.algorithms())
        raise ValueError(f"must be a comma-separated list of registered algorithms ({', '.join(known)}), "
                         "with parameters in brackets when needed (name[key=value])")
    return ",".join(algos)


# The Budget page's sweep.
_BUDGET_PARAMS = (
    Param("balg", f"{DEFAULT_ALGORITHM},dp_lloyd,diffprivlib,kmeans++", _algorithms, "algorithms",
          "budget"),
    Param("blo", 0.01, _float_in(0.0, 1e3, low_open=True), "smallest row-level ε of the sweep", "budget"),
    Param("bhi", 10.0, _float_in(0.0, 1e3, low_open=True), "largest row-level ε of the sweep", "budget"),
    Param("bpts", 7, _int_in(2, 25), "row-level ε values in the sweep", "budget"),
    Param("breps", 8, _int_in(1, 100), "repetitions per ε", "budget"),
)


def _registered_list(text: str) -> str:
    """``all``, ``default`` (the data shape's default set, ``dpviz.compare_set``) or a
    comma-separated list of registered algorithm names."""
    if text in ("all", "default"):
        return text
    return ",".join(_algorithm(a) for a in text.split(",") if a) or "all"


# The Present page (two row-level ε side by side, large type).
_PRESENT_PARAMS = (
    # Present opens on the lesson's two sides (issue 43): at ε = 0.02 the backup's centers are
    # wrong (normalized loss 0.86), at ε = 10 FriendlyCore's core answers (0.000).
    Param("pa", 0.02, _float_in(0.0, 1e3, low_open=True), "left row-level ε", "present"),
    Param("pb", 10.0, _float_in(0.0, 1e3, low_open=True), "right row-level ε", "present"),
)


# The Compare page (every registered algorithm at the same row-level (ε, δ)); a click on it sets
# Explore's ``alg`` and ``eps`` (above).
_COMPARE_PARAMS = (
    Param("calg", "default", _registered_list,
          "algorithms compared (all = every registered one; default = the data shape's default set, "
          "issue 43)", "compare"),
    Param("celo", 0.5, _float_in(0.0, 1e3, low_open=True), "smallest row-level ε", "compare"),
    Param("cehi", 10.0, _float_in(0.0, 1e3, low_open=True), "largest row-level ε", "compare"),
    Param("cpts", 4, _int_in(1, 12), "ε values compared", "compare"),
    Param("cdelta", 1e-6, _float_in(0.0, 0.1), "row-level δ", "compare"),
    Param("creps", 10, _int_in(1, 50), "repetitions per ε (≥ 10: a cell's spread needs them)", "compare"),
)
PARAMS: dict[str, Param] = {p.name: p for p in (*_DATA_PARAMS, *_RUN_PARAMS, *_BUDGET_PARAMS,
                                                *_COMPARE_PARAMS, *_PRESENT_PARAMS)}


def defaults() -> dict[str, Any]:
    return {name: p.default for name, p in PARAMS.items()}


#: FriendlyCore's own parameters are namespaced in the URL like every algorithm's
#: (``friendlycore.<field>``); the flat keys of links made before (``t``, ``oracle``, …) still open the
#: same run: :func:`parse_query` reads both, :func:`query_dict` writes the namespaced ones. The
#: canonical dict keeps the flat names (the Budget page's FriendlyCore sweeps read them too). Both
#: come from the one table of FriendlyCore's knobs (:mod:`app.components.friendlycore.knobs`).
URL_NAMES: dict[str, str] = {knob.param: knob.url for knob in fc_knobs.KNOBS}
_FROM_URL = {url: name for name, url in URL_NAMES.items()}


def parse_query(query: Mapping[str, str]) -> tuple[dict[str, Any], list[str]]:
    """Parameters read from a query string, and a notice for each value that was ignored.

    A namespaced FriendlyCore key wins over its old flat alias when a link carries both."""
    values: dict[str, Any] = {}
    notices: list[str] = []
    # namespaced keys last: they win over their flat aliases
    items = sorted(query.items(), key=lambda kv: kv[0] in _FROM_URL or ("." in kv[0] and _is_rho_key(kv[0])))
    for url_name, raw in items:
        name = _FROM_URL.get(url_name, url_name)
        p = PARAMS.get(name)
        text = raw[-1] if isinstance(raw, list) else str(raw)
        if _is_rho_key(url_name):  # an old link's own budget (LINK_RHO: the page converts it)
            try:
                values[LINK_RHO] = _float_in(0.0, 1e3, low_open=True)(text)
            except ValueError as exc:
                notices.append(f"URL parameter {url_name}={text!r} ignored: it {exc}.")
            continue
        if p is None:
            found = _spec_field(name)
            if found is None:
                continue
            spec, f = found
            try:
                value = _parse_field(f, text)
                spec.make_params(**{f.name: value})  # the spec's own validation
                values[name] = value
            except (ValueError, TypeError) as exc:
                notices.append(f"URL parameter {name}={text!r} ignored: {exc}")
            continue
        try:
            values[name] = p.parse(text)
        except (ValueError, TypeError) as exc:
            notices.append(f"URL parameter {url_name}={text!r} ignored: it {exc}.")
    return values, notices


def init() -> dict[str, Any]:
    """The canonical parameters: defaults ← URL on the session's first run; later, a URL the app
    did not write itself (a link with parameters, the browser's back button) updates them."""
    query = st.query_params.to_dict()
    if _PARAMS_KEY not in st.session_state:
        params = defaults()
        values, notices = parse_query(query)
        _keep_link_rho(values)
        _note_link_suggestions(values)
        params.update(values)
        st.session_state[_PARAMS_KEY] = params
        st.session_state[_NOTICES_KEY] = notices
    elif query and query != st.session_state.get(_LAST_QUERY_KEY):
        values, notices = parse_query(query)
        _keep_link_rho(values)
        _note_link_suggestions(values)
        st.session_state[_PARAMS_KEY].update(values)
        st.session_state[_NOTICES_KEY] = notices
    return st.session_state[_PARAMS_KEY]


#: The run knobs a dataset suggests (app.components.data_source.suggestions).
SUGGESTED_KNOBS = ("k", "t", "rmin")


def _note_link_suggestions(values: Mapping[str, Any]) -> None:
    """A link naming a built-in table but not all of k, t, r_min (typed by hand: the app writes
    them all): those take the table's suggestions once it is loaded, as choosing the table on the
    Data page does, instead of the lesson's k = 8, t = 1,500 (with which FriendlyCore refused
    Iris: "needs at least 12000 rows"; issue 43)."""
    missing = tuple(name for name in SUGGESTED_KNOBS if name not in values)
    if values.get("src") == "builtin" and missing:
        st.session_state[keys.LINK_SUGGESTS] = missing


def _keep_link_rho(values: dict[str, Any]) -> None:
    """Move an old link's ρ out of the parameters into :data:`LINK_RHO` (while it applies)."""
    if LINK_RHO in values:
        st.session_state[LINK_RHO] = float(values.pop(LINK_RHO))
    else:
        st.session_state.pop(LINK_RHO, None)


def link_rho() -> float | None:
    """The own budget ρ of an old link while it applies (:data:`LINK_RHO`), else None."""
    rho = st.session_state.get(LINK_RHO)
    return None if rho is None else float(rho)


def show_link_target(eps: float) -> None:
    """Put the ε slider at the row-level ε of an old link's ρ (its plan's guarantee) without
    leaving the link (:func:`update` would)."""
    params()["eps"] = float(eps)


def params() -> dict[str, Any]:
    """The canonical parameters (the live dict; use :func:`update` to change it)."""
    if _PARAMS_KEY not in st.session_state:
        return init()
    return st.session_state[_PARAMS_KEY]


def get(name: str) -> Any:
    return params()[name]


def update(**values: Any) -> None:
    """Set parameters (names must be registered; the budget is the row-level (ε, δ), never a ρ)."""
    p = params()
    for name, value in values.items():
        if name not in PARAMS and _spec_field(name) is None:
            raise KeyError(f"Unknown app parameter {name!r}")
        p[name] = value
    if {"eps", "delta"} & set(values):  # a target is set: an old link's ρ no longer applies
        st.session_state.pop(LINK_RHO, None)


def url_notices() -> list[str]:
    """Notices about URL values that were ignored (shown once)."""
    return st.session_state.pop(_NOTICES_KEY, [])


def relevant(p: Mapping[str, Any]) -> dict[str, Any]:
    """The parameters that matter for the current data source (what goes in the URL)."""
    skip: set[str] = set()
    if p["src"] != "generate":
        skip |= {"gen", "n", "d", "gk", "sep", "dseed"}
    if p["src"] != "builtin":
        skip.add("builtin")
    # Only the shown algorithm's own keys; FriendlyCore (the default) keeps today's flat keys.
    skip |= {k for k in p if "." in k and not k.startswith(f"{p.get('alg')}.")}
    if p.get("alg") == PARAMS["alg"].default:
        skip.add("alg")
    return {k: v for k, v in p.items() if k not in skip}


def _format(name: str, value: Any) -> str:
    if name in PARAMS:
        return PARAMS[name].format(value)
    if isinstance(value, bool):
        return "true" if value else "false"
    return repr(value) if isinstance(value, float) else str(value)


def query_dict(p: Mapping[str, Any] | None = None) -> dict[str, str]:
    p = params() if p is None else p
    return {URL_NAMES.get(k, k): _format(k, v) for k, v in relevant(p).items()}


#: Installed once per browser tab by :func:`one_history_entry_per_switch`. A page switch pushes the
#: new page's path with no query string; this session's first run there then writes the parameters
#: back (:func:`sync_url`), and Streamlit's frontend pushes that as a second entry, so Back needed
#: two presses per switch (issue 27). A push that only adds a query string to a URL that has none,
#: on the same path, completes the navigation before it: it replaces the entry instead.
_HISTORY_JS = """<script>
(() => {
  const h = window.history;
  if (h.__dpvizOneEntry) return;
  h.__dpvizOneEntry = true;
  const push = h.pushState.bind(h);
  h.pushState = (state, title, url) => {
    if (url !== undefined && url !== null) {
      const next = new URL(String(url), window.location.href);
      if (next.pathname === window.location.pathname && !window.location.search && next.search) {
        return h.replaceState(state, title, url);
      }
    }
    return push(state, title, url);
  };
})();
</script>"""


def one_history_entry_per_switch() -> None:
    """Make the URL update that follows a page switch replace the switch's history entry, so one
    Back returns to the previous page (:data:`_HISTORY_JS`; idempotent per tab)."""
    st.html(_HISTORY_JS, unsafe_allow_javascript=True)


def sync_url() -> None:
    """Write the canonical parameters to the URL (only when they changed)."""
    want = query_dict()
    if st.query_params.to_dict() != want:
        st.query_params.from_dict(want)
    st.session_state[_LAST_QUERY_KEY] = want


# ----------------------------------------------------------------------------- widget binding


def seed_widget(name: str, key: str, to_widget: Callable[[Any], Any] = lambda v: v, *,
                in_form: bool = False) -> None:
    """Make the widget ``key`` show the canonical value of ``name`` (call before creating it).

    Outside a form the value is written on every run, even when session state already holds
    it (issue 43, item 5). Streamlit sends a widget's value to the browser only in a run that
    wrote it; otherwise the browser keeps what it has or, for a widget it has never drawn, the
    widget's own default (a select-slider's first option, a number input's minimum). A run
    stopped by a rerun request between this seed and the widget's creation leaves the value in
    session state while the browser never received the widget, so the next run, finding the
    value already there, sent nothing: the browser drew ε = 0.1 or k = 1 and reported it with
    the next input, and the widget's ``on_change`` copied it into the parameters.
    Inside a form (``in_form``) a write would also overwrite what was typed but not yet applied,
    so there it is written only when the value differs.
    """
    want = to_widget(params()[name])
    fresh = key not in st.session_state
    if not in_form or fresh or st.session_state[key] != want:
        st.session_state[key] = want
    if fresh:
        _test_pause_at_seed(key)


#: Test hook (tests/e2e/test_e2e_upload_race.py): ``"<widget key>:<seconds>:<nth>"`` pauses the
#: ``nth`` seeding of that widget in this server process in which it had no state (its first
#: showing, or its return after a run without it) for that long, between the seed and the
#: widget's creation, so a browser test can land a rerun request there deterministically.
TEST_PAUSE_AT_SEED = "DPVIZ_TEST_PAUSE_AT_SEED"
_fresh_seeds: dict[str, int] = {}


def _test_pause_at_seed(key: str) -> None:
    spec = os.environ.get(TEST_PAUSE_AT_SEED, "")
    if not spec:
        return
    target, seconds, nth = spec.split(":")
    if target == key:
        _fresh_seeds[key] = _fresh_seeds.get(key, 0) + 1
        if _fresh_seeds[key] == int(nth):
            time.sleep(float(seconds))


def on_change(name: str, key: str, from_widget: Callable[[Any], Any] = lambda v: v) -> Callable[[], None]:
    """An ``on_change`` callback copying the widget's value into the canonical parameter."""

    def callback() -> None:
        update(**{name: from_widget(st.session_state[key])})

    return callback


def commit(bindings: Mapping[str, tuple[str, Callable[[Any], Any]]]) -> Callable[[], None]:
    """A form-submit callback copying several widgets ({name: (key, from_widget)}) at once."""

    def callback() -> None:
        update(**{name: conv(st.session_state[key]) for name, (key, conv) in bindings.items()
                  if key in st.session_state})

    return callback
