"""Plotly figure builders: numpy in, go.Figure out. No Streamlit, no torch. One module per view
family; every builder passes user text through labels.label (the one escaper).

    from ui import figures
    figures.heatmap(weights, tokens, title="layer 2, head 10")
"""

from .base import HOVER, for_projector
from .charts import (
    cost_figure,
    curves_figure,
    norm_shares_figure,
    pruning_curve_figure,
    token_change_figure,
)
from .focus import focus_bars, focus_grid, token_colors
from .head_grids import diff_grid_figure, importance_figure, map_change_figure, metric_grid_figure
from .maps import head_grid, heatmap
from .matrices import (
    lab_maps_figure,
    matrix_figure,
    neuron_figure,
    similarity_figure,
    slices_figure,
)
from .qk import qk_scatter_figure, token_attention_figure
from .syntax import arcs_figure, relation_matrix_figure
from .tiles import atlas_figure, rollout_figure, side_by_side_figure

BUILDERS = (  # every builder, for the tests that check them all
    heatmap, head_grid, focus_grid, focus_bars, atlas_figure, rollout_figure,
    side_by_side_figure, metric_grid_figure, importance_figure, map_change_figure,
    diff_grid_figure, pruning_curve_figure, token_change_figure, curves_figure, cost_figure,
    matrix_figure, slices_figure, similarity_figure, lab_maps_figure, neuron_figure,
    relation_matrix_figure, arcs_figure, norm_shares_figure, qk_scatter_figure,
    token_attention_figure,
)

__all__ = ["HOVER", "for_projector", "BUILDERS", *(b.__name__ for b in BUILDERS),
           "token_colors"]
