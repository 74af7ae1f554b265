"""Explorer: every head of one layer for any sentence, with the layer's summed head beside them.

Widgets -> cached computation from mha_core -> figures from headscope.ui.figures.
"""

import zlib

import numpy as np
import streamlit as st

from headscope.files import page_file
from headscope.ui import (
    captions,
    figures,
    guards,
    link,
    masked_words,
    models,
    one_head_results,
    presets,
    replaced,
    shared_view,
    sidebar,
    style,
)
from headscope.ui.attention import attention, bars_payload, focus_payload, grid_payload
from headscope.ui.attention.payload import WINDOW
from headscope.ui.explorer_cache import focus_view, layer_view
from headscope.ui.export import attention_csv, attention_json
from headscope.ui.labels import visible
from headscope.ui.layers import default_layer
from headscope.ui.page import Page, as_fragment
from headscope.ui.presentation import PRESENT_WINDOW, presenting, tucked
from headscope.ui.tensor_downloads import tensor_downloads
from headscope.ui.words import special_names

PAGE = Page("ex", keep=("ex_words", "ex_nospecial", "ex_norms"),
            link=("layer", "head", "focus", "words", "nospecial", "norms"))


@as_fragment
def explorer():
    pending = PAGE.start()


    # --- model and text ------------------------------------------------------------------------
    TITLE = ("Explorer", "Every head of one layer for any sentence, beside the same weights read "
                         "as "
             "one head (the summed head) and the mean of the heads; where one focus token looks in "
             "every head of every layer.")
    if not presenting():  # on a projector it shares the row of controls (below)
        PAGE.heading(*TITLE, compact=True)
    name, text, pair = sidebar.current_model(), sidebar.current_text(), sidebar.current_pair()
    bert = guards.model_or_stop(name)
    cfg = bert.config
    cls_tok, sep_tok = special_names(bert.tokenizer)  # this model's own: <s>, </s> for RoBERTa
    L, H, D = cfg.num_hidden_layers, cfg.num_attention_heads, cfg.hidden_size
    facts = guards.check_text(name, text, cut=sidebar.text_was_cut(), pair=pair,
                              prompt="Type a sentence in the sidebar (or load an example) to see "
                                     "what every head looks at.")
    if facts is None:
        st.stop()

    # --- view controls (the link's values first: clamped or ignored with a message) -----------
    # Layers and heads are numbered from 1 on every page and in the link, as in the papers
    # (Clark et al. 2019's "head 8-10"); `layer` and `head` below are 0-based indices.
    ss = st.session_state
    view_from = dict(pending)
    view_from.update(presets.take_example_view())  # an example picked: the view it is about
    for param, key, hi in (("layer", "ex_layer", L), ("head", "ex_head", H)):
        if param in view_from:
            pending.pop(param, None)
            value, note = link.clamp_int(view_from[param], 1, hi, param)
            if value is not None:
                ss[key] = value
                if key == "ex_head":
                    ss.ex_head_auto = False  # a head named in a link or an example stays
            if note:
                st.warning(note, icon=style.ICON_LINK)
    for param, key in (("words", "ex_words"), ("nospecial", "ex_nospecial"), ("norms", "ex_norms")):
        if param in pending:  # before the focus token, which is a position in this view
            ss[key] = link.is_on(pending.pop(param))
    # Widget state is dropped on a run that does not draw the widget (another page, a model that
    # failed to load); "ex_shown" keeps the layer and head until the widgets are back.
    shown = ss.get("ex_shown", (None, None))
    if "ex_layer" not in ss:
        ss.ex_layer = shown[0] if shown[0] is not None else default_layer(name) + 1
    ss.ex_layer = min(ss.ex_layer, L)  # after a model change
    layer = ss.ex_layer - 1
    word_level, hide_special = ss.get("ex_words", False), ss.get("ex_nospecial", False)
    by_norm = ss.get("ex_norms", False)
    v = guards.computed_or_stop(layer_view, name, text, layer, word_level, hide_special, pair,
                                by_norm)
    # The enlarged head, until the reader picks one: the layer's head that links words to other
    # words most sharply (metrics.word_focus), so the first view is not a [CLS] sink
    if ss.get("ex_head_auto", True) or "ex_head" not in ss:
        ss.ex_head = int(np.argmax(v["word_focus"])) + 1
    ss.ex_head = min(ss.ex_head, H)


    def picked_head():
        ss.ex_head_auto = False


    if presenting():  # one row: the switches in a popover, so that no label is cut
        c1, c2, c5, c7, right = st.columns([2.6, 2, 2.2, 1.9, 3.3], vertical_alignment="bottom")
        PAGE.heading(TITLE[0], "every head of one layer", where=right)  # whole at 1280 px
        c3 = c4 = c6 = tucked("View", c7)
    else:
        # the switches get the room their labels need (a cut label reads "Who…")
        c1, c2, c5, c3, c4, c6 = st.columns([2.4, 1.6, 1.9, 2.1, 2.5, 1.9],
                                            vertical_alignment="bottom")
    if L > 1:
        layer = c1.slider("Layer", 1, L, key="ex_layer") - 1
    else:  # a slider needs two values
        layer = 0
        c1.caption("Layer 1 (this model has one layer)")
    head = c2.selectbox("Head", list(range(1, H + 1)), key="ex_head",
                        format_func=lambda h: f"head {h}", on_change=picked_head,
                        help="The head shown large. Until you choose, it is the one whose words "
                             "look "
                             "most sharply at other words (the mean, over the words, of the "
                             f"largest weight a word puts on another word, leaving out {cls_tok}, "
                             f"{sep_tok}, punctuation and itself).") - 1
    word_level = c3.toggle("Whole words", key="ex_words",
                           help="Merge subword pieces into words (Clark et al. 2019): attention "
                                "to a word is summed over its pieces, attention from it averaged.")
    hide_special = c4.toggle(f"Hide {cls_tok}/{sep_tok}", key="ex_nospecial",
                             help="Drop the special tokens and renormalise each row to sum to 1.")
    by_norm = c6.toggle("By norm", key="ex_norms",
                        help="Kobayashi et al. 2020: how much of each token's vector reaches the "
                             "token that looks, through the head: ‖α f(x)‖, the weight times the "
                             "norm of the token's transformed value vector f(x) = (x W_V + b_V) "
                             "W_O "
                             "(each row divided by its sum; the hover gives the raw norm).")
    ss.ex_shown = (layer + 1, head + 1)
    labels = v["labels"]
    if hide_special:
        st.caption(f"{cls_tok} and {sep_tok} are hidden: each row is renormalised over the "
                   f"remaining "
                   "tokens to sum to 1, and entropies are of these maps.")
    if by_norm:
        st.caption("**By norm** (Kobayashi et al. 2020): each head's cell is ‖α_ij f(x_j)‖, each "
                   "row "
                   "divided by its sum so that rows read like weights (the hover also gives the "
                   "raw "
                   "norm), and the focus grid and the enlarged head follow. The **summed head has "
                   "no "
                   "norm form**: it reads the layer's query and key weights as one head, and the "
                   "model never sends value vectors through it, so its map stays the weights.")
    # a long text: the maps show a window of tokens, so that labels stay readable
    G = len(labels)
    tokens_id = zlib.crc32(chr(0).join(labels).encode("utf-8", "surrogatepass"))
    # the focus token (the link's or an example's first), in the row of controls
    if "focus" in view_from:
        pending.pop("focus", None)
        found = link.resolve_focus(view_from["focus"], labels)
        if found is None:
            st.warning("The link's focus token is not in this sentence; it was ignored.",
                       icon=style.ICON_LINK)
        else:
            ss.ex_focus_at = (labels[found], found)
    start = link.kept_focus(ss.get("ex_focus_at", ("", -1)), labels)
    if start is None:
        start = presets.default_focus(text, labels, v["special"])
    query = c5.selectbox("Focus token", list(range(len(labels))), index=start,
                         key=f"ex_focus_{tokens_id:08x}",
                         format_func=lambda i: f"{i}: {visible(labels[i])}",
                         help="The token whose attention the focus grid follows through every "
                              "head of every layer.")
    ss.ex_focus_at = (labels[query], query)

    lo, hi = 0, G
    shown_max = PRESENT_WINDOW if presenting() else WINDOW
    if G > shown_max:
        first = min(max(query - shown_max // 2, 0), G - shown_max)  # the focus token inside
        lo, hi = st.slider("Tokens shown in the maps", 0, G, (first, first + shown_max),
                           key=f"ex_window_{G}_{shown_max}",
                           help=f"The maps show at most {shown_max} tokens at a time, so that "
                                f"every "
                                "label stays readable; the focus view uses every token.")
        hi = max(hi, lo + 1)
        st.caption(f"Tokens {lo}–{hi - 1} of {G}: each map shows these rows and columns only "
                   "(a row's weights on other tokens are outside the window).")


    # --- the heads, the single head and the mean | the focus token (the attention component:
    # hover highlights a token's row and column in every map, a click enlarges a head) ---------
    def enlarge(i: int):
        if 0 <= i < H:
            ss.ex_head, ss.ex_head_auto = i + 1, False


    def open_head(layer_: int, head_: int):
        """A click on the focus grid: show that layer and enlarge that head."""
        if 0 <= layer_ < L and 0 <= head_ < H:
            ss.ex_layer, ss.ex_head, ss.ex_head_auto = layer_ + 1, head_ + 1, False


    def mask_token(i: int):
        """A click on query label i of the grid (in the window): mask its token below."""
        if 0 <= lo + i < len(v["targets"]):
            masked_words.mask_from_click("ex_mask", v["tokens"], v["targets"][lo + i],
                                         labels[lo + i])


    window = slice(lo, hi)
    titles = [f"head {h + 1} · {v['h_heads'][h]:.2f} nats" for h in range(H)]
    titles += [f"summed head{' (weights)' if by_norm else ''} · {v['h_single']:.2f} nats",
               f"mean of heads · {v['h_mean']:.2f} nats"]
    maps = np.concatenate([v["heads"], v["single"][None], v["mean"][None]])  # (H + 2, G, G)
    raw = None
    if by_norm:  # the single head has no raw norm: NaN, and its hover gives the weight alone
        raw = np.concatenate([v["raw"], np.full_like(v["single"], np.nan)[None],
                              v["raw_mean"][None]])  # (H + 2, G, G)
        raw = raw[:, window, window]
    # on a projector the maps take the width (the heads as thumbnails, the enlarged head, the
    # single head and the mean large) and the focus grid comes below them, as large
    maps_col, focus_col = (st.container(), st.container()) if presenting() else \
        st.columns([3, 2], gap="medium")
    with maps_col:
        attention(grid_payload(maps[:, window, window], labels[window], v["special"][window],
                               titles, heads=H, selected=head, fit=True, raw=raw,
                               legend="share of ‖αf‖" if by_norm else "weight",
                               maskable=[t is not None for t in v["targets"][window]],
                               focus=query - lo if lo <= query < hi else None,
                               short_titles=[f"H{h + 1} · {v['h_heads'][h]:.2f}"
                                             for h in range(H)]),
                  key="ex_grid", on_head=enlarge, on_token=mask_token,
                  filename=f"attention_L{layer + 1}{'_norm' if by_norm else ''}",
                  tag=f"layer {layer + 1}{' by norm' if by_norm else ''}",
                  meta=dict(title=f"layer {layer + 1}{' · by norm' if by_norm else ''}",
                            model=name,
                            text=text + (f" [SEP] {pair}" if pair else "")))

    with focus_col:
        token_level = not (word_level or hide_special)  # positions are token positions
        shared_view.remember(layer, head, labels[query], query if token_level else None)
        f = guards.computed_or_stop(focus_view, name, text, query, word_level, hide_special, pair,
                                    by_norm)
        colors = figures.token_colors(labels, v["special"])
        attention(focus_payload(f["top"], f["weight"], labels, colors, labels[query], layer=layer,
                                head=head, by="by norm" if by_norm else ""),
                  key="ex_focus_grid", on_cell=open_head, filename="focus",
                  tag=f"focus {query}{' by norm' if by_norm else ''}")
        st.caption(captions.single_head(v["single_summary"], labels, layer, H, D))
        one_head_results.explorer_note(name, layer, key="ex_one_head")  # docs/one-head.md
        st.page_link(page_file("training_lab"), icon=":material/model_training:",
                     label="One head trained against many: the Training lab")

    st.caption(
        "Each map: rows are the tokens looking (queries), columns the tokens looked at (keys); "
        "darker means more attention, and entropy (nats) says how spread a row is. Hover a cell to "
        "read its weight and see that row and column in every map; click a head to enlarge it; "
        "click a token's label at the left to mask it (below: what the model predicts there and "
        "how every head's attention changes; at word level, the word's first piece). The "
        "**mean** of the heads is what most tools show: a blur of them. The focus grid gives, for "
        "every head of every layer, the token the focus token looks at most and its weight; the "
        "layer shown is framed and the enlarged head is red; click a cell to open it.")

    # --- the enlarged head, with downloads | the focus token's attention, per head --------------
    if models.maps_note(bert):  # DeBERTa's position terms, ModernBERT's local bands
        st.caption(models.maps_note(bert))
    big, bars = st.columns([2, 3], gap="medium")
    weights = v["heads"][head]  # (G, G): by norm, the row-normalised norms
    by = " · by norm" if by_norm else ""
    stem = f"attention_L{layer + 1}_H{head + 1}{'_norm' if by_norm else ''}"
    with big:  # the attention component, one map drawn large (cheaper per rerun than plotly)
        attention(grid_payload(weights[window, window][None], labels[window], v["special"][window],
                               [f"layer {layer + 1}, head {head + 1}{by} · "
                                f"{v['h_heads'][head]:.2f} nats"], heads=0, big=True,
                               raw=None if raw is None else raw[head][None],
                               legend="share of ‖αf‖" if by_norm else "weight",
                               focus=query - lo if lo <= query < hi else None),
                  key="ex_big", filename=stem,
                  tag=f"layer {layer + 1} head {head + 1}{' by norm' if by_norm else ''}",
                  meta=dict(title=f"layer {layer + 1}, head {head + 1}{by}", model=name,
                            text=text + (f" [SEP] {pair}" if pair else "")))
    meta = dict(model=name, text=text, pair=pair, layer=layer + 1, head=head + 1, numbering="from "
                                                                                            "1",
                view=dict(word_level=word_level, hide_special=hide_special, by_norm=by_norm))
    d1, d2 = big.columns(2)
    d1.download_button("Download CSV", lambda: attention_csv(labels, weights), mime="text/csv",
                       file_name=f"{stem}.csv", width="stretch")
    d2.download_button("Download JSON", lambda: attention_json(labels, weights, **meta),
                       mime="application/json", file_name=f"{stem}.json", width="stretch")
    tensor_downloads(big, name, text, pair, "ex")
    with bars:  # how the focus token's attention splits over the keys in each head of this layer
        segments = figures.focus.key_segments(f["rows"][layer], labels, v["special"])
        title = f"Layer {layer + 1}: where “{visible(labels[query])}” attends, per head"
        attention(bars_payload(segments, labels, title,
                               value="share of ‖αf‖" if by_norm else "weight"),
                  key="ex_focus_bars", filename=f"focus_bars_L{layer + 1}",
                  tag=f"bars {layer + 1} {query}{' by norm' if by_norm else ''}")

    link.write_query_params(layer=layer + 1, head=head + 1, focus=link.focus_param(labels, query),
                            words=1 if word_level else None, nospecial=1 if hide_special else None,
                            norms=1 if by_norm else None)

    masked_words.section(name, text, pair, facts, "ex_mask")
    replaced.section(name, text, pair, bert)  # ELECTRA's discriminator only


explorer()
