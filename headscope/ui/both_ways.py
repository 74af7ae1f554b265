"""The lesson "BERT reads both ways, GPT looks back": the bundled encoder and the bundled decoder
on one sentence, each model's mean over heads at the same depth, side by side. The start card
shows it on request and the Attention sinks page has it as a section; nothing here runs until a
visitor asks, so a worker that never shows the lesson never loads the decoder.

Shape letters: L layers, H heads, T tokens.
"""

import streamlit as st

from . import models, style
from .figures.sinks import both_ways_figure
from .guards import md_text
from .presentation import plot
from .presets import DEFAULT_TEXT

ENCODER, DECODER = models.BUNDLED, models.BUNDLED_DECODER
DEPTHS = ("first layer", "middle layer", "last layer", "mean of all layers")
MAX_TOKENS = 20  # every token labelled, legible on a projector
ROOM = 460  # px: the pair of maps on a projector, under the page's row of controls


@st.cache_data(**models.bounded(), show_spinner=False)
def mean_maps(name: str, text: str) -> dict:
    """The model's mean over heads of every layer, (L, T, T), on the text's first MAX_TOKENS
    tokens, with its tokens and shape."""
    bert = models.bert_or_raise(name)
    res = bert.attend(text, max_length=MAX_TOKENS)
    c = bert.config
    return dict(tokens=list(res.labels), maps=res.attentions.mean(1).numpy(),
                special=list(res.special), L=c.num_hidden_layers, H=c.num_attention_heads,
                cut=res.truncated)


def sink_share(m, positions) -> float:
    """The mean share of each row after the first (T, T) on the tokens at `positions`."""
    return float(m[1:, positions].sum(-1).mean()) if len(m) > 1 and positions else 0.0


def at_depth(view: dict, depth: str):
    """(map (T, T), what it is in words) of one model's mean maps at a depth of DEPTHS."""
    L, maps = view["L"], view["maps"]
    if depth == DEPTHS[3]:
        return maps.mean(0), f"mean of all {L} layers × {view['H']} heads"
    layer = {DEPTHS[0]: 0, DEPTHS[1]: L // 2, DEPTHS[2]: L - 1}[depth]
    return maps[layer], f"L{layer + 1} of {L}, mean of {view['H']} heads"


def short(name: str) -> str:
    """A bundled model's name without " (bundled)"."""
    return name.removesuffix(" (bundled)")


def load_decoder() -> bool:
    """The decoder loaded (a spinner the first time), or its load error and False."""
    with st.spinner("Loading the bundled decoder (the first time takes up to a minute)…"):
        _, err = models.get_bert(DECODER)
    if err:
        st.error(err, icon=style.ICON_ERROR)
        return False
    return True


def show(text: str, depth: str = DEPTHS[0], key: str = "both_ways"):
    """Draw the lesson for `text` (the default sentence when blank): the two maps under a line
    saying what they show. `key` is the chart's widget key (its page's prefix)."""
    if not load_decoder():
        return
    text = text if text.strip() else DEFAULT_TEXT
    try:
        enc, dec = mean_maps(ENCODER, text), mean_maps(DECODER, text)
    except Exception as e:  # a tokenizer failure on odd input: a message, never a traceback
        st.error(f"The models could not read this text ({type(e).__name__}).",
                 icon=style.ICON_ERROR)
        return
    (a, what_a), (b, what_b) = at_depth(enc, depth), at_depth(dec, depth)
    plot(st, both_ways_figure(a, enc["tokens"], b, dec["tokens"], f"Encoder (BERT): {what_a}",
                              f"Decoder (GPT-style): {what_b}"),
         room=ROOM, square=False, key=key, config={"displayModeBar": False})
    special = [i for i, s in enumerate(enc["special"]) if s]
    on_enc, on_dec = sink_share(a, special), sink_share(b, [0])
    st.caption(f"Left, {short(ENCODER)}: every token attends to every token, before and after "
               f"it. Right, {short(DECODER)}: each token attends only to itself and the tokens "
               "before it (grey: later tokens, which it cannot see), so it can learn to predict "
               "the next one. Both rest attention on a token that carries little meaning (a "
               f"sink): here the left puts {on_enc:.0%} of each row on [CLS] and [SEP], the "
               f"right {on_dec:.0%} on its first token, “{md_text(dec['tokens'][0])}”.")
    if enc["cut"] or dec["cut"]:
        st.caption(f"The maps show the first {MAX_TOKENS} tokens.")
