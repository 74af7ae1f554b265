"""headscope: what every attention head of a real BERT looks at. Streamlit's main script
(`headscope run`, `make run`).

The frame: page config, navigation over the pages (headscope.files.page_file), the sidebar every
page shares, and the link (query parameters) that restores a view. The pages declare their own
widgets and link parameters (headscope.ui.page.Page); nothing here lists them.
"""

import streamlit as st

from headscope.files import page_file
from headscope.ui import budget, link, page, share, sidebar, start_card, style, threads
from headscope.ui.presentation import presenting

budget.slot_script_runs()  # once per process: one script run at a time (others queue)
threads.limit()  # one torch thread per process: the sessions share the cores
st.set_page_config(page_title="headscope", page_icon=style.FAVICON, layout="wide")

link_notes = link.read_query_params()  # first run of a session only: the shared link
start_card.first_run()  # a session opened without a link to a view gets the start card
st.html(style.PAGE_CSS)  # constant CSS, no user text
if presenting():
    st.html(style.PRESENT_CSS)

pages = [
    # Material icons (bundled with Streamlit): emoji render as boxes without an emoji font
    st.Page(page_file("explorer"), title="Explorer", icon=":material/grid_view:", default=True),
    st.Page(page_file("head_view"), title="Head view", icon=":material/share:"),
    st.Page(page_file("inside_mha"), title="Inside MHA", icon=":material/calculate:"),
    st.Page(page_file("training_lab"), title="Training lab", icon=":material/model_training:"),
    st.Page(page_file("all_heads"), title="All heads", icon=":material/apps:"),
    st.Page(page_file("head_lab"), title="Head lab", icon=":material/tune:"),
    st.Page(page_file("next_word"), title="Next word", icon=":material/keyboard_tab:"),
    st.Page(page_file("sinks"), title="Attention sinks", icon=":material/anchor:"),
    st.Page(page_file("papers"), title="Papers", icon=":material/article:"),
    st.Page(page_file("two_readings"), title="Two readings", icon=":material/compare_arrows:"),
    st.Page(page_file("corpus_search"), title="Corpus search", icon=":material/manage_search:"),
    st.Page(page_file("what_heads_learn"), title="What heads learn",
            icon=":material/account_tree:"),
    st.Page(page_file("glossary"), title="Glossary", icon=":material/menu_book:"),
    st.Page(page_file("about"), title="About", icon=":material/info:"),
]
# expanded: every page listed (Streamlit folds a long list after its first pages behind "View
# more", which hid What heads learn and Corpus search)
current = st.navigation(pages, position="top" if presenting() else "sidebar", expanded=True)
link.claim_pending(current.url_path)  # the link's page values are for the page it opened
page.keep_widgets()  # a page's settings survive a visit to another page
# The Explorer runs its sentence's parts as fragments (headscope.ui.page.as_fragment): a new
# sentence, a click or a masked word reruns them alone, not this frame; the copy-link box is
# drawn closed, its links built when it is opened (share.open_slot)
alone = current.url_path == ""
# The Training lab trains its own small models and About shows text: neither waits for the
# BERT checkpoint
sidebar.sidebar(needs_model=current.url_path not in ("training_lab", "about", "glossary"),
                page_path=current.url_path, own_sentences=current.url_path == "two_readings",
                lazy_box=alone)
link.sync_link(say_too_long=not alone)  # the Explorer says it in its maps' fragment
if alone:
    share.draw_lazy(sidebar.whole_run)  # the copy-link box, closed, from this link
for note in link_notes:
    st.warning(note, icon=style.ICON_LINK)
start_card.leave(current.url_path)  # the Explorer draws the card itself
current.run()
