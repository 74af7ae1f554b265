"""Two readings: one focus token in two sentences; which heads look somewhere else?"""

import numpy as np
import pandas as pd
import streamlit as st

from headscope.ui import figures as fg
from headscope.ui import guards, link, models, sidebar, style
from headscope.ui.guards import md_text
from headscope.ui.layers import default_layer
from headscope.ui.models import shape
from headscope.ui.page import Page
from headscope.ui.presentation import plot, presenting, tucked
from mha_core import shown
from mha_core.heads import HeadId, head_names

PAGE = Page("tr", keep=("tr_pair", "tr_a", "tr_b", "tr_focus", "tr_head", "tr_shared"),
            link=("a", "b", "focus", "head", "shared"))
pending = PAGE.start()

PAIRS = {
    "Telescope or hat": ("I saw the man with a telescope.", "I saw the man with a hat.", "with"),
    "Who has the telescope?": ("The astronomer saw the man with a telescope.",
                               "The man saw the astronomer with a telescope.", "with"),
    "Knife or hat": ("I cut the bread with a knife.", "I saw the man with a hat.", "with"),
}
OWN = "Your own"
GRID_ROOM = 410  # px: the grid of heads on a projector, under the two sentences


@st.cache_data(**models.bounded(), show_spinner="Reading both sentences…")
def readings(name: str, a: str, b: str) -> dict:
    """Word-level maps of both sentences: (L, H, G, G) each, with their word labels."""
    out = {}
    for side, text in (("a", a), ("b", b)):
        res = models.attend(name, text)
        maps, labels, special = shown.explorer_view(res.attentions, res, word_level=True)
        out[side] = dict(labels=labels, special=special, maps=maps.numpy())  # (L, H, G, G)
    return out


def use_pair():
    a, b, focus = PAIRS[st.session_state["tr_pair"]]
    st.session_state.update(tr_a=a, tr_b=b, tr_focus=focus)


def on_click():
    """A click on the grid selects that head (it then shows in the select box too)."""
    points = st.session_state["tr_grid"].selection.points
    if points and "x" in points[0] and "y" in points[0]:  # x = head, y = layer (0-based)
        st.session_state["tr_head"] = str(HeadId(int(points[0]["y"]), int(points[0]["x"])))


PAGE.heading("Two readings",
             "The same word in two sentences. For every head: does the focus token look at the "
             "same words in both?")
name = sidebar.current_model()
bert = guards.model_or_stop(name)
L, H = bert.config.num_hidden_layers, bert.config.num_attention_heads
ss = st.session_state
if "tr_a" not in ss:
    ss["tr_pair"] = next(iter(PAIRS))
    use_pair()
# the link's sentences, focus token, head and choice (texts are cut like the boxes)
for param, key, most in (("a", "tr_a", 2000), ("b", "tr_b", 2000), ("focus", "tr_focus", 60)):
    if param in pending:
        ss[key] = pending.pop(param)[:most]
        match = [k for k, v in PAIRS.items() if v == (ss.tr_a, ss.tr_b, ss.tr_focus)]
        ss["tr_pair"] = match[0] if match else OWN
if "shared" in pending:
    ss["tr_shared"] = link.is_on(pending.pop("shared"))
linked_head = None
if "head" in pending:
    raw = pending.pop("head")
    try:
        ss["tr_head"] = linked_head = str(HeadId.parse(raw))
    except ValueError:
        st.warning("The link's head is not a head name such as L2 H10; it was ignored.",
                   icon=style.ICON_LINK)
ss.setdefault("tr_shared", True)
# on a projector the two sentences are one caption above the grid, their boxes in a popover
said, edit = (st.columns([5, 1.3], vertical_alignment="center") if presenting() else
              (None, None))
box = tucked("Sentences", edit, icon=":material/edit:") if presenting() else st
box.selectbox("Preset", list(PAIRS) + [OWN], key="tr_pair",
              on_change=lambda: None if st.session_state["tr_pair"] == OWN else use_pair())
col_a, col_b, col_f = (box, box, box) if presenting() else st.columns([5, 5, 2])
a = col_a.text_input("Sentence A", key="tr_a", max_chars=2000)
b = col_b.text_input("Sentence B", key="tr_b", max_chars=2000)
focus = col_f.text_input("Focus token", key="tr_focus", max_chars=60,
                         help="A word both sentences contain, e.g. “with”; a word split "
                              "into ## pieces is followed as one word.")
shared_only = box.toggle("Leave out words found in one sentence only", key="tr_shared",
                         help="On: compare where the focus token looks among the words both "
                              "sentences have (each side's shares renormalised over them), so "
                              "a head that only follows the swapped noun does not rank first. "
                              "Off: every word counts, a word found in one sentence in full.")
if presenting():
    said.caption(f"**A** {md_text(a)}  \n**B** {md_text(b)} · focus token "
                 f"“{md_text(focus)}”" + (" · words in one sentence only left out"
                                          if shared_only else ""))
for sentence, title in ((a, "A"), (b, "B")):
    if guards.check_text(name, sentence, what=f"Sentence {title}",
                         prompt="Type two sentences, A and B.") is None:
        st.stop()
if not focus.strip():
    st.info("Type a focus token: a word that both sentences contain, e.g. “with”.",
            icon=style.ICON_TYPE)
    st.stop()

view = guards.computed_or_stop(readings, name, a, b)
where = {}
for side, title in (("a", "A"), ("b", "B")):
    where[side] = shown.find_word(view[side]["labels"], focus)
    if where[side] is None:
        st.warning(f"The focus token is not a word of sentence {title}. Its words are listed "
                   "below; choose one that both sentences contain.")
        words = [w for w, sp in zip(view[side]["labels"], view[side]["special"]) if not sp]
        st.code(" · ".join(words) or "(no words)", language=None)
if None in where.values():
    st.stop()

ga, gb = where["a"], where["b"]
rows_a = view["a"]["maps"][:, :, ga, :]  # (L, H, G_a): where the focus token looks in A
rows_b = view["b"]["maps"][:, :, gb, :]  # (L, H, G_b)
la, lb = view["a"]["labels"], view["b"]["labels"]
diff = shown.reading_difference(rows_a, la, rows_b, lb, shared_only=shared_only)  # (L, H)

names = head_names(L, H)
if linked_head is not None and linked_head not in names:
    st.warning(f"The link's head is not in this model ({shape(L, H)}); showing the head that "
               "changes most.", icon=style.ICON_LINK)
if ss.get("tr_head") not in names:  # the head that changes most in the Explorer's layer
    layer0 = default_layer(name)
    ss["tr_head"] = str(HeadId(layer0, int(np.argmax(diff[layer0]))))
picked = HeadId.parse(ss["tr_head"])
layer, head = picked.layer, picked.head
link.write_query_params(a=a, b=b, focus=focus, head=ss["tr_head"],
                        shared=None if shared_only else 0)

if bert.is_decoder:  # it reads left to right: only what comes before the focus can differ
    same = la[:ga + 1] == lb[:gb + 1]
    st.info(f"{bert.family.name} is a decoder: “{md_text(focus)}” sees only itself and the "
            "words before it" + (", and those are the same in A and B, so every head looks the "
            "same way (difference 0): the words that differ come later, where it cannot look. "
            "Choose a focus token after the first difference, such as the last word."
            if same else "; only the words before it can make a head look elsewhere."),
            icon=style.ICON_INFO)
plot(st, fg.diff_grid_figure(diff, selected=(layer, head)), room=GRID_ROOM, key="tr_grid",
     on_select=on_click, selection_mode="points", config={"displayModeBar": False})
only_a, only_b = shown.words_in_one_only(la, lb)
if shared_only:
    left_out = "; ".join(f"{side}: " + ", ".join(f"“{md_text(w)}”" for w in words)
                         for side, words in (("A", only_a), ("B", only_b)) if words)
    st.caption("Left out, found in one sentence only: " + left_out + ". Each sentence's shares "
               "are renormalised over the words both have." if left_out else
               "Both sentences have the same words: nothing is left out.")
st.caption("Difference (total variation) between where the focus token's attention goes in A and "
           "in B, with targets matched by word: ½ Σ over words |share in A − share in B|. "
           "Words are merged from subword pieces (Clark et al. 2019: sum the attention to a "
           "word's pieces, average it from them) and compared case-insensitively, so the "
           "sentences may differ in length; a word that appears twice counts once, with both "
           "shares added. " + ("Only the words both sentences have count." if shared_only else
                               "A word found in one sentence only counts in full.") +
           " 0 = the same words get the same shares, 1 = no overlap at all.")

# where the focus token looks in each sentence: the top key of every head
left, right = st.columns(2)
tops = {}  # side -> (L, H): the word each head's focus row weighs most
colour_of = {}  # one colour per word across both sentences: "man" is one colour in A and B
for w, s in zip([*la, *lb], [*view["a"]["special"], *view["b"]["special"]]):
    if not s:
        colour_of.setdefault(w.lower(), len(colour_of))
for col, side, g in ((left, "A", ga), (right, "B", gb)):
    v = view[side.lower()]
    top, weight, _ = shown.focus_targets(v["maps"], g)  # (L, H) each
    tops[side] = top.numpy().ravel()  # (L*H,)
    plot(col, fg.focus_grid(top.numpy(), weight.numpy(), v["labels"], v["special"],
                            v["labels"][g], title=f"Sentence {side}", words=colour_of,
                            max_chars=5 if presenting() else 8),  # half a projector: 5 fit
         key=f"tr_focus_{side}", config={"displayModeBar": False})

st.selectbox("Head (or click a cell of the grid)", names, key="tr_head")
plot(st, fg.side_by_side_figure(
    view["a"]["maps"][layer, head], la, view["b"]["maps"][layer, head], lb,
    f"A · {st.session_state['tr_head']}", f"B · {st.session_state['tr_head']}",
    focus_a=ga, focus_b=gb), key="tr_pair_maps", config={"displayModeBar": False})
for side, rows, labels, g in (("A", rows_a, la, ga), ("B", rows_b, lb, gb)):
    top = np.argsort(-rows[layer, head])[:3]
    st.text(f"In {side}, the three largest weights of “{labels[g]}”: "
            + ", ".join(f"{labels[i]} {rows[layer, head, i]:.2f}" for i in top))

st.subheader("The heads that change the most")
order = np.argsort(-diff.ravel(), kind="stable")
st.dataframe(pd.DataFrame({
    "head": [names[i] for i in order],
    "difference": np.round(diff.ravel()[order], 3),
    "A: top key": [la[tops["A"][i]] for i in order],
    "B: top key": [lb[tops["B"][i]] for i in order],
}), hide_index=True, key="tr_table")

st.subheader("What this shows, and what it does not")
st.markdown(
    "- It shows **where each head sends the focus token's attention** in each sentence, and "
    "which heads send it somewhere else when the sentence changes.\n"
    "- It does **not** show why the model reads a sentence one way. Attention is not an "
    "explanation by itself: a weight says how much of a token's value vector is mixed in, not "
    "whether that mattered for the output (Jain & Wallace 2019, *Attention is not "
    "Explanation*; Wiegreffe & Pinter 2019). A head can change a lot and matter little; use the "
    "Head lab to switch it off and see.\n"
    "- In Clark et al. 2019's BERT-base, head 8-10 (1-indexed) followed direct objects and "
    "9-6 prepositional objects; other checkpoints (such as the bundled MiniLM) put such "
    "patterns elsewhere, if anywhere.")
