"""headscope: what every attention head of a real BERT looks at.

The frame: page config, navigation over pages/, the sidebar every page shares, and the link
(query parameters) that restores a view.
"""

import streamlit as st

from pages import common

common.leave_legacy_pages_mode()
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
    st.Page("pages/inside_mha.py", title="Inside MHA", icon="🧮"),
    st.Page("pages/training_lab.py", title="Training lab", icon="🏋️"),
    st.Page("pages/all_heads.py", title="All heads", icon="🗺️"),
    st.Page("pages/head_lab.py", title="Head lab", icon="🔧"),
    st.Page("pages/two_readings.py", title="Two readings", icon="⚖️"),
]
st.navigation(pages).run()
