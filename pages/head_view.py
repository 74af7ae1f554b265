"""Head view: bertviz's head view and model view, drawn in the browser by the attention
component (headscope/ui/attention): lines between two columns of tokens, one colour per head, and
every layer x head as a small line view.

Widgets -> cached line entries (headscope.ui.attention.lines_payload) -> the component. Layer, heads
and the pinned token are chosen in the browser and come back as the component's state, so the link
follows them. Clicking a token pins its lines in the browser alone (no rerun); the component's
Mask button masks the pinned token (trigger "token"): the masked-word section below shows the
predictions there and how every head's attention changed.
"""

import streamlit as st

from headscope.ui import guards, link, masked_words, models, sidebar, style
from headscope.ui.attention import attention, lines_payload
from headscope.ui.layers import default_layer
from headscope.ui.page import Page
from headscope.ui.presentation import presenting
from headscope.ui.tensor_downloads import tensor_downloads
from headscope.ui.words import special_names
from mha_core.shown import explorer_view, segments_view

PAGE = Page("hv", keep=("hv_words", "hv_nospecial"),
            link=("layer", "heads", "focus", "words", "nospecial"))
pending = PAGE.start()


@st.cache_data(**models.bounded(), show_spinner="Drawing every head's lines…")
def lines_view(name: str, text: str, word_level: bool, hide_special: bool,
               pair: str | None = None) -> tuple:
    """(payload, targets): every layer's heads as line entries (the strongest first), as the
    component takes them, with a sentence pair's segments for the filter (A→A, A→B, B→A, B→B);
    and for each shown token the position a click masks (masked_words.click_targets)."""
    res = models.attend(name, text, pair)
    att, labels, special = explorer_view(res.attentions, res, word_level, hide_special)
    segments = segments_view(res, word_level, hide_special)
    bert = models.bert_or_raise(name)
    targets = masked_words.click_targets(res, word_level, hide_special, bert)
    maskable = [t is not None for t in targets] if masked_words.can_mask(bert) else None
    return lines_payload(att.numpy(), labels, special, segments=segments,
                         maskable=maskable), targets  # None: no Mask button (a decoder)


def parse_heads(raw: str, n_heads: int):
    """A link's heads: "1,3,5" (numbered from 1), "all" or "none" -> (0-based list, note)."""
    raw = str(raw).strip().lower()
    if raw in ("", "all"):
        return list(range(n_heads)), None
    if raw == "none":
        return [], None
    picked = set()
    for part in raw.split(",")[:64]:
        value, note = link.clamp_int(part, 1, n_heads, "head")
        if value is None or note:
            return list(range(n_heads)), (f"The link's heads are not a list of heads 1–{n_heads} "
                                          "(like heads=1,3,5); showing every head.")
        picked.add(value - 1)
    return sorted(picked), None


# --- model and text ------------------------------------------------------------------------
# on a projector the heading and the two switches share one row above the lines
top = st.columns([4, 1.2, 1.6], vertical_alignment="center") if presenting() else [st] * 3
PAGE.heading("Head view", "bertviz's head view and model view: lines from each token to the "
             "tokens it attends to, one colour per head, and every layer × head at a glance.",
             where=top[0])
name, text, pair = sidebar.current_model(), sidebar.current_text(), sidebar.current_pair()
bert = guards.model_or_stop(name)
L, H = bert.config.num_hidden_layers, bert.config.num_attention_heads
facts = guards.check_text(name, text, cut=sidebar.text_was_cut(), pair=pair,
                          prompt="Type a sentence in the sidebar (or load an example) to see "
                                 "its head view.")
if facts is None:
    st.stop()

ss = st.session_state
view = dict(ss.get("hv_view") or dict(mode="head", layer=default_layer(name),  # as the Explorer
                                       heads=list(range(H)), focus=None, seq=0))
for param, key in (("words", "hv_words"), ("nospecial", "hv_nospecial")):
    if param in pending:
        ss[key] = link.is_on(pending.pop(param))
if "layer" in pending:
    value, note = link.clamp_int(pending.pop("layer"), 1, L, "layer")
    if value is not None:
        view["layer"] = value - 1
    if note:
        st.warning(note, icon=style.ICON_LINK)
if "heads" in pending:
    view["heads"], note = parse_heads(pending.pop("heads"), H)
    if note:
        st.warning(note, icon=style.ICON_LINK)
view["layer"] = min(max(int(view.get("layer", 0)), 0), L - 1)  # after a model change
view["heads"] = [h for h in view.get("heads", []) if 0 <= h < H]

c1, c2 = top[1:] if presenting() else st.columns(2)
word_level = c1.toggle("Whole words", key="hv_words",
                       help="Merge subword pieces into words (Clark et al. 2019), as in the "
                            "Explorer.")
cls_tok, sep_tok = special_names(bert.tokenizer)  # this model's own: <s>, </s> for RoBERTa
no_special = bert.is_decoder  # a decoder adds no special tokens (res.special is all False)
hide_help = (f"{bert.family.name} adds no special tokens: nothing to hide." if no_special
             else "Drop the special tokens and renormalise each row to sum to 1.")
hide_special = c2.toggle(f"Hide {cls_tok}/{sep_tok}", key="hv_nospecial", disabled=no_special,
                         help=hide_help) and not no_special
p, targets = guards.computed_or_stop(lines_view, name, text, word_level, hide_special, pair)
labels = p["tokens"]
if "focus" in pending:
    found = link.resolve_focus(pending.pop("focus"), labels)
    if found is None:
        st.warning("The link's focus token is not in this sentence; it was ignored.",
                   icon=style.ICON_LINK)
    else:
        view["focus"] = dict(side="q", i=found)
focus = view.get("focus")
if not (isinstance(focus, dict) and focus.get("side") in ("q", "k")
        and isinstance(focus.get("i"), int) and 0 <= focus["i"] < len(labels)):
    view["focus"] = None
ss.hv_view = view


def changed(new: dict):
    ss.hv_view = new


def mask_token(i: int):
    """The Mask button on pinned token i: mask its token below."""
    masked_words.mask_from_click("hv_mask", bert.encode(text, pair).tokens, targets[i],
                                 labels[i])


attention(dict(p, state=view), key="hv_lines", on_view=changed, on_token=mask_token,
          filename=f"attention_L{view['layer'] + 1}",
          meta=dict(model=name, text=text + (f" [SEP] {pair}" if pair else "")))
tensor_downloads(st, name, text, pair, "hv")
st.caption(
    "**Head view**: each line joins a token on the left (the query, looking) to a token on the "
    "right (the key, looked at), one colour per head, more opaque for more attention. Hover a "
    "token to keep only its lines, click it to pin them; click a head's swatch to switch it on "
    "or off; lines under the threshold are not drawn. **Model view**: every layer × head as a "
    "small line view; click one to open it in the head view. PNG saves what is shown at 2× with "
    "the sentence, model and a head-colour legend, SVG the same as a drawing; the buttons under "
    "the view save every head of every layer (.npz, JSON, CSV). " + (
        "**Mask** replaces the pinned token by [MASK]: below, what the model predicts in its "
        "place and how every head's attention changes (at word level, the word's first piece)."
        if masked_words.can_mask(bert) else
        f"{bert.family.name} is a decoder: each token sees only itself and the tokens before "
        "it, so every line runs up to an earlier token (or straight across to itself), never "
        "down to a later one."))

focus = view["focus"]
link.write_query_params(
    layer=view["layer"] + 1,
    heads=None if len(view["heads"]) == H else
    (",".join(str(h + 1) for h in view["heads"]) or "none"),
    focus=link.focus_param(labels, focus["i"]) if focus and focus["side"] == "q" else None,
    words=1 if word_level else None, nospecial=1 if hide_special else None)

masked_words.section(name, text, pair, facts, "hv_mask")
