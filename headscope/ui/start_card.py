"""The start card: a student's way in. On the first visit of a session (the Explorer opened
without a link to a view, not on a projector) five questions, each with a one-line answer
computed from the loaded model and the sentence in the box, and a link to the view that answers
it; on request, the bundled encoder beside the bundled decoder (headscope.ui.both_ways). Closing
it, or opening another page, puts it away for the session.

The card is short, so that the Explorer's heads are on the first screen under it (1280×720,
tests/browser/test_first_screen.py): one tab per question, each with its whole answer and link."""

import streamlit as st

from mha_core import questions as qs

from ..files import page_file
from . import both_ways, models, one_head_results
from .guards import md_text
from .labels import visible
from .layers import default_layer
from .presentation import presenting
from .presets import DEFAULT_TEXT, default_focus
from .sidebar import current_model, current_text, whole_run

_STATE = "_start_card"  # None: not decided yet; True: shown until closed; False: put away
HOME = ""  # the Explorer's url path (the default page)


def first_run():
    """The frame's call, once per run, before the link is written back to the address bar: a
    session that starts at the Explorer with no link to a view gets the card."""
    ss = st.session_state
    if _STATE not in ss:
        ss[_STATE] = not any(k != "model" for k in st.query_params)


def close():
    st.session_state[_STATE] = False


def best_fit(name: str, layer: int):
    """The best-fit single head's held-out R² for this layer (0-based) from the results shipped
    for this model (headscope/ui/one_head_results.py, `python -m mha_core.one_head`); None
    where none are shipped."""
    result = one_head_results.load(name)
    if result is None:
        return None
    return qs.BestFit(layer, result["layers"][layer]["fitted"]["1"])


# (tab label, question, page, link label) of the five questions, in the tabs' order
QUESTIONS = [
    ("Split or copied?", "Is the input split across the heads, or copied to each?",
     page_file("inside_mha"), "Inside MHA: narrow vs wide"),
    ("Why do heads differ?", "Why do the heads differ, and why do they stay different?",
     page_file("training_lab"), "Training lab: the symmetry experiment"),
    ("What do heads learn?", "What do the heads learn?",
     page_file("all_heads"), "All heads: every head labelled"),
    ("One head enough?", "Is one head enough?",
     page_file("training_lab"), "Training lab: 1 head vs many"),
    ("What does it cost?", "What does it cost?",
     page_file("inside_mha"), "Inside MHA: what it costs"),
]


@st.cache_data(**models.bounded(), show_spinner=False)
def answers(name: str, text: str) -> list:
    """The five answers (markdown, QUESTIONS' order) for the model `name` and `text`."""
    bert, _ = models.get_bert(name)
    # the pair spelled out: st.cache_data keys the arguments as given, and (name, text) alone
    # missed the Explorer's entry for (name, text, None): a second forward pass per sentence
    res = models.attend(name, text, None)
    cfg, T = bert.config, len(res.labels)
    layer = default_layer(name)  # the layer the Explorer opens on
    focus = default_focus(text, res.labels, res.special)
    word = f"“{md_text(visible(res.labels[focus]))}”"
    s = qs.split_or_copied(cfg)
    d = qs.heads_differ(res, layer, focus)
    labels = qs.heads_learn(res).most_common(3)
    one = qs.one_head(res, layer, best_fit(name, layer))
    cost = qs.attention_cost(cfg, T)
    n_heads = cfg.num_hidden_layers * cfg.num_attention_heads
    learnt = ", ".join(f"{n} {label}" for label, n in labels)
    fit = (f" One head of width {s['d_model']} trained to copy layer {layer + 1} (the **best-fit "
           f"single head**) reproduces {one['best_fit'].explained:.0%} of what its "
           f"{s['heads']} heads write, on sentences it never saw."
           if one["best_fit"] else "")
    return [
        f"Copied: each of the {s['heads']} heads reads all {s['d_model']} numbers of every "
        f"token; what is split is what each head writes ({s['d_model']} / {s['heads']} = "
        f"{s['d_head']} numbers).",
        f"In layer {layer + 1} the {d['heads']} heads send {word} to {d['targets']} different "
        "tokens. Nobody asks them to: they start from different random weights, and heads "
        "that start identical stay identical.",
        f"On this sentence, of the {n_heads} heads: {learnt} (Clark et al. 2019's patterns).",
        f"Not as the **summed head**: layer {layer + 1}'s weights read as one head put "
        f"{one['summed_share']:.0%} of each row on “{md_text(visible(one['summed_top']))}” "
        f"({one['summed_entropy']:.2f} nats, where 0 is one target and ln T = "
        f"{one['uniform']:.2f} is uniform); its heads average {one['heads_entropy']:.2f} "
        f"nats. A **trained one-head model** is another question.{fit}",
        f"The same parameters: {cost['heads']} heads of {s['d_head']} have exactly the "
        f"{cost['params_heads']:,} of one head of {s['d_model']}; but they store "
        f"{cost['heads']}× the attention maps ({cost['maps_heads']:,} numbers for {T} tokens "
        f"against {cost['maps_one']:,}).",
    ]


def leave(page_path: str):
    """The frame's call, once per run: opening another page puts the card away."""
    if page_path != HOME:
        close()


ANSWERS, BOTH_WAYS = "start_answers", "start_both_ways_part"  # the card's fragments' keys


def start_card() -> tuple:
    """Draw the card while it is due (see first_run): the Explorer's call, first thing in its
    body. Returns the keys of the card's parts that read the sentence, for the page's
    sentence_parts (none when the card is not drawn): the five answers (one fragment, writing
    into a slot in each tab) and, while asked for, the two models' maps. The card's frame
    (its title, Close, the tabs, their links, the glossary and the switch) is drawn by full
    runs only: a new sentence sends the five answers and nothing else of the card."""
    ss = st.session_state
    if not ss.get(_STATE) or presenting():
        return ()
    if models.get_bert(current_model())[1]:
        return ()  # the page says why the model will not load
    keys = [ANSWERS]
    with st.container(border=True, key="start_card"):
        top, shut = st.columns([7, 1], vertical_alignment="center")
        top.markdown("**Start here: five questions about multi-head attention**, answered "
                     "from this model and this sentence.")
        shut.button("Close", key="start_close", on_click=close, icon=":material/close:",
                    width="stretch")
        # each tab its answer and its link, no columns (every element is a message the
        # browser lays out); the first tab's answer is the fragment's own body, the others
        # slots it writes into
        tabs = st.tabs([q[0] for q in QUESTIONS])
        slots = [tab.empty() for tab in tabs[1:]]
        with tabs[0]:
            _answers(slots)
        for tab, (_, _, page, label) in zip(tabs, QUESTIONS):
            tab.page_link(page, label=label, icon=":material/arrow_forward:")
        glossary, lesson = st.columns([2, 3], vertical_alignment="center")
        glossary.page_link(page_file("glossary"), label="Glossary: nats, top key, summed head…",
                           icon=":material/menu_book:")
        # the decoder is loaded only when asked for (both_ways); the Attention sinks page has
        # the same lesson with a choice of layer
        if lesson.toggle("BERT reads both ways, GPT looks back: show both models",
                         key="start_both_ways", on_change=whole_run):
            _both_ways()
            keys.append(BOTH_WAYS)
    return tuple(keys)


def _answers_now() -> list:
    name, text = current_model(), current_text()
    try:
        return answers(name, text if text.strip() else DEFAULT_TEXT)
    except Exception:  # odd text: the card answers for the default sentence instead
        return answers(name, DEFAULT_TEXT)


@st.fragment(key=ANSWERS)
def _answers(slots: list):
    """The five answers for the sentence in the box: the first here, the others in the slots
    of the other tabs (st.empty: each run replaces what the last one wrote there)."""
    texts = [f"**{q[1]}** {a}" for q, a in zip(QUESTIONS, _answers_now())]
    st.markdown(texts[0])
    for slot, text in zip(slots, texts[1:]):
        slot.markdown(text)


@st.fragment(key=BOTH_WAYS)
def _both_ways():
    both_ways.show(current_text(), key="start_both_ways_map")
