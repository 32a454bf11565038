"""A release JSON says what it is (issue 25, findings 4 and 5): which method produced the
centers, the centers in the data's original units with the declared bounds, a truthful size
source, the plan's statement, and the provenance of every public input."""

from __future__ import annotations

import json

import numpy as np
import pytest

import dpviz
from dpviz.data.columns import declared_units, input_provenance, scale_by_bounds
from dpviz.data.dataset import Dataset
from dpviz.privacy.declared import Provenance
from dpviz.privacy.release import SecureRNG, export_release


def _fc_fallback_run():
    """96 rows inside Λ, 904 outside, k = 8: FriendlyCore's core never forms, the fallback answers."""
    g = np.random.default_rng(0)
    u = g.normal(size=(1000, 2))
    u /= np.linalg.norm(u, axis=1, keepdims=True)
    X = u * np.concatenate([g.uniform(0.1, 0.9, 96), g.uniform(1.5, 3.0, 904)])[:, None]
    return dpviz.run("friendlycore", X, 8, epsilon=1.0, delta=1e-6, radius=1.0, rng=SecureRNG(),
                     n_declared=1000)


def test_a_fallback_answer_says_so():
    res = _fc_fallback_run()
    doc = json.loads(export_release(res, dataset={"name": "x"}))
    assert doc["privacy"]["algorithm"] == "friendlycore"
    assert doc["produced_by"]["outcome"] == "fallback"
    # the one "who answered" wording (dpviz.registry.answered_by), as every page shows it
    assert doc["produced_by"]["answered_by"] == "grid coreset (FriendlyCore clustering's backup)"
    assert doc["produced_by"]["failure"]  # FriendlyCore's own ⊥, the reason the fallback answered


def test_data_derived_inputs_need_an_acknowledgement_recorded_in_the_export():
    res = dpviz.run("dp_lloyd", np.random.default_rng(1).uniform(-0.5, 0.5, (500, 2)), 2, epsilon=1.0,
                    delta=1e-6, radius=1.0, rng=SecureRNG(), n_declared=500)
    prov = Provenance.of({"radius": "max norm of the upload"}, radius="data", k="declared")
    with pytest.raises(ValueError, match="radius was read from the data"):
        export_release(res, dataset={"name": "x"}, provenance=prov)
    doc = json.loads(export_release(res, dataset={"name": "x"}, provenance=prov,
                                    acknowledge_data_derived="I accept: Λ came from the rows"))
    assert doc["provenance"]["radius"] == {"source": "data", "note": "max norm of the upload"}
    assert doc["provenance"]["n"]["source"] == "declared"
    assert doc["data_derived_acknowledgement"] == "I accept: Λ came from the rows"
    clean = json.loads(export_release(res, dataset={"name": "x"},
                                      provenance=Provenance.of(radius="declared")))
    assert clean["data_derived_acknowledgement"] is None
    with pytest.raises(ValueError, match="one of"):
        Provenance.of(radius="guessed")


def test_centers_in_original_units_with_the_declared_bounds():
    g = np.random.default_rng(2)
    raw = np.column_stack([g.uniform(20, 80, 800), g.uniform(1000, 3000, 800)])
    ds = Dataset(name="t", X=raw, feature_names=("age", "income"), source="upload")
    scaled = scale_by_bounds(ds, [0, 0], [100, 4000])
    units = declared_units(scaled.params)
    assert units["bounds"] == {"age": [0.0, 100.0], "income": [0.0, 4000.0]}
    res = dpviz.run("dp_lloyd", scaled.X, 2, epsilon=2.0, delta=1e-6, radius=scaled.radius, rng=SecureRNG(),
                    n_declared=800)
    doc = json.loads(export_release(res, dataset={"name": "t"}, units=units,
                                    provenance=input_provenance(scaled.params)))
    C = np.asarray(doc["units"]["centers_as_run"])
    np.testing.assert_allclose(doc["centers"], C * [50.0, 2000.0] + [50.0, 2000.0])
    assert doc["units"]["declared_bounds"] == units["bounds"]
    assert doc["provenance"]["bounds"]["source"] == "declared"
    assert "rows_clipped_to_bounds" not in json.dumps(doc)  # a count of rows is not public
    suggested = dict(scaled.params) | {"bounds_source": "suggested from the file"}
    assert input_provenance(suggested).data_derived() == ("bounds",)
    assert declared_units({"scaled": "this file's own mean and sd (NOT private)"}) is None


def test_the_export_states_which_sampler_drew_each_kind_of_noise():
    """Issue 34, finding F: exports said Binomial draws came from OpenDP's CSPRNG; they come from a
    numpy PCG64 generator seeded from OS entropy. The text names the generator SecureRNG uses."""
    from dpviz.privacy.release import SAMPLER_TEXT, SAMPLERS

    bitgen = type(SecureRNG._fresh().bit_generator).__name__
    assert bitgen == "PCG64"
    binomial = next(v for k, v in SAMPLERS.items() if k.startswith("binomial"))
    assert bitgen in binomial and "not a CSPRNG" in binomial and "OpenDP has no Binomial" in binomial
    assert "CSPRNG" in SAMPLERS["gaussian noise"] and "CSPRNG" in SAMPLERS["exponential mechanism"]
    assert "Binomial and geometric draws and all other randomness: a numpy PCG64" in SAMPLER_TEXT
    assert "Binomial draws from OpenDP" not in SAMPLER_TEXT
    doc = json.loads(export_release(_fc_fallback_run(), dataset={"name": "x"}))
    assert doc["samplers"] == SAMPLERS and doc["sampler"] == SAMPLER_TEXT


def test_the_sampler_texts_name_no_seed():
    """Release files are checked for the word 'seed' anywhere (nothing replayable is kept)."""
    from dpviz.privacy.release import SAMPLER_TEXT, SAMPLERS

    assert "seed" not in (SAMPLER_TEXT + json.dumps(SAMPLERS, ensure_ascii=False)).lower()
