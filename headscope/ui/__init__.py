"""headscope's app layer: what the pages share, between mha_core (the math) and pages/ (one
Streamlit script per question).

figures/          plotly builders, one module per view family (no Streamlit)
attention/        the attention component: maps, head view, model view drawn in the browser
labels            the one escaper for user text in figures
style             colours, fonts, constant CSS
words            counted nouns, special-token names
export            CSV / JSON of a shown map; tensor_downloads: the whole (L, H, T, T) tensor
models            the model list, the shared model, cached results
budget, threads   a worker's limits: heavy-work slot, run slot, corpus budget; one torch thread
guards            messages for bad models, bad text and failed computations
presets, layers   example sentences; the layer a page opens on
sidebar           the shared controls (model, sentence, examples, presentation mode)
presentation      presentation mode and plot()
link, share       query parameters in and out; the copy-link box (students' and projector's)
shared_view       the Explorer's layer, head and focus, for pages that open on them
explorer_cache    the Explorer's cached computations
masked_words      the Mask a word section (Explorer, Head view)
replaced          ELECTRA's replaced-token probabilities (Explorer)
one_head_results the shipped "is one head enough?" answer beside the summed head
start_card        the start card: five questions answered on the loaded model
treebanks         What heads learn's treebanks, read and scored once per model
papers            the Papers page's reruns (mha_core.reproduce), bounded and cached per model
docs              the project's documents shown in the app (the teaching guide)
page              what a page declares: widget-key prefix, kept widgets, link parameters
st_internals      the one module that touches Streamlit internals (one hook)

Dependencies point downwards: pages -> headscope.ui -> mha_core; nothing here imports a page.
"""
