"""storyboard_spec: the storyboard as a plain figure dict, sent unvalidated by Explore's live chart
(issue 33 item 2). Its JSON must be the validated Figure's, up to plotly's typed-array encoding."""

import base64
import json
import math

import numpy as np
import plotly.io as pio
import pytest
from _viz_fakes import fake_fc_result

from dpviz.viz.storyboard import storyboard_figure, storyboard_spec


def _decoded(node):
    """The JSON with plotly's typed arrays {"dtype", "bdata"} decoded to lists, and NaN (a gap in
    a typed array) as null (the gap in a plain JSON list: plotly.js draws both as a break)."""
    if isinstance(node, dict):
        if set(node) == {"dtype", "bdata"}:
            return _decoded(np.frombuffer(base64.b64decode(node["bdata"]), dtype=node["dtype"]).tolist())
        return {k: _decoded(v) for k, v in node.items()}
    if isinstance(node, list):
        return [_decoded(v) for v in node]
    return None if isinstance(node, float) and math.isnan(node) else node


@pytest.mark.parametrize("points", ["raster", "vector"])
def test_the_unvalidated_spec_sends_the_validated_figures_json(points):
    result, X = fake_fc_result()
    kw = dict(panels="cdefg", cols=3, max_points=1_000, height_per_row=330, title=" ", legend=True,
              legend_in_free_cell=True, tick_labels=False, margin=dict(l=25, r=10, t=70, b=25),
              status_subtitle=False, points=points)
    validated = json.loads(storyboard_figure(result, X, **kw).to_json())
    spec = json.loads(pio.to_json(storyboard_spec(result, X, **kw), validate=False))
    assert _decoded(spec) == _decoded(validated)
    assert len(spec["data"]) == len(validated["data"]) > 5
