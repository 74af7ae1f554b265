"""Inside MHA: the matrices step by step (toy and real model), narrow vs wide, and the cost."""

import numpy as np
import pandas as pd
import streamlit as st

from headscope.ui import figures, guards, link, models, shared_view, sidebar, style
from headscope.ui.labels import visible
from headscope.ui.page import Page
from headscope.ui.presentation import note, plot, presenting, tucked
from mha_core import toy
from mha_core.attention import MODES
from mha_core.neuron import real_steps

PAGE = Page("im", keep=("im_real_layer", "im_real_head"), link=("layer", "head", "query"))
pending = PAGE.start()
STEP_ROOM = 330  # px: one step's matrices on a projector, under the tabs and the buttons


@st.cache_data(**models.bounded(), show_spinner=False)
def toy_walkthrough(words: tuple, seed: int):
    return toy.walkthrough(words, toy.toy_attention(4, 2, seed))


@st.cache_data(**models.bounded(), show_spinner="Taking one layer apart…")
def real_model_steps(name: str, text: str, pair: str | None, layer: int, head: int,
                     query: int):
    bert = models.bert_or_raise(name)
    res = models.attend(name, text, pair)
    with models.long_here(bert, text, pair, "Taking one layer of this long text apart"):
        return real_steps(bert, res, layer, head, query)  # read from the run's forward cache


@st.cache_data(**models.bounded(), show_spinner="Timing the three designs…")
def forward_times(d_model: int, n_heads: int, T: int, B: int) -> dict:
    return {d: toy.time_forward(toy.cost_module(d, d_model, n_heads), T, B, repeats=3)
            for d in toy.DESIGNS}


def fmt_int(n) -> str:
    for unit, size in (("G", 1e9), ("M", 1e6), ("k", 1e3)):
        if n >= size:
            return f"{n / size:.3g} {unit}"
    return str(int(n))


def fmt_bytes(n) -> str:
    for unit, size in (("GB", 2**30), ("MB", 2**20), ("kB", 2**10)):
        if n >= size:
            return f"{n / size:.3g} {unit}"
    return f"{int(n)} B"


PAGE.heading("Inside multi-head attention",
             "Is the input split across the heads or copied to each one? What are all those "
             "matrices? What does it cost? Every number here is computed, not drawn.")
walk_tab, real_tab, slices_tab, cost_tab = st.tabs(
    ["Toy walkthrough", "The real model, step by step", "Narrow vs wide", "What it costs"])

# --- toy walkthrough ---------------------------------------------------------------------------
with walk_tab:
    note("The classroom example: two words, **d_model = 4**, **2 heads** (so d_k = 4 / 2 = 2), "
         "seeded weights rounded to one decimal, no biases. Edit the words (up to "
         f"{toy.TOY_MAX_WORDS}) and step through.", where=st)
    # on a projector the words and seed sit in a popover at the end of the row of buttons, and
    # only the step just reached is shown in full (the earlier ones in an expander under it)
    if presenting():
        b1, b2, b3, b4, b5 = st.columns([1, 1.2, 1, 1, 1])
        c1 = c2 = tucked("Words", b5, icon=":material/edit:")
    else:
        c1, c2 = st.columns([3, 1])
    text = c1.text_input("Toy words", value=toy.TOY_TEXT, key="im_toy_text", max_chars=200)
    seed = c2.number_input("Weight seed", 0, 999, 0, key="im_toy_seed")
    words, message = toy.parse_toy_words(text)
    if message:
        st.info(message)
    wt = toy_walkthrough(tuple(words), int(seed))
    n_steps = len(wt.steps)
    st.session_state.setdefault("im_toy_step", 1)

    def move(delta):
        st.session_state.im_toy_step = min(max(st.session_state.im_toy_step + delta, 1), n_steps)

    if not presenting():
        b1, b2, b3, b4 = st.columns(4)
    b1.button("◀ Back", on_click=move, args=(-1,), key="im_toy_back", width="stretch")
    b2.button("Next step ▶", on_click=move, args=(1,), key="im_toy_next", type="primary",
              width="stretch")
    b3.button("Show all", on_click=move, args=(n_steps,), key="im_toy_all",
              width="stretch")
    b4.button("Start over", on_click=move, args=(-n_steps,), key="im_toy_reset",
              width="stretch")
    shown = min(st.session_state.im_toy_step, n_steps)
    if not presenting():
        st.progress(shown / n_steps, text=f"Step {shown} of {n_steps}")

    def draw_step(n, step, where):
        """Step n's title, text and matrices, three to a row (a matrix's title, as
        "W_Q_1 (d_model, d_k) = (4, 2)", needs a third of the width at 18 px)."""
        if presenting():
            where.markdown(f"**{step.title}** (step {n} of {n_steps}) · {step.text}")
        else:
            where.subheader(step.title)
            where.write(step.text)
        per_row = 3
        for start in range(0, len(step.matrices), per_row):
            cols = where.columns(per_row)
            for i, (col, m) in enumerate(zip(cols, step.matrices[start:start + per_row]),
                                         start=start + 1):
                plot(col, figures.matrix_figure(m.values, m.rows, m.cols,
                                                f"{m.name}   {m.shape_text}"),
                     room=STEP_ROOM, width="stretch", key=f"im_toy_{n}_{i}")

    if presenting():
        draw_step(shown, wt.steps[shown - 1], st)
        if shown > 1:
            with st.expander(f"The steps before (1 to {shown - 1})"):
                for n, step in enumerate(wt.steps[:shown - 1], start=1):
                    draw_step(n, step, st)
    else:
        for n, step in enumerate(wt.steps[:shown], start=1):
            draw_step(n, step, st)
    if shown == n_steps:
        st.success("That is the whole of multi-head self-attention. The input was COPIED to "
                   "every head (each W_Q_i reads all d_model numbers); what is split is the "
                   "output width: each head makes only d_k = d_model / h numbers.")

# --- the same steps on the real model ----------------------------------------------------------
with real_tab:
    name, sentence, pair = (sidebar.current_model(), sidebar.current_text(),
                            sidebar.current_pair())
    bert, err = models.get_bert(name)
    if err:
        st.error(err, icon=style.ICON_ERROR)
    elif guards.check_text(name, sentence, cut=sidebar.text_was_cut(), pair=pair,
                           prompt="Type a sentence in the sidebar to see it go through the "
                                  "model.") is not None:
        res = models.attend(name, sentence, pair)
        cfg = bert.config
        L, H, D = cfg.num_hidden_layers, cfg.num_attention_heads, cfg.hidden_size
        T = len(res.labels)
        shared_view.listen("im_seen", forget=("im_real_layer", "im_real_head", "im_real_query"))
        ss, seen = st.session_state, shared_view.recall(L, H)  # open on the Explorer's view
        if seen is not None and "im_real_layer" not in ss:
            ss.im_real_layer, ss.im_real_head = seen[0], seen[1] or 0
            token, position = seen[2], seen[3]
            if position is not None and position < T:
                ss.im_real_query = position
            elif token is not None and link.resolve_focus(token, res.labels) is not None:
                ss.im_real_query = link.resolve_focus(token, res.labels)
        for param, key, hi in (("layer", "im_real_layer", L), ("head", "im_real_head", H)):
            if param in pending:  # the link's view, numbered from 1 (clamped with a message)
                value, note = link.clamp_int(pending.pop(param), 1, hi, param)
                if value is not None:
                    ss[key] = value - 1
                if note:
                    st.warning(note, icon=style.ICON_LINK)
        if "query" in pending:
            found = link.resolve_focus(pending.pop("query"), res.labels)
            if found is None:
                st.warning("The link's query token is not in this sentence; it was ignored.",
                           icon=style.ICON_LINK)
            else:
                ss.im_real_query = found
        c1, c2, c3 = st.columns(3)
        layer = c1.selectbox("Layer", range(L), format_func=lambda i: f"layer {i + 1}",
                             key="im_real_layer")
        head = c2.selectbox("Head", range(H), format_func=lambda i: f"head {i + 1}",
                            key="im_real_head")
        ss.setdefault("im_real_query", min(1, T - 1))
        if ss.im_real_query >= T:  # a shorter sentence
            ss.im_real_query = min(1, T - 1)
        query = c3.selectbox("Query token", range(T), key="im_real_query",
                             format_func=lambda i: f"{i}: {visible(res.labels[i])}")
        link.write_query_params(layer=layer + 1, head=head + 1,
                                query=link.focus_param(res.labels, query))
        steps = real_model_steps(name, sentence, pair, int(layer), int(head), int(query))
        st.markdown(f"**{bert.name}**, layer {layer + 1}: d_model = {D}, h = {H}, "
                    f"d_k = {D // H}, T = {T} tokens, batch B = 1.")
        st.dataframe(pd.DataFrame(
            [{"stage": s, "shape": str(shape), "what": w} for s, shape, w in steps.shapes]),
            hide_index=True, width="stretch")
        st.subheader("The neuron view")
        token = guards.md_text(res.labels[query])
        st.write(f"Head {head + 1}'s query vector q for “{token}” is multiplied "
                 "elementwise with every key vector k (left); each row's sum divided by "
                 f"√d_k = √{D // H} is the logit (middle); the softmax of the logits is the "
                 "attention row (right).")
        plot(st, figures.neuron_figure(res.labels, steps.products, steps.logits,
                                       steps.probs, res.labels[query]),
                 width="stretch")
        if steps.note:
            st.caption(steps.note)
        if bert.is_decoder:
            later = T - 1 - query
            kv = cfg.kv_heads
            group = head // (H // kv)
            st.caption(f"{bert.family.name} is a decoder: the {later} key{'s' * (later != 1)} "
                       f"after “{token}” {'are' if later != 1 else 'is'} masked before the "
                       "softmax (not attendable: no products, no logit, weight 0)"
                       + (", and q and k are rotated by their positions (RoPE) before the "
                          "products" if cfg.attention in ("rotary", "grouped") else "") + "."
                       + (f" Its keys are key/value head {group + 1} of {kv}, shared by heads "
                          f"{group * (H // kv) + 1}–{(group + 1) * (H // kv)}." if kv < H
                          else ""))
        gap = float(np.abs(steps.probs - steps.module_probs).max())
        st.caption(f"Check: this softmax and the weights the model itself returns for this head "
                   f"and token differ by at most {gap:.1e}.")

# --- narrow vs wide ----------------------------------------------------------------------------
with slices_tab:
    st.markdown(
        "**Wide** (the standard, BERT and Vaswani et al. 2017): every head sees the whole "
        "input vector and projects it to d_model/h. **Narrow**: the input vector is cut into "
        "h slices and each head sees only its own slice. **Random overlapping**: each head "
        "sees its own random subset of input dimensions; subsets may overlap, and some "
        "dimensions may reach no head at all. In every mode W_O mixes all heads afterwards.")
    c1, c2, c3, c4 = st.columns(4)
    d = c1.selectbox("d_model", [8, 12, 16, 24, 32], index=2, key="im_sl_d")
    h_options = [h for h in (1, 2, 3, 4, 6, 8) if d % h == 0 and h < d]
    h = c2.selectbox("heads h", h_options, index=min(2, len(h_options) - 1), key="im_sl_h")
    T_sl = c3.number_input("tokens T (for FLOPs)", 1, 4096, 16, key="im_sl_T")
    slice_seed = c4.number_input("random seed", 0, 999, 0, key="im_sl_seed")
    cols = st.columns(3)
    for col, mode in zip(cols, MODES):
        reads = toy.reads(mode, d, h, int(slice_seed))  # (H, D)
        c, real = toy.slice_cost(mode, d, h, int(T_sl)), toy.slice_params(mode, d, h)
        plot(col, figures.slices_figure(reads, f"{mode}: which dims reach which head"),
                  width="stretch")
        col.markdown(f"- parameters: **{c.params:,}** (a real module has {real:,})\n"
                     f"- projection FLOPs: **{c.proj_flops:,}**\n"
                     f"- attention FLOPs: {c.attn_flops:,}")
        unread = int((reads.sum(0) == 0).sum())
        if mode == "random":
            col.caption(f"{unread} of {d} input dims reach no head's Q/K/V; "
                        f"{int((reads.sum(0) > 1).sum())} reach more than one.")
    st.caption("The narrow modes save the Q/K/V parameters and FLOPs by a factor of h "
               "(3 d²/h instead of 3 d²); W_O is the same. Train them against each other in "
               "the training lab (experiment 3).")

# --- cost calculator ---------------------------------------------------------------------------
with cost_tab:
    st.markdown("“8 heads of 64 cost the same as 1 head of 512; 8 heads of 512 cost 8×.” "
                "Check it for any size. FLOPs count a multiply-add as 2 (softmax, scaling "
                "and biases left out); attention maps are float32.")
    c1, c2, c3, c4 = st.columns(4)
    d = c1.selectbox("d_model", [64, 128, 256, 384, 512, 768, 1024], index=4, key="im_cost_d")
    h = c2.selectbox("heads h", [1, 2, 4, 6, 8, 12, 16], index=4, key="im_cost_h")
    T = c3.number_input("tokens T", 1, 8192, 128, key="im_cost_T")
    B = c4.number_input("batch", 1, 256, 1, key="im_cost_B")
    T, B = int(T), int(B)
    if d % h:
        st.warning(f"d_model = {d} is not divisible by h = {h}: h heads of d_model/h do not "
                   "exist. Choose another h.")
    else:
        costs = [toy.attention_cost(k, d, h, T, B) for k in toy.DESIGNS]
        real = [toy.module_params(k, d, h) for k in toy.DESIGNS]
        names = [f"{c.heads} × {c.d_head}" for c in costs]
        rows = []
        for name, c, r in zip(toy.DESIGNS.values(), costs, real):
            rows.append({"design": name, "heads × d_k": f"{c.heads} × {c.d_head}",
                         "parameters": f"{c.params:,}",
                         "real module": f"{r:,} {'✓' if r == c.params else '✗'}",
                         "projection FLOPs": fmt_int(c.proj_flops),
                         "attention FLOPs": fmt_int(c.attn_flops),
                         "attention share": f"{c.attn_flops / c.flops:.0%}",
                         "attention maps": fmt_bytes(c.map_bytes)})
        small = costs[2].flops <= 4e9 and costs[2].map_bytes <= 2**28
        if small:
            times = forward_times(d, h, T, B)
            for row, k in zip(rows, toy.DESIGNS):
                row["forward (measured)"] = f"{times[k] * 1e3:.2f} ms"
                row["time ÷ 1 head"] = f"{times[k] / times['one']:.2f}×"
        if presenting():  # a table that wraps its headers and reads the page's 19 px text
            st.table(pd.DataFrame(rows).set_index("design"))
        else:
            st.dataframe(pd.DataFrame(rows), hide_index=True, width="stretch")
        if not small:
            st.caption("Too large to time here on a shared CPU; the formulas still hold.")
        plot(st, figures.cost_figure(names, [c.params for c in costs],
                                     [c.flops for c in costs],
                                     [c.map_bytes for c in costs],
                                     f"d_model {d}, h {h}, T {T}, batch {B}"),
                 width="stretch")
        one, split, full = costs
        st.markdown(
            f"""
**Where the slogan holds.** {h} heads of {d // h} have exactly the parameters
({split.params:,}) and projection FLOPs of 1 head of {d}: the three d_model × d_model
projections are the same matrices, only cut into heads. Their attention FLOPs are equal too,
because h · d_k = d_model ({h} · {d // h} = {d}). Vaswani et al. (2017) chose d_k = d_model/h
for exactly this reason.

**Where it does not.** Every head has its own T × T map: {h} heads store and softmax {h}×
the maps of one head ({fmt_bytes(split.map_bytes)} against {fmt_bytes(one.map_bytes)}).
That term grows with T², so for long inputs the memory and the softmax work grow with h even
at the same d_model. The measured times include that and the overhead of small matrices.

**{h} heads of {d} each** cost {full.params / one.params:.2f}× the parameters and
{full.flops / one.flops:.2f}× the FLOPs of one head: the projections get {h}× wider. Attention
FLOPs are {full.attn_flops / one.attn_flops:.0f}× too. The attention share of the FLOPs
(4·B·T²·d against 8·B·T·d² for the projections) passes one half when T > 2·d_model.
""")
