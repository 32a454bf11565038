"""The app's session-state keys, declared once with the type of each value (issue 38, item 4).

A :class:`Key` is the key string itself (``st.session_state[keys.PARAMS]``, ``key=keys.EPS_SLIDER``
work as the literal did) and carries the type of what is stored under it and one line on what it
holds. Pages and components use these names, not literals; ``tests/app/test_keys.py`` checks that
every key declared here is used by the app and that no module it covers spells one as a literal.

Two kinds:

* **state** keys (leading underscore): values the app keeps between reruns of one session;
* **widget** keys: a widget's value (Streamlit stores it under its ``key``) and its container in
  the browser (``.st-key-<key>``); the browser tests find them by that class.

A key built per algorithm, column, slot or index has its **prefix** declared here (its doc starts
with "prefix:" and shows the full form, e.g. ``csv_fill_<digest>_<column>``); the module that
builds it writes ``f"{keys.CSV_FILL}{digest}_{column}"``. A component that suffixes the key it is
given (``<key>_alt``, ``<key>_data``, ``<key>_msg``) owns those suffixes.

A family folder's own keys (``app/components/<family>/``) and the modules that name their keys as
module constants built from these are listed in :data:`ALL` too.
"""

from __future__ import annotations

from typing import Any, Generic, TypeVar

T = TypeVar("T")


class Key(str, Generic[T]):
    """A session-state key (a ``str``) with the type of its value and what it holds."""

    value_type: type
    doc: str

    def __new__(cls, name: str, value_type: Any = object, doc: str = "") -> Key[T]:
        key = super().__new__(cls, name)
        key.value_type = value_type
        key.doc = doc
        return key


#: Every declared key by its string.
ALL: dict[str, Key[Any]] = {}


def _declare(name: str, value_type: Any, doc: str) -> Key[Any]:
    if name in ALL:
        raise ValueError(f"Session key {name!r} is declared twice.")
    ALL[name] = key = Key(name, value_type, doc)
    return key


# ----------------------------------------------------------------------------- state (whole app)
PAGES: Key[dict] = _declare("_pages", dict, "page name → st.Page (st.navigation's pages)")
GOTO_EXPLORE: Key[bool] = _declare(
    "_goto_explore", bool, "a chart click (Budget, Compare) asks for a switch to Explore")
DATA_CHANGED: Key[bool] = _declare(
    "_data_changed", bool, "the dataset changed: apply its suggested k, t, r_min on the next run")

# ----------------------------------------------------------------------------- state (Explore)

# ----------------------------------------------------------------------------- state (other pages)

# ----------------------------------------------------------------------------- widgets (Explore)
EPS_SLIDER: Key[float] = _declare(
    "eps_slider", float, "select_slider: the row-level ε, every algorithm's main control")
EPS_READOUT: Key[Any] = _declare(
    "eps_readout", object, "container: the metric 'Privacy per row of your data' (row-level ε, δ)")

# ----------------------------------------------------------------------------- Explore (any algorithm)
EXPLORE_ERROR: Key[Any] = _declare(
    "explore_error", object, "container: a parameter error (the previous result stays)")
RUN_STATUS: Key[Any] = _declare("run_status", object, "container: success / fallback / failure of the run")
PRIVACY_STATEMENT: Key[Any] = _declare("privacy_statement", object, "container: the run's privacy statement")
LEDGER_CHART: Key[Any] = _declare("ledger_chart", object, "chart: every spend of the run's ledger")
METRICS_TILES: Key[Any] = _declare(
    "metrics_tiles", object, "container: tuples kept, normalized loss, center error, centers released")
OWN_BUDGET_READOUT: Key[Any] = _declare(
    "own_budget_readout", object, "container: the algorithm's own budget from its plan (e.g. ρ)")
STEP_MODE: Key[bool] = _declare("step_mode", bool, "toggle: step through the storyboard one panel at a time")
DL_CENTERS: Key[bool] = _declare("dl_centers", bool, "download_button: the centers as CSV")
DL_LEDGER: Key[bool] = _declare("dl_ledger", bool, "download_button: the ledger as CSV")

# ----------------------------------------------------------------------------- Explore (FriendlyCore's page)
STORYBOARD_VECTOR: Key[bool] = _declare(
    "storyboard_vector", bool, "toggle: WebGL points with hover instead of images")


# ----------------------------------------------------------------------------- Data page
CSV_UPLOAD: Key[Any] = _declare("csv_upload", object, "file_uploader: the CSV file (Data's upload panel)")

# ----------------------------------------------------------------------------- Data page: the source picker
SOURCE_RADIO: Key[str] = _declare("source_radio", str, "radio: the data source (generate | builtin | upload)")

# ----------------------------------------------------------------------------- Data page: the server path


# ----------------------------------------------------------------------------- Budget page
BUDGET_ALGORITHMS: Key[list] = _declare("budget_algorithms", list, "multiselect: the algorithms swept")

# ----------------------------------------------------------------------------- Compare page
COMPARE_ALGORITHMS: Key[list] = _declare("compare_algorithms", list, "multiselect: the algorithms compared")


# ----------------------------------------------------------------------------- Release page


# ----------------------------------------------------------------------------- Generate page (DPGM)

# ----------------------------------------------------------------------------- Mixtures page


# ----------------------------------------------------------------------------- Learn page
MI_GUESS_IN: Key[bool] = _declare("mi_guess_in", bool, "button: guess Alice is IN")

# ----------------------------------------------------------------------------- Present page
PRESENT_A: Key[float] = _declare("present_a", float, "select_slider: the left side's row-level ε")

# ----------------------------------------------------------------------------- components


def describe() -> str:
    """One line per declared key: ``name`` (type): what it holds (for docs and ``app/main.py``)."""
    return "\n".join(f"``{k}`` ({k.value_type.__name__}): {k.doc}" for k in ALL.values())
