"""The Release page shows public facts only (issue 25, finding 4): the true row count of an upload
appears nowhere on it (main area or sidebar) nor in its export, while the Data page keeps it as a
labelled non-private diagnostic; a release whose DECLARED settings are infeasible is refused before
any row is read and books nothing, while an attempt that read the data is booked (finding 2)."""

from __future__ import annotations

import json

import numpy as np
import pytest
from apptest_helpers import SMALL, click_release, container, fill_release_form, open_app, texts

from dpviz.privacy.ledger_store import LedgerStore

N_UP = 613  # rows of the upload: an unusual number, so any occurrence is the true n
ID = "Clinic visits"
WORKABLE_N = 20_000  # declared rows at which easy_instances_gmm (k = 3, ε = 2) can run


def _csv(n: int = N_UP, seed: int = 3) -> bytes:
    rng = np.random.default_rng(seed)
    centers = np.array([[0.0, 0.0], [4.0, 4.0], [-4.0, 4.0]])
    X = np.round(centers[np.arange(n) % 3] + rng.normal(scale=0.5, size=(n, 2)), 4)
    return ("a,b\n" + "\n".join(f"{x:g},{y:g}" for x, y in X) + "\n").encode()


def _upload(at):
    at.radio(key="source_radio").set_value("upload").run()
    at.file_uploader(key="csv_upload").upload("visits.csv", _csv(), "text/csv")
    at.run()
    at.number_input(key="csv_radius").set_value(10.0).run()
    at.button(key="csv_use").click().run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def _everything(at) -> str:
    """Every text element in the main area and the sidebar."""
    parts = []
    for root in (at.main, at.sidebar):
        for kind in ("markdown", "caption", "error", "warning", "info", "success", "text"):
            parts += [str(e.value) for e in getattr(root, kind)]
    return "\n".join(parts)


def _release_form(at, algorithm: str = "dp_lloyd", n: int = 500, eps: float = 2.0):
    fill_release_form(at, algorithm=algorithm, k=3, n=n, eps=eps, identity=ID)


def test_release_page_and_export_never_show_an_uploads_true_n():
    at = _upload(open_app("data", **SMALL))
    facts = "\n".join(str(e.value) for kind in ("markdown", "caption")
                      for e in getattr(container(at, "data_facts"), kind))
    assert f"n = {N_UP:,}" in facts and "non-private diagnostic" in facts  # kept there, labelled so
    at.switch_page("views/release.py").run()
    assert not at.exception, [e.value for e in at.exception]
    page = _everything(at)
    assert "visits.csv" in page and "uploaded" in page
    assert str(N_UP) not in page, "the true n of the upload is on the Release page"
    _release_form(at)
    click_release(at)
    assert not at.exception, [e.value for e in at.exception]
    assert str(N_UP) not in _everything(at)
    for _, text, _ in at.session_state["_releases"][f"id:{ID.lower()}"]:
        doc = json.loads(text)
        assert str(N_UP) not in json.dumps(doc["dataset"]) and str(N_UP) not in json.dumps(doc["provenance"])
        assert N_UP not in _numbers(doc)  # nowhere in the file as a value (ledger, parameters, ...)


def _numbers(obj) -> list[float]:
    if isinstance(obj, dict):
        return [v for x in obj.values() for v in _numbers(x)]
    if isinstance(obj, list):
        return [v for x in obj for v in _numbers(x)]
    return [obj] if isinstance(obj, (int, float)) and not isinstance(obj, bool) else []


def test_declared_settings_refused_before_reading_are_not_booked_and_a_run_that_read_is(ledger_dir):
    """easy_instances_gmm at a declared n = 10 with k = 3 cannot work (its tuple stage needs more
    rows than half the declared size): decided from declared values, before any row is read, so
    nothing runs and nothing is booked. At a declared n that works, the attempt reads the data and
    is booked whatever its outcome. Easy Instances' automatic t is the fewest private tuples, so
    at ε = 2 a workable declared n is in the tens of thousands (19,368 for k = 3): the data are
    generated at n = 20,000 and that size is declared."""
    import dpviz.registry

    calls = []
    real_run = dpviz.registry.run

    def spy(*args, **kwargs):
        if kwargs.get("cancel") is not None:  # the release's own run (the app's prefetch worker
            # may call dpviz.run while the patch is in place: not counted)
            calls.append(kwargs.get("n_declared"))
        return real_run(*args, **kwargs)

    at = open_app("release", **{**SMALL, "n": str(WORKABLE_N)})
    at.text_input(key="release_dataset_id").input(ID)
    at.selectbox(key="release_algorithm").set_value("easy_instances_gmm")
    at.number_input(key="release_k").set_value(3)
    at.number_input(key="release_n").set_value(10)
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    assert "cannot make a release" in texts(at) and "nothing is booked" in texts(at)
    assert all(b.key != "release_button" for b in at.button)  # no way to start it
    assert LedgerStore(ledger_dir).entries(ID) == []
    # the same algorithm at a workable declared n reads the data: booked whatever its outcome
    _release_form(at, algorithm="easy_instances_gmm", n=WORKABLE_N, eps=2.0)
    assert "cannot make a release" not in texts(at)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(dpviz.registry, "run", spy)
        click_release(at)
    assert not at.exception, [e.value for e in at.exception]
    assert calls == [WORKABLE_N]
    (e,) = LedgerStore(ledger_dir).entries(ID)
    assert e["surface"] == "release-page" and e["outcome"] in ("release", "failed", "refused")


@pytest.mark.filterwarnings("ignore::pytest.PytestUnhandledThreadExceptionWarning")
def test_an_interrupted_release_is_booked_and_the_running_text_is_public(ledger_dir):
    """A run stopped mid-way by a BaseException (not an Exception: e.g. Streamlit's stop request)
    had started reading the rows: it is booked as cancelled (in the release job's ``finally``).
    While a release runs, the page shows one fixed public sentence (no counts, no branch)."""
    import ast
    from pathlib import Path

    from streamlit.runtime.scriptrunner_utils.exceptions import StopException

    import dpviz.registry

    page = Path(__file__).resolve().parents[2] / "app" / "views" / "release.py"
    (node,) = [n for n in ast.parse(page.read_text()).body if isinstance(n, ast.Assign)
               and getattr(n.targets[0], "id", None) == "RUNNING_TEXT"]
    running = ast.literal_eval(node.value)
    assert not any(ch.isdigit() for ch in running) and "booked" in running
    assert "st.caption(RUNNING_TEXT)" in page.read_text()  # shown above the release's progress bar

    def interrupted(*args, **kwargs):
        raise StopException()

    at = open_app("release", **SMALL)
    _release_form(at, algorithm="dp_lloyd", n=3000, eps=1.0)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(dpviz.registry, "run", interrupted)
        click_release(at)
    (e,) = LedgerStore(ledger_dir).entries(ID)
    assert (e["outcome"], e["surface"], e["epsilon"]) == ("cancelled", "release-page", 1.0)
