"""Classroom mode (issue 37): ``DPVIZ_CLASSROOM=1`` (``dpviz app --classroom``) serves a read-only
app: the banner, no Release page, no upload source, no server path, no persistent ledger."""

from __future__ import annotations

import pytest
from apptest_helpers import container, has_container, open_app, texts

from app.components import classroom, ledger_view, server_path, state
from dpviz.serve import CLASSROOM_ENV


@pytest.fixture
def class_on(monkeypatch):
    monkeypatch.setenv(CLASSROOM_ENV, "1")


def _page_titles(at) -> list[str]:
    return [p.title for p in at.session_state["_pages"].values()]


def test_classroom_landing_page_is_the_lesson_with_the_banner_and_no_release(class_on):
    at = open_app()
    assert not at.exception
    assert "Classroom mode" in str(container(at, "classroom_banner").children[0].value)
    assert "Release" not in _page_titles(at)
    assert _page_titles(at)[0] == "Explore"
    # Explore's teaching lesson: the Fig. 6 blobs at the default parameters' n (issue 33: 150,000).
    n = state.PARAMS["n"].default
    assert at.query_params.get("gen", "fig6_blobs") == "fig6_blobs"
    assert f"n = {n:,}" in texts(at)
    assert "Simulation — not a release" in texts(at) and "Release** page" not in texts(at)


def test_classroom_data_page_offers_no_upload(class_on):
    at = open_app("data")
    assert not at.exception
    radio = at.radio(key="source_radio")
    assert list(radio.options) == ["Generate", "Built-in (scikit-learn)"]


def test_classroom_link_asking_for_an_upload_opens_the_generated_data(class_on):
    at = open_app("data", src="upload")
    assert not at.exception
    assert at.radio(key="source_radio").value == "generate"
    assert not has_container(at, "csv_upload")


def test_classroom_has_no_server_path_and_no_persistent_ledger(class_on, monkeypatch, tmp_path):
    monkeypatch.setenv(server_path.ENV, str(tmp_path))  # configured, but classroom mode wins
    assert server_path.root() is None
    with pytest.raises(RuntimeError, match="no persistent privacy ledger"):
        ledger_view.store()


def test_without_classroom_mode_everything_is_there(monkeypatch, tmp_path):
    monkeypatch.delenv(CLASSROOM_ENV, raising=False)
    assert not classroom.on()
    at = open_app("data")
    assert not at.exception and not has_container(at, "classroom_banner")
    assert "Release" in _page_titles(at)
    assert "Upload a CSV" in list(at.radio(key="source_radio").options)
    monkeypatch.setenv(server_path.ENV, str(tmp_path))
    assert server_path.root() == tmp_path.resolve()
    ledger_view.store()  # no error
