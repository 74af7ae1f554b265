"""The Explorer's floor: what Enter -> every map drawn costs in Streamlit with nothing on the
page but the sentence box and the four maps. A benchmark's app, not a page of headscope.

The same sidebar text area (Ctrl+Enter applies it), the same cached computations
(headscope.ui.explorer_cache, headscope.ui.models: the forward pass on a new sentence), the same
maps through the same payload functions (without the page's extras: entropies in the titles, click
targets, download names) and the same attention component under the same keys (ex_grid,
ex_focus_grid, ex_big, ex_focus_bars) as pages/explorer.py, in the same two rows of columns;
no frame (navigation, copy-link box, start card, CSS, link), no controls, captions, downloads
or masked-word section. So
`bench/explorer_path.py --app bench/explorer_floor_app.py` times the part of the Explorer's
path that no change to the page's other elements can remove: Streamlit's rerun, its frontend
and the component.

HEADSCOPE_FLOOR_PARTS (comma-separated) adds stand-ins for the page's other parts, each the
same Streamlit elements as the Explorer's (not its logic), to see what each costs the browser:
  frame     the page CSS, the link's query parameters, a navigation of 11 pages
  controls  the row of view controls: layer slider, head and focus select boxes, 3 toggles
  rest      captions, the one-head popover and page link, 5 download buttons in columns,
            the masked-word section's heading, caption and select box
"""

import os
import sys
from pathlib import Path

import numpy as np
import streamlit as st

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from headscope.ui import figures, models, style  # noqa: E402
from headscope.ui.attention import attention, bars_payload, focus_payload, grid_payload  # noqa: E402
from headscope.ui.explorer_cache import focus_view, layer_view  # noqa: E402
from headscope.ui.layers import default_layer  # noqa: E402

PARTS = set(os.environ.get("HEADSCOPE_FLOOR_PARTS", "").split(","))
NAME = models.BUNDLED
LAYER = default_layer(NAME)  # the layer the Explorer opens on

st.set_page_config(page_title="headscope floor", layout="wide")
text = st.sidebar.text_area("Sentence", "I saw the man with a telescope.", key="text")
if "frame" in PARTS:
    st.html(style.PAGE_CSS)
    st.query_params.update(text=text, layer=str(LAYER + 1))


def controls(labels):
    c = st.columns([2.4, 1.6, 1.9, 2.1, 2.5, 1.9], vertical_alignment="bottom")
    c[0].slider("Layer", 1, 6, LAYER + 1, key="fl_layer")
    c[1].selectbox("Head", list(range(1, 13)), key="fl_head", format_func=lambda h: f"head {h}")
    c[2].selectbox("Focus token", list(range(len(labels))), key=f"fl_focus_{len(labels)}",
                   format_func=lambda i: f"{i}: {labels[i]}")
    for col, label in zip(c[3:], ("Whole words", "Hide [CLS]/[SEP]", "By norm")):
        col.toggle(label, key=f"fl_{label}")


def downloads(where):
    for row in (where.columns(2), where.columns(3)):
        for i, col in enumerate(row):
            col.download_button(f"Download {len(row)}.{i}", b"x", file_name=f"x{i}.csv",
                                key=f"fl_dl_{len(row)}_{i}", width="stretch")


def page():
    v = layer_view(NAME, text, LAYER, False, False, None, False)
    f = focus_view(NAME, text, 1, False, False, None, False)  # the first word
    H = v["heads"].shape[0]
    head, labels = int(np.argmax(v["word_focus"])), v["labels"]
    if "controls" in PARTS:
        controls(labels)
    maps = np.concatenate([v["heads"], v["single"][None], v["mean"][None]])  # (H + 2, G, G)
    titles = [f"head {h + 1}" for h in range(H)] + ["summed head", "mean of heads"]
    left, right = st.columns([3, 2], gap="medium")
    with left:
        attention(grid_payload(maps, labels, v["special"], titles, heads=H, selected=head,
                               fit=True), key="ex_grid", tag=f"layer {LAYER + 1}")
    with right:
        colors = figures.token_colors(labels, v["special"])
        attention(focus_payload(f["top"], f["weight"], labels, colors, labels[1], layer=LAYER,
                                head=head), key="ex_focus_grid")
        if "rest" in PARTS:
            st.caption("The summed head's caption. " * 6)
            st.popover("Is one head enough?").write("closed")
            st.page_link("https://example.org", label="One head trained against many")
    if "rest" in PARTS:
        st.caption("Each map: rows are the tokens looking, columns the tokens looked at. " * 6)
    big, bars = st.columns([2, 3], gap="medium")
    with big:
        attention(grid_payload(v["heads"][head][None], labels, v["special"],
                               [f"head {head + 1}"], heads=0, big=True), key="ex_big")
        if "rest" in PARTS:
            downloads(big)
    with bars:
        segments = figures.focus.key_segments(f["rows"][LAYER], labels, v["special"])
        attention(bars_payload(segments, labels, "where the focus token attends"),
                  key="ex_focus_bars")
    if "rest" in PARTS:
        st.subheader("Mask a word")
        st.caption("This model has no masked-LM head.")
        st.selectbox("Word to mask", [None, *range(len(labels))], key=f"fl_mask_{len(labels)}")
        st.caption("Choose a word to mask.")


if "frame" in PARTS:  # the page as one of 11 in the sidebar's navigation
    pages = [st.Page(page, title="Explorer", default=True)] + [
        st.Page(lambda: st.write("another page"), title=f"Page {i}", url_path=f"page{i}")
        for i in range(10)]
    st.navigation(pages, position="sidebar").run()
else:
    page()
