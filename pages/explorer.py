"""Explorer: every head of one layer for any sentence, with the layer's single head beside them.

Widgets -> cached computation from mha_core -> figures from ui.figures.
"""

import zlib

import numpy as np
import streamlit as st

from mha_core.metrics import entropy, head_divergence
from mha_core.views import explorer_view, focus_targets
from ui import figures, guards, link, masked_words, models, presets, shared_view, sidebar, style
from ui.attention import attention, focus_payload, grid_payload
from ui.export import attention_csv, attention_json
from ui.labels import visible
from ui.page import Page
from ui.presentation import plot

PAGE = Page("ex", keep=("ex_words", "ex_nospecial"),
            link=("layer", "head", "focus", "words", "nospecial"))
pending = PAGE.start()

PLOT_CONFIG = {"displaylogo": False, "toImageButtonOptions": {"format": "png", "scale": 2}}


@st.cache_data(max_entries=8, show_spinner=False)
def default_layer(name: str) -> int:
    """The index (from 0) of the layer whose heads disagree most over the preset sentences
    (head_divergence: entropy of the heads' mean map minus the heads' mean entropy). Fixed per
    model, so the view does not jump while the class types. On the bundled model it is index 1,
    shown as layer 2, in every preset (0.43 nats on average; layer 1 is next with 0.38): sharp
    heads pointing at different tokens, while the layer's single head puts ~100% on [CLS]."""
    import torch

    try:
        div = torch.stack([head_divergence(models.attend(name, t).attentions)
                           for t in presets.PRESETS.values()])  # (presets, L)
    except Exception:  # a checkpoint whose tokenizer cannot read the presets: start at 0
        return 0
    return int(div.mean(dim=0).argmax())


@st.cache_data(**models.bounded(), show_spinner=False)
def layer_view(name: str, text: str, layer: int, word_level: bool, hide_special: bool,
               pair: str | None = None) -> dict:
    """One layer as shown: heads (H, G, G), single head and mean of heads (G, G), entropies."""
    res = models.attend(name, text, pair)
    heads, labels, special = explorer_view(res.attentions[layer], res, word_level, hide_special)
    single = explorer_view(res.single_head[layer], res, word_level, hide_special)[0]  # (G, G)
    mean = heads.mean(dim=0)  # (G, G): the mean of the maps shown
    return dict(labels=labels, special=special, heads=heads.numpy(), single=single.numpy(),
                mean=mean.numpy(), h_heads=entropy(heads).tolist(),
                h_single=float(entropy(single)), h_mean=float(entropy(mean)), tokens=res.tokens)


@st.cache_data(**models.bounded(), show_spinner=False)
def focus_view(name: str, text: str, query: int, word_level: bool, hide_special: bool,
               pair: str | None = None) -> dict:
    """Where the token at `query` (in the shown view) attends, in every head of every layer."""
    res = models.attend(name, text, pair)
    att = explorer_view(res.attentions, res, word_level, hide_special)[0]  # (L, H, G, G)
    top, weight, rows = focus_targets(att, query)
    return dict(top=top.numpy(), weight=weight.numpy(), rows=rows.numpy())


# --- model and text ------------------------------------------------------------------------
name, text, pair = sidebar.current_model(), sidebar.current_text(), sidebar.current_pair()
bert = guards.model_or_stop(name)
cfg = bert.config
L, H, D = cfg.num_hidden_layers, cfg.num_attention_heads, cfg.hidden_size
facts = guards.check_text(name, text, cut=sidebar.text_was_cut(), pair=pair,
                          prompt="Type a sentence in the sidebar (or load an example) to see "
                                 "what every head looks at.")
if facts is None:
    st.stop()

# --- view controls (the link's values first: clamped or ignored with a message) -----------
# Layers and heads are numbered from 1 on every page and in the link, as in the papers
# (Clark et al. 2019's "head 8-10"); `layer` and `head` below are 0-based indices.
ss = st.session_state
for param, key, hi in (("layer", "ex_layer", L), ("head", "ex_head", H)):
    if param in pending:
        value, note = link.clamp_int(pending.pop(param), 1, hi, param)
        if value is not None:
            ss[key] = value
        if note:
            st.warning(note, icon=style.ICON_LINK)
for param, key in (("words", "ex_words"), ("nospecial", "ex_nospecial")):
    if param in pending:  # before the focus token, which is a position in this view
        ss[key] = link.is_on(pending.pop(param))
# Widget state is dropped on a run that does not draw the widget (another page, a model that
# failed to load); "ex_shown" keeps the layer and head until the widgets are back.
shown = ss.get("ex_shown", (None, 1))
if "ex_layer" not in ss:
    ss.ex_layer = shown[0] if shown[0] is not None else default_layer(name) + 1
ss.setdefault("ex_head", shown[1])
ss.ex_layer, ss.ex_head = min(ss.ex_layer, L), min(ss.ex_head, H)  # after a model change

c1, c2, c3, c4 = st.columns([3, 2, 2, 2], vertical_alignment="bottom")
if L > 1:
    layer = c1.slider("Layer", 1, L, key="ex_layer") - 1
else:  # a slider needs two values
    layer = 0
    c1.caption("Layer 1 (this model has one layer)")
head = c2.selectbox("Enlarge head", list(range(1, H + 1)), key="ex_head",
                    format_func=lambda h: f"head {h}") - 1
word_level = c3.toggle("Whole words", key="ex_words",
                       help="Merge subword pieces into words (Clark et al. 2019): attention "
                            "to a word is summed over its pieces, attention from it averaged.")
hide_special = c4.toggle("Hide [CLS]/[SEP]", key="ex_nospecial",
                         help="Drop the special tokens and renormalise each row to sum to 1.")
ss.ex_shown = (layer + 1, head + 1)

v = guards.computed_or_stop(layer_view, name, text, layer, word_level, hide_special, pair)
labels = v["labels"]
if hide_special:
    st.caption("[CLS] and [SEP] are hidden: each row is renormalised over the remaining tokens "
               "to sum to 1, and entropies are of these maps.")

# --- per-head grid | the single head and the mean (the attention component, drawn in the
# browser: hover highlights a token's row and column in every map, a click enlarges a head) ---
def enlarge(i: int):
    if 0 <= i < H:
        ss.ex_head = i + 1


def open_head(layer_: int, head_: int):
    """A click on the focus grid: show that layer and enlarge that head."""
    if 0 <= layer_ < L and 0 <= head_ < H:
        ss.ex_layer, ss.ex_head = layer_ + 1, head_ + 1


titles = [f"head {h + 1} · {v['h_heads'][h]:.2f} nats" for h in range(H)]
titles += [f"single head (width {D}) · {v['h_single']:.2f} nats",
           f"mean of the {H} heads · {v['h_mean']:.2f} nats"]
maps = np.concatenate([v["heads"], v["single"][None], v["mean"][None]])  # (H + 2, G, G)
attention(grid_payload(maps, labels, v["special"], titles, heads=H, selected=head),
          key="ex_grid", on_head=enlarge, filename=f"attention_L{layer + 1}",
          tag=f"layer {layer + 1}")
st.caption(
    f"Each map: rows are the tokens looking (queries), columns the tokens looked at (keys); "
    f"darker means more attention, and entropy (nats) says how spread a row is. Hover a cell "
    f"to read its weight and see that row and column in every map; click a head to enlarge it. "
    f"The **single head** reads layer {layer + 1}'s weights as one head of width {D}: its "
    f"scores are the {H} heads' scores added up and put through one softmax, so the biggest "
    f"sum wins and it collapses onto one token. The **mean** is what most tools show: a blur "
    f"of the heads.")

# --- the enlarged head, with downloads | the focus token -----------------------------------
big, focus_col = st.columns([2, 3], gap="medium")
weights = v["heads"][head]  # (G, G)
plot(big, figures.heatmap(weights, labels, height=520,
                          title=f"layer {layer + 1}, head {head + 1} · "
                                f"{v['h_heads'][head]:.2f} nats"),
     config=PLOT_CONFIG, theme=None, key="ex_big")
meta = dict(model=name, text=text, pair=pair, layer=layer + 1, head=head + 1, numbering="from 1",
            view=dict(word_level=word_level, hide_special=hide_special))
d1, d2 = big.columns(2)
d1.download_button("Download CSV", lambda: attention_csv(labels, weights), mime="text/csv",
                   file_name=f"attention_L{layer + 1}_H{head + 1}.csv", width="stretch")
d2.download_button("Download JSON", lambda: attention_json(labels, weights, **meta),
                   mime="application/json", file_name=f"attention_L{layer + 1}_H{head + 1}.json",
                   width="stretch")

with focus_col:
    # a new list of tokens gets a fresh widget (crc32: the same key in every server process)
    tokens_id = zlib.crc32(chr(0).join(labels).encode("utf-8", "surrogatepass"))
    if "focus" in pending:
        found = link.resolve_focus(pending.pop("focus"), labels)
        if found is None:
            st.warning("The link's focus token is not in this sentence; it was ignored.",
                       icon=style.ICON_LINK)
        else:
            ss.ex_focus_at = (labels[found], found)
    start = link.kept_focus(ss.get("ex_focus_at", ("", -1)), labels)
    if start is None:
        start = presets.default_focus(text, labels, v["special"])
    query = st.selectbox("Focus token", list(range(len(labels))), index=start,
                         key=f"ex_focus_{tokens_id:08x}",
                         format_func=lambda i: f"{i}: {visible(labels[i])}")
    ss.ex_focus_at = (labels[query], query)
    token_level = not (word_level or hide_special)  # positions are token positions
    shared_view.remember(layer, head, labels[query], query if token_level else None)
    f = guards.computed_or_stop(focus_view, name, text, query, word_level, hide_special, pair)
    colors = figures.token_colors(labels, v["special"])
    attention(focus_payload(f["top"], f["weight"], labels, colors, labels[query]),
              key="ex_focus_grid", on_cell=open_head, filename="focus", tag=f"focus {query}")
    plot(st, figures.focus_bars(f["rows"][layer], labels, v["special"], labels[query], layer),
         config=PLOT_CONFIG, theme=None, key="ex_focus_bars")

link.write_query_params(layer=layer + 1, head=head + 1, focus=link.focus_param(labels, query),
                        words=1 if word_level else None, nospecial=1 if hide_special else None)

masked_words.section(name, text, pair, facts, "ex_mask")
