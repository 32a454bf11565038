"""The release surfaces book every attempt under a declared dataset identity (issue 25, findings
2-5): the total survives a reload, a shuffled re-upload and a switch between the Release page and
the server path; failures are booked and answered generically; the accept box clears whenever the
total changes; nothing computed from an upload's rows leaks into the labels and downloads."""

from __future__ import annotations

import json

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from apptest_helpers import SMALL, click_release, container, has_container, open_app, texts

from app.components import downloads, server_path
from app.components import segment_profiles as profiles
from dpviz.privacy.ledger_store import LedgerStore

N_UP = 600  # rows of the uploaded table (never a declared value below)
ID = "People Survey 2026"


def _table(seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    centers = np.array([[0.0, 0.0], [4.0, 4.0], [-4.0, 4.0]])
    return np.round(centers[np.arange(N_UP) % 3] + rng.normal(scale=0.5, size=(N_UP, 2)), 4)


def _csv(X: np.ndarray) -> bytes:
    return ("a,b\n" + "\n".join(f"{x:g},{y:g}" for x, y in X) + "\n").encode()


def _use_upload(at, X: np.ndarray, radius: float | None = 10.0, from_data: bool = False):
    at.radio(key="source_radio").set_value("upload").run()
    at.file_uploader(key="csv_upload").upload("people.csv", _csv(X), "text/csv")
    at.run()
    if from_data:
        at.checkbox(key="csv_use_data_radius").check().run()
    else:
        at.number_input(key="csv_radius").set_value(radius).run()
    at.button(key="csv_use").click().run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def _fill_release(at, identity: str | None = ID, eps: float = 1.0, n: int = 500,
                  algorithm: str = "dp_lloyd"):
    if identity is not None:
        at.text_input(key="release_dataset_id").input(identity)
    at.selectbox(key="release_algorithm").set_value(algorithm)
    at.number_input(key="release_k").set_value(3)
    at.number_input(key="release_eps").set_value(eps)
    at.number_input(key="release_n").set_value(n)
    at.run()


def _confirm(at):
    for key in ("release_confirm_radius", "release_confirm_n", "release_confirm_budget"):
        at.checkbox(key=key).check()
    at.run()


def _release(at):
    click_release(at)
    assert not at.exception, [e.value for e in at.exception]


def test_no_release_without_a_declared_identity():
    at = open_app("release", **SMALL)
    _fill_release(at, identity=None)
    assert "Declare the dataset's identity" in texts(at)
    assert not has_container(at, "release_preview")
    assert all(b.key != "release_button" for b in at.button)


def test_total_survives_a_reload_and_the_accept_box_clears_after_a_release(ledger_dir):
    at = open_app("release", **SMALL)
    _fill_release(at, eps=1.0)
    assert "New dataset identity" in texts(at)
    _confirm(at)
    _release(at)
    assert has_container(at, "release_output")
    # the accept box cleared: a second release needs a new, deliberate acceptance of the new total
    assert at.checkbox(key="release_confirm_budget").value is False
    assert at.button(key="release_button").disabled
    (e,) = LedgerStore(ledger_dir).entries(ID)
    assert (e["outcome"], e["surface"]) == ("release", "release-page") and e["epsilon"] <= 1.0 + 1e-9
    # a reload (a new session; the server could have restarted too: the store is on disk)
    again = open_app("release", **SMALL)
    _fill_release(again, identity="  people survey 2026 ", eps=1.0)  # normalized: the same identity
    page = texts(again)
    assert "Known dataset identity" in page
    assert f"ε = {e['epsilon']:.3g}, δ = {e['delta']:.2g} now" in page
    assert has_container(again, "release_history")


def test_changing_the_budget_clears_the_accept_box():
    at = open_app("release", **SMALL)
    _fill_release(at)
    _confirm(at)
    assert not at.button(key="release_button").disabled
    at.number_input(key="release_eps").set_value(2.0).run()  # the total after the release changed
    assert at.checkbox(key="release_confirm_budget").value is False
    assert at.button(key="release_button").disabled


def test_a_booking_elsewhere_after_acceptance_stops_the_release(ledger_dir):
    at = open_app("release", **SMALL)
    _fill_release(at)
    _confirm(at)
    # the command line (or another session) books on the same identity before the click
    LedgerStore(ledger_dir).book(ID, algorithm="auto", epsilon=0.5, delta=0.0, outcome="release",
                                 surface="cli")
    _release(at)
    assert "changed since you accepted it" in texts(at)
    assert [e["surface"] for e in LedgerStore(ledger_dir).entries(ID)] == ["cli"]  # nothing ran
    assert at.checkbox(key="release_confirm_budget").value is False


def test_a_shuffled_reupload_with_a_row_dropped_keeps_the_total(ledger_dir):
    X = _table()
    at = _use_upload(open_app("data", **SMALL), X)
    at.switch_page("views/release.py").run()
    _fill_release(at)
    _confirm(at)
    _release(at)
    total = LedgerStore(ledger_dir).total(ID)
    assert total[0] > 0
    Y = np.random.default_rng(7).permutation(X)[1:]  # shuffled, one row dropped
    other = _use_upload(open_app("data", **SMALL), Y)
    other.switch_page("views/release.py").run()
    _fill_release(other)
    assert f"ε = {total[0]:.3g}, δ = {total[1]:.2g} now" in texts(other)


def test_a_failed_attempt_is_booked_with_one_generic_message(ledger_dir, monkeypatch):
    import dpviz.registry

    def failing(*args, **kwargs):
        raise ValueError("FC infeasible: got n=95 rows inside Λ, need 96")  # data-dependent text

    monkeypatch.setattr(dpviz.registry, "run", failing)
    at = open_app("release", **SMALL)
    _fill_release(at, eps=0.5)
    _confirm(at)
    _release(at)
    msg = str(container(at, "release_failed").error[0].value)
    assert "did not produce a release" in msg and "booked" in msg
    assert "95" not in msg and "96" not in msg and "95" not in texts(at)
    (e,) = LedgerStore(ledger_dir).entries(ID)
    assert (e["outcome"], e["epsilon"], e["delta"]) == ("failed", 0.5, 1e-6)
    assert not has_container(at, "release_output")


def test_a_run_that_comes_back_as_a_simulation_is_booked(ledger_dir):
    at = open_app("release", **SMALL)
    _fill_release(at, algorithm="diffprivlib", eps=0.5)
    _confirm(at)
    _release(at)
    assert "did not produce a release" in texts(at)
    (e,) = LedgerStore(ledger_dir).entries(ID)
    assert e["outcome"] in ("refused", "failed") and e["epsilon"] == 0.5


def test_upload_then_server_path_release_of_the_same_identity_compose(ledger_dir, tmp_path, monkeypatch):
    X = _table()
    base = tmp_path / "srv"
    base.mkdir()
    pq.write_table(pa.table({"a": X[:, 0], "b": X[:, 1]}), base / "people.parquet")
    monkeypatch.setenv(server_path.ENV, str(base))
    at = _use_upload(open_app("data", **SMALL), X)
    at.switch_page("views/release.py").run()
    _fill_release(at, eps=1.0)
    _confirm(at)
    _release(at)
    first = LedgerStore(ledger_dir).total(ID)
    srv = open_app("data", **SMALL)
    srv.text_input(key="srv_path").input("people.parquet").run()
    srv.text_input(key="srv_dataset_id").input(ID.upper())
    srv.selectbox(key="srv_algorithm").set_value("dp_lloyd")
    srv.number_input(key="srv_k").set_value(3)
    srv.number_input(key="srv_eps").set_value(2.0)
    srv.number_input(key="srv_n").set_value(500)
    srv.number_input(key="srv_radius").set_value(10.0)
    srv.run()
    assert f"ε = {first[0]:.3g}, δ = {first[1]:.2g} now" in texts(srv)  # the upload's release counts
    srv.checkbox(key="srv_confirm").check().run()
    srv.button(key="srv_run").click().run()
    assert not srv.exception, [e.value for e in srv.exception]
    res, _, _, _, total = srv.session_state["_srv_result"]
    assert total.eps == pytest.approx(first[0] + res.guarantee.eps)
    es = LedgerStore(ledger_dir).entries(ID)
    assert [e["surface"] for e in es] == ["release-page", "server-path"]
    # each release keeps its plan's native budget beside the booked (ε, δ) (issue 38): dp_lloyd's ρ
    assert es[1]["native"]["kind"] == "zcdp" and es[1]["native"]["rho"] == res.plan.budget.rho
    assert es[0]["native"]["kind"] in {"zcdp", "pure", "approx"} and es[0]["native"] != {
        "kind": "approx", "epsilon": es[0]["epsilon"], "delta": es[0]["delta"], "count_epsilon": 0.0}
    profile = container(srv, "srv_output").dataframe[0].value  # segment profiles, raw units
    np.testing.assert_allclose(profile[["a", "b"]].to_numpy(), res.centers)
    assert list(profile.columns) == ["segment", "a", "a ± noise sd", "b", "b ± noise sd"]
    # and the Release page, reloaded, shows the composed total
    again = open_app("release", **SMALL)
    _fill_release(again)
    assert f"ε = {total.eps:.3g}, δ = {total.delta:.2g} now" in texts(again)


def test_server_path_failure_and_cancel_are_booked(ledger_dir, tmp_path, monkeypatch):
    base = tmp_path / "srv"
    base.mkdir()
    body = "0.123456,0.654321\n" * 120_000  # the type inference sees only the first block
    (base / "late.csv").write_text("a,b\n" + body + "oops,0.5\n")
    monkeypatch.setenv(server_path.ENV, str(base))
    at = open_app("data", **SMALL)
    at.text_input(key="srv_path").input("late.csv").run()
    at.text_input(key="srv_dataset_id").input("late")
    at.selectbox(key="srv_algorithm").set_value("dp_lloyd")
    at.number_input(key="srv_k").set_value(3)
    at.number_input(key="srv_eps").set_value(2.0)
    at.number_input(key="srv_n").set_value(120_000)
    at.number_input(key="srv_radius").set_value(1.0)
    at.checkbox(key="srv_confirm").check().run()
    at.button(key="srv_run").click().run()
    assert not at.exception, [e.value for e in at.exception]
    msg = str(container(at, "srv_error").error[0].value)
    assert "did not produce a release" in msg and "oops" not in msg and "line" not in msg.lower()
    assert "_srv_result" not in at.session_state
    store = LedgerStore(ledger_dir)
    assert [(e["outcome"], e["surface"], e["epsilon"]) for e in store.entries("late")] == [
        ("failed", "server-path", 2.0)]

    # Cancel: Streamlit stops the script mid-run (a rerun request raised inside the progress callback)
    from streamlit.runtime.scriptrunner_utils.exceptions import RerunException

    import dpviz.large.run

    def interrupted(*args, progress, **kwargs):
        progress("pass 2 (Lloyd sums) chunk 3/17")
        raise RerunException(None)

    monkeypatch.setattr(dpviz.large.run, "run_stream", interrupted)
    at.button(key="srv_run").click().run()
    assert [e["outcome"] for e in store.entries("late")] == ["failed", "cancelled"]
    at.run()  # the rerun the Cancel click asked for
    assert not at.exception, [e.value for e in at.exception]
    assert "cancelled before it finished" in texts(at) and "booked" in texts(at)
    assert [e["outcome"] for e in store.entries("late")] == ["failed", "cancelled"]  # booked once
    page = texts(at)
    assert "Lloyd sums" not in page and "3/17" not in page  # the branch and the chunk count never show


def test_lambda_from_the_max_norm_needs_an_acknowledgement_recorded_in_the_export(ledger_dir):
    X = _table()
    at = _use_upload(open_app("data", **SMALL), X, from_data=True)
    at.switch_page("views/release.py").run()
    _fill_release(at)
    page = texts(at)
    assert has_container(at, "release_provenance_warning") and "Read from the data" in page
    main = "\n".join(str(e.value) for kind in ("markdown", "caption", "warning", "info")
                     for e in getattr(at.main, kind))
    assert "uploaded" in main and str(N_UP) not in main  # the true n is not on the page (main area)
    _confirm(at)
    assert at.button(key="release_button").disabled  # not without the acknowledgement
    at.checkbox(key="release_ack_data").check().run()
    assert not at.button(key="release_button").disabled
    _release(at)
    (_, text, _), = at.session_state["_releases"][f"id:{ID.lower()}"]
    doc = json.loads(text)
    assert doc["dataset"]["provenance"]["radius"]["source"] == "data"
    assert doc["dataset"]["provenance"]["n"] == {"source": "declared", "note": "typed on the Release page"}
    assert doc["dataset"]["read_from_the_data_acknowledged"] == ["radius"]
    assert "sha256" not in text and str(N_UP) not in json.dumps(doc["dataset"])


def test_segment_profiles_in_original_units_with_noise_scale():
    at = open_app("release", **SMALL)
    _fill_release(at, algorithm="dp_lloyd", eps=5.0, n=3000)
    _confirm(at)
    _release(at)
    out = container(at, "release_output")
    assert "private release" in texts(at) and "DP-Lloyd" in str(out.markdown[0].value)
    prof = container(at, "release_profiles")
    df = prof.dataframe[0].value
    assert list(df["segment"]) == [f"segment {j + 1}" for j in range(len(df))]
    noise_cols = [c for c in df.columns if c.endswith("± noise sd")]
    res = at.session_state["_releases"][next(iter(at.session_state["_releases"]))][-1][0]
    # A release draws unseeded noise: a DP-Lloyd center whose noisy count fell below 1 keeps its
    # previous value and its noise sd is unknown ("n/a"). Each cell is checked against this run.
    known = ~np.isnan(profiles.center_noise(res))
    cells = df[noise_cols].to_numpy()
    assert len(noise_cols) == 2 and (cells[~known] == "n/a").all()
    assert (cells[known].astype(float) > 0).all()
    values = [c for c in df.columns if c not in noise_cols and c != "segment"]
    np.testing.assert_allclose(df[values].to_numpy(), res.centers)  # generated data: its own units


def test_explore_downloads_carry_no_fingerprint_or_count_of_an_upload():
    import dpviz.data
    from app.components.friendlycore.page import config_json
    from app.components.friendlycore.run import RunConfig

    ds = dpviz.data.load_csv(_csv(_table()), name="people.csv").dataset.with_radius(10.0)
    cfg = RunConfig(**{f: 0 for f in RunConfig.__dataclass_fields__})
    text = config_json(ds, cfg, {})
    doc = json.loads(text)
    assert "sha256" not in text and ds.content_hash not in text
    assert "n" not in doc["dataset"] and str(N_UP) not in json.dumps(doc["dataset"])
    assert not downloads.storyboard_offered(ds) and "draws every row" in downloads.EXPLORE_CAPTION
    # on the page: Explore's Downloads view of an upload offers no storyboard HTML
    at = open_app("data", **SMALL)
    at.radio(key="source_radio").set_value("upload").run()
    at.file_uploader(key="csv_upload").upload("people.csv", _csv(_table()), "text/csv")
    at.run()
    at.number_input(key="csv_radius").set_value(10.0).run()
    at.number_input(key="csv_declared_n").set_value(600).run()  # t = 30: the run is feasible
    at.button(key="csv_use").click().run()
    at.switch_page("views/explore.py").run()
    at.segmented_control(key="explore_view").set_value("Downloads").run()
    assert not at.exception, [e.value for e in at.exception]
    assert "uploaded" in texts(at)
    keys = {getattr(b, "key", None) for b in at.get("download_button")}
    assert "dl_config" in keys and "dl_figure" not in keys
    assert "never included, but" not in texts(at) and "sha256" not in texts(at)


def test_mixtures_runs_are_badged_as_simulations():
    at = open_app("mixtures", **SMALL)
    at.selectbox(key="mix_scenario").set_value("column").run()
    assert not at.exception
    assert has_container(at, "simulation_badge_mixtures")
    assert "Private release" not in texts(at)


def test_provenance_of_every_public_input():
    import dpviz.data
    from app.components import data_source
    from dpviz.data import columns

    raw = dpviz.data.load_csv(_csv(_table()), name="people.csv").dataset
    no_url = {"radius": None}
    typed = data_source.provenance(raw.with_radius(10.0), no_url, n_declared=500)
    assert {k: v["source"] for k, v in typed.items()} == {"radius": "declared", "n": "declared"}
    assert data_source.data_derived(typed) == []
    by_data = data_source.provenance(columns.scale_by_data(raw).with_radius(3.0), no_url, n_declared=None)
    assert by_data["scaling"]["source"] == "data" and by_data["n"]["source"] == "dp_estimate"
    lo, hi = columns.suggest_bounds(raw.X)
    from dataclasses import replace

    suggested = columns.scale_by_bounds(raw, lo, hi)
    suggested = replace(suggested, params=dict(suggested.params) | {"bounds_source": "suggested"})
    assert data_source.data_derived(data_source.provenance(suggested, no_url, n_declared=1)) == ["bounds"]
    assert data_source.data_derived(data_source.provenance(
        columns.scale_by_bounds(raw, [-10, -10], [10, 10]), no_url, n_declared=1)) == []
    builtin = dpviz.data.BUILTIN["iris"]()
    assert data_source.data_derived(data_source.provenance(builtin, no_url, n_declared=150)) == ["scaling"]
    # a Λ typed in the sidebar is declared whatever the dataset carries
    marked = replace(raw.with_radius(7.0), params=dict(raw.params) | {"radius_source": "data"})
    assert data_source.provenance(marked, no_url, n_declared=1)["radius"]["source"] == "data"
    assert data_source.provenance(marked, {"radius": 8.0}, n_declared=1)["radius"]["source"] == "declared"


def test_an_uploads_url_t_does_not_come_from_its_row_count():
    """Two uploads of different sizes put the same t in the URL unless the user declares n."""
    seen = set()
    for rows in (600, 599, 240):
        at = _use_upload(open_app("data", **SMALL), _table()[:rows])
        seen.add(at.query_params["friendlycore.n_tuples"])
    assert seen == {"200"}
    at = open_app("data", **SMALL)
    at.radio(key="source_radio").set_value("upload").run()
    at.file_uploader(key="csv_upload").upload("people.csv", _csv(_table()), "text/csv")
    at.run()
    at.number_input(key="csv_radius").set_value(10.0).run()
    at.number_input(key="csv_declared_n").set_value(1000).run()
    at.button(key="csv_use").click().run()
    assert at.query_params["friendlycore.n_tuples"] == str(1000 // (5 * 4))  # k = 4 from the URL
