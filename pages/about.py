"""About: what headscope is, its pages, how it checks itself, the teaching guide, its limits."""

import streamlit as st

from headscope.ui import docs
from headscope.ui.page import Page
from headscope.ui.presentation import presenting

PAGE = Page("ab")
PAGE.start()

PAGE.heading("About headscope", "What it is, its pages, how it checks itself, its limits, and the "
             "teaching guide.")
st.markdown(
    "**headscope shows what every attention head of a real pretrained BERT looks at**, for any "
    "sentence you type. It runs offline on a bundled model (all-MiniLM-L6-v2: 6 layers × 12 "
    "heads, d_model 384) and on any BERT checkpoint the server names in `HEADSCOPE_MODELS`. "
    "Layers and heads are numbered from 1, as in the papers.")

st.subheader("The pages")
st.markdown("""
- **Explorer**: every head of one layer as a map, the same weights read as one head (the
  **summed head**), the mean of the heads, and where one focus token looks in every head of
  every layer; by weight or by norm (Kobayashi et al. 2020); click a word to mask it and see
  the predictions.
- **Head view**: bertviz's head and model views: lines from every token to every token, one
  colour per head, for texts up to 512 tokens, saved as PNG or SVG.
- **Inside MHA**: one multi-head attention step by step (a toy, then the real model), narrow
  vs wide heads, and what attention costs.
- **Training lab**: tiny attention models trained live: why heads end up different, and one
  big head against many small ones.
- **All heads**: every head of every layer at once, a pattern label for each (Clark et al.
  2019's thresholds), the attention rollout, and a profile over many sentences.
- **Head lab**: switch heads off and watch the output change; rank the heads (Michel et al.
  2019, ablation form).
- **Next word** (decoders): what the model expects after every token, how its top 5 change
  when heads are switched off, and which heads push a word up (direct logit attribution).
- **Attention sinks**: how much of each head's attention rests on the first token ([CLS] and
  [SEP] in BERT), by weight and by norm, with Gu et al. 2024's sink rate; and BERT beside a
  GPT-style decoder on one sentence: one reads both ways, the other looks back.
- **Papers**: seven papers' attention results (Clark, Kobayashi, Kovaleva, Voita, Gu, Abnar
  & Zuidema, Michel) rerun on the chosen model, ours beside the published value, with the
  figure and the record as JSON.
- **Two readings**: one word in two sentences: which heads send it somewhere else?
- **Corpus search** (exBERT's): where else in a corpus is a token used the way it is used
  here? The nearest tokens by hidden state at a chosen layer, with their sentences.
- **What heads learn**: every head scored against gold dependency trees (Clark et al. 2019's
  experiment, on a treebank the server names), attention by norm, and each head's query/key
  space.
- **Glossary**: every term the pages use (nats, top key, summed head…), in one place.
- **About**: this page.

Views are links: the address bar holds the sentence, the model and the page's own settings
(the Training lab's runs excepted), and **Copy link** gives one for the students' screens and
one for a projector, so a teacher can hand the class the exact view.
""")

st.subheader("How it checks itself")
st.markdown("""
- **The encoder is our own, and equal to `transformers`.** Every hidden state and every
  attention map agrees with `transformers.BertModel` (eager attention) within 1e-5 in float32,
  on the bundled model and on tiny random BERTs built by the tests, for single sentences,
  sentence pairs, padded batches and with heads switched off.
- **Numbers are recomputed, not trusted.** The tests check each page's charts against
  independent computations (word merges by hand, entropies in plain numpy, head masks through
  `transformers`), and every number the teaching guide quotes in bold against the bundled
  model.
- **Bad input gets a message, never a traceback.** Property-based fuzzing (hypothesis) types
  arbitrary unicode into every text box of every page; a fixed list adds 10,000-character
  texts, control and zero-width characters, right-to-left text, `<script>` and nonsense
  links. User text is always drawn as text, and no run may start a process, write a file or
  read one outside the project.
- **Real browsers.** Browser tests open every page in Debian's chromium.

The figures and the commands that produce them are in the project's docs/performance.md and
docs/correctness.md.
""")

st.subheader("Limits")
st.markdown("""
- Attention weights are not an explanation by themselves: a weight says how much of a token's
  value is mixed in, not whether it mattered (Jain & Wallace 2019). The Head lab switches heads
  off to ask the second question.
- One sentence is an anecdote: All heads' corpus mode averages over many.
- The bundled model is small and English-only (uncased: accents and capitals are dropped);
  words it does not know become `[UNK]`. The papers' head numbers (Clark et al. 2019) are for
  BERT-base and do not carry over to other checkpoints.
- Texts are cut at the model's limit of 512 tokens, and each page says so.
""")

st.subheader("Teaching with headscope")
st.caption("The guide below is docs/teaching.md. Its links open the views it describes on this "
           "server, in this tab" + (", in presentation mode." if presenting() else "."))
with st.container(border=True, key="ab_guide"):
    st.html(docs.as_html(docs.teaching_guide(presenting())))  # our own text, same-tab links
