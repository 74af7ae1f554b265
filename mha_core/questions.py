"""The five questions a student brings to multi-head attention, each answered with numbers
computed from a loaded model and one sentence (the app's start card shows them).

    split_or_copied(config)              every head reads all d_model inputs; the output is split
    heads_differ(res, layer, focus)      how many different top keys the heads of one layer give
    heads_learn(res)                     the heads' pattern labels (Clark et al. 2019's rules)
    one_head(res, layer, best_fit=None)  the summed head against the heads (+ the best fit)
    attention_cost(config, T)            one wide head against h heads: parameters and maps

Layers are indices from 0 here; the app shows them from 1.
"""

from collections import Counter
from dataclasses import dataclass

import numpy as np

from .metrics import entropy, result_metrics
from .patterns import label_heads
from .toy.cost import attention_params


def split_or_copied(config) -> dict:
    """Copied: each head's W_Q, W_K, W_V read the whole d_model vector of every token; what is
    split is the width each head writes, d_model / h."""
    D, H = config.hidden_size, config.num_attention_heads
    return {"heads": H, "d_model": D, "d_head": D // H}


def heads_differ(res, layer: int, focus: int) -> dict:
    """The top key (largest weight) of the focus token's row in every head of `layer`: how many
    different tokens they are. res.attentions (L, H, T, T)."""
    rows = res.attentions[layer, :, focus]  # (H, T)
    top = rows.argmax(dim=-1).tolist()  # (H,)
    return {"heads": len(top), "targets": len(set(top)),
            "top_tokens": [res.labels[k] for k in top]}


def heads_learn(res) -> Counter:
    """How many heads of the whole model carry each pattern label on this sentence."""
    return Counter(label_heads(result_metrics(res)).ravel().tolist())


@dataclass(frozen=True)
class BestFit:
    """One layer's shipped result of mha_core.one_head: how much of the layer's attention
    output a best-fit single head reproduces (1 = all of it)."""
    layer: int
    explained: float


def one_head(res, layer: int, best_fit: BestFit | None = None) -> dict:
    """The summed head of `layer` (its weights read as one head) against its heads: its mean
    row entropy (nats), the key it puts most weight on (averaged over rows) and that share,
    the heads' mean entropy, and ln T (a uniform row) for scale. best_fit: the best-fit single
    head's figure for this layer, passed through when it exists."""
    single = res.single_head[layer]  # (T, T)
    per_key = single.mean(dim=0)  # (T,): the average row
    top = int(per_key.argmax())
    T = single.shape[-1]
    return {"summed_entropy": float(entropy(single)), "summed_top": res.labels[top],
            "summed_share": float(per_key[top]),
            "heads_entropy": float(entropy(res.attentions[layer]).mean()),
            "uniform": float(np.log(T)), "best_fit": best_fit}


def attention_cost(config, T: int) -> dict:
    """One layer's attention: the parameters of h heads of d_model/h (the same as one head of
    d_model: the projections are only cut into heads) and the floats of the attention maps
    (h maps of T × T against one)."""
    D, H = config.hidden_size, config.num_attention_heads
    return {"params_heads": attention_params(D, H, D // H), "params_one": attention_params(D, 1, D),
            "maps_heads": H * T * T, "maps_one": T * T, "heads": H, "T": T}
