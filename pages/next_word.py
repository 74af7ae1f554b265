"""Next word: what a decoder expects after every token, how its top 5 at one position changes
when heads are switched off, and which heads push a word (direct logit attribution).

Heads are switched off by a head mask on one call; the shared model never changes.
"""

import numpy as np
import streamlit as st

from headscope.ui import guards, link, sidebar, style
from headscope.ui import next_word as nw
from headscope.ui.figures import next_word as fig
from headscope.ui.labels import visible
from headscope.ui.page import Page
from headscope.ui.presentation import note, plot, presenting
from mha_core.heads import HeadId, head_names, layer_names, parse_layer

PAGE = Page("nw", keep=("nw_heads", "nw_layers", "nw_word"), link=("pos", "off", "word"))
pending = PAGE.start()
WINDOW = 16  # rows of the strip at once: every one legible on a projector
STRIP_ROOM = 560  # px: the strip on a projector, under the row of controls
WORD_CHARS = 100  # a typed target word longer than this is cut


def to_decoder():
    st.session_state.model = nw.DECODER


def apply_link(T: int, L: int, H: int):
    """The link's position (1-based), heads or layers off ("L2 H3,L5") and word, each checked;
    what does not fit this model is dropped with a message."""
    ss = st.session_state
    if "pos" in pending:
        value, why = link.clamp_int(pending.pop("pos"), 1, T, "position")
        if value is not None:
            ss.nw_pos, ss._nw_pos_for = value - 1, (name, text)
        if why:
            st.warning(why, icon=style.ICON_LINK)
    if "off" in pending:
        heads, layers, dropped = [], [], 0
        for raw in filter(str.strip, pending.pop("off").split(",")[:L * H]):
            try:
                h = HeadId.parse(raw)
                heads += [str(h)] if h.layer < L and h.head < H and str(h) not in heads else []
                dropped += not (h.layer < L and h.head < H)
            except ValueError:
                try:
                    i = parse_layer(raw)
                    layers += [layer_names(L)[i]] if i < L and layer_names(L)[i] not in layers \
                        else []
                    dropped += i >= L
                except ValueError:
                    dropped += 1
        ss.nw_heads, ss.nw_layers = heads, layers
        if dropped:
            st.warning(f"{dropped} of the link's heads or layers are not in this model; they "
                       "were ignored.", icon=style.ICON_LINK)
    if "word" in pending:
        ss.nw_word = pending.pop("word")[:WORD_CHARS]


PAGE.heading("Next word", "What a decoder expects after every token, what changes when heads "
             "are switched off, and which heads push a word up.")
name, text = sidebar.current_model(), sidebar.current_text()
bert = guards.model_or_stop(name)
if not bert.is_decoder:  # the page's main content (nw_main) says why there is none
    st.container(key="nw_main").info(
        f"{name} is an encoder: it reads the whole text at once and has no next-word head, so "
        "it predicts no next word (its masked words are on the Explorer: click a token there). "
        f"Choose a decoder such as {nw.DECODER} in the Model list.", icon=style.ICON_INFO)
    st.button(f"Switch to {nw.DECODER}", key="nw_to_decoder", on_click=to_decoder,
              icon=":material/swap_horiz:")
    st.stop()
if guards.check_text(name, text, cut=sidebar.text_was_cut(),
                     prompt="Type a sentence in the sidebar to see what the model expects "
                            "after each token.") is None:
    st.stop()
view = guards.computed_or_stop(nw.predictions, name, text)
tokens = view["tokens"]
T, L, H = len(tokens), bert.config.num_hidden_layers, bert.config.num_attention_heads
if view["truncated"]:
    st.warning(f"This text has {view['n_full']:,} tokens; this page reads the first "
               f"{nw.MAX_TOKENS}.", icon=style.ICON_CUT)
ss = st.session_state
apply_link(T, L, H)
if ss.get("_nw_pos_for") != (name, text) or ss.get("nw_pos") not in range(T):
    ss.nw_pos, ss._nw_pos_for = T - 1, (name, text)  # a new text: its last token

pos = st.selectbox("Position: what comes after token", range(T), key="nw_pos",
                   format_func=lambda i: f"{i + 1} · “{visible(tokens[i])}”")
start = max(0, min(pos - WINDOW // 2, T - WINDOW))
shown = slice(start, start + WINDOW)
follows = (tokens[1:] + [None], np.append(view["next_p"], np.nan),  # nothing follows the
           np.append(view["next_rank"], 0))                            # last token
plot(st.container(key="nw_main"),
     fig.next_word_strip(tokens[shown], view["top_words"][shown], view["top_p"][shown],
                         *(f[shown] for f in follows), selected=pos - start),
     room=STRIP_ROOM, key="nw_strip", config={"displayModeBar": False})
rank = view["next_rank"]
note(f"Each row: the {nw.TOP_K} tokens the model expects after that token, then the token that "
     f"really comes next (framed in red where it is in the top {nw.TOP_K}). On this text the "
     f"model's first choice is the real next token at {int((rank == 1).sum())} of {T - 1} "
     f"positions, and in its top {nw.TOP_K} at {int((rank <= nw.TOP_K).sum())}."
     + (f" Rows {start + 1}–{min(start + WINDOW, T)} of {T}: pick a position to move them."
        if T > WINDOW else ""),
     f"First choice right at {int((rank == 1).sum())} of {T - 1} positions.")

st.subheader("Switch heads off")
left, right = st.columns(2)
heads = left.multiselect("Heads to switch off", head_names(L, H), key="nw_heads",
                         placeholder="Choose heads, e.g. L1 H3")
layers = right.multiselect("Whole layers to switch off", layer_names(L), key="nw_layers")
off = {HeadId.parse(h) for h in heads} | {HeadId(parse_layer(x), h) for x in layers
                                           for h in range(H)}
off = tuple(sorted((h.layer, h.head) for h in off))
after_plain = f"after “{visible(tokens[pos])}” (token {pos + 1})"  # a figure's (escaped there)
after = f"after “{guards.md_text(visible(tokens[pos]))}” (token {pos + 1})"  # markdown's
if not off:
    st.caption(f"Choose heads or layers to compare the top {nw.TOP_K} {after} with and without "
               "them. Switching a head off sets its attention weights to zero for one run; the "
               "model itself is never changed.")
else:
    ch = guards.computed_or_stop(nw.switched, name, text, pos, off)
    plot(st, fig.top_k_change_figure(ch["words"], ch["before"], ch["after"], len(off),
                                     title=f"The top {nw.TOP_K} {after_plain}: every head on, and "
                                           f"{len(off)} off"),
         room=STRIP_ROOM, key="nw_change", config={"displayModeBar": False})
    best_b, best_a = ch["before"].argmax(), ch["after"].argmax()
    st.caption(f"With {len(off)} of {L * H} heads off the first choice is "
               f"“{guards.md_text(visible(ch['words'][best_a]))}” ({ch['after'][best_a]:.3f}); "
               f"with every head on it is “{guards.md_text(visible(ch['words'][best_b]))}” "
               f"({ch['before'][best_b]:.3f}).")

st.subheader("Which heads push this word?")
top = view["top_words"][pos][0]
word = st.text_input("Word", key="nw_word", max_chars=WORD_CHARS,
                     placeholder=f"{visible(top)} (the model's first choice)",
                     help="Any word the model reads as one token; empty: its first choice.")
word = word.strip() or None
link.write_query_params(pos=pos + 1 if pos != T - 1 else None,
                        off=",".join([*layers, *heads]) or None, word=word)
attr = guards.computed_or_stop(nw.attribution, name, text, pos, word)
if "pieces" in attr:
    pieces = ", ".join(f"“{guards.md_text(visible(p))}”" for p in attr["pieces"][:8])
    pieces += ", …" if len(attr["pieces"]) > 8 else ""
    st.warning(f"“{guards.md_text(visible(word))}” is not one token for this model: it reads it "
               f"as {len(attr['pieces'])} pieces ({pieces}), and a logit belongs to one token. "
               "Type a word it reads as one token, or leave the box empty for its first choice.",
               icon=style.ICON_TYPE)
    st.stop()
shown_word = guards.md_text(visible(attr["word"]))
note(f"Direct logit attribution: the last residual stream is the sum of what the embeddings, "
     f"every head and every MLP wrote into it, so the logit of “{shown_word}” {after} splits "
     "into one term per part (the final norm's scale held at this run's value, as "
     "TransformerLens does). Red pushes the word up, blue down; every head is on.")
plot(st, fig.logit_heads_figure(attr["heads"], visible(attr["word"]), compact=presenting()),
     room=STRIP_ROOM,
     key="nw_heads_logit", config={"displayModeBar": False})
plot(st, fig.logit_parts_figure(attr["embeddings"], attr["mlps"], attr["out_biases"],
                                attr["norm_bias"], attr["heads"].sum()),
     key="nw_parts", config={"displayModeBar": False})
st.markdown(f"**The parts sum to {attr['sum_of_parts']:.3f}; the model's logit of "
            f"“{shown_word}” is {attr['logit']:.3f}** (probability {attr['probability']:.3f}).")
st.download_button("Download the attribution (JSON)", nw.attribution_json(attr, text),
                   file_name="logit_attribution.json", mime="application/json",
                   key="nw_download", icon=":material/download:")
