"""The Mixtures page under AppTest: it renders, labels its numbers, and reacts to ε."""

from __future__ import annotations

from apptest_helpers import SMALL, has_container, metric, open_app, texts


def test_mixtures_page_renders_and_reacts_to_epsilon():
    at = open_app("mixtures", **SMALL)
    assert not at.exception
    page = texts(at)
    assert "not clustering" in page and "post-processing without the paper's guarantee" in page
    assert "constants and polylogs set to 1" in page
    assert has_container(at, "mix_metrics") and has_container(at, "mix_status")
    assert metric(at, "ε spent (ledger)") == "1"
    tv_before = metric(at, "TV to truth (simulation)")
    status_before = [s.value for s in at.success]
    at.select_slider(key="mix_eps").set_value(0.2).run()
    assert not at.exception
    assert metric(at, "ε spent (ledger)") == "0.2"
    after = [s.value for s in at.success] + [w.value for w in at.warning]
    assert after != status_before or metric(at, "TV to truth (simulation)") != tv_before
    # the 2-D demo shows its caveats
    at.radio(key="mix_mode").set_value("2-D demo").run()
    assert not at.exception
    assert has_container(at, "mix_caveats")
    assert "Inspired by, not the paper's algorithm" in texts(at)


def test_mixtures_page_learns_a_column_of_the_current_dataset():
    at = open_app("mixtures", **SMALL)
    at.selectbox(key="mix_scenario").set_value("column").run()
    assert not at.exception
    assert at.selectbox(key="mix_column") is not None
    # no truth on real data: TV is to a non-private EM fit, labelled so
    assert metric(at, "TV to EM (non-private)")
    assert "No bounds on the values are needed" in texts(at)
