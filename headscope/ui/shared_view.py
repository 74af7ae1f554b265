"""The view the Explorer last showed (layer, head, focus token), for pages that open on it:
Inside MHA's real-model steps start on the Explorer's layer, head and focus token, so a class
moves from "which head" to "how it computes" without choosing again."""

import streamlit as st

_KEY = "_shared_view"


def remember(layer: int, head: int, focus_token: str | None, focus_position: int | None):
    """The Explorer's call: layer and head from 0; the focus as a token text and its position
    in the token-level view (None when the shown view is words or hides special tokens)."""
    st.session_state[_KEY] = (layer, head, focus_token, focus_position)


def recall():
    """(layer, head, focus token, focus position) or None if the Explorer has not run."""
    return st.session_state.get(_KEY)
