"""The session keys more than one module uses, and :class:`Key`, the typed key every module
declares its own keys with (issue 38 item 4; issue 45 item 4).

A :class:`Key` is the key string itself (``st.session_state[KEY]``, ``key=keys.EPS_SLIDER`` work
as the literal did) and carries the type of what is stored under it and one line on what it holds.
A key one module uses is declared by that module, at its top, in a block headed "Session keys this
module owns"::

    RELEASE_K: Key[int] = Key("release_k", int, "number_input: k, bound to the app's parameters")

This module declares only the keys two or more modules read or write: the cross-page state, the
containers both Explore views draw (the browser tests find them by one class whatever the
algorithm), and the widgets :mod:`app.components.a11y` checks on every page. A key that comes to
be used by a second module moves here. ``tests/app/test_keys.py`` reads every module's
declarations and checks that each key is declared once, with a type and a description; that no
module spells a key as a literal; that this module holds only shared keys; and that no module
uses a key another module owns.

Two kinds:

* **state** keys (leading underscore): values the app keeps between reruns of one session;
* **widget** keys: a widget's value (Streamlit stores it under its ``key``) and its container in
  the browser (``.st-key-<key>``); the browser tests find them by that class.

A key built per algorithm, column, slot or index has its **prefix** declared (its doc starts with
"prefix:" and shows the full form, e.g. ``csv_fill_<digest>_<column>``); the module that builds it
writes ``f"{CSV_FILL}{digest}_{column}"``. A component that suffixes the key it is given
(``<key>_alt``, ``<key>_data``, ``<key>_msg``) owns those suffixes.
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


#: Every key declared here by its string (the shared keys; an owner's keys are in its module).
ALL: dict[str, Key[Any]] = {}


def _declare(name: str, value_type: Any, doc: str) -> Key[Any]:
    if name in ALL:
        raise ValueError(f"Session key {name!r} is declared twice.")
    ALL[name] = key = Key(name, value_type, doc)
    return key


# ----------------------------------------------------------------------------- state across pages
PAGES: Key[dict] = _declare(
    "_pages", dict, "page name → st.Page (st.navigation's pages; main.py, read by the pages' links)")
GOTO_EXPLORE: Key[bool] = _declare(
    "_goto_explore", bool, "a chart click (Budget, Compare) asks for a switch to Explore")
DATA_CHANGED: Key[bool] = _declare(
    "_data_changed", bool, "the dataset changed (Data's picker, Explore's form): apply its suggested "
    "k, t, r_min on the next run")
LINK_SUGGESTS: Key[tuple] = _declare(
    "_link_suggests", tuple, "a link named a built-in table without some of k, t, r_min: those take "
    "the table's suggestions once the table is loaded (state.init → data_source.current)")

# ----------------------------------------------------------------------------- Explore: both views
# The generic view (algorithm_view.py) and FriendlyCore's (friendlycore/page.py) draw these under
# one key, so a browser test finds them whatever the algorithm.
EPS_READOUT: Key[Any] = _declare(
    "eps_readout", object, "container: the metric 'Privacy per row of your data' (row-level ε, δ)")
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
STORYBOARD_VECTOR: Key[bool] = _declare(
    "storyboard_vector", bool, "toggle (FriendlyCore's page, read by its live panel): WebGL points "
    "with hover instead of images")

# ----------------------------------------------------------------------------- Data
CSV_UPLOAD: Key[Any] = _declare(
    "csv_upload", object, "file_uploader: the CSV file (Data's upload panel; the page reads its file id)")

# ----------------------------------------------------------------------------- widgets a11y.py checks
# Each page's main control, whose accessible name app/components/a11y.py checks (and its page draws).
EPS_SLIDER: Key[float] = _declare(
    "eps_slider", float, "select_slider: the row-level ε, every algorithm's main control")
SOURCE_RADIO: Key[str] = _declare("source_radio", str, "radio: the data source (generate | builtin | upload)")
BUDGET_ALGORITHMS: Key[list] = _declare("budget_algorithms", list, "multiselect: the algorithms swept")
COMPARE_ALGORITHMS: Key[list] = _declare("compare_algorithms", list, "multiselect: the algorithms compared")
MI_GUESS_IN: Key[bool] = _declare("mi_guess_in", bool, "button: guess Alice is IN")
PRESENT_A: Key[float] = _declare("present_a", float, "select_slider: the left side's row-level ε")
