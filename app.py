"""headscope: what every attention head of a real BERT looks at.

The frame: page config, navigation over pages/, the sidebar every page shares, and the link
(query parameters) that restores a view.
"""

import streamlit as st
from streamlit.runtime.pages_manager import PagesManager

from pages import common

if PagesManager.uses_pages_directory:
    # The first run after the server starts sees our pages/ folder and takes Streamlit's legacy
    # multipage mode, in which this script runs as a page: every sidebar widget gets another id
    # than in later runs, so the first sentence a visitor types would be dropped. st.navigation
    # below switches the legacy mode off; start this first run again without it.
    PagesManager.uses_pages_directory = False
    st.rerun()

st.set_page_config(page_title="headscope", page_icon="🔭", layout="wide")
# Constant CSS (no user text): less empty space above the page, so the per-head grid and the
# single-head maps fit one 1280×800 screen.
st.html("<style>[data-testid='stMainBlockContainer']{padding:2rem 2rem 2rem 2rem}</style>")

link_notes = common.read_query_params()  # first run of a session only: the shared link
common.sidebar()
common.sync_link()
for note in link_notes:
    st.warning(note, icon="🔗")

pages = [
    st.Page("pages/explorer.py", title="Explorer", icon="🔍", default=True),
]
st.navigation(pages).run()
