"""Every head of every layer, the whole (L, H, T, T) tensor with its tokens, as downloads under a
view: NumPy .npz, JSON, CSV (headscope.ui.export). The files are built only when a button is
clicked, and only up to a size (a visitor's click is bounded): CSV and JSON to MAX_TEXT_ENTRIES
weights, .npz to MAX_NPZ_ENTRIES."""

import streamlit as st

from . import models
from .export import tensor_csv, tensor_json, tensor_npz
from .sidebar import whole_run

MAX_TEXT_ENTRIES = 2_000_000  # CSV ~80 MB, JSON ~20 MB: 128 tokens on a 6 x 12 model is 1.2 M
MAX_NPZ_ENTRIES = 40_000_000  # 160 MB of float32: 512 tokens on a 12 x 12 model is 37.7 M


def tensor_downloads(container, name: str, text: str, pair: str | None, key: str,
                     why_not: str | None = None):
    """Three download buttons (.npz, JSON, CSV) in `container` for the text's whole tensor
    (token level, every special token kept), in a popover built only while open (one element
    a new sentence sends, not seven); key: the page's widget-key prefix; why_not: there is no
    text to give, said in the popover instead of the buttons."""
    with container.popover("Every head as a file: .npz, JSON, CSV", icon=":material/download:",
                           key=f"{key}_all", on_change=whole_run) as box:
        if box.open and why_not:
            st.caption(why_not)
        elif box.open:
            buttons(name, text, pair, key)


def buttons(name: str, text: str, pair: str | None, key: str):
    """The three buttons of tensor_downloads, side by side where they are drawn."""
    res = models.attend(name, text, pair)  # cached
    L, H, T, _ = res.attentions.shape
    n = L * H * T * T
    meta = dict(model=name, text=text, pair=pair, shape=[L, H, T, T],
                numbering="arrays from 0; CSV layer and head from 1")
    stem = f"attention_all_{L}x{H}x{T}x{T}"
    att = res.attentions.numpy  # (L, H, T, T), called only when a file is built
    big = f"{n:,} weights: too many for this format here; use .npz or headscope export"
    a, b, c = st.columns(3)
    a.download_button("All heads .npz", lambda: tensor_npz(res.labels, att(), **meta),
                      file_name=f"{stem}.npz", mime="application/octet-stream",
                      key=f"{key}_all_npz", width="stretch", disabled=n > MAX_NPZ_ENTRIES,
                      help=f"The whole L×H×T×T tensor ({L}×{H}×{T}×{T}) with its tokens "
                           "(np.load(f)['attentions'], f['tokens'])")
    b.download_button("All heads JSON", lambda: tensor_json(res.labels, att(), **meta),
                      file_name=f"{stem}.json", mime="application/json", key=f"{key}_all_json",
                      width="stretch", disabled=n > MAX_TEXT_ENTRIES,
                      help=big if n > MAX_TEXT_ENTRIES else "shape, tokens, attentions[l][h][q][k]")
    c.download_button("All heads CSV", lambda: tensor_csv(res.labels, att()),
                      file_name=f"{stem}.csv", mime="text/csv", key=f"{key}_all_csv",
                      width="stretch", disabled=n > MAX_TEXT_ENTRIES,
                      help=big if n > MAX_TEXT_ENTRIES else
                      "one row per weight: layer, head, query, key, their tokens, weight")
