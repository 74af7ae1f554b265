"""Corpus search (exBERT's): where else in a corpus is a token used the way it is used here?

Pick a token of the sentence and a layer: the page lists the corpus tokens whose hidden state
at that layer is most similar (cosine), with their sentences, and what each attends to in one
head of the layer. The index is built once per (model, corpus, layer) and shared.
"""

import hashlib
import zlib

import pandas as pd
import streamlit as st

from headscope.ui import budget, guards, link, models, presets, sidebar, style
from headscope.ui.labels import visible
from headscope.ui.page import Page
from headscope.ui.presentation import presenting, tucked
from headscope.ui.presets import EXAMPLE_LINES
from headscope.ui.words import plural, special_names
from mha_core.corpus_search import (
    build_index,
    encode_lines,
    index_bytes,
    indexed_tokens,
    matches,
    search,
)

PAGE = Page("cs", keep=("cs_source", "cs_lines"), link=("layer", "head"))
pending = PAGE.start()

MAX_LINES = 2_000
CORPUS_TOKENS = 128  # each line is cut to this many tokens, as in All heads' corpus mode
CONTEXT = 60  # characters of the line shown on each side of a match


def corpus_index(name: str, bert, lines: list, layer: int):
    """The index of a corpus at one layer (0-based), shared by every session (its arrays are
    read-only) and counted in the worker's budget (headscope/ui/budget.py); built with a progress
    bar, in the worker's one indexing slot. Streamlit's Stop, a rerun or a closed tab end a build
    at the next batch. None, with a message, when it would not fit the budget."""
    lines_id = hashlib.sha256("\x1e".join(lines).encode("utf-8", "surrogatepass")).hexdigest()
    key, cache = (name, layer, lines_id), budget.corpus_indexes
    index = cache.get(key)
    if index is not None:
        return index
    encs = encode_lines(bert, lines, CORPUS_TOKENS)
    n = indexed_tokens(encs)
    need = index_bytes(n, bert.config.hidden_size, bert.config.num_attention_heads)
    if need > cache.budget:
        fit = max(1, int(len(lines) * cache.budget / need))
        st.warning(f"These {len(lines):,} lines hold {n:,} tokens to index "
                   f"({need / budget.MB:,.0f} MB); this server keeps at most "
                   f"{cache.budget / budget.MB:,.0f} MB of corpus indexes. Paste fewer or shorter "
                   f"lines: about {fit:,} lines like these fit.",
                   icon=style.ICON_CUT)
        return None
    slot = st.empty()

    def step(i, n_lines):
        slot.progress(i / n_lines, text=f"Indexing {plural(n_lines, 'line')} at layer {layer + 1}: "
                                        f"{i:,} done (Stop, at the top right, cancels)")

    def waiting():
        slot.info("Another corpus is being indexed on this server; yours starts when it is "
                  "done.", icon=style.ICON_WAIT)

    index = cache.get_or_build(key, need, lambda: build_index(
        bert, lines, layer, max_length=CORPUS_TOKENS, encs=encs, progress=step), waiting)
    slot.empty()
    return index


def cell(s: str) -> str:
    """User text in a table cell (markdown): visible, escaped, on one line; "" stays empty."""
    return guards.md_text(visible(s)) if s else ""


def cut_left(s: str) -> str:
    return s if len(s) <= CONTEXT else "…" + s[-CONTEXT:]


def cut_right(s: str) -> str:
    return s if len(s) <= CONTEXT else s[:CONTEXT] + "…"


def targets_text(targets) -> str:
    return " · ".join(f"{cell(t)} {w:.2f}" for t, w in targets)


PAGE.heading("Corpus search",
             "exBERT's question: where else in a corpus is this token used the same way? The "
             "page compares the token's hidden state at one layer with every token of a corpus "
             "(cosine similarity) and lists the closest, with what each of them attends to in "
             "one head of that layer.")
name, text, pair = sidebar.current_model(), sidebar.current_text(), sidebar.current_pair()
bert = guards.model_or_stop(name)
L, H = bert.config.num_hidden_layers, bert.config.num_attention_heads
cls_tok, sep_tok = special_names(bert.tokenizer)  # this model's own: <s>, </s> for RoBERTa
# on a projector: one row of controls, the corpus choice in a popover at its end
if presenting():
    c1, c2, c3, c4, c5 = st.columns([3, 3, 2, 2, 1.8], vertical_alignment="bottom")
    corpus_box = tucked("Corpus", c5, icon=":material/library_books:")
else:
    corpus_box = st
source = corpus_box.radio("Corpus", ["The examples", "My own lines"], horizontal=True,
                          key="cs_source")
if source == "The examples":
    lines = EXAMPLE_LINES
    pair_note = " (a pair is one line with [SEP])" if bert.config.takes_pairs else ""
    corpus_box.caption(f"The sidebar's {len(EXAMPLE_LINES)} examples{pair_note}. Paste your "
                       f"own lines for a real corpus: up to {MAX_LINES:,}.")
else:
    pair_note = "; a [SEP] in a line makes it a pair" if bert.config.takes_pairs else ""
    pasted = corpus_box.text_area(f"One sentence per line (up to {MAX_LINES:,}{pair_note})",
                                  key="cs_lines", height=150)
    lines = [line.strip()[:guards.MAX_CHARS] for line in pasted.splitlines() if line.strip()]
    if len(lines) > MAX_LINES:
        st.warning(f"{len(lines):,} lines pasted; the first {MAX_LINES:,} are used.")
        lines = lines[:MAX_LINES]

facts = guards.check_text(name, text, cut=sidebar.text_was_cut(), pair=pair,
                          prompt="Type a sentence in the sidebar, then pick one of its tokens.")
if facts is None:
    st.stop()
res = guards.computed_or_stop(models.attend, name, text, pair)

ss = st.session_state
for param, key, hi in (("layer", "cs_layer", L), ("head", "cs_head", H)):
    if param in pending:
        value, note = link.clamp_int(pending.pop(param), 1, hi, param)
        if value is not None:
            ss[key] = value
        if note:
            st.warning(note, icon=style.ICON_LINK)
ss.setdefault("cs_layer", min(2, L))
ss.setdefault("cs_head", 1)
ss.cs_layer, ss.cs_head = min(ss.cs_layer, L), min(ss.cs_head, H)  # after a model change

choices = [t for t, s in enumerate(res.special) if not s]
crc = zlib.crc32("\x1f".join(res.labels).encode("utf-8", "surrogatepass"))
if not presenting():
    c1, c2, c3, c4 = st.columns([3, 3, 2, 2], vertical_alignment="bottom")
# a preset's word worth following (a decoder: its last word, which sees the whole text)
start = presets.default_focus(text, res.labels, res.special, bert.is_decoder)
token = c1.selectbox("Token", choices, key=f"cs_token_{crc:08x}",
                     index=choices.index(start) if start in choices else 0,
                     format_func=lambda t: f"{t}: {visible(res.labels[t])}")
if L > 1:
    layer = c2.select_slider("Layer", list(range(1, L + 1)), key="cs_layer") - 1
else:
    layer = 0
    c2.caption("Layer 1 (this model has one layer)")
head = c3.selectbox("Head", list(range(1, H + 1)), key="cs_head",
                    format_func=lambda h: f"head {h}") - 1
k = c4.select_slider("Matches", [5, 10, 20, 50], value=5 if presenting() else 10, key="cs_k",
                     help="On a projector the page starts with 5, so that the table fits the "
                          "screen.")

if not lines:
    st.info("Paste at least one sentence, one per line.", icon=style.ICON_TYPE)
    st.stop()
index = corpus_index(name, bert, lines, layer)
if index is None:
    st.stop()
if index.skipped:
    st.caption(f"{plural(index.skipped, 'line')} had no words the model could read and "
               f"{'was' if index.skipped == 1 else 'were'} left out.")
if not len(index):
    st.info("None of these lines has words the model can read.", icon=style.ICON_TYPE)
    st.stop()

query = res.hidden_states[layer + 1][token].numpy()  # (D,)
rows, scores = search(index, query, k)
found = matches(index, rows, scores, head)
own = res.attentions[layer, head, token].topk(min(3, len(res.labels)))
st.markdown(f"**Query:** token {token}, “{cell(res.labels[token])}”, layer {layer + 1}. In "
            f"head {head + 1} it attends to " + targets_text(
                [(res.labels[i], w) for i, w in zip(own.indices.tolist(), own.values.tolist())
                 if w > 0])  # a decoder's first token sees only itself
            + ".")
with st.container(key="cs_results"):
    st.table(pd.DataFrame({
        "similarity": [f"{m.score:.3f}" for m in found],
        "before": [cell(cut_left(m.before)) for m in found],
        "token": [f"**{cell(m.token)}**" for m in found],
        "after": [cell(cut_right(m.after)) for m in found],
        f"attends to (L{layer + 1} H{head + 1})": [targets_text(m.targets) for m in found],
    }), border="horizontal")
st.caption(f"{len(index):,} tokens of {plural(len(lines), 'line')} indexed at layer {layer + 1} "
           f"(each "
           f"line's first {CORPUS_TOKENS} tokens"
           f"{'' if bert.is_decoder else f'; {cls_tok} and {sep_tok} are not indexed'}). "
           "Similarity "
           "is the cosine of the hidden states (the layer's output); the last column lists "
           "each match's top three attention targets in the chosen head. If the sentence "
           "itself is in the corpus, its own token comes first with similarity 1.")

link.write_query_params(layer=layer + 1, head=head + 1)
