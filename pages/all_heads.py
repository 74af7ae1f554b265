"""All heads: every head of every layer at once, what pattern each follows, and the rollout."""

import numpy as np
import pandas as pd
import streamlit as st

from headscope.ui import figures as fg
from headscope.ui import guards, link, models, sidebar, style
from headscope.ui.models import shape
from headscope.ui.page import Page
from headscope.ui.presentation import plot, presenting
from headscope.ui.presets import PRESETS
from headscope.ui.words import plural
from mha_core import metrics as mt
from mha_core import patterns as pt
from mha_core.rollout import rollout

PAGE = Page("ah", keep=("ah_corpus_source", "ah_corpus_lines", "ah_corpus_on", "ah_norms"),
            link=("corpus", "lines", "profile"))
pending = PAGE.start()
SOURCES = {"presets": "The presets", "own": "My own lines"}  # "corpus" in the link

MAX_LINES = 200
# Each corpus line is cut to this many tokens: Clark et al. 2019 profiled heads on segments of
# at most 128 tokens, and 200 lines of 512 would hold the server's core for a minute
CORPUS_TOKENS = 128
# px: the atlas on a projector at most (a tall model's); tiles large enough for 18 px labels
ATLAS_ROOM = 760


@st.cache_data(**models.bounded(), show_spinner="Measuring every head…")
def sentence_view(name: str, text: str, pair: str | None = None) -> dict:
    """Everything this page draws for one sentence or pair, as numpy (cached per model and
    text)."""
    res = models.attend(name, text, pair)
    metrics = mt.result_metrics(res)
    return dict(tokens=res.labels, att=res.attentions.numpy(), metrics=metrics,
                labels=pt.label_heads(metrics), truncated=res.truncated, causal=res.causal,
                raw=res.attentions.mean(dim=1).numpy(),  # (L, T, T) mean over heads
                rollout=rollout(res.attentions).numpy())  # (L, T, T)


@st.cache_data(**models.bounded(), show_spinner=False)
def norm_view(name: str, text: str, pair: str | None = None) -> dict:
    """The atlas by norm (Kobayashi et al. 2020): ||alpha_ij f_h(x_j)|| with rows normalised to
    sum to 1 (shown), the raw norms (hover) and the pattern labels of the shown maps."""
    from mha_core.norms import row_normalised

    res = models.attend(name, text, pair)
    raw = models.norm_maps(name, text, pair, res)  # (L, H, T, T)
    shown = row_normalised(raw)
    metrics = mt.head_metrics(shown, mt.token_kinds(res.labels, res.special), res.causal)
    return dict(shown=shown.numpy(), raw=raw.numpy(), labels=pt.label_heads(metrics))


@st.cache_data(**models.bounded(2048), show_spinner=False)
def sentence_metrics(name: str, text: str) -> dict:
    """One corpus line's head metrics, on its first CORPUS_TOKENS tokens (a line with a typed
    [SEP] is a pair, cut longest first)."""
    bert = models.bert_or_raise(name)
    return mt.result_metrics(bert.attend(text, max_length=CORPUS_TOKENS))


def head_table(metrics: dict, labels) -> pd.DataFrame:
    L, H = labels.shape
    rows = {"layer": np.repeat(np.arange(1, L + 1), H), "head": np.tile(np.arange(1, H + 1), L),
            "label": labels.ravel(),
            "Kovaleva type": pt.kovaleva_types(metrics, labels).ravel()}
    rows.update({k: np.round(metrics[k].ravel(), 3) for k in mt.METRICS})
    return pd.DataFrame(rows)


def metric_name(key: str) -> str:
    """A metric's heading in words ("on [CLS]", not "cls")."""
    return mt.NAMES.get(key, key)


def show_heads(metrics: dict, labels, key: str):
    table = head_table(metrics, labels)
    counts = pd.Series(labels.ravel()).value_counts()
    st.caption("Heads per label: " + ", ".join(f"{k} {v}" for k, v in counts.items()))
    # a third of the width: the table's toolbar (top right, on hover) never covers the box
    by = st.columns(3)[0].selectbox("Sort heads by", ["layer"] + list(mt.METRICS),
                                    key=f"ah_{key}_sort", format_func=metric_name,
                                    help="You can also click any column header of the table "
                                    "to sort by it.")
    ascending = by == "layer"
    st.dataframe(table.sort_values([by, "head"] if ascending else by, ascending=ascending),
                 hide_index=True, key=f"ah_{key}_table",
                 column_config={k: st.column_config.NumberColumn(mt.NAMES[k], help=v,
                                                                 format="%.3f")
                                for k, v in mt.METRICS.items()})


def sentence_section(name: str, text: str, pair: str | None = None):
    """The current sentence: atlas, labels, metrics, rollout. Text the model cannot show gets
    its message here, and corpus mode below still works."""
    if guards.check_text(name, text, cut=sidebar.text_was_cut(), pair=pair,
                         prompt="Type a sentence in the sidebar to see every head at "
                                "work.") is None:
        return
    view = guards.computed_or_none(sentence_view, name, text, pair)
    if view is None:
        return
    tokens, L, H = view["tokens"], *view["labels"].shape

    if not presenting():
        st.subheader("The atlas")
    # on a projector the caption and the switch share one row above the atlas
    about, switch = st.columns([3, 1], vertical_alignment="center") if presenting() else (st, st)
    intro = (f"{shape(L, H)}, {len(tokens)} tokens. Each thumbnail is one head's map: row = the "
             "token that looks, column = the token looked at, darker = more weight. The word "
             "above a thumbnail is its pattern label (key under the atlas).")
    if not presenting():
        st.caption(intro)
    by_norm = switch.toggle("By norm ‖α f(x)‖" if presenting() else
                            "By norm: ‖α f(x)‖ instead of the weight α (Kobayashi et al. 2020)",
                            key="ah_norms",
                            help="How much of each token's vector actually reaches the token "
                                 "that looks, through this head: the weight times the norm of "
                                 "the token's transformed value vector f(x) = (x W_V + b_V) W_O "
                                 "(Kobayashi et al. 2020).")
    maps, raw, labels = view["att"], None, view["labels"]
    if by_norm:
        nv = guards.computed_or_none(norm_view, name, text, pair)
        if nv is not None:
            maps, raw, labels = nv["shown"], nv["raw"], nv["labels"]
    if presenting():
        about.caption(f"{shape(L, H)}, {len(tokens)} tokens: one map per head, its pattern "
                      "label above it" + (" · by norm: rows of ‖α f(x)‖ summed to 1"
                                          if raw is not None else "."))
    elif raw is not None:
        st.caption("By norm: each cell is ‖α_ij f(x_j)‖, each row divided by its sum so that "
                   "rows read like weights (the hover also gives the raw norm), and the labels "
                   "come from these maps. A token that gets a large weight but has a small "
                   "transformed vector (often [CLS], [SEP] and punctuation) fades.")
    sentence = text if len(text) <= 60 else text[:57] + "…"
    title = f"{shape(L, H)} on “{sentence}”" + (" · by norm" if raw is not None else "")
    plot(st, fg.atlas_figure(maps, tokens, pt.short_labels(labels),
                             title="" if presenting() else title, raw=raw,
                             causal=view["causal"]),
         room=ATLAS_ROOM, square=True, key="ah_atlas", config={"displayModeBar": False})
    st.caption("Corner labels: " + pt.key_line() + "."
               + (" Grey cells: not attendable (a decoder's token cannot see later tokens), "
                  "not zero weight." if view["causal"] else ""))
    if len(tokens) > 48:
        st.caption("The thumbnails show the first 48 tokens; the metrics use every token.")

    with st.expander("How the labels are given (one table, checked top to bottom)", expanded=False):
        st.dataframe(pd.DataFrame(
            [(i + 1, p.label, mt.METRICS[p.metric], f"> {p.threshold:.2f}", p.source)
             for i, p in enumerate(pt.RULES)]
            + [(len(pt.RULES) + 1, pt.HETEROGENEOUS, "no rule above passed", "", "")],
            columns=["order", "label", "metric", "threshold", "source"]), hide_index=True)
        st.markdown(
            "Clark et al. 2019 (*What Does BERT Look At?*) call a head *broad* above 3.8 nats "
            "of entropy, measured on 128-token segments, where the most any head can reach is "
            "log 128 = 4.85 nats. A 10-token sentence allows at most log 10 = 2.3 nats, so "
            "3.8 nats would never be reached. We therefore compare the entropy as a fraction "
            f"of log T with 3.8 / 4.85 = {pt.BROAD_FRACTION:.2f}, the same rule rescaled to "
            "the sentence's length. The Kovaleva type column maps each label onto the five "
            "types of Kovaleva et al. 2019 (*Revealing the Dark Secrets of BERT*): vertical "
            "(sinks), diagonal (previous, next, self), heterogeneous; a heterogeneous head "
            f"with at least {pt.MIXED_SHARE:.1f} on [CLS]/[SEP]/punctuation and "
            f"{pt.MIXED_SHARE:.1f} on one diagonal is vertical+diagonal (our threshold). Block "
            "needs a sentence pair. Shares are averaged over every row, special tokens "
            "included.")

    st.subheader("Every head, measured")
    show_heads(view["metrics"], view["labels"], "sentence")

    st.subheader("Rollout")
    st.caption("Top: the mean of the heads' maps in each layer. Bottom: the attention rollout of "
               "Abnar & Zuidema 2020, A = ½·mean(heads) + ½·I with rows renormalised, multiplied "
               "layer after layer: how much each token at that layer draws from each input token, "
               "through the residual path too. Rollout is an estimate of information flow, not a "
               "proof of what the model uses.")
    plot(st, fg.rollout_figure(view["raw"], view["rollout"], tokens), key="ah_rollout",
         config={"displayModeBar": False})
    layer = st.select_slider("Look closer at layer", options=list(range(1, L + 1)), value=L,
                             key="ah_rollout_layer")
    plot(st, fg.rollout_figure(view["raw"], view["rollout"], tokens, layers=[layer - 1],
                               max_tokens=128),
         key="ah_rollout_one", config={"displayModeBar": False})
    if len(tokens) > 64:
        st.caption("The grid shows the first 64 tokens and the close-up the first 128; the rollout "
                   "itself runs over every token.")


PAGE.heading("All heads", "Every head of every layer at once: what pattern each follows, how the "
             "layers pass information up (rollout), and each head's profile over many "
             "sentences.")
name, text, pair = sidebar.current_model(), sidebar.current_text(), sidebar.current_pair()
bert = guards.model_or_stop(name)
if models.shared_heads_note(bert):  # ALBERT: one set of heads, several layers
    st.info(models.shared_heads_note(bert))
sentence_section(name, text, pair)

st.subheader("Corpus mode")
st.caption("One sentence is an anecdote. Average the metrics over many sentences to get each "
           "head's profile; the labels then come from the averaged metrics. Each line counts "
           f"with its first {CORPUS_TOKENS} tokens, as in Clark et al. 2019's 128-token "
           "segments.")
ss = st.session_state  # the link's corpus choice first
link.take_choice(pending, "corpus", SOURCES, "ah_corpus_source",
                 "The link's corpus is not one of presets or own; it was ignored.")
if "lines" in pending:
    ss.ah_corpus_lines = pending.pop("lines")[:guards.MAX_CHARS]
if "profile" in pending:
    ss.ah_corpus_on = link.is_on(pending.pop("profile"))
source = st.radio("Sentences", list(SOURCES.values()), horizontal=True, key="ah_corpus_source")
own = source == SOURCES["own"]
pasted = ss.get("ah_corpus_lines", "") if own else ""
link.write_query_params(corpus="own" if own else None,
                        lines=pasted if own and 0 < len(pasted) <= link.URL_TEXT_MAX else None,
                        profile=1 if ss.get("ah_corpus_on") else None)
if source == "The presets":
    lines = list(PRESETS.values())
else:
    pasted = st.text_area("One sentence per line (up to 200)", key="ah_corpus_lines", height=150)
    lines = [line.strip() for line in pasted.splitlines() if line.strip()]
    if len(lines) > MAX_LINES:
        st.warning(f"{len(lines)} lines pasted; the first {MAX_LINES} are used.")
        lines = lines[:MAX_LINES]
if not lines:
    st.info("Paste at least one sentence, one per line.")
elif st.toggle(f"Profile the heads on {plural(len(lines), 'sentence')}", key="ah_corpus_on"):
    bar = st.progress(0.0, text="Reading the sentences…")
    per_sentence, skipped = [], 0
    for i, line in enumerate(lines):
        line = line[:guards.MAX_CHARS]
        try:
            if models.text_facts(name, line)["only_special"]:
                skipped += 1  # nothing but [CLS] and [SEP]: no head profile in it
            else:
                per_sentence.append(sentence_metrics(name, line))
        except Exception:  # a line the tokenizer or model cannot read
            skipped += 1
        bar.progress((i + 1) / len(lines), text=f"{i + 1} of {len(lines)} sentences")
    bar.empty()
    if skipped:
        st.caption(f"{plural(skipped, 'line')} had no words the model could read and "
                   f"{'was' if skipped == 1 else 'were'} left out.")
    if not per_sentence:
        st.info("None of these lines has words the model can read.", icon=style.ICON_TYPE)
        st.stop()
    profile = mt.mean_metrics(per_sentence)
    labels = pt.label_heads(profile)
    metric = st.selectbox("Colour by", list(mt.METRICS), index=1, key="ah_corpus_metric",
                          format_func=metric_name)
    plot(st, fg.metric_grid_figure(profile[metric], pt.short_labels(labels),
                                   f"Mean {mt.METRICS[metric]} over {len(per_sentence)} "
                                   f"sentences, with each head's label", metric_name(metric)),
         key="ah_corpus_grid", config={"displayModeBar": False})
    show_heads(profile, labels, "corpus")
