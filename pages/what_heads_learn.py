"""What heads learn: every head scored against gold dependency trees (Clark et al. 2019), the
attention weighed by what it moves (Kobayashi et al. 2020), and one head's query/key space
(AttentionViz, Yeh et al. 2023)."""

import numpy as np
import pandas as pd
import streamlit as st

from headscope.ui import figures as fg
from headscope.ui import guards, link, models, sidebar, style
from headscope.ui import treebanks as tb
from headscope.ui.figures.qk import KINDS
from headscope.ui.page import Page
from headscope.ui.presentation import note, plot, presenting, tucked
from headscope.ui.presets import PRESETS
from headscope.ui.words import special_names
from mha_core.heads import HeadId, head_names
from mha_core.syntax import DIRECTIONS
from mha_core.text import word_groups
from mha_core.treebank import (
    MAX_UPLOAD_SENTENCES,
    MAX_UPLOAD_WORDS,
    TreebankError,
    find_sentences,
    size_text,
)

PAGE = Page("wh", keep=("wh_treebank", "wh_relation", "wh_qk_on", "wh_qk_source",
                        "wh_qk_method"), link=("treebank", "relation"))
pending = PAGE.start()
SOURCES = ("The treebank's sentences", "The example sentences")
QK_TOKENS = (200, 2000, 600)  # slider: min, max, default tokens (twice as many points)
MATRIX_ROOM = 380  # px: the heads x relations matrix on a projector, under one row of controls


@st.cache_data(**models.bounded(256), show_spinner=False)
def predictions(name: str, words: tuple):
    """(L, H, 2, W) every head's predicted head of each word, or None over 128 pieces."""
    from mha_core.syntax import sentence_predictions

    return sentence_predictions(models.bert_or_raise(name), list(words))


def chosen_treebank(where=st):
    """(name, cache key, sentences) of the treebank picked (its box in `where`), or a message
    and the page stopped."""
    names = [*tb.treebank_choices(), tb.UPLOAD]
    # a link names one of the server's treebanks (never a path)
    link.take_choice(pending, "treebank", {n: n for n in names[:-1]}, "wh_treebank",
                     "The link names a treebank this server does not offer; it was ignored.")
    choice = where.selectbox("Treebank", names, key="wh_treebank")
    if choice == tb.SAMPLE:
        note("A **small hand-made sample**: 153 simple English sentences written and annotated "
             "for headscope (Universal Dependencies v2), with both readings of the telescope "
             "sentence. Enough to watch the method work, too small for firm numbers: "
             "docs/how-it-is-built.md gives the table on UD English-EWT (2,001 sentences).")
    if choice != tb.UPLOAD:
        try:
            return choice, "named:" + choice, tb.read_named(choice)
        except (TreebankError, OSError) as e:  # an OSError's text names the server's path
            why = str(e)[:300] if isinstance(e, TreebankError) else \
                f"the server cannot open its file ({type(e).__name__})"
            st.error(f"The treebank {guards.md_text(choice)} cannot be read: "
                     f"{guards.md_text(why)}. The other treebanks still work.",
                     icon=style.ICON_ERROR)
            st.stop()
    up = st.file_uploader("A treebank in CoNLL-U", type=["conllu"], key="wh_upload",
                          max_upload_size=tb.MAX_UPLOAD_MB,
                          help=f"UTF-8, up to {tb.MAX_UPLOAD_MB} MB, {MAX_UPLOAD_SENTENCES:,} "
                               f"sentences and {MAX_UPLOAD_WORDS:,} words a sentence, with "
                               "HEAD and DEPREL filled in (a UD treebank's .conllu files are).")
    if up is None:
        st.info("Upload a `.conllu` file to score every head against its trees.",
                icon=style.ICON_TREE)
        st.stop()
    data = up.getvalue()
    if len(data) > tb.MAX_UPLOAD_MB * 2**20:
        st.error(f"This file is {size_text(len(data))}; uploads are limited to "
                 f"{tb.MAX_UPLOAD_MB} MB. Score a larger treebank with the command line: "
                 "`python -m mha_core.syntax FILE.conllu`.", icon=style.ICON_ERROR)
        st.stop()
    digest = tb.digest(data)
    sentences, why = tb.read_upload(digest, data)
    if why is not None:
        st.error("This file is not a treebank headscope can score: "
                 f"{guards.md_text(why[:300])}", icon=style.ICON_ERROR)
        st.stop()
    return "your upload", "upload:" + digest, sentences


def relation_table(sc, reported) -> pd.DataFrame:
    rows = sc.rows(min_arcs=0)
    rows = [rows[r] for r in reported]
    return pd.DataFrame({
        "relation": [r["rel"] for r in rows], "arcs": [r["n"] for r in rows],
        "best head": [f"L{r['layer']} H{r['head']}" for r in rows],
        "direction": [r["direction"] for r in rows],
        "accuracy %": [round(100 * r["acc"], 1) for r in rows],
        "baseline %": [round(100 * r["baseline"], 1) for r in rows],
        "offset": [f"{r['offset']:+d}" for r in rows],
        "gain": [round(100 * (r["acc"] - r["baseline"]), 1) for r in rows]})


MAX_READINGS = 8  # the "Reading" choices offered for one sentence


def sentence_words(bert, text, sentences):
    """(words, gold triples or None, [the gold sentence's id]) for the sidebar's text."""
    # only what is scored is searched, and a bounded number of readings is offered: a treebank
    # holding the same sentence thousands of times must not draw thousands of buttons
    found = find_sentences(sentences[:tb.MAX_SENTENCES], text)
    matches = found[:MAX_READINGS]
    if len(found) > MAX_READINGS:
        st.caption(f"{len(found):,} scored sentences read this way; the first {MAX_READINGS} "
                   "are offered.")
    if not matches:
        enc = bert.encode(text)
        labels, groups = word_groups(enc, enc.source.text, enc.source.pair)  # a typed [SEP]: a pair
        words = [w for w, g in zip(labels, groups) if not all(enc.special[t] for t in g)]
        return words, None, []
    ids = [m.sent_id for m in matches]
    pick = st.radio("Reading", ids, key="wh_reading", horizontal=True) if len(ids) > 1 else ids[0]
    s = matches[ids.index(pick) if pick in ids else 0]
    gold = [(i, h - 1, rel) for i, (h, rel) in enumerate(zip(s.heads, s.deprels))]
    return list(s.words), gold, [s.sent_id]


def sentence_section(name, bert, sc, reported, sentences, text):
    st.subheader("On the sentence in the sidebar")
    if guards.check_text(name, text, cut=sidebar.text_was_cut(),
                         prompt="Type a sentence in the sidebar to see the arcs the best heads "
                                "predict.") is None:
        return
    words, gold, ids = sentence_words(bert, text, sentences)
    pred = guards.computed_or_none(predictions, name, tuple(words))
    if pred is None:
        st.info("The arcs are drawn for sentences of at most 128 pieces ({} and {} "
                "included), the limit of the protocol.".format(*special_names(bert.tokenizer)),
                icon=style.ICON_CUT)
        return
    names = [sc.relations[r] for r in reported]
    if "relation" in pending:
        if pending["relation"] in names:
            st.session_state.wh_relation = pending.pop("relation")
        else:
            pending.pop("relation")
            st.warning("The link's relation is not reported for this treebank; it was ignored.",
                       icon=style.ICON_LINK)
    rel = st.selectbox("Relation", names, key="wh_relation")
    link.write_query_params(relation=rel)
    r = sc.relations.index(rel)
    layer, head, d = sc.best(r)
    row = pred[layer, head, d]  # (W,) each word's predicted head
    if gold is None or rel == "all":
        shown = [i for i in range(len(words)) if gold is None or gold[i][2] not in ("punct",
                                                                                     "root")]
    else:
        shown = [i for i, (_, _, g) in enumerate(gold) if g.split(":")[0] == rel]
    plot(st, fg.arcs_figure(words, [(i, int(row[i])) for i in shown], gold,
                            title=f"{rel}: the best head {HeadId(layer, head)} "
                                  f"({DIRECTIONS[d]})", relation=rel),
         key="wh_arcs", config={"displayModeBar": False})
    how = ("each word points at the word it attends to most" if d == 0 else
           "each word is claimed by the word that attends to it most")
    if gold is None:
        st.caption(f"Above: the arcs {HeadId(layer, head)} predicts for every word ({how}). "
                   "This sentence is not in the treebank, so there is no gold tree to compare "
                   "with: pick an example sentence (the sample has them all, and both readings "
                   "of the telescope sentence).")
    else:
        st.caption(f"Above: the arcs {HeadId(layer, head)} predicts ({how}), green where the "
                   "gold tree has the arc, red where it does not"
                   + (f", for the words whose gold relation is {guards.md_text(rel)}"
                      if rel != "all" else "")
                   + f". Below: the gold tree of {guards.md_text(ids[0])}, arrows from "
                     "head to dependent.")


def norms_section(name, key, sentences):
    st.subheader("Weight or norm? (Kobayashi et al. 2020)")
    texts = tuple(s.text for s in sentences[:tb.NORM_TEXTS])
    shares = guards.computed_or_none(tb.norm_shares, name, key, texts)
    if shares is None:
        return
    plot(st, fg.norm_shares_figure(shares, title=f"Share of attention per layer, mean of "
                                                 f"{shares['n']} sentences"),
         key="wh_norms", config={"displayModeBar": False})
    st.caption("Solid: the share of each row's weight α that lands on [CLS], [SEP] or "
               "punctuation, averaged over heads and rows. Dashed: the same share of "
               "‖α f(x)‖, where f(x) = (x W_V + b_V) W_O is the vector a head actually moves. "
               "Kobayashi et al. found BERT's large weights on these tokens carry small vectors. "
               "The All heads atlas has the same switch.")


def qk_section(name, key, L, H, default_head, sentences):
    st.subheader("One head's queries and keys (AttentionViz)")
    if not st.toggle("Project one head's queries and keys", key="wh_qk_on"):
        st.caption("Every token's query and key vector of one head, in one 2-D map: keys moved "
                   "onto the queries' centroid and both scaled to equal mean norms (the "
                   "softmax is unchanged), so near means a large dot product.")
        return
    c1, c2, c3, c4 = st.columns(4)
    names = head_names(L, H)
    head = c1.selectbox("Head", names, index=names.index(str(default_head)), key="wh_qk_head")
    source = c2.radio("Sentences", SOURCES, key="wh_qk_source")
    method = c3.radio("Projection", ("PCA", "t-SNE"), key="wh_qk_method", horizontal=True)
    n = c4.slider("Tokens", *QK_TOKENS[:2], QK_TOKENS[2], step=100, key="wh_qk_tokens")
    texts = tuple(s.text for s in sentences) if source == SOURCES[0] else tuple(PRESETS.values())
    h = HeadId.parse(head)
    src = f"{key}:{source}"
    pts = guards.computed_or_none(tb.qk_points, name, src, texts, h.layer, h.head, method, n)
    if pts is None:
        return
    signature = (name, src, n)

    def on_pick():
        points = st.session_state["wh_qk_scatter"].selection.points
        if points and "curve_number" in points[0] and "point_index" in points[0]:
            st.session_state["wh_qk_picked"] = (int(points[0]["curve_number"]),
                                                int(points[0]["point_index"]), signature)

    plot(st, fg.qk_scatter_figure(pts["xy"], pts["tokens"], pts["sentence"], pts["position"],
                                  pts["texts"], title=f"{head}: {len(pts['tokens']):,} queries "
                                                      f"and keys, {method}"),
         key="wh_qk_scatter", on_select=on_pick, selection_mode="points")
    if pts["truncated"]:
        st.caption(f"The first {len(pts['tokens']):,} tokens of these sentences.")
    find = st.text_input("…or find a token (its first query)", key="wh_qk_find", max_chars=60)
    picked = st.session_state.get("wh_qk_picked")
    if find.strip():
        hits = [i for i, t in enumerate(pts["tokens"]) if t.lower() == find.strip().lower()]
        picked = (0, hits[0], signature) if hits else None
        if not hits:
            st.caption("No token of these sentences reads like that.")
    if not picked or picked[2] != signature or picked[1] >= len(pts["tokens"]):
        st.caption("Click a point to see that token's attention in its sentence.")
        return
    kind, i = picked[0], picked[1]
    s, p = int(pts["sentence"][i]), int(pts["position"][i])
    att = np.asarray(pts["attention"][s])  # (T, T) of this head
    sent_tokens = pts["tokens"][i - p:i - p + att.shape[0]]
    weights = att[p] if kind == 0 else att[:, p]
    plot(st, fg.token_attention_figure(weights, sent_tokens, p, KINDS[kind],
                                       title=f"{head}: “{pts['tokens'][i]}” as a "
                                             f"{KINDS[kind]} in its sentence"),
         key="wh_qk_attention", config={"displayModeBar": False})


PAGE.heading("What heads learn",
             "Clark et al. 2019 found heads that track syntax: objects of verbs, determiners of "
             "nouns, objects of prepositions. Here every head of the loaded model is scored "
             "against gold dependency trees, on whatever checkpoint is loaded.")
name, text = sidebar.current_model(), sidebar.current_text()
bert = guards.model_or_stop(name)
L, H = bert.config.num_hidden_layers, bert.config.num_attention_heads
cls_tok, sep_tok = special_names(bert.tokenizer)  # this model's own: <s>, </s> for RoBERTa
# on a projector: one row (the treebank, what is scored, the arcs setting in a popover) above
# the matrix, drawn with the heads across and before the table
row = (st.columns([2.2, 4, 1], vertical_alignment="center") if presenting() else
       (st, st, st))
tb_name, key, sentences = chosen_treebank(row[0])
link.write_query_params(treebank=tb_name if tb_name in tb.treebank_choices() else None)
if len(sentences) > tb.MAX_SENTENCES:
    st.warning(f"This treebank has {len(sentences):,} sentences; the first "
               f"{tb.MAX_SENTENCES:,} are scored here (the command line scores all).",
               icon=style.ICON_CUT)

if not presenting():
    st.subheader("Heads against dependency trees (Clark et al. 2019)")
sc = guards.computed_or_stop(tb.scores, name, key, sentences)
sample = tb_name == tb.SAMPLE
min_arcs = tucked("Arcs", row[2], icon=":material/filter_alt:").number_input(
    "Report relations with at least this many arcs", 1, 1_000_000, 25 if sample else 100,
    key=f"wh_min_arcs_{int(sample)}",
    help="Clark et al. report relations with 100 arcs or more; the hand-made sample is too "
         "small for that, so it starts at 25.")
reported = sc.reported(min_arcs)
skipped = sc.skipped_long + sc.skipped_empty
if not sc.used:
    st.info(f"None of these sentences can be scored: {sc.skipped_long:,} over 128 pieces "
            f"({cls_tok} and {sep_tok} included), {sc.skipped_empty:,} with a word the tokenizer "
            "drops entirely.", icon=style.ICON_TREE)
    st.stop()
note(f"{sc.used:,} sentences and {sc.counts[0]:,} arcs scored (punct and root are not)"
     + (f"; {skipped:,} sentence{'s' * (skipped != 1)} left out (over 128 pieces, or a word the "
        "tokenizer drops)" if skipped else "")
     + ". Each head predicts a word's head as the word it attends to most (dependent->head) or "
       "the word that attends to it most (head<-dependent), on word-level maps without "
       f"{cls_tok}/{sep_tok}. Baseline: the best fixed offset (−3…+3).",
     f"{sc.used:,} sentences, {sc.counts[0]:,} arcs · each head's accuracy, ○ the best.",
     where=row[1])
if not reported:
    st.info(f"No relation has {min_arcs} arcs in this treebank; lower the number above.",
            icon=style.ICON_TREE)
    st.stop()
table = relation_table(sc, reported)
if not presenting():
    st.dataframe(table, hide_index=True, key="wh_table")
acc = sc.accuracy()[reported]  # (R, L, H, 2)
title = (f"Every head × every relation on {'the hand-made sample' if sample else tb_name}: "
         "accuracy in the better direction, ○ the best head")
plot(st, fg.relation_matrix_figure(
    acc.max(-1).transpose(1, 2, 0), [sc.relations[r] for r in reported], sc.counts[reported],
    np.array(DIRECTIONS, dtype=object)[acc.argmax(-1)].transpose(1, 2, 0),
    best=[sc.best(r)[:2] for r in reported], title="" if presenting() else title,
    across=presenting()),
    room=MATRIX_ROOM, key="wh_matrix", config={"displayModeBar": False})
if presenting():
    st.dataframe(table, hide_index=True, key="wh_table")

sentence_section(name, bert, sc, reported, sentences, text)
norms_section(name, key, sentences)
qk_section(name, key, L, H, HeadId(*sc.best(0)[:2]), sentences)
