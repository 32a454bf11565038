"""The paper's Figure 3 storyboard, panel by panel, drawn from one FC clustering Result.

Panels (Tsfadia et al. 2022, §5.2, Figure 3): (a) the data; (b) the points of all t k-tuples;
(c) core vs removed tuples; (d) the reference tuple and the coordinate clouds; (e) private vs
non-private tuple averages; (f) the private centers on the data; (g) after the private Lloyd step.

Three modules, one concept each; every public name stays importable from here:

- :mod:`~dpviz.viz.storyboard.status`: where a run got to, in the library's terms
  (:func:`run_status`) and in plain words (:func:`plain_status`);
- :mod:`~dpviz.viz.storyboard.labels`: legend tags, panel captions and the step narration;
- :mod:`~dpviz.viz.storyboard.panels`: the figure builders (:func:`storyboard_figure`, one
  ``panel_*`` function per panel, :func:`storyboard_panels`).
"""

from dpviz.viz.storyboard.labels import (
    NARRATION,
    NONPRIVATE_TAG,
    PANEL_TEXT,
    PRIVATE_TAG,
    release_label,
    wrap,
)
from dpviz.viz.storyboard.panels import (
    PANEL_FUNCTIONS,
    PRE_PRIVATE_PANELS,
    Panel,
    panel_averages,
    panel_centers,
    panel_core,
    panel_data,
    panel_lloyd,
    panel_reorder,
    panel_tuples,
    storyboard_figure,
    storyboard_panels,
    storyboard_spec,
)
from dpviz.viz.storyboard.status import (
    BACKUP_WORDS,
    PIPELINE_STEPS,
    RunStatus,
    drawable_step,
    plain_status,
    run_status,
)

__all__ = [
    "BACKUP_WORDS",
    "NARRATION",
    "NONPRIVATE_TAG",
    "PANEL_FUNCTIONS",
    "PANEL_TEXT",
    "PIPELINE_STEPS",
    "PRE_PRIVATE_PANELS",
    "PRIVATE_TAG",
    "Panel",
    "RunStatus",
    "drawable_step",
    "panel_averages",
    "panel_centers",
    "panel_core",
    "panel_data",
    "panel_lloyd",
    "panel_reorder",
    "panel_tuples",
    "plain_status",
    "release_label",
    "run_status",
    "storyboard_figure",
    "storyboard_panels",
    "storyboard_spec",
    "wrap",
]
