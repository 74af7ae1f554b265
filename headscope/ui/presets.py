"""The example sentences offered in the sidebar, the word worth following in each, and the view
each is about."""

import streamlit as st

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
# Examples that fill both boxes: a sentence pair, as BERT was trained on
PAIR_PRESETS = {
    "Pair: who had the telescope?": ("I saw the man with a telescope.",
                                     "He was holding it in his hand."),
    "Pair: the bank, twice": ("I went to the bank to deposit money.",
                              "We sat on the bank of the river."),
}
# Every example as one line (a pair joined by [SEP]): Corpus search's example corpus
EXAMPLE_LINES = [*PRESETS.values(), *(f"{a} [SEP] {b}" for a, b in PAIR_PRESETS.values())]
# The word worth following in each preset (the Explorer's default focus token)
PRESET_FOCUS = {
    "I saw the man with a telescope.": "with",
    "The astronomer saw the man with a telescope.": "with",
    "The animal didn't cross the street because it was too tired.": "it",
    "I went to the bank to deposit money.": "bank",
    "We sat on the bank of the river.": "bank",
    "The cat sat on the mat.": "sat",
    "Time flies like an arrow; fruit flies like a banana.": "like",
}


def default_focus(text: str, labels, special, causal: bool = False) -> int:
    """The preset's word worth following if the text is a preset, else the first word; for a
    decoder (causal: the first token sees only itself) the last token with a letter or digit,
    which sees the whole text."""
    want = PRESET_FOCUS.get(text, "").lower()
    lowered = [x.lower() for x in labels]
    if want in lowered:
        return lowered.index(want)
    if causal:
        words = [i for i, (t, s) in enumerate(zip(labels, special))
                 if not s and any(c.isalnum() for c in t)]
        if words:
            return words[-1]
    return next((i for i, s in enumerate(special) if not s), 0)


# The view each example is about (docs/teaching.md's lessons): picking the example opens the
# Explorer on it. Layers and heads numbered from 1, as in links.
EXAMPLE_VIEW = {
    "I saw the man with a telescope.": {"layer": "2", "head": "10", "focus": "with"},
    "The astronomer saw the man with a telescope.": {"layer": "2", "head": "10", "focus": "with"},
    "The animal didn't cross the street because it was too tired.":
        {"layer": "4", "head": "2", "focus": "it"},
}
_EXAMPLE_KEY = "_example_view"


def choose_example_view(text: str, bundled: bool = True):
    """The sidebar's call when an example is picked: its view, or its focus token alone. The
    views' layers and heads are the bundled encoder's: another model (bundled=False) gets the
    focus token alone."""
    view = (EXAMPLE_VIEW.get(text) if bundled else None) or (
        {"focus": PRESET_FOCUS[text]} if text in PRESET_FOCUS else {})
    st.session_state[_EXAMPLE_KEY] = dict(view)


def take_example_view() -> dict:
    """The Explorer's call: the view of the example picked last, once."""
    return st.session_state.pop(_EXAMPLE_KEY, {})
