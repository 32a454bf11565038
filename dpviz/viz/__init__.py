"""Figure builders: Result/Dataset/Sweep -> plotly Figure. No Streamlit here.

Every builder reads what an algorithm recorded (``Result.trace``, ``Result.ledger``) and never
recomputes it; legends say which values are private releases and which are non-private
diagnostics.
"""

from dpviz.viz.colors import PALETTE, align_colors, cluster_color
from dpviz.viz.data import Projector, data_figure, downsample_index, project_2d
from dpviz.viz.filters import (
    filter_scores_figure,
    find_diam_figure,
    find_diam_table,
    friends_matrix_figure,
)
from dpviz.viz.noise import aligned_draws, noise_cloud_figure
from dpviz.viz.privacy import (
    PrivacySummary,
    ledger_figure,
    ledger_frame,
    ledger_table,
    privacy_summary,
)
from dpviz.viz.storyboard import (
    PANEL_FUNCTIONS,
    RunStatus,
    panel_averages,
    panel_centers,
    panel_core,
    panel_data,
    panel_lloyd,
    panel_reorder,
    panel_tuples,
    run_status,
    storyboard_figure,
    storyboard_panels,
)
from dpviz.viz.sweeps import accuracy_figure, clicked_budget, loss_vs_n_figure, success_figure

__all__ = [
    "PALETTE",
    "PANEL_FUNCTIONS",
    "PrivacySummary",
    "Projector",
    "RunStatus",
    "accuracy_figure",
    "align_colors",
    "aligned_draws",
    "clicked_budget",
    "cluster_color",
    "data_figure",
    "downsample_index",
    "filter_scores_figure",
    "find_diam_figure",
    "find_diam_table",
    "friends_matrix_figure",
    "ledger_figure",
    "ledger_frame",
    "ledger_table",
    "loss_vs_n_figure",
    "noise_cloud_figure",
    "panel_averages",
    "panel_centers",
    "panel_core",
    "panel_data",
    "panel_lloyd",
    "panel_reorder",
    "panel_tuples",
    "privacy_summary",
    "project_2d",
    "run_status",
    "storyboard_figure",
    "storyboard_panels",
    "success_figure",
]
