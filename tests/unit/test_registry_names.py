"""One naming scheme (issue 33): registry names with parameters; old stored names (Budget links,
precomputed sweep keys) are read through ONE mapping, ``dpviz.registry.registry_name``."""

from __future__ import annotations

import pytest

from dpviz import registry


@pytest.mark.parametrize("old, new", [
    ("fc:practical", "friendlycore"),  # the spec's default preset: the bare name
    ("fc:paper", "friendlycore[preset=paper]"),
    ("fc:reference", "friendlycore[preset=reference]"),
    ("nonprivate", "kmeans++"),
    ("dp_lloyd", "dp_lloyd"),  # a registry name is already one
    ("friendlycore[preset=paper]", "friendlycore[preset=paper]"),
])
def test_old_names_map_to_registry_names(old, new):
    assert registry.registry_name(old) == new


def test_a_name_with_parameters_round_trips_and_resolves_to_validated_params():
    name = registry.variant_name("friendlycore", preset="paper")
    assert name == "friendlycore[preset=paper]"
    assert registry.parse_name(name) == ("friendlycore", {"preset": "paper"})
    spec, params = registry.resolve_name(name, {"n_tuples": 20})
    assert spec.name == "friendlycore" and params.preset == "paper" and params.n_tuples == 20
    # text parameters take the field's type; the spec validates them
    assert registry.resolve_name("friendlycore[n_tuples=30]")[1].n_tuples == 30
    assert registry.variant_name("dp_lloyd") == "dp_lloyd"
    _, old = registry.resolve_name("fc:paper")
    assert old == params.__class__(**{**vars(params), "n_tuples": old.n_tuples})


@pytest.mark.parametrize("bad", ["friendlycore[preset=paper", "friendlycore[=x]", "friendlycore[x]"])
def test_a_malformed_name_is_refused(bad):
    with pytest.raises(ValueError, match="Malformed algorithm name"):
        registry.parse_name(bad)


def test_an_unknown_preset_or_parameter_is_the_specs_error():
    with pytest.raises(ValueError):
        registry.resolve_name("friendlycore[preset=nope]")
    with pytest.raises(ValueError, match="Unknown parameter"):
        registry.resolve_name("dp_lloyd[preset=paper]")
