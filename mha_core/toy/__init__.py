"""The lab models: a toy task, a one-layer attention-only model, training runs, what attention
costs, and the toy walkthrough. They serve the Training lab and Inside MHA; the BERT encoder
(mha_core's public API) does not depend on them.

    from mha_core import toy
    result = toy.train(toy.LabConfig(n_heads=2))
"""

from .cost import (
    DESIGNS,
    Cost,
    FullWidthHeads,
    attention_cost,
    attention_params,
    cost_module,
    module_params,
    reads,
    slice_cost,
    slice_params,
    time_forward,
)
from .model import LabModel, build_model, head_weights, init_weights, make_heads_identical
from .task import IGNORE, LabConfig, example, make_batch
from .training import (
    RunResult,
    accuracies,
    cosine_matrix,
    diversity,
    loss_fn,
    pairwise_map_distance,
    train,
)
from .walkthrough import (
    TOY_MAX_CHARS,
    TOY_MAX_WORDS,
    TOY_TEXT,
    Matrix,
    Step,
    Walkthrough,
    parse_toy_words,
    toy_attention,
    toy_embedding,
    walkthrough,
)

__all__ = [
    "DESIGNS", "Cost", "FullWidthHeads", "attention_cost", "attention_params", "cost_module",
    "module_params", "reads", "slice_cost", "slice_params", "time_forward", "LabModel",
    "build_model", "head_weights",
    "init_weights", "make_heads_identical", "IGNORE", "LabConfig", "example", "make_batch",
    "RunResult", "accuracies", "cosine_matrix", "diversity", "loss_fn", "pairwise_map_distance",
    "train", "TOY_MAX_CHARS", "TOY_MAX_WORDS", "TOY_TEXT", "Matrix", "Step", "Walkthrough",
    "parse_toy_words", "toy_attention", "toy_embedding", "walkthrough",
]
