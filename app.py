"""headscope: what every attention head of a real BERT looks at.

The frame: page config, navigation over pages/, the sidebar every page shares, and the link
(query parameters) that restores a view.
"""

import streamlit as st

from pages import common

common.leave_legacy_pages_mode()
st.set_page_config(page_title="headscope", page_icon="🔭", layout="wide")

link_notes = common.read_query_params()  # first run of a session only: the shared link
st.html(common.PAGE_CSS)  # constant CSS, no user text
if common.presenting():
    st.html(common.PRESENT_CSS)

pages = [
    st.Page("pages/explorer.py", title="Explorer", icon="🔍", default=True),
    st.Page("pages/inside_mha.py", title="Inside MHA", icon="🧮"),
    st.Page("pages/training_lab.py", title="Training lab", icon="🏋️"),
    st.Page("pages/all_heads.py", title="All heads", icon="🗺️"),
    st.Page("pages/head_lab.py", title="Head lab", icon="🔧"),
    st.Page("pages/two_readings.py", title="Two readings", icon="⚖️"),
]
page = st.navigation(pages, position="top" if common.presenting() else "sidebar")
common.keep_widgets()  # a page's settings survive a visit to another page
# The Training lab trains its own small models: it does not wait for the BERT checkpoint
common.sidebar(needs_model=page.url_path != "training_lab")
common.sync_link()
for note in link_notes:
    st.warning(note, icon="🔗")
page.run()
