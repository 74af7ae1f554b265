"""headscope: what every attention head of a real BERT looks at.

The frame: page config, navigation over pages/, and the sidebar every page shares.
"""

import streamlit as st

from pages import common

st.set_page_config(page_title="headscope", page_icon="🔭", layout="wide")

with st.sidebar:
    st.title("headscope")
    names = list(common.model_choices())
    st.selectbox("Model", names, key="model")
    st.text_area("Sentence", value=common.DEFAULT_TEXT, key="text", height=90)

pages = [
    st.Page("pages/explorer.py", title="Explorer", icon="🔍", default=True),
    st.Page("pages/inside_mha.py", title="Inside MHA", icon="🧮"),
    st.Page("pages/training_lab.py", title="Training lab", icon="🏋️"),
    st.Page("pages/all_heads.py", title="All heads", icon="🗺️"),
    st.Page("pages/head_lab.py", title="Head lab", icon="🔧"),
    st.Page("pages/two_readings.py", title="Two readings", icon="⚖️"),
]
st.navigation(pages).run()
