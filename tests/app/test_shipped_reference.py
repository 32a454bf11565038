"""The default lesson's shipped non-private reference (app/precomputed/lesson_reference.json,
app.components.shipped; issue 33 item 2): current, equal to a fresh computation, used only for the
rows and k it was made for. Like the precomputed sweeps (tests/app/test_budget_shared.py), the
file goes stale when the reference's code changes (three modules: app.components.shipped.closure);
``make precompute`` regenerates it, and until then the app computes the reference as before."""

from dataclasses import replace

import numpy as np
import pytest
from threadpoolctl import threadpool_limits

from app import precompute_lesson
from app.components import shipped, state
from dpviz._threads import default_n_jobs


@pytest.fixture(autouse=True)
def read_the_shipped_file(monkeypatch):
    """tests/app/conftest.py turns precomputed files off for every app test (their outcome must
    not depend on them); these tests check the file itself."""
    monkeypatch.setenv("DPVIZ_PRECOMPUTED", "1")


@pytest.fixture(scope="module")
def lesson():
    entry = shipped.LESSONS[-1]  # the default lesson; the others are its rows control's
    return entry, precompute_lesson.lesson_dataset(entry)


def test_the_shipped_lesson_is_the_apps_default_lesson(lesson):
    entry, ds = lesson
    defaults = state.defaults()
    assert {key: defaults[key] for key in ("gen", "n", "dseed", "k")} == entry
    assert ds.source == "generated" and ds.n == 150_000


def test_every_setting_of_the_lessons_rows_control_ships_its_reference():
    """Issue 43: the rows control (20,000 / 50,000 / 150,000) opens without the reference's
    k-means++ restarts at each of its sizes: one entry per size, same recipe otherwise."""
    defaults = state.defaults()
    assert [e["n"] for e in shipped.LESSONS] == list(shipped.LESSON_ROWS)
    assert shipped.LESSON_ROWS[-1] == defaults["n"]
    for entry in shipped.LESSONS:
        assert {key: entry[key] for key in ("gen", "dseed", "k")} == {
            key: defaults[key] for key in ("gen", "dseed", "k")}
    hashes = {e["content_hash"] for e in shipped.entries().values()}
    assert len(hashes) == len(shipped.LESSONS), f"run `{shipped.COMMAND}`"


def test_the_file_is_current_and_covers_the_default_lesson(lesson):
    _, ds = lesson
    assert shipped.entries(), f"stale or missing {shipped.PATH.name}: run `{shipped.COMMAND}`"
    made = shipped.reference(ds, 8)
    assert made is not None
    centers, cost, _, recipe = made
    assert centers.shape == (8, 2) and cost > 0 and recipe.endswith(shipped.NOTE)


def test_a_fresh_computation_equals_the_shipped_reference(lesson):
    _, ds = lesson
    centers, cost, _, recipe = shipped.reference(ds, 8)
    # `make precompute` and the app compute with the native thread pools' defaults (one thread per
    # core); the suite's xdist workers run with one (tests/conftest.py ONE_THREAD), and k-means'
    # float sums depend on how the rows are split among threads: compute as the precompute did.
    with threadpool_limits(limits=default_n_jobs()):
        again = shipped.compute(ds.X, 8)
    assert np.array_equal(np.asarray(again["centers"]), centers)  # exact: floats round-trip
    assert again["cost"] == cost
    assert recipe == f"{again['recipe']}; {shipped.NOTE}"


def test_the_hashed_code_is_what_the_app_calls():
    import dpviz.clustering.reference
    import dpviz.metrics

    assert dpviz.metrics.reference_kmeans is dpviz.clustering.reference.reference_kmeans
    assert "dpviz.clustering.reference" in shipped.closure(shipped.ROOTS)


def test_only_the_rows_and_k_it_was_made_for(lesson, monkeypatch):
    _, ds = lesson
    assert shipped.reference(ds, 7) is None
    assert shipped.reference(replace(ds, source="upload"), 8) is None  # never for an upload
    other = precompute_lesson.lesson_dataset({"gen": "fig6_blobs", "n": 150_000, "dseed": 1, "k": 8})
    assert shipped.reference(other, 8) is None
    monkeypatch.setenv("DPVIZ_PRECOMPUTED", "0")
    assert shipped.reference(ds, 8) is None


def test_a_stale_code_hash_is_ignored(lesson, monkeypatch):
    _, ds = lesson
    monkeypatch.setattr(shipped, "code_hash", lambda: "0" * 16)
    shipped._entries.cache_clear()
    try:
        assert shipped.reference(ds, 8) is None
    finally:
        monkeypatch.undo()
        shipped._entries.cache_clear()
    assert shipped.reference(ds, 8) is not None
