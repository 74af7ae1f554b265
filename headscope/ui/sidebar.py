"""The controls every page shares: model, sentence, optional second sentence, examples, presentation
mode. In the sidebar, or in a row above the page in presentation mode (the sidebar is then empty, so
it is not shown; Copy link is a button of its own there). The frame (headscope/frame/app.py) draws
them once per run; their widget keys are the frame's own ("model", "text", "pair", "preset",
"present_toggle", "present_leave"), the same in both places."""

import streamlit as st
from streamlit.errors import StreamlitAPIException

from headscope.settings import settings

from . import share
from .guards import MAX_CHARS
from .models import BUNDLED, family_line, get_bert, model_choices, shape
from .presentation import presenting, set_present
from .presets import DEFAULT_TEXT, PAIR_PRESETS, PRESETS, choose_example_view

HELP = "Type any text and press Ctrl+Enter (⌘+Enter on a Mac)."
PAIR_HELP = ("Optional. BERT reads two sentences as [CLS] A [SEP] B [SEP], with segment ids 0 "
             "and 1. A [SEP] typed in the first box does the same. Ctrl+Enter applies it.")
EXAMPLES = [*PRESETS, *PAIR_PRESETS]


def current_model() -> str:
    return st.session_state.get("model", BUNDLED)


def current_text() -> str:
    return st.session_state.get("text", DEFAULT_TEXT)[:MAX_CHARS]


def current_pair() -> str | None:
    """The second sentence, or None when its box is empty or the model reads one text (a
    decoder: the sidebar says so). (Blank but not empty: passed on, so the page says that it
    is read alone.)"""
    pair = st.session_state.get("pair", "")[:MAX_CHARS]
    return pair if pair and takes_pairs(current_model()) else None


def takes_pairs(name: str) -> bool:
    """Whether the model reads a sentence pair (True when it failed to load: its page says
    why)."""
    bert = get_bert(name)[0]
    return bert is None or bert.config.takes_pairs


def pair_box(where, bert):
    """The second sentence's box; for a model that reads one text (a decoder), greyed out with
    one sentence saying why (what was typed in it is kept for the other models)."""
    if bert is None or bert.config.takes_pairs:
        where.text_area("Second sentence (optional)", key="pair", height=68, help=PAIR_HELP)
        return
    said = (f"{bert.family.name} reads one text, left to right: it takes no second sentence"
            + (" (the one typed is not used)." if st.session_state.get("pair", "").strip()
               else "."))
    where.text_area("Second sentence (optional)", key="pair", height=68, help=said,
                    disabled=True)
    where.caption(said)


TEXT_FRAGMENT = "_text_fragments"  # the fragments a new sentence reruns (page.sentence_parts)
# False: a new sentence reruns the whole app everywhere. testkit.apptest sets it: after a
# fragment's own rerun AppTest's element tree holds only the fragment's elements (no sidebar to
# type in) and its fresh PagesManager knows no page for st.page_link; a browser session keeps
# both. tests/browser/test_class_protocol.py checks the fragment's rerun on a real server.
RERUN_FRAGMENT_ALONE = True


def sentence_changed():
    """The sentence box's callback: on a page whose sentence-dependent parts run as fragments
    (the Explorer), rerun those alone, not the frame, the navigation, the sidebar and the
    page's constant text (st.rerun with the fragments' keys, from a callback: Streamlit's
    documented way). Anywhere else, and when the last full run did not reach the page's end
    (page.sentence_parts), the whole app reruns as usual."""
    rerun_fragments(*(st.session_state.get(TEXT_FRAGMENT) or ()))


def rerun_fragments(*keys: str):
    """From a callback: rerun these fragments alone in place of the interaction's own rerun (it
    raises to end the callback; the Explorer's click that masks a word reruns the part below
    the maps). Nothing when there are none, or one was not drawn on the last run (the
    interaction's own rerun then happens), or under AppTest (RERUN_FRAGMENT_ALONE)."""
    if not keys or not RERUN_FRAGMENT_ALONE:
        return
    try:
        st.rerun(list(keys))
    except StreamlitAPIException:  # no fragment of such a key in the last run
        pass


def whole_run():
    """The callback of a lazy popover (the copy-link box, the downloads) and of the start
    card's lesson switch: what it draws needs a run. A callback, not on_change="rerun": when
    the same click also commits a new sentence (the sentence box loses focus), whose callback
    reruns the Explorer's fragments alone (rerun_fragments), a sibling callback that returns
    makes Streamlit run the whole app instead, so the popover is drawn open, for the new
    sentence (Streamlit's st.rerun docs: a keyed rerun escalates then)."""


def text_was_cut() -> bool:
    ss = st.session_state
    return len(ss.get("text", "")) > MAX_CHARS or len(ss.get("pair", "")) > MAX_CHARS


def _pick_preset():
    ss = st.session_state
    choice = ss.get("preset")
    if choice in PRESETS:
        ss.text, ss.pair = PRESETS[choice], ""
        # the Explorer opens on the view it is about (on the model it is about)
        choose_example_view(PRESETS[choice], bundled=ss.get("model", BUNDLED) == BUNDLED)
    elif choice in PAIR_PRESETS:
        ss.text, ss.pair = PAIR_PRESETS[choice]
    ss.preset = None


OWN_NOTE = ("This page compares its own two sentences, A and B, typed on the page. The shared "
            "sentence is kept for the other pages.")
OWN_SHORT = "This page compares its own sentences, A and B, below."  # one line in the row


def sidebar(needs_model: bool = True, page_path: str = "", own_sentences: bool = False,
            lazy_box: bool = False):
    """Call once per run, from the frame. A page that does not need the BERT model
    (needs_model=False) does not wait for it to load. page_path: the url path of the page being
    run, for the copy-link box. own_sentences: the page types its own sentences (Two readings),
    so the shared sentence's boxes give way to a note saying so (their values are kept).
    lazy_box: the page runs its parts as fragments: the copy-link box is lazy (share.open_slot)."""
    ss = st.session_state
    ss[TEXT_FRAGMENT] = None  # a full run: the page registers its fragments again (as_fragment)
    ss.setdefault("model", BUNDLED)
    ss.setdefault("text", DEFAULT_TEXT)
    ss.setdefault("pair", "")
    for key in ("model", "text", "pair"):  # kept when the widget changes (presentation mode
        ss[key] = ss[key]                  # draws the sentence as a one-line input)
    if ss.model not in model_choices():
        ss.model = BUNDLED
    if needs_model:
        with st.spinner(f"Loading the model {ss.model}…"):  # in the main area
            get_bert(ss.model)  # cached after the first visit (`headscope run` starts it)
    if presenting():  # one low row, so the page's main figure fits the projector's screen
        c1, c2, c3, c4, c5 = st.columns([4.4, 2.4, 1.3, 1.7, 1.9], vertical_alignment="center")
        if own_sentences:
            c1.caption(OWN_SHORT)
        else:
            c1.text_input("Sentence", key="text", help="Type any text and press Enter.",
                          on_change=sentence_changed,
                          label_visibility="collapsed", placeholder="Type a sentence…")
            c2.selectbox("Examples", EXAMPLES, index=None, key="preset",
                         label_visibility="collapsed", placeholder="Load an example…",
                         on_change=_pick_preset)
        with c3.popover("More", icon=":material/more_horiz:", width="stretch"):
            if not own_sentences:
                pair_box(st, get_bert(ss.model)[0] if needs_model else None)
            st.selectbox("Model", list(model_choices()), key="model")
        # one click from the row, not a popover in a popover
        share.open_slot(c4, page_path, lazy_box)
        c5.button("Leave presentation", on_click=set_present, args=(False,),
                  key="present_leave", width="stretch")
        return
    with st.sidebar:
        st.title("headscope")
        for problem in settings().problems:  # the operator's setting, said by name
            st.warning(problem, icon=":material/settings:")
        st.selectbox("Model", list(model_choices()), key="model")
        bert = get_bert(ss.model)[0] if needs_model else None  # a failure: the page shows it
        if bert is not None:
            c = bert.config
            st.caption(f"{shape(c.num_hidden_layers, c.num_attention_heads)}, "
                       f"hidden size {c.hidden_size}; {family_line(bert)}")
        if own_sentences:
            st.info(OWN_NOTE, icon=":material/compare_arrows:")
        else:
            st.text_area("Sentence", key="text", height=100, help=HELP,
                         on_change=sentence_changed)
            pair_box(st, bert)
            st.selectbox("Examples", EXAMPLES, index=None, key="preset",
                         placeholder="Load an example…", on_change=_pick_preset)
        ss.present_toggle = presenting()
        st.toggle("Presentation mode", key="present_toggle", on_change=set_present,
                  help="For a projector: larger text and charts, no sidebar (the sentence "
                       "moves above the page). Copy link offers a link that opens in it.")
        share.open_slot(st, page_path, lazy_box)
