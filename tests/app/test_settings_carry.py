"""Issue 36: the settings carry across pages, Release and Compare included (AppTest). The Release page's
form starts at the k, target ε and δ the user set elsewhere (its ε started at 1 whatever Explore
said), and what is changed there is the app's setting from then on."""

from __future__ import annotations

from apptest_helpers import SMALL, open_app


def test_release_starts_at_the_eps_delta_and_k_set_on_explore_and_writes_them_back(ledger_dir):
    at = open_app(None, **SMALL)
    at.select_slider(key="eps_slider").set_value(5.0).run()  # the user moves Explore's ε
    assert at.session_state["params"]["eps"] == 5.0
    at.session_state["params"]["delta"] = 1e-7  # as Explore's δ control sets it
    at.switch_page("views/release.py").run()
    assert not at.exception, [e.value for e in at.exception]
    assert at.number_input(key="release_eps").value == 5.0
    assert at.select_slider(key="release_delta").value == 1e-7
    assert at.number_input(key="release_k").value == 4
    at.number_input(key="release_eps").set_value(2.0).run()
    assert at.session_state["params"]["eps"] == 2.0
    at.switch_page("views/explore.py").run()
    assert not at.exception
    assert at.select_slider(key="eps_slider").value == 2.0


def test_a_delta_a_release_may_not_state_shows_as_the_largest_it_may(ledger_dir):
    at = open_app("release", **SMALL, eps="7", delta="0.001")
    assert not at.exception, [e.value for e in at.exception]
    assert at.number_input(key="release_eps").value == 7.0
    assert at.select_slider(key="release_delta").value == 1e-4
    assert at.select_slider(key="release_delta").options[-1] == "1e-04"


def test_compare_takes_the_apps_delta_and_gives_it_back_and_a_links_own_delta_stands():
    at = open_app(None, **SMALL)
    at.session_state["params"]["delta"] = 1e-7  # as Explore's δ control sets it
    at.switch_page("views/compare.py").run()
    assert not at.exception, [e.value for e in at.exception]
    assert at.select_slider(key="compare_delta").value == 1e-7
    at.select_slider(key="compare_delta").set_value(1e-8).run()
    assert at.session_state["params"]["delta"] == 1e-8
    at.switch_page("views/release.py").run()
    assert at.select_slider(key="release_delta").value == 1e-8
    link = open_app("compare", **SMALL, cdelta="1e-09")  # a shared Compare link's own δ
    assert link.select_slider(key="compare_delta").value == 1e-9


def test_a_hand_typed_link_to_a_built_in_table_takes_its_suggested_k_t_and_r_min():
    """Issue 43: /?src=builtin&builtin=iris kept the lesson's k = 8, t = 1,500 and Explore opened
    on FriendlyCore's "needs at least 12000 rows"; the knobs a link leaves out now take the
    table's suggestions, as choosing Iris on the Data page does (k = 3 classes, t = 150 // 15)."""
    at = open_app(None, src="builtin", builtin="iris")
    assert not at.exception, [e.value for e in at.exception]
    p = at.session_state["params"]
    assert (p["k"], p["t"], p["rmin"]) == (3, 10, 0.002)  # Λ = √4 = 2: r_min = 10⁻³·Λ
    assert not [e.value for e in at.error], [e.value for e in at.error]
    # a knob the link gives stands (t then follows the link's k: 150 // (5·4) = 7)
    p = open_app(None, src="builtin", builtin="iris", k="4").session_state["params"]
    assert (p["k"], p["t"]) == (4, 7)
    # a generated recipe's link keeps the lesson's defaults (Learn: a page that runs nothing)
    p = open_app("learn", src="generate", n="20000").session_state["params"]
    assert (p["k"], p["t"]) == (8, 1500)
    assert "_link_suggests" not in at.session_state  # applied once, then gone
