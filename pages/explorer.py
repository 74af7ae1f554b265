"""Explorer: every head of one layer for any sentence, with the layer's summed head beside them.

One run per sentence: the page sends every layer's maps to the attention component once
(explorer_cache.explorer_data), and the component draws and owns the view (layer, head, focus
tokens, whole words, hidden [CLS]/[SEP], by norm, the token window), keeping it in the address
bar. The server hears of the view only from a link or an example (the view it imposes), a click
that masks a token, and, for a text over LOCAL_TOKENS tokens, a layer it has not sent.

What reads the sentence runs as keyed fragments: the maps and the masked word below them
(page.as_fragment), and the start card's answers (start_card's own). A new sentence reruns
those alone (page.sentence_parts, sidebar.sentence_changed), not the frame, the sidebar, the
page's heading or the constant notes between them: every element a run sends again is work
for the browser.
"""

import streamlit as st

from headscope.files import page_file
from headscope.ui import (
    explorer_route,
    guards,
    link,
    masked_words,
    models,
    one_head_results,
    presets,
    replaced,
    sidebar,
    start_card,
    style,
)
from headscope.ui.attention import attention
from headscope.ui.attention.explorer_payload import LOCAL_TOKENS
from headscope.ui.attention.payload import WINDOW
from headscope.ui.explorer_cache import explorer_data, named
from headscope.ui.layers import default_layer
from headscope.ui.page import Page, as_fragment, sentence_parts
from headscope.ui.presentation import PRESENT_WINDOW, presenting
from headscope.ui.tensor_downloads import tensor_downloads
from mha_core.shown import explorer_view

PAGE = Page("ex", link=("layer", "head", "focus", "words", "nospecial", "norms"))
MAPS, FILES, BELOW = "explorer", "explorer_files", "explorer_below"  # the fragments' keys
TITLE = ("Explorer", "Every head of one layer for any sentence, beside the same weights read as "
                     "one head (the summed head) and the mean of the heads; where the focus tokens "
                     "look in every head of every layer.")


def imposed_view(pending: dict, res, L: int, H: int) -> dict | None:
    """The view a link or a picked example asks for (layers and heads from 1 there, from 0
    here), its values clamped or ignored with a message; None when neither asks. Each one gets
    a new `seq`, so that the component adopts it once and keeps the reader's view otherwise."""
    ss = st.session_state
    asked = dict(pending)
    asked.update(presets.take_example_view())
    if not asked:
        return None
    view, notes = link.explorer_view(asked, L, H)
    for note in notes:
        st.warning(note, icon=style.ICON_LINK)
    if "focus" in view:  # a token's text or "#i" in the view the link names; "#i,#j": several
        labels = explorer_view(res.attentions[0, 0], res, view.get("words", False),
                               view.get("hide", False))[1]
        focus = link.resolve_focus_list(view.pop("focus"), labels)
        if focus is None:
            st.warning("The link's focus token is not in this sentence; it was ignored.",
                       icon=style.ICON_LINK)
        else:
            view["focus"] = focus
    pending.clear()
    ss.ex_seq = ss.get("ex_seq", 0) + 1
    return dict(view, seq=ss.ex_seq)


@as_fragment(MAPS)
def explorer():
    """The sentence's maps, and the link."""
    ss = st.session_state
    ss.ex_ok = False  # the parts below read this run's sentence only once this part is done
    pending = PAGE.start()
    link.sync_link()  # the sentence in the address bar: a new one reruns this alone
    name, text, pair = sidebar.current_model(), sidebar.current_text(), sidebar.current_pair()
    bert = guards.model_or_stop(name)
    cfg = bert.config
    L, H = cfg.num_hidden_layers, cfg.num_attention_heads
    facts = guards.check_text(name, text, cut=sidebar.text_was_cut(), pair=pair,
                              prompt="Type a sentence in the sidebar (or load an example) to see "
                                     "what every head looks at.")
    # on text it cannot show, the part ends here (its message says why) and the parts below
    # draw nothing; a fragment's st.stop would end the run and leave them showing the last text
    if facts is None:
        return
    res = guards.computed_or_none(models.attend, name, text, pair)
    if res is None:
        return
    view = imposed_view(pending, res, L, H)

    # A long text travels one layer at a time: the layer (and focus tokens) last asked for
    T = len(res.labels)
    layer, focus = default_layer(name), ()
    if T > LOCAL_TOKENS:
        need = ss.get("ex_need")
        if view is not None:
            layer = view.get("layer", layer)
        elif need and need[0] == (name, text, pair):
            layer, focus = need[1], need[2]

    def needs(value):
        """The component asks for a layer (and focus tokens) of a long text it was not sent."""
        if isinstance(value, dict) and isinstance(value.get("layer"), int):
            ss.ex_need = ((name, text, pair), min(max(value["layer"], 0), L - 1),
                          tuple(int(t) for t in value.get("focus", ())[:64]
                                if isinstance(t, int) and 0 <= t < T))

    def mask(value):
        """A click on a query label of the maps: mask that token (below); only a position a
        click can mask (masked_words.click_targets), whatever the browser sent."""
        maskable = set(masked_words.click_targets(res, False, False, bert)) - {None}
        if isinstance(value, list) and len(value) == 2 and value[0] in maskable \
                and isinstance(value[0], int) and not isinstance(value[0], bool):
            masked_words.mask_from_click("ex_mask", res.labels, value[0], str(value[1]))
            sidebar.rerun_fragments(BELOW)  # the masked word is drawn by the part below

    with models.busy(text, pair, "Reading every head of every layer…"):
        data = guards.computed_or_none(explorer_data, name, text, pair, layer, focus)
    if data is None:
        return
    window = PRESENT_WINDOW if presenting() else WINDOW  # the most tokens a map shows
    route = explorer_route.url()  # the maps of a sentence typed next, before its rerun
    names = named(name, text, pair, T)
    attention(dict(data, impose=view, initial_layer=default_layer(name), link=True,
                   window=window, sentence=names["sentence"],
                   fast=route and dict(url=route, model=name, pair=pair, box="text")),
              key="ex_view", tag=names["tag"], filename="attention",
              on={"mask": mask, "need": needs}, meta=names["meta"])
    if not any(res.special):  # the component shows no Hide switch then
        st.caption(f"No Hide {facts['cls']}/{facts['sep']} switch: this text has no special "
                   f"tokens to hide ({bert.family.name} adds none).")
    ss.ex_ok = True


def notes():
    """What the maps mean: the same for every sentence of a model, so drawn by full runs only
    (a new sentence reruns the fragments above and below, not this)."""
    bert = models.get_bert(sidebar.current_model())[0]
    clicks = ("click a token's label at the left to mask it (below: what the model predicts "
              "there and how every head's attention changes; at word level, the word's first "
              "piece)" if masked_words.can_mask(bert) else
              "a decoder has no [MASK] token, so a click on a token's label masks nothing")
    st.caption(
        "Each map: rows are the tokens looking (queries), columns the tokens looked at (keys); "
        "darker means more attention, and entropy (nats) says how spread a row is. Hover a cell to "
        "read its weight and see that row and column in every map; click a head to enlarge it; "
        f"{clicks}. Pick the "
        "focus token in the row of tokens (shift-click adds more; the arrow keys move it). The "
        "**mean** of the heads is what most tools show: a blur of them. The focus grid gives, for "
        "every head of every layer, the token the focus looks at most and its weight; the layer "
        "shown is framed and the enlarged head is red; click a cell to open it. Every change of "
        "view is drawn in your browser; the address bar and Copy link keep it.")
    if models.maps_note(bert):  # a decoder's triangle, DeBERTa's position terms, ModernBERT's bands
        st.caption(models.maps_note(bert))
    c1, c2 = st.columns([1, 1])
    with c1:
        one_head_results.explorer_note(sidebar.current_model(), key="ex_one_head")
    c2.page_link(page_file("training_lab"), icon=":material/model_training:",
                 label="One head trained against many: the Training lab")


@as_fragment(FILES)
def files():
    """The sentence's whole tensor as files, in a popover built only while open: closed, it
    holds nothing of the sentence, so a new sentence does not rerun it; opening it reruns it
    alone, for the sentence in the box then. (Typing a sentence closes it: the click lands
    outside it.)"""
    name, text, pair = sidebar.current_model(), sidebar.current_text(), sidebar.current_pair()
    tensor_downloads(st, name, text, pair, "ex", why_not=None if st.session_state.get(
        "ex_ok") else "The maps above show no sentence yet: type one the model can read.")


@as_fragment(BELOW)
def below():
    """The sentence's masked word and ELECTRA's replaced tokens: a fragment of its own, so that
    a new sentence reruns it with the maps, and a masked word reruns it alone."""
    if not st.session_state.get("ex_ok"):  # the maps stopped on this text and said why
        return
    name, text, pair = sidebar.current_model(), sidebar.current_text(), sidebar.current_pair()
    bert = models.get_bert(name)[0]
    facts = models.text_facts(name, text, pair)
    masked_words.section(name, text, pair, facts, "ex_mask")
    replaced.section(name, text, pair, bert)  # ELECTRA's discriminator only


card = start_card.start_card()  # a first visit's card: its answers read the sentence
if not presenting():  # on a projector the maps need the first screen (the nav names the page)
    PAGE.heading(*TITLE, compact=True)
explorer()
notes()
files()
below()
sentence_parts(MAPS, *card, BELOW)  # the maps first: the parts below read what they found
