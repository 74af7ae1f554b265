"""Attention sinks: how much of each head's attention rests on a token that carries little
meaning (a decoder's first token, an encoder's [CLS] and [SEP]), by weight and by norm, with
Gu et al. 2024's sink rate; and the lesson "BERT reads both ways, GPT looks back"."""

import streamlit as st

from headscope.ui import both_ways, guards, link, sidebar, sinks, style
from headscope.ui.figures import sinks as fig
from headscope.ui.labels import visible
from headscope.ui.page import Page
from headscope.ui.presentation import note, plot, presenting
from mha_core.sinks import EPS

PAGE = Page("sk", keep=("sk_kind", "sk_lesson", "sk_depth"), link=("sink", "lesson", "depth"))
pending = PAGE.start()
GRID_ROOM = 400  # px: the two grids on a projector, under the row of controls


def link_sink(kinds: dict):
    """The link's sink kind ("cls", "sep"), where this model has it; the kept one otherwise."""
    ss = st.session_state
    link.take_choice(pending, "sink", {k: k for k in kinds}, "sk_kind",
                     "The link's sink is not one of this model's; it was ignored.")
    if ss.get("sk_kind") not in kinds:
        ss.sk_kind = next(iter(kinds))


def link_lesson():
    """The link's lesson switch and depth (first, middle, last or mean)."""
    ss = st.session_state
    if "lesson" in pending:
        ss.sk_lesson = link.is_on(pending.pop("lesson"))
    link.take_choice(pending, "depth", {d.split()[0]: d for d in both_ways.DEPTHS},
                     "sk_depth",
                     "The link's depth is not one of first, middle, last or mean; it was ignored.")
    ss.setdefault("sk_depth", both_ways.DEPTHS[0])


def sink_section(name: str, text: str, pair: str | None):
    """The sidebar model's sinks on the sidebar's text; a message instead when there is none."""
    if guards.check_text(name, text, cut=sidebar.text_was_cut(), pair=pair,
                         prompt="Type a sentence in the sidebar to see where the heads rest "
                                "their attention.") is None:
        return
    view = guards.computed_or_none(sinks.sink_view, name, text, pair)
    if view is None:
        return
    tokens, found = view["tokens"], view["sinks"]
    if len(tokens) < 2:
        st.info("A sink needs at least two tokens: type a longer text.", icon=style.ICON_TYPE)
        return
    if view["truncated"]:
        st.warning(f"This text has {view['n_full']:,} tokens; this page reads the first "
                   f"{sinks.MAX_TOKENS}.", icon=style.ICON_CUT)
    kinds = {k: v for k, v in found.items() if k != "first"} or found  # an encoder: [CLS], [SEP]
    names = {k: " ".join(dict.fromkeys(visible(tokens[i]) for i in v["positions"]))
             if k != "first" else f"the first token, “{visible(tokens[0])}”"
             for k, v in kinds.items()}
    link_sink(kinds)
    kind = next(iter(kinds))
    if len(kinds) > 1:
        kind = st.segmented_control("Sink", list(kinds), key="sk_kind", required=True,
                                    format_func=lambda k: guards.md_text(names[k]))  # markdown
    s = kinds[kind]
    rw, rn = s["rate_weight"], s["rate_norm"]
    rates = (f"{rw['model']:.0%}", f"{rn['model']:.0%}",
             f"{s['weight'].mean():.2f} → {s['norm'].mean():.2f}")
    if presenting():  # one line, so that the grids keep the first screen
        st.markdown(f"**Sink rate** by weight **{rates[0]}**, by norm **{rates[1]}** · mean "
                    f"share on the sink {rates[2]}")
    else:
        a, b, c = st.columns(3)
        a.metric("Sink rate by weight", rates[0], help="The share of all heads whose mean "
                 f"attention on {guards.md_text(names[kind])} is over {EPS}.")
        b.metric("Sink rate by norm", rates[1],
                 help="The same on the norm maps ‖α f(x)‖, each row divided by its sum.")
        c.metric("Mean share on the sink", rates[2],
                 help="Over every head and every row after the first: by weight → by norm.")
    plot(st, fig.sink_grids_figure(s["weight"], s["norm"], names[kind], compact=presenting()),
         room=GRID_ROOM, key="sk_grids", config={"displayModeBar": False})
    note(f"Each cell: one head's mean share of attention on {guards.md_text(names[kind])}, "
         f"over every row after the first (the first token can only look at itself). A head "
         f"over {EPS} counts as a sink head (Gu et al. 2024's ε).",
         f"One head per cell: its mean share on {guards.md_text(names[kind])}.")
    plot(st, fig.sink_rate_figure(rw["per_layer"], rn["per_layer"], EPS), key="sk_rates",
         config={"displayModeBar": False})
    link.write_query_params(sink=kind if len(kinds) > 1 and kind != next(iter(kinds)) else None)


PAGE.heading("Attention sinks", "How much of each head's attention rests on a token that "
             "carries little meaning, by weight and by what it moves.")
note("Many heads put most of their weight on one token whatever the sentence: a decoder's first "
     "token (Xiao et al. 2023 call it an attention sink: StreamingLLM keeps the first tokens and "
     "stays fluent), an encoder's [CLS] and [SEP]. Gu et al. 2024 count a head as a sink when "
     f"its mean attention there is over {EPS}; the sink rate is the share of such heads. "
     "Kobayashi et al. 2020 weigh each weight by the norm of what the token sends, ‖α f(x)‖: "
     "in BERT, [CLS] and [SEP] get high weights but send small vectors, so they write little. "
     "Compare the two grids.",
     "A sink: a token many heads rest on (Xiao et al. 2023; Gu et al. 2024's sink rate: heads "
     f"over {EPS}). By norm (Kobayashi et al. 2020) it often writes little.")
name, text, pair = sidebar.current_model(), sidebar.current_text(), sidebar.current_pair()
guards.model_or_stop(name)
sink_section(name, text, pair)

st.subheader("BERT reads both ways, GPT looks back")
note(f"The bundled encoder, {both_ways.short(both_ways.ENCODER)}, and the bundled decoder, "
     f"{both_ways.short(both_ways.DECODER)}, on the sentence in the box, side by side, whatever "
     "model is chosen above. The decoder is loaded when you ask for it.")
link_lesson()
depth = None
if st.toggle("Show both models on this sentence", key="sk_lesson"):
    depth = st.segmented_control("Layer", both_ways.DEPTHS, key="sk_depth", required=True)
link.write_query_params(lesson=1 if depth else None,
                        depth=depth.split()[0] if depth and depth != both_ways.DEPTHS[0] else None)
if depth:
    both_ways.show(text, depth, key="sk_both_ways")
