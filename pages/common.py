"""What every page shares: the model list, the cached model and results, and the sidebar's state.

The model (st.cache_resource) is ONE object shared by every session and thread: nothing may
change it. Results (st.cache_data) are copied for each caller.
"""

import os

import streamlit as st

BUNDLED = "all-MiniLM-L6-v2 (bundled)"
DEFAULT_TEXT = "I saw the man with a telescope."
PRESETS = {
    "Telescope (ambiguous)": "I saw the man with a telescope.",
    "Telescope (astronomer)": "The astronomer saw the man with a telescope.",
    "Coreference: it": "The animal didn't cross the street because it was too tired.",
    "Bank (money)": "I went to the bank to deposit money.",
    "Bank (river)": "We sat on the bank of the river.",
    "Cat on the mat": "The cat sat on the mat.",
    "Time flies": "Time flies like an arrow; fruit flies like a banana.",
}
MAX_CHARS = 20_000  # text longer than this is cut before tokenising (the model keeps 512 tokens)


def model_choices() -> dict:
    """{name: source}: the bundled model plus HEADSCOPE_MODELS ("name=path;name=path").
    The list is fixed by the server; visitors cannot name arbitrary paths."""
    choices = {BUNDLED: "bundled"}
    for item in os.environ.get("HEADSCOPE_MODELS", "").split(";"):
        name, sep, path = item.partition("=")
        if sep and name.strip() and path.strip():
            choices[name.strip()] = path.strip()
    return choices


@st.cache_resource(max_entries=4, show_spinner="Loading the model…")
def _load(name: str):
    import mha_core

    return mha_core.load_bert(model_choices()[name])


def get_bert(name: str):
    """(bert, None) or (None, error message). A broken checkpoint never takes the app down."""
    if name not in model_choices():
        return None, f"Unknown model {name!r}. Choose one from the sidebar."
    try:
        return _load(name), None
    except Exception as e:  # CheckpointError and anything a broken directory throws
        return None, f"The model {name!r} could not be loaded: {e}"


@st.cache_data(max_entries=128, ttl=3600, show_spinner=False)
def attend(name: str, text: str, text_pair: str | None = None):
    """The cached result of bert.attend for (model, text). Copied per caller."""
    bert, err = get_bert(name)
    if err:
        raise RuntimeError(err)
    return bert.attend(text, text_pair)


def current_model() -> str:
    return st.session_state.get("model", BUNDLED)


def current_text() -> str:
    return st.session_state.get("text", DEFAULT_TEXT)[:MAX_CHARS]
