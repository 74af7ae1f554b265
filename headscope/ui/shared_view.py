"""The view the Explorer last showed (layer, head, focus token), for pages that open on it:
Inside MHA's real-model steps start on the Explorer's layer, head and focus token, so a class
moves from "which head" to "how it computes" without choosing again.

The Explorer's view lives in the browser: it keeps it in the address bar and, as the same
parameters, in the tab's sessionStorage (Streamlit clears the query string when the page
changes). A page that opens on it mounts `listen` (a hidden attention component), which sends the
stored view back once each time it changed: one run of that page, never one of the Explorer."""

import streamlit as st

_KEY = "_shared_view"


def listen(key: str, forget=()):
    """Mount the hidden component that reports the Explorer's last view (explore.js's
    "recall"); when it reports a newer one, remember it and drop the session keys `forget`
    (the page's own choices), so that the page opens on it."""
    from .attention import attention

    ss = st.session_state

    def seen(value):
        if isinstance(value, dict) and value.get("stamp") != ss.get(f"{key}_stamp"):
            ss[f"{key}_stamp"] = value.get("stamp")
            from_link(value)
            for k in forget:
                ss.pop(k, None)

    attention(dict(view="recall", stamp=ss.get(f"{key}_stamp"), tokens=[]), key=key,
              on={"seen": seen})


def from_link(params) -> None:
    """Keep the view as the Explorer's link parameters name it (parsed when read: recall)."""
    if isinstance(params, dict):
        st.session_state[_KEY] = {str(k): str(v) for k, v in params.items() if v is not None}


def recall(layers: int, heads: int):
    """(layer, head or None, focus token text or None, focus position or None), from 0, or None
    if the Explorer has not run: its stored parameters read by the Explorer's own parser
    (link.explorer_view; what it clamps is said nowhere: this is no link the reader opened).
    A position is kept only when the view was token level (neither whole words nor hidden
    specials) and names one token."""
    from .link import explorer_view

    params = st.session_state.get(_KEY)
    if params is None:
        return None
    view, _ = explorer_view(params, layers, heads)
    if "layer" not in view:
        return None
    focus = view.get("focus", "")
    token_level = not (view.get("words") or view.get("hide"))
    position = focus[1:] if focus.startswith("#") and "," not in focus else ""
    at = int(position) if token_level and position.isascii() and position.isdigit() else None
    return view["layer"], view.get("head"), None if focus.startswith("#") else focus or None, at
