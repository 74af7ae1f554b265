"""The Explorer's cached computation: what its component is sent for one sentence (every layer's
maps, explorer_payload), so that every view change is drawn in the browser.

Here, not in pages/explorer.py: st.cache_data keys a function by its source code
(inspect.getsource), and a function defined in a page script is defined again on every run,
so its key would be computed again on every run."""

import streamlit as st

from mha_core.metrics import is_punctuation

from . import masked_words, models, one_head_results, presets, style
from .attention.explorer_payload import explorer_payload
from .words import special_names


@st.cache_data(**models.bounded(), show_spinner=False)  # the page shows one (models.busy)
def explorer_data(name: str, text: str, pair: str | None, layer: int, focus: tuple) -> dict:
    """The component's data for this sentence: weights, summed head and norms of every layer
    (a text over LOCAL_TOKENS tokens: layer `layer` and the rows of the `focus` token positions
    in every layer); the word groups, what a click masks, the default focus of the token and
    word views, this layer's one-head sentences."""
    bert = models.get_bert(name)[0]
    # every layer's value norms, also for a long text: its focus rows travel for every layer
    res, norms = models.attend_with_norms(name, text, pair)  # norms: (L, H, T)
    words, groups = res.words()
    word_special = [all(res.special[t] for t in g) for g in groups]
    cfg = bert.config
    return explorer_payload(
        res.attentions.numpy(), res.single_head.numpy(), res.labels, res.special,
        [not s and is_punctuation(t) for t, s in zip(res.labels, res.special)], words,
        [not s and is_punctuation(w) for w, s in zip(words, word_special)], groups,
        masked_words.click_targets(res, False, False, bert), value_norms=norms.numpy(),
        layer=layer, causal=bert.is_decoder,
        focus=focus, default_focus=(
            presets.default_focus(text, res.labels, res.special, bert.is_decoder),
            presets.default_focus(text, words, word_special, bert.is_decoder)),
        names=special_names(bert.tokenizer), notes=one_head_results.layer_sentences(name),
        palette=style.PALETTE, special_colors=style.SPECIAL_COLORS,
        other_color=style.OTHER_COLOR) | dict(width=cfg.hidden_size)


def named(name: str, text: str, pair: str | None, tokens: int) -> dict:
    """What names a sentence's maps, beside them: its key (the page's data and the route's
    answer carry the same one, so the component knows a sentence it drew already), the tag on
    the component's host and the caption of its figures (figure.js)."""
    return dict(sentence=[name, text, pair], tag=f"{tokens} tokens",
                meta=dict(model=name, text=text + (f" [SEP] {pair}" if pair else "")))
