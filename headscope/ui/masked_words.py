"""Masked words on a page (exBERT's question): the predictions at every [MASK] typed in the
text, and a word chosen to mask, with its predictions and how every head's attention moved.

The computations are headscope.ui.models.fill_mask, masked_word and change_maps (cached); a page
calls section() once. Widget keys start with the page's prefix. A word is chosen in the section's
select box or by a click on a token in the page's attention component: the page maps the
clicked label to a token (click_targets) and calls mask_from_click, which sets the box.
"""

import functools
import zlib

import numpy as np
import streamlit as st

from mha_core.heads import HeadId, head_names
from mha_core.masking import MAX_MASKS, first_maskable, maskable
from mha_core.shown import shown_groups

from . import figures, guards, models, style
from .attention import attention, grid_payload
from .attention.payload import WINDOW  # the difference grid: this many tokens around the mask
from .labels import visible
from .presentation import plot

NO_HEAD = ("Masked-word predictions need a checkpoint with a masked-LM head ({keys}); {name} "
           "has none. The server can offer one through `HEADSCOPE_MODELS`. Masking a word "
           "still shows how every head's attention moves.")


def head_keys(family) -> str:
    """The family's own masked-LM head keys, as its module declares them (HEADS["mlm"]), e.g.
    "the `lm_head.*` weights, as a RoBERTa *ForMaskedLM checkpoint saves them"."""
    prefixes = family.heads.get("mlm", ((),))[0]
    if not prefixes:
        return f"which {family.name} checkpoints do not have"
    keys = ", ".join(f"`{p}*`" for p in prefixes)
    return f"the {keys} weights, as a {family.name} *ForMaskedLM checkpoint saves them"


def no_head_notice(bert, name: str) -> str:
    """The notice for a model without a masked-LM head, naming its family's head keys."""
    return NO_HEAD.format(keys=head_keys(bert.family), name=guards.md_text(name))


SEGMENT = {0: "A", 1: "B"}


def token_name(res, t: int) -> str:
    """A token as a choice: its position, its sentence in a pair, its text made visible."""
    seg = res.encoded.sequence_ids[t]
    where = f"{SEGMENT[seg]} · " if res.text_pair is not None and seg is not None else ""
    return f"{where}{t}: {visible(res.labels[t])}"


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


def choice_key(tokens, key: str) -> str:
    """The select box's key: it carries the token list, so a new sentence starts with no word
    masked."""
    crc = zlib.crc32("\x1f".join(tokens).encode("utf-8", "surrogatepass"))
    return f"{key}_{crc:08x}"


def click_targets(res, word_level: bool, hide_special: bool, bert=None) -> list:
    """For each label a page shows with these options (mha_core.shown.shown_groups), the token
    position a click on it masks (a word's first piece), or None ([CLS], [SEP], a typed
    [MASK]; every token of a model with no [MASK] token, such as a decoder: can_mask)."""
    groups = shown_groups(res, word_level, hide_special)
    if bert is not None and not can_mask(bert):
        return [None] * len(groups)
    return [first_maskable(res.encoded, g) for g in groups]


def can_mask(bert) -> bool:
    """Whether a word can be masked at all: the tokenizer has a [MASK] token (a decoder's has
    none: it was trained to predict the next word, never to fill a gap)."""
    return bert.tokenizer.mask_token_id is not None


def no_mask_notice(bert) -> str:
    """Why a model without a [MASK] token (a decoder) has no masked words, in one sentence."""
    return (f"{bert.family.name} is a decoder: it has no [MASK] token (it was trained to "
            "predict the next word from the words before it, not to fill a gap), so no word "
            "can be masked here; its next-word predictions answer the same question.")


def mask_from_click(key: str, tokens, position, label: str):
    """A click on a token in a page's component (a Streamlit callback, before the rerun):
    position (from click_targets) becomes the section's choice; None is said once instead."""
    ss = st.session_state
    if position is None:
        ss[f"{key}_note"] = (f"“{visible(label)}” cannot be masked: [CLS], [SEP] and a typed "
                             "[MASK] stay as they are.")
        return
    ss[choice_key(tokens, key)] = int(position)
    ss[f"{key}_note"], ss[f"{key}_clicked"] = None, int(position)


def mask_choice(res, key: str, label: str = "Word to mask"):
    """A select box of the tokens a reader may mask (None: no word)."""
    options = [None] + maskable(res.encoded)
    return st.selectbox(label, options, key=choice_key(res.labels, key),
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
    bert = models.bert_or_raise(name)
    if not can_mask(bert):
        st.info(no_mask_notice(bert), icon=style.ICON_INFO)
        return
    res = guards.computed_or_none(models.attend, name, text, pair)
    if res is None:
        return
    if not facts["has_mlm"]:
        st.caption(no_head_notice(models.bert_or_raise(name), name))
    typed_masks(name, text, pair, facts, res, key)
    note = st.session_state.pop(f"{key}_note", None)
    if note:
        st.info(note, icon=style.ICON_INFO)
    position = mask_choice(res, key)
    clicked = st.session_state.pop(f"{key}_clicked", None)
    if position is None:
        st.caption("Choose a word to mask, or click a token in the maps above: the page shows "
                   "what the model predicts in its place and how far every head's attention "
                   "moves when it is hidden.")
        return
    if clicked == position:
        st.toast(f"Masked “{visible(res.labels[position])}”: see “Mask a word” below.",
                 icon=":material/visibility_off:")
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
        else:  # the section's first line already said why (the notice once per page)
            st.caption("No predictions here: this model has no masked-LM head.")
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
    difference_grid(name, text, pair, res, m, position, shown, chosen, key)
    st.selectbox("Compare one head before and after masking", names, key=chosen)
    layer, head = shown.layer, shown.head
    original = res.attentions[layer, head].numpy()  # (T, T)
    masked_tokens = [t if i != position else "[MASK]" for i, t in enumerate(res.labels)]
    plot(st, figures.side_by_side_figure(
        original, res.labels, m["attentions"][layer, head], masked_tokens,
        f"{st.session_state[chosen]}, original", f"{st.session_state[chosen]}, masked",
        focus_a=position, focus_b=position), key=f"{key}_maps", config={"displayModeBar": False})
    st.caption("Per head: the mean over rows of the total variation between the original and "
               "the masked map, ½ Σ |a − b| (0 = unchanged, 1 = no overlap). The maps frame the "
               "masked token's row.")


def _picked(chosen: str, layer: int, head: int):
    """A click on a head of the difference grid compares that head (the select box follows)."""
    st.session_state[chosen] = str(HeadId(layer, head))


def difference_grid(name, text, pair, res, m, position: int, shown: HeadId, chosen: str,
                    key: str):
    """Every head of the chosen head's layer: masked minus original attention (models.
    change_maps), in the attention component on one fixed -1..1 diverging scale (blue: less
    attention once the word is masked, red: more); a click on a head compares it below. A long
    text shows WINDOW tokens around the masked one."""
    layer, H = shown.layer, m["change"].shape[1]
    diff = models.change_maps(name, text, pair, position, layer)  # (H, T, T), in [-1, 1]
    T = diff.shape[-1]
    lo = min(max(position - WINDOW // 2, 0), max(T - WINDOW, 0))
    w = slice(lo, min(T, lo + WINDOW))
    titles = [f"head {h + 1} · moved {m['change'][layer, h]:.2f}" for h in range(H)]
    st.markdown(f"**Layer {layer + 1}: how every head's attention changed** (masked − "
                f"original; blue: less attention once “{guards.md_text(visible(m['token']))}” "
                "is masked, red: more)")
    attention(grid_payload(diff[:, w, w], res.labels[w], res.special[w], titles, heads=H,
                           selected=shown.head, legend="masked − original",
                           value_range=(-1.0, 1.0), colorscale=style.DIVERGING),
              key=f"{key}_diff", on_head=functools.partial(_picked, chosen, layer),
              filename=f"masked_change_L{layer + 1}", tag=f"L{layer + 1} masked {position}")
    if T > WINDOW:
        st.caption(f"Tokens {w.start}–{w.stop - 1} of {T}, around the masked one.")
