"""Masked words on a page (exBERT's question): the predictions at every [MASK] typed in the
text, and a word chosen to mask, with its predictions and how every head's attention moved.

The computations are ui.models.fill_mask, masked_word and change_maps (cached); a page calls
section() once. Widget keys start with the page's prefix.
"""

import functools
import zlib

import numpy as np
import streamlit as st

from mha_core.heads import HeadId, head_names
from mha_core.masking import MAX_MASKS, maskable

from . import figures, guards, models, style
from .labels import visible
from .presentation import plot

NO_HEAD = ("Masked-word predictions need a checkpoint with a masked-LM head (the "
           "`cls.predictions.*` weights, as in bert-base-uncased); {name} has none. The server "
           "can offer one through `HEADSCOPE_MODELS`. Masking a word still shows how every "
           "head's attention moves.")
SEGMENT = {0: "A", 1: "B"}


def token_name(res, t: int) -> str:
    """A token as a choice: its position, its sentence in a pair, its text made visible."""
    seg = res.encoded.sequence_ids[t]
    where = f"{SEGMENT[seg]} · " if res.text_pair is not None and seg is not None else ""
    return f"{where}{t}: {visible(res.tokens[t])}"


def mask_notes(facts: dict, shown: int):
    """Clear messages for the [MASK]s typed in the text: cut ones, both sentences, many."""
    n, full = facts["masks"], facts["masks_full"]
    if full > n:
        st.warning(f"{full - n} of the {full} [MASK]s typed are past this model's limit of "
                   f"{facts['max_length']} tokens and were cut with the text: there is no "
                   "prediction for them.", icon=style.ICON_CUT)
    if facts["mask_segments"] == [0, 1]:
        st.info("[MASK] is typed in both sentences. The model fills every [MASK] in one pass, "
                "each with the others still hidden; the lists below are in order, sentence A's "
                "first.", icon=style.ICON_INFO)
    if n > shown:
        st.warning(f"{n} [MASK]s typed: predictions are listed for the first {shown}. BERT "
                   "fills every [MASK] at once, each on its own with all the others still "
                   "hidden (it was trained with about 15% of the tokens masked), so with many "
                   "masks its guesses say little.", icon=style.ICON_INFO)


def typed_masks(name: str, text: str, pair: str | None, facts: dict, res, key: str):
    """Predictions at the [MASK]s typed in the text (with a masked-LM head)."""
    mask_notes(facts, MAX_MASKS)
    if not facts["masks"] or not facts["has_mlm"]:
        return
    filled = guards.computed_or_none(models.fill_mask, name, text, pair)
    if filled is None:
        return
    items = list(zip(filled["positions"], filled["predictions"]))[:MAX_MASKS]
    for col, (i, (t, preds)) in zip(st.columns(3) * 2, enumerate(items)):
        plot(col, figures.prediction_bars(preds, f"[MASK] {i + 1}: {token_name(res, t)}"),
             key=f"{key}_typed_{i}", config={"displayModeBar": False})


def mask_choice(res, key: str, label: str = "Word to mask"):
    """A select box of the tokens a reader may mask (None: no word). Its key carries the token
    list, so a new sentence starts with no word masked."""
    options = [None] + maskable(res.encoded)
    crc = zlib.crc32("\x1f".join(res.tokens).encode("utf-8", "surrogatepass"))
    return st.selectbox(label, options, key=f"{key}_{crc:08x}",
                        format_func=lambda t: "(none)" if t is None else token_name(res, t),
                        help="The word's token becomes [MASK] (a word of several pieces: one "
                             "piece at a time); everything else stays as it is.")


def _clicked(grid_key: str, head_key: str):
    """A click on the change grid selects that head (the select box below follows)."""
    points = st.session_state[grid_key].selection.points
    if points and "x" in points[0] and "y" in points[0]:  # x = head, y = layer (0-based)
        st.session_state[head_key] = str(HeadId(int(points[0]["y"]), int(points[0]["x"])))


def section(name: str, text: str, pair: str | None, facts: dict, key: str):
    """The whole masked-word section of a page; key is the widget-key prefix (e.g. "ex_mask")."""
    st.subheader("Mask a word")
    res = guards.computed_or_none(models.attend, name, text, pair)
    if res is None:
        return
    if not facts["has_mlm"]:
        st.caption(NO_HEAD.format(name=guards.md_text(name)))
    typed_masks(name, text, pair, facts, res, key)
    position = mask_choice(res, key)
    if position is None:
        st.caption("Choose a word to mask: the page shows what the model predicts in its place "
                   "and how far every head's attention moves when it is hidden.")
        return
    m = guards.computed_or_none(models.masked_word, name, text, pair, position)
    if m is None:
        return
    L, H = m["change"].shape
    left, right = st.columns([2, 3], gap="medium")
    with left:
        if m["predictions"]:
            plot(st, figures.prediction_bars(m["predictions"], f"In place of “{m['token']}”",
                                             highlight=m["token"]),
                 key=f"{key}_predictions", config={"displayModeBar": False})
            st.caption(f"The masked word itself gets probability {m['p_original']:.4f} "
                       f"(rank {m['rank_original']:,} in the vocabulary).")
        else:
            st.info(NO_HEAD.format(name=guards.md_text(name)), icon=style.ICON_INFO)
    with right:
        names = head_names(L, H)
        chosen = f"{key}_head"
        if st.session_state.get(chosen) not in names:
            st.session_state[chosen] = names[int(np.argmax(m["change"]))]
        shown = HeadId.parse(st.session_state[chosen])
        plot(st, figures.mask_change_figure(m["change"], selected=(shown.layer, shown.head)),
             key=f"{key}_change", config={"displayModeBar": False},
             on_select=functools.partial(_clicked, f"{key}_change", chosen),
             selection_mode="points")
    st.selectbox("Compare one head before and after masking", names, key=chosen)
    layer, head = shown.layer, shown.head
    original = res.attentions[layer, head].numpy()  # (T, T)
    masked_tokens = [t if i != position else "[MASK]" for i, t in enumerate(res.tokens)]
    plot(st, figures.side_by_side_figure(
        original, res.tokens, m["attentions"][layer, head], masked_tokens,
        f"{st.session_state[chosen]}, original", f"{st.session_state[chosen]}, masked",
        focus_a=position, focus_b=position), key=f"{key}_maps", config={"displayModeBar": False})
    st.caption("Per head: the mean over rows of the total variation between the original and "
               "the masked map, ½ Σ |a − b| (0 = unchanged, 1 = no overlap). The maps frame the "
               "masked token's row.")
