"""Budget sweeps shared across sessions and precomputed for the presets (issue 16): public data
only, never an upload; a precomputed file is used only under the code hash it was made with."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from apptest_helpers import SMALL, container, finish_job, has_container, open_app, texts

from app.components import sweep

TINY = {**SMALL, "balg": "nonprivate,dp_lloyd", "blo": "0.1", "bhi": "1.0", "bpts": "2",
        "breps": "2", "seed": "7"}


def _summary(at) -> pd.DataFrame:
    return at.dataframe[0].value


def test_a_complete_public_sweep_opens_drawn_in_another_session():
    a = open_app("budget", **TINY)
    assert not has_container(a, "budget_origin")
    a.button(key="budget_run").click().run()
    finish_job(a, "budget")
    assert not a.exception
    ran = _summary(a)
    # B opens the same link: the curves are there without pressing Run, labelled as shared.
    b = open_app("budget", **TINY)
    assert not b.exception
    assert any(getattr(c, "key", None) == "budget_accuracy" for c in b.get("plotly_chart"))
    note = container(b, "budget_origin").caption[0].value
    assert "computed earlier on this server" in note and "Simulation" in note
    pd.testing.assert_frame_equal(_summary(b), ran)
    # Another seed is another sweep: nothing drawn until it is run.
    c = open_app("budget", **{**TINY, "seed": "8"})
    assert not any(getattr(x, "key", None) == "budget_accuracy" for x in c.get("plotly_chart"))


def test_a_sweep_on_an_upload_is_never_shared():
    from test_hostile_app import _csv, _rows, _upload

    a = open_app("data", **TINY)
    _upload(a, "mine.csv", _csv(["a", "b"], _rows(seed=3)))
    a.number_input(key="csv_radius").set_value(50.0).run()
    a.button(key="csv_use").click().run()
    a.switch_page("views/budget.py").run()
    a.button(key="budget_run").click().run()
    finish_job(a, "budget")
    assert not a.exception
    spec = a.session_state["_job_budget"].key
    assert spec.data_hash and a.session_state["_job_budget"].parts, "the upload's sweep ran in its session"
    assert sweep.shared_sweeps().get(spec) is None
    assert sweep.jobs._shared().get(spec) is None  # nor is its job findable by another session


def _frames(seed: int) -> list[pd.DataFrame]:
    rng = np.random.default_rng(seed)
    return [pd.DataFrame({"algorithm": ["kmeans++", "dp_lloyd"], "rho": [0.1, 0.1],
                          "rep": [r, r], "loss": rng.random(2), "success": [True, False],
                          "center_error": [float("nan"), 0.25], "seconds": [0.1, 0.2],
                          "n": [3000, 3000], "fallback": [False, False],
                          "failure": [None, "⊥"], "stage_seconds": [0.0, 0.0]})
            for r in range(2)]


SPEC = sweep.SweepSpec("abc", ("kmeans++", "dp_lloyd"), (0.1,), 2, 4, 60, 1e-6, 1.0, 1e-3,
                       "kmeans++", 7)
CSPEC = sweep.CompareSpec("abc", (("dp_lloyd", __import__("dpviz").registry.get("dp_lloyd").make_params()),),
                          (0.5, 2.0), 1e-6, 2, 4, 2, 1.0, 3000, 7)


def test_precomputed_file_round_trips_and_is_ignored_under_another_code_hash(tmp_path):
    path = tmp_path / "sweeps.json"
    frames = _frames(0)
    sweep.save_precomputed([(SPEC, frames), (CSPEC, frames)], [{"gen": "x"}], path=path)
    doc = json.loads(path.read_text())
    assert doc["kind"].startswith("SIMULATION") and doc["code_hash"] == sweep.code_hash()
    (spec, got), (cspec, _) = sweep.load_precomputed(path)
    assert spec == SPEC and cspec == CSPEC  # both pages' sweeps round-trip
    for a, b in zip(got, frames, strict=True):
        pd.testing.assert_frame_equal(a, b, check_dtype=False)
    assert sweep.SharedSweeps(path=path).get(SPEC)[0] == "precomputed"
    doc["code_hash"] = "0" * 16  # made by other code: not used
    path.write_text(json.dumps(doc))
    assert sweep.load_precomputed(path) == []
    assert sweep.SharedSweeps(path=path).get(SPEC) is None


def test_precomputed_frames_come_back_with_the_types_they_were_saved_with(tmp_path):
    """The stored column types are read back (issue 43: pandas.read_json was most of Compare's
    first open and guessed them: whole-number floats came back int64, a bool column with gaps
    float64); a file saved without them is still read, by read_json, as before."""
    frame = pd.DataFrame({"algorithm": ["friendlycore", "kmeans++", "dp_lloyd"],
                          "epsilon": [0.5, 2.0, 10.0], "budget_delta": [0.0, 1.0, 0.0],
                          "rep": [0, 1, 2], "structure_ok": [True, None, False],
                          "failure": [None, "too few rows", None], "success": [True, False, True]})
    frame["failure"] = frame["failure"].astype("str")
    path = tmp_path / "sweeps.json"
    sweep.save_precomputed([(SPEC, [frame])], [], path=path)
    [(spec, (got,))] = sweep.read_precomputed(path)[1]
    assert spec == SPEC
    pd.testing.assert_frame_equal(got, frame)  # values and dtypes
    doc = json.loads(path.read_text())
    del doc["sweeps"][0]["dtypes"]  # as a file saved before the types were stored
    path.write_text(json.dumps(doc))
    [(_, (old,))] = sweep.read_precomputed(path)[1]
    # read_json's guesses, kept for old files: int64 whole numbers, a gappy bool column as floats
    assert old["budget_delta"].dtype == "int64" and old["structure_ok"].dtype == "float64"
    pd.testing.assert_frame_equal(old.drop(columns="structure_ok"),
                                  frame.drop(columns="structure_ok"), check_dtype=False)


def test_shared_store_is_bounded_and_keeps_the_first_complete_sweep():
    store = sweep.SharedSweeps(size=2, path=sweep.PRECOMPUTED.with_name("missing.json"))
    specs = [SPEC, *(sweep.spec_from_json({**sweep.spec_to_json(SPEC), "seed": s}) for s in (8, 9))]
    for s in specs:
        store.put(s, _frames(0))
    assert store.get(specs[0]) is None and store.get(specs[2]) is not None
    store.put(specs[2], _frames(1))  # a second complete run of the same spec changes nothing
    pd.testing.assert_frame_equal(store.get(specs[2])[1][0], _frames(0)[0])


def test_the_committed_precomputed_file_matches_the_code():
    """Shared Budget links open with curves drawn only while the committed file's code hash is
    current: a change to what the sweep computes must be followed by `make precompute` (this fails
    until it is, and names the files that changed)."""
    doc, entries = sweep.read_precomputed(sweep.PRECOMPUTED)
    assert doc["code_hash"] == sweep.code_hash(), \
        f"stale app/precomputed/budget_sweeps.json (run `make precompute`): {sweep.stale_files(doc)}"
    assert len(entries) >= 2
    # the raw-bytes stamp that lets a server's first page skip parsing the library (issue 43)
    assert doc.get("tree_digest") == sweep.tree_digest(), \
        "budget_sweeps.json's tree digest is old: run `python -m app.precompute_sweeps --stamp`"
    assert sweep.running_code_hash() == sweep.code_hash()


def test_the_tree_digest_sees_every_byte_and_the_shortcut_falls_back(tmp_path, monkeypatch):
    """A docstring edit changes the raw digest (so the stamped shortcut no longer applies) while the
    code hash stays; a file whose digest differs is judged by the computed code hash."""
    from app.components import code_fingerprint

    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "m.py").write_text('def f():\n    """Doc."""\n    return 1\n')
    before = code_fingerprint.tree_digest(root=pkg)
    (pkg / "m.py").write_text('def f():\n    """Other doc."""\n    return 1\n')
    assert code_fingerprint.tree_digest(root=pkg) != before
    assert code_fingerprint.tree_digest(root=pkg, versions=["numpy==0"]) != \
        code_fingerprint.tree_digest(root=pkg)
    fake = tmp_path / "budget_sweeps.json"
    fake.write_text(json.dumps({"code_hash": "0" * 16, "tree_digest": "not this tree"}))
    monkeypatch.setattr(sweep, "PRECOMPUTED", fake)
    sweep.running_code_hash.cache_clear()
    try:
        assert sweep.running_code_hash() == sweep.code_hash()  # no shortcut: computed
        fake.write_text(json.dumps({"code_hash": "0" * 16, "tree_digest": sweep.tree_digest()}))
        sweep.running_code_hash.cache_clear()
        assert sweep.running_code_hash() == "0" * 16  # the stamp is trusted: equal bytes
    finally:
        sweep.running_code_hash.cache_clear()


@pytest.mark.slow
def test_a_recomputed_sample_of_the_committed_file_matches_it():
    """The file's numbers, not only its hash: each preset's Budget and Compare sweep recomputed at
    repetition 1, every algorithm, the smallest and largest ε, equal to the stored cells (decisions
    exactly, numbers to rtol 1e-9 / atol 1e-15: precompute_sweeps.RTOL says why)."""
    from app import precompute_sweeps

    assert precompute_sweeps.check_sample() == []


def test_the_sample_check_reports_a_changed_number_and_a_changed_decision():
    from app import precompute_sweeps as pre

    want = pd.DataFrame({"algorithm": ["dp_lloyd", "kmeans++"], "epsilon": [0.5, float("inf")],
                         "success": [True, True], "loss": [0.25, 0.0], "budget_delta": [2.2699e-11, 0.0]})
    assert pre._differences("x", want.copy(), want) == []
    # the file's 15 decimal places round a tiny δ: within ATOL, not a difference
    assert pre._differences("x", want.assign(budget_delta=[2.2698934351217196e-11, 0.0]), want) == []
    moved = want.assign(loss=[0.25 * (1 + 1e-6), 0.0])
    assert any("loss" in p for p in pre._differences("x", moved, want))
    flipped = want.assign(success=[False, True])
    assert any("success" in p for p in pre._differences("x", flipped, want))
    assert pre._differences("x", want.iloc[:1], want) != []


def test_the_code_hash_ignores_docstrings_and_comments_not_code(tmp_path):
    from app.components import code_fingerprint as fp

    src = 'def f(x):\n    """Doc."""\n    return x + 1  # one\n'
    a, b, c = (tmp_path / n for n in ("a.py", "b.py", "c.py"))
    a.write_text(src)
    b.write_text('"""A module."""\n\n\ndef f(x):\n    """Another doc, reworded."""\n    # why\n'
                 '    return (x +\n            1)\n')
    c.write_text(src.replace("x + 1", "x + 2"))
    assert fp.normalized_source(a) == fp.normalized_source(b) != fp.normalized_source(c)


def test_the_hashed_modules_are_the_sweeps_imports_not_the_whole_library():
    """Every registered family is hashed (the registry discovers them); the figures, the CLI and
    the streaming engine, which no sweep imports, are not: editing them keeps the file valid."""
    from pathlib import Path

    import dpviz.registry
    from app.components import code_fingerprint as fp

    hashed = fp.module_closure(sweep.SWEEP_ROOTS)
    assert fp.family_packages() == dpviz.registry.FAMILY_PACKAGES
    import pkgutil

    for pkg in dpviz.registry.FAMILY_PACKAGES:
        path = [str(Path(__import__(pkg, fromlist=["_"]).__file__).parent)]
        for info in pkgutil.iter_modules(path):
            assert f"{pkg}.{info.name}" in hashed, info.name
    assert "dpviz.clustering.auto" in hashed and "dpviz/clustering/auto_rule.json" in sweep.code_digests()
    assert not any(m.startswith(("dpviz.viz", "dpviz.large")) or m == "dpviz.cli" for m in hashed)
    every = {p for p in Path(dpviz.__file__).parent.rglob("*.py")}
    assert set(hashed.values()) < every


@pytest.mark.slow
def test_a_traced_sweep_runs_only_hashed_code():
    """The hash cannot miss what a sweep runs: a Compare piece of every registered algorithm and a
    Budget repetition, traced call by call (every thread), execute no dpviz file outside the hashed
    closure and no app function outside ``sweep.sweep_functions()``."""
    import sys
    import threading
    from pathlib import Path

    import dpviz.data
    import dpviz.registry
    from app import precompute_sweeps
    from app.components import code_fingerprint as fp

    ds = dpviz.data.GENERATORS["fig6_blobs"](2000, rng=0)
    algos = tuple((s.name, s.make_params()) for s in dpviz.algorithms(applicable_to=2))
    cspec = sweep.CompareSpec(ds.content_hash, algos, (2.0,), 1e-6, 1, 4, 2, float(ds.radius), ds.n, 3)
    bspec = sweep.SweepSpec(ds.content_hash, ("friendlycore", "kmeans++"), (2.0,), 1, 4, 60, 1e-6,
                            float(ds.radius), 1e-3, "kmeans++", 3)
    ran: dict[str, set[str]] = {}

    def profile(frame, event, arg):
        if event == "call":
            ran.setdefault(frame.f_code.co_filename, set()).add(frame.f_code.co_qualname)

    threading.setprofile(profile)
    sys.setprofile(profile)
    try:
        ref = precompute_sweeps.reference_cost(ds, 4)
        frames = [sweep.compare_piece(ds, cspec, i, ref) for i in range(cspec.total)]
        frames.append(sweep.repetition(ds, bspec, 0, ref))
    finally:
        sys.setprofile(None)
        threading.setprofile(None)
    assert all(f is not None and len(f) for f in frames)
    root = fp.REPO
    hashed = {p.resolve() for p in fp.module_closure(sweep.SWEEP_ROOTS).values()}
    library = {Path(f).resolve() for f in ran if Path(f).resolve().is_relative_to(root / "dpviz")}
    assert library and library <= hashed, sorted(str(p.relative_to(root)) for p in library - hashed)
    functions = {(f"{fn.__module__}", fn.__qualname__) for fn in sweep.sweep_functions()}
    for name, qualnames in ran.items():
        path = Path(name).resolve()
        if path.is_relative_to(root / "app"):
            module = ".".join(path.relative_to(root).with_suffix("").parts)
            for q in qualnames:
                top = q.split(".<locals>")[0]
                assert (module, top) in functions or top.startswith("<"), (module, q)


def test_two_sessions_loss_vs_n_then_a_fresh_budget_page_does_not_crash():
    """Issue 27, defect 1: once any session completed "Loss vs n" on public data, every new
    session opening /budget hit StreamlitDuplicateElementKey 'budget_origin' (both the ε sweep and
    the n sweep were drawn from the shared store, and both notes used one key)."""
    args = {**TINY, "seed": "11"}
    a = open_app("budget", **args)
    a.button(key="budget_run").click().run()
    finish_job(a, "budget")
    a.button(key="budget_loss_n_run").click().run()
    finish_job(a, "budget")
    assert not a.exception
    b = open_app("budget", **args)  # a second, concurrent session opening the same link
    assert not b.exception, [e.value for e in b.exception]
    assert has_container(b, "budget_origin") and has_container(b, "budget_origin_n")
    assert any(getattr(c, "key", None) == "budget_loss_n" for c in b.get("plotly_chart"))
    a.run()  # and the first session keeps working
    assert not a.exception


@pytest.mark.slow
def test_add_all_on_the_default_lesson_opens_drawn_from_the_precomputed_file(monkeypatch):
    """Issue 43: "Add all" on the default data took minutes (36 of 75 runs after 7 minutes). On the
    default lesson it is precomputed (`make precompute` runs `--add-all`): pressing it draws every
    registered method at once, with no job started, and the state says the results are
    precomputed."""
    import dpviz

    monkeypatch.setenv("DPVIZ_PRECOMPUTED", "1")  # this test is about the committed file
    sweep.shared_sweeps.clear()  # the server's store, made without the file by earlier tests
    try:
        at = open_app("compare")
        assert not at.exception, [e.value for e in at.exception]
        at.button(key="compare_all").click().run()
        assert not at.exception, [e.value for e in at.exception]
        assert "_job_compare" not in at.session_state or not at.session_state["_job_compare"].running
        state = texts(at)
        n = len(dpviz.algorithms(applicable_to=2))  # every method the 2-D lesson can run
        assert f"Done: {n} algorithm(s)" in state and "(precomputed)" in state, state
    finally:
        sweep.shared_sweeps.clear()  # later tests get a store without the file again
