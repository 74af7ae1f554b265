"""headscope: what every attention head of a real BERT looks at.

The frame: page config, navigation over pages/, the sidebar every page shares, and the link
(query parameters) that restores a view. The pages declare their own widgets and link
parameters (ui.page.Page); nothing here lists them.
"""

import streamlit as st

from ui import link, page, sidebar, style
from ui.presentation import presenting
from ui.st_internals import leave_legacy_pages_mode

leave_legacy_pages_mode()
st.set_page_config(page_title="headscope", page_icon="🔭", layout="wide")

link_notes = link.read_query_params()  # first run of a session only: the shared link
st.html(style.PAGE_CSS)  # constant CSS, no user text
if presenting():
    st.html(style.PRESENT_CSS)

pages = [
    st.Page("pages/explorer.py", title="Explorer", icon="🔍", default=True),
    st.Page("pages/inside_mha.py", title="Inside MHA", icon="🧮"),
    st.Page("pages/training_lab.py", title="Training lab", icon="🏋️"),
    st.Page("pages/all_heads.py", title="All heads", icon="🗺️"),
    st.Page("pages/head_lab.py", title="Head lab", icon="🔧"),
    st.Page("pages/two_readings.py", title="Two readings", icon="⚖️"),
    st.Page("pages/what_heads_learn.py", title="What heads learn", icon="🌳"),
]
current = st.navigation(pages, position="top" if presenting() else "sidebar")
page.keep_widgets()  # a page's settings survive a visit to another page
# The Training lab trains its own small models: it does not wait for the BERT checkpoint
sidebar.sidebar(needs_model=current.url_path != "training_lab")
link.sync_link()
for note in link_notes:
    st.warning(note, icon="🔗")
current.run()
