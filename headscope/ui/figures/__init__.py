"""Plotly figure builders: numpy in, go.Figure out. No Streamlit, no torch. One module per view
family; every builder passes user text through labels.label (the one escaper).

    from headscope.ui import figures
    figures.atlas_figure(att, tokens, pattern_labels)   # every head as a thumbnail

The attention maps themselves (the Explorer, the head and model views) are drawn in the browser
by the attention component (headscope.ui.attention), not by plotly.
"""

from . import (
    charts,
    focus,
    head_grids,
    matrices,
    next_word,
    one_head_r2,
    qk,
    sinks,
    syntax,
    tiles,
)
from .base import for_projector
from .charts import (
    cost_figure,
    curves_figure,
    norm_shares_figure,
    prediction_bars,
    pruning_curve_figure,
    token_change_figure,
)
from .focus import focus_grid, token_colors
from .head_grids import (
    diff_grid_figure,
    importance_figure,
    map_change_figure,
    mask_change_figure,
    mask_importance_figure,
    metric_grid_figure,
)
from .matrices import (
    lab_maps_figure,
    matrix_figure,
    neuron_figure,
    similarity_figure,
    slices_figure,
)
from .one_head_r2 import heads_curve, one_head_bars
from .qk import qk_scatter_figure, token_attention_figure
from .syntax import arcs_figure, relation_matrix_figure
from .tiles import atlas_figure, rollout_figure, side_by_side_figure

# Every figure builder, found in the view modules (for the tests that check them all): their
# public functions, less token_colors (colours, not a figure)
BUILDERS = tuple(
    fn for module in (focus, head_grids, tiles, charts, matrices, syntax, qk, one_head_r2,
                   next_word, sinks)
    for name, fn in vars(module).items()
    if callable(fn) and not name.startswith("_") and name != "token_colors"
    and getattr(fn, "__module__", "") == module.__name__)

__all__ = ["for_projector", "BUILDERS", "token_colors", "cost_figure", "curves_figure",
           "prediction_bars", "pruning_curve_figure", "token_change_figure", "focus_grid",
           "diff_grid_figure", "importance_figure", "map_change_figure", "mask_change_figure",
           "mask_importance_figure", "metric_grid_figure", "lab_maps_figure", "matrix_figure",
           "neuron_figure", "similarity_figure", "slices_figure", "atlas_figure", "rollout_figure",
           "side_by_side_figure", "norm_shares_figure", "qk_scatter_figure",
           "token_attention_figure", "arcs_figure", "relation_matrix_figure", "one_head_bars",
           "heads_curve"]
