"""The Explorer's cached computations: one layer as shown, and where the focus token looks in
every head of every layer.

Here, not in pages/explorer.py: st.cache_data keys a function by its source code
(inspect.getsource), and a function defined in a page script is defined again on every run,
so its key would be computed again on every run."""

import streamlit as st

from mha_core.metrics import entropy, map_summary, token_kinds, word_focus
from mha_core.shown import explorer_norm_view, explorer_view, focus_targets

from . import masked_words, models


@st.cache_data(**models.bounded(), show_spinner="Reading this layer's heads…")
def layer_view(name: str, text: str, layer: int, word_level: bool, hide_special: bool,
               pair: str | None = None, by_norm: bool = False) -> dict:
    """One layer as shown: heads (H, G, G), single head and mean of heads (G, G), entropies;
    what a click on each shown label masks (masked_words.click_targets). by_norm: the heads and
    their mean by norm (Kobayashi et al. 2020: ||alpha f(x)||, rows normalised; raw norms in
    raw and raw_mean); the single head stays the weights (it has no norm form)."""
    res = models.attend(name, text, pair)
    heads, labels, special = explorer_view(res.attentions[layer], res, word_level, hide_special)
    single = explorer_view(res.single_head[layer], res, word_level, hide_special)[0]  # (G, G)
    kinds = token_kinds(labels, special)
    words = [not (s or p) for s, p in zip(special, kinds["punct"])]
    focus = word_focus(heads, words)  # the default head, by weight whatever is shown
    raw = raw_mean = None
    if by_norm:
        norms = models.norm_maps(name, text, pair, res, layer)  # (H, T, T)
        heads, raw, _, _ = explorer_norm_view(norms, res, word_level, hide_special)
        raw, raw_mean = raw.numpy(), raw.mean(dim=0).numpy()  # (H, G, G), (G, G)
    mean = heads.mean(dim=0)  # (G, G): the mean of the maps shown
    return dict(labels=labels, special=special, heads=heads.numpy(), single=single.numpy(),
                mean=mean.numpy(), h_heads=entropy(heads).tolist(), raw=raw, raw_mean=raw_mean,
                h_single=float(entropy(single)), h_mean=float(entropy(mean)), tokens=res.labels,
                word_focus=focus, single_summary=map_summary(single),
                targets=masked_words.click_targets(res, word_level, hide_special))


@st.cache_data(**models.bounded(), show_spinner="Following the focus token through every head…")
def focus_view(name: str, text: str, query: int, word_level: bool, hide_special: bool,
               pair: str | None = None, by_norm: bool = False) -> dict:
    """Where the token at `query` (in the shown view) attends, in every head of every layer
    (by norm: in the row-normalised norm maps)."""
    res = models.attend(name, text, pair)
    if by_norm:
        norms = models.norm_maps(name, text, pair, res)  # (L, H, T, T)
        att = explorer_norm_view(norms, res, word_level, hide_special)[0]  # (L, H, G, G)
    else:
        att = explorer_view(res.attentions, res, word_level, hide_special)[0]  # (L, H, G, G)
    top, weight, rows = focus_targets(att, query)
    return dict(top=top.numpy(), weight=weight.numpy(), rows=rows.numpy())
