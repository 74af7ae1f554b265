"""The attention component: Streamlit Custom Components v2, drawn in the page (no iframe) by our
own plain JS on <canvas>: the ES modules of js/, which Streamlit serves as they are through the
package's manifest (headscope/pyproject.toml). A message carries the entry module's URL
(host_streamlit.js), not the code; the browser imports the rest by their names. Where Streamlit
found no manifest (headscope not installed, or AppTest) the code travels inline instead, as
one module (bundle.streamlit_js).

    from headscope.ui.attention import attention, grid_payload, lines_payload
    attention(explorer_payload(...), key="ex_view", on={"mask": mask, "need": need})
                                            # the Explorer: every layer once, drawn and
                                            # changed in the browser (explorer_payload.py)
    attention(grid_payload(maps, labels, special, titles, heads=H, selected=h), key="ex_mask_diff",
              on_head=pick)                 # a grid of maps; a click on head i calls pick(i)
    result = attention(lines_payload(att, labels, special, view=v, maskable=m), key="hv_lines",
                       on_view=changed, on_token=mask)  # the head view and model view; a
                                            # click on a maskable token calls mask(i)
    result.view                             # {mode, layer, heads, focus, seq} chosen in the browser

What it relies on in Streamlit's v2 contract: with a stable `key` the element and its canvases
stay and the JS is called again with new data (not at all for identical data);
`setTriggerValue("head", i)` reruns with result.head set for that run; `setStateValue("view",
v)` keeps v across reruns.

Test hooks on the host element after each draw: data-drawn (the shown tokens joined by single
spaces), data-view, data-tag, data-draw-ms (decode + draw) and data-hover-ms (the last hover,
event to drawn); the head view's data-lines, data-lines-above, data-line-queries,
data-line-keys, data-heads-on, data-layer, data-threshold; the grid's, focus grid's and bars'
data-label-px, data-title-px, data-number-px (the smallest text drawn) and data-unlabelled;
the bars' data-keys.
"""

import json

import streamlit as st
from streamlit.errors import StreamlitAPIException, StreamlitComponentRegistryError

from ..presentation import presenting
from ..style import PROJECTOR_SCALE
from . import bundle

ENTRY = "host_streamlit.js"  # the module Streamlit imports; it imports the others
NAME = "headscope.attention"  # the manifest's project name and component name
_MOUNT = []  # (served, the mounting callable), made once per process


def _mounter():
    """st.components.v2's callable, made once: with the served modules when this server found
    the package's manifest (file names inside its asset folder), else with the code inline, one
    module (sent with every rerun)."""
    if not _MOUNT:
        try:
            mount = st.components.v2.component(NAME, js=ENTRY, css=bundle.CSS_FILE)
            _MOUNT.append((True, mount))
        except (StreamlitAPIException, StreamlitComponentRegistryError, ValueError):
            # no asset folder known for NAME, or the entry module not in it (ValueError)
            _MOUNT.append((False, st.components.v2.component(NAME, js=bundle.streamlit_js(),
                                                             css=bundle.css())))
    return _MOUNT[0]


def attention(payload: dict, key: str, on_head=None, on_view=None, on_token=None,
              filename: str = "attention", tag: str = "", meta=None, on=None):
    """Mount the component with one payload (headscope.ui.attention.payload) under a stable key.

    on_head(i): called (as a Streamlit callback, before the rerun) when head i of a grid is
    clicked. on_view(view): called when the head view's state changes in the browser.
    on_token(i): called when a token the payload marks maskable is clicked (a grid's query
    label, a head view's token); i indexes the payload's tokens (the shown labels).
    filename: the stem of the PNG/SVG downloads; tag: any short string, put on the host element
    as data-tag (tests wait for it). meta: {title, text, model}, the caption the PNG/SVG figures
    carry (figure.js). on: {trigger name: fn(value)} for other triggers (the Explorer's "mask"
    and "need"), called before the rerun. In presentation mode everything is drawn larger."""
    data = dict(payload, filename=filename, tag=str(tag))
    if meta:
        data["meta"] = {k: str(v) for k, v in meta.items() if v}
    if presenting():  # larger; the Explorer's views switch to their layouts for reading
        data["scale"] = data.get("scale", 1.0) * PROJECTOR_SCALE
        data["present"] = True

    def head_changed():
        value = st.session_state[key].get("head")
        if on_head is not None and isinstance(value, int):
            on_head(value)

    def view_changed():
        value = st.session_state[key].get("view")
        if on_view is not None and isinstance(value, dict):
            on_view(value)

    def token_clicked():
        value = st.session_state[key].get("token")
        if on_token is not None and isinstance(value, int) and not isinstance(value, bool) \
                and 0 <= value < len(payload.get("tokens", ())):
            on_token(value)

    def caller(name, fn):
        def changed():
            fn(st.session_state[key].get(name))
        return changed

    more = {f"on_{name}_change": caller(name, fn) for name, fn in (on or {}).items()}
    _, mount = _mounter()
    # one JSON string (the browser parses it, host_streamlit.js): Streamlit would walk a dict
    # for dataframes to send as Arrow (bidi_component serialization) on every call
    return mount(key=key, data=json.dumps(data), on_head_change=head_changed,
                 on_view_change=view_changed,
                 on_token_change=token_clicked, **more)
