"""headscope's app layer: what the pages share, between mha_core (the math) and pages/ (one
Streamlit script per question).

figures/      plotly builders, one module per view family (no Streamlit)
attention/    the attention component: maps, head view, model view drawn in the browser
labels        the one escaper for user text in figures
style         colours, fonts, constant CSS
export        CSV / JSON of a shown map
models        the model list, the shared model, cached results
guards        messages for bad models, bad text and failed computations
presets       example sentences
sidebar       the shared controls (model, sentence, examples, presentation mode)
presentation  presentation mode and plot()
link          query parameters in and out
share         the copy-link box (students' link, projector's link)
shared_view   the Explorer's layer, head and focus, for pages that open on them
docs          the project's documents shown in the app (the teaching guide)
page          what a page declares: widget-key prefix, kept widgets, link parameters
st_internals  the one module that touches Streamlit internals

Dependencies point downwards: pages -> ui -> mha_core; nothing here imports a page.
"""
