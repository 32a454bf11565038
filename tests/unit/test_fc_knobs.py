"""FriendlyCore's knobs have one spelling from the URL to FCParams (issue 45 item 4): the table in
``app/components/friendlycore/knobs.py`` gives each knob's parameter, URL name, FCParams field,
default and bounds, and the URL parser, the canonical defaults, RunConfig and FCParams read it."""

from __future__ import annotations

import dataclasses

import pytest

from app.components import state
from app.components.friendlycore import handoff, knobs
from app.components.friendlycore.run import RunConfig
from dpviz.clustering.friendlycore.spec import FCParams, auto_n_tuples

OLD = {"t": "300", "oracle": "pca", "preset": "paper", "rmin": "0.002", "fb": "false"}
NEW = {"friendlycore.n_tuples": "300", "friendlycore.oracle": "pca", "friendlycore.preset": "paper",
       "friendlycore.r_min": "0.002", "friendlycore.fallback": "false"}
WANT = FCParams(n_tuples=300, oracle="pca", preset="paper", r_min=0.002, fallback=False)


def _params(query: dict[str, str]) -> dict:
    values, notices = state.parse_query(query)
    assert not notices
    return state.defaults() | values


def test_the_table_has_a_row_per_fcparams_field_and_runconfig_field():
    assert {k.field for k in knobs.KNOBS} == {f.name for f in dataclasses.fields(FCParams)}
    assert {k.name for k in knobs.KNOBS} <= {f.name for f in dataclasses.fields(RunConfig)}
    assert len({k.param for k in knobs.KNOBS}) == len({k.url for k in knobs.KNOBS}) == len(knobs.KNOBS)


def test_the_url_parser_and_the_defaults_read_the_table():
    assert {k.param: k.url for k in knobs.KNOBS} == state.URL_NAMES
    for k in knobs.KNOBS:
        assert state.PARAMS[k.param].default == k.default and state.defaults()[k.param] == k.default
    assert knobs.T.url == "friendlycore.n_tuples" and knobs.R_MIN.param == "rmin"  # old links' names


def test_an_old_flat_link_and_a_namespaced_link_build_the_same_fcparams():
    """The test with an old link: its flat names open the FCParams the namespaced ones do, and the
    app writes it back under the namespaced names only."""
    for query in (OLD, NEW):
        p = _params({"k": "4", **query})
        cfg = RunConfig.from_params(p, radius=1.0)
        assert (cfg.t, cfg.oracle, cfg.preset, cfg.r_min, cfg.fallback) == (300, "pca", "paper", 0.002, False)
        assert cfg.fc_params() == WANT
        assert cfg.fc_params(stage_only=True) == FCParams(n_tuples=300, oracle="pca")
        written = state.query_dict(p)
        assert {written[u] for u in NEW} == {"300", "pca", "paper", "0.002", "false"}
        assert not set(OLD) & set(written)
        assert _params(written) == p  # the written link opens the same parameters


def test_the_defaults_build_the_lessons_fcparams():
    assert RunConfig.from_params(state.defaults(), radius=1.0).fc_params() == FCParams(
        n_tuples=1500, oracle="kmeans++", preset="practical", r_min=0.001, fallback=True)


@pytest.mark.parametrize("knob", knobs.KNOBS, ids=lambda k: k.name)
def test_every_value_a_link_may_set_is_one_fcparams_accepts(knob):
    """The bounds' ends (and t's automatic 0) are read from a link and accepted by FCParams; the
    value just past them is refused by the URL parser with a notice (until issue 45 a link's r_min
    was read up to 10⁹, and FCParams refused it above 10⁶ only when the run was made)."""
    parse = state.PARAMS[knob.param].parse
    if knob.kind is bool or knob.kind is str:
        inside, outside = [state.Param("x", None, str).format(v) for v in knob.bounds], ["maybe"]
    else:
        low, high = knob.bounds
        inside = [repr(high)] + ([] if knob.low_open else [repr(low)]) + \
            ([] if knob.automatic is None else [repr(knob.automatic)])
        step = 1 if knob.kind is int else high * 1e-6
        outside = [repr(high + step), repr(low) if knob.low_open else repr(low - step)]
    for text in inside:
        value = parse(text)
        FCParams(**{knob.field: value})  # raises if FCParams refuses it
        values, notices = state.parse_query({knob.url: text})
        assert values == {knob.param: value} and not notices
    for text in outside:
        values, notices = state.parse_query({knob.param: text, knob.url: text})
        assert knob.param not in values and len(notices) == 2, (text, notices)


def test_compares_handoff_opens_the_comparisons_fcparams():
    """Compare's click writes FriendlyCore's parameters through the table: Explore then builds the
    comparison's FCParams (t and r_min resolved from the public inputs when automatic)."""
    for params in (WANT, FCParams(oracle="pca", preset="paper", fallback=False)):
        p = state.defaults() | handoff.explore_params(params, n_declared=20_000, k=4, radius=2.0)
        got = RunConfig.from_params(p, radius=2.0).fc_params()
        want = dataclasses.replace(params, n_tuples=params.n_tuples or auto_n_tuples(20_000, 4),
                                   r_min=params.r_min or 2e-3)
        assert got == want


def test_budgets_sweep_hands_the_tables_tuple_knobs_to_fcparams():
    """Budget's sweep reads t, r_min and the oracle through the table, and its per-algorithm
    parameters (spelled in ``SweepSpec.algorithm_params``, whose source the precomputed sweeps'
    code hash covers) are those knobs' FCParams fields."""
    from types import SimpleNamespace

    from app.components import sweep

    p = _params({**OLD, "k": "4"})
    spec = sweep.spec_for(SimpleNamespace(content_hash="h"), p, 1.0, ("friendlycore",))
    assert (spec.t, spec.r_min, spec.oracle) == (300, 0.002, "pca")
    assert spec.algorithm_params()["friendlycore"] == {
        k.field: getattr(WANT, k.field) for k in (knobs.T, knobs.R_MIN, knobs.ORACLE)}
