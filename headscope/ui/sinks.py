"""The Attention sinks page's computation, cached per model and text: each head's share of
attention on the sink tokens by weight and by norm, and Gu et al. 2024's sink rates
(mha_core.sinks). Any model: a decoder's sink is its first token, an encoder's [CLS] and [SEP].

Shape letters: L layers, H heads.
"""

import streamlit as st

from . import models

# At most this many tokens are read: the maps and the norm maps are L·H·T² floats each (a
# 30 × 9 decoder at 256 tokens: 70 MB apiece)
MAX_TOKENS = 256


@st.cache_data(**models.bounded(), show_spinner="Measuring how much each head rests on a sink…")
def sink_view(name: str, text: str, pair: str | None = None) -> dict:
    """{"tokens", "truncated", "n_full", "sinks": {kind: {"positions", "weight" (L, H), "norm"
    (L, H), "rate_weight", "rate_norm" ({"per_layer" (L,), "model"})}}} as numpy and floats;
    kinds "first" and, for an encoder, "cls" and "sep"."""
    from mha_core.sinks import sinks

    bert = models.bert_or_raise(name)
    pair = pair if bert.config.takes_pairs else None
    with models.long_here(bert, text, pair, "Measuring this long text's sinks"):
        res = bert.attend(text, pair, max_length=MAX_TOKENS)
        found = sinks(bert, res) if len(res.labels) >= 2 else {}  # one token: no row to average
    out = {}
    for kind, s in found.items():
        out[kind] = dict(positions=list(s["positions"]), weight=s["weight"].numpy(),
                         norm=s["norm"].numpy(),
                         **{by: dict(per_layer=s[by]["per_layer"].numpy(),
                                     model=s[by]["model"]) for by in ("rate_weight", "rate_norm")})
    return dict(tokens=list(res.labels), truncated=res.truncated,
                n_full=res.encoded.n_tokens_full, sinks=out)
