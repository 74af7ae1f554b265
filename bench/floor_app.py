"""Streamlit's own floor for a new sentence (bench/explorer_latency.py floor): a sidebar text
area whose callback reruns one keyed fragment, which draws the sentence as one element. With
HEADSCOPE_FLOOR_MAPS=1 the fragment also computes the Explorer's payload for the sentence
(explorer_cache.explorer_data: the forward pass and every layer's maps) and draws it with the
attention component, as the Explorer does, on an otherwise bare page."""

import os
import sys
from pathlib import Path

import streamlit as st

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # this checkout's headscope


def changed():
    st.rerun(["floor"])  # the fragment alone, as the Explorer's sentence box does


st.session_state.setdefault("text", "I saw the man with a telescope.")
with st.sidebar:
    st.text_area("Sentence", key="text", on_change=changed)


@st.fragment(key="floor")
def out():
    text = st.session_state.text
    if os.environ.get("HEADSCOPE_FLOOR_MAPS"):
        from headscope.ui.attention import attention
        from headscope.ui.attention.payload import WINDOW
        from headscope.ui.explorer_cache import explorer_data
        from headscope.ui.layers import default_layer
        from headscope.ui.models import BUNDLED

        layer = default_layer(BUNDLED)
        data = explorer_data(BUNDLED, text, None, layer, ())
        attention(dict(data, impose=None, initial_layer=layer, link=True, window=WINDOW),
                  key="ex_view", tag="floor", filename="attention",
                  meta=dict(model=BUNDLED, text=text))
    st.container(key="floor_out").text(text)


out()
