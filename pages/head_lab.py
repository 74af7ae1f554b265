"""Head lab: switch heads off and watch the output change; rank the heads by importance.

Every ablation is a head_mask argument of one call. The cached model is shared by every session
and thread, so nothing here touches its weights.
"""

import numpy as np
import pandas as pd
import streamlit as st

from headscope.ui import budget, guards, link, masked_words, models, sidebar, style
from headscope.ui import figures as fg
from headscope.ui.page import Page
from headscope.ui.presentation import note, plot, presenting, tucked
from mha_core import ablation as ab
from mha_core.heads import HeadId, head_names, layer_names, parse_layer

PAGE = Page("hl", keep=("hl_how", "hl_heads", "hl_layers", "hl_k"), link=("how", "off", "k"))
pending = PAGE.start()
# "how" in the link: the three ways to switch heads off
HOW = {"heads": "Single heads", "layers": "Whole layers", "top": "Keep only the top k per layer"}


@st.cache_data(**models.bounded(), show_spinner=False)
def importance_view(name: str, text: str, pair: str | None = None) -> dict:
    """The ranking, in the worker's heavy-work slot, with a progress bar: Streamlit's Stop, a
    rerun or a closed tab end it at the next batch of masks."""
    bert = models.bert_or_raise(name)
    with budget.heavy_here("Ranking the heads"):
        bar = st.progress(0.0, text="Switching each head off in turn…")

        def step(half: int, what: str):
            return lambda i, n: bar.progress((half + i / n) / 2, text=f"{what}: {i} of {n} runs")

        imp = ab.head_importance(bert, text, pair, step(0, "Each head off in turn"))  # (L, H)
        curve = ab.pruning_curve(bert, text, imp, pair, step(1, "Heads off cumulatively"))
        bar.empty()
    return dict(importance=imp, curve=curve)


@st.cache_data(**models.bounded(), show_spinner="Running the model with the heads off…")
def ablation_view(name: str, text: str, pair: str | None, mask: tuple) -> dict:
    """The ablated run against the intact one; mask is (L, H) as nested tuples (hashable)."""
    bert = models.bert_or_raise(name)
    intact = models.attend(name, text, pair)
    ablated = bert.attend(text, pair, head_mask=np.array(mask, dtype=np.float32))
    change = ab.output_change(intact.hidden_states[-1], ablated.hidden_states[-1])  # (T,)
    n = MAX_PAIR_TOKENS  # only these are drawn: a 512-token pair would be ~150 MB in the cache
    return dict(change=change.numpy(),
                intact=intact.attentions[..., :n, :n].numpy(),  # (L, H, n, n)
                ablated=ablated.attentions[..., :n, :n].numpy(),
                map_change=ab.map_change(intact.attentions, ablated.attentions))


def ranking(name: str, text: str, pair: str | None, n_tokens: int) -> str:
    """"ready", "ask" (a button first) or "too long". The ranking is 2·L·H + 2 forward passes
    of the whole text: it runs at once on short text, on request up to RANK_MAX_TOKENS, and
    not beyond, where it would hold the server's one core for a minute."""
    if n_tokens > RANK_MAX_TOKENS:
        return "too long"
    if n_tokens <= RANK_AUTO_TOKENS or st.session_state.get("hl_ranked") == (name, text, pair):
        return "ready"
    return "ask"


def rank_now(name: str, text: str, pair: str | None):
    st.session_state.hl_ranked = (name, text, pair)


RANK_AUTO_TOKENS = 64  # longer texts are ranked on request (ranking)
RANK_MAX_TOKENS = 256  # and longer ones not at all
MAX_PAIR_TOKENS = 128  # the intact/ablated pair of maps shows at most this many tokens
CHANGE_ROOM = 370  # px: the output change on a projector, under the row of controls


PAGE.heading("Head lab", "Switch heads off and watch the output change; rank the heads by how "
             "much each one matters.")
name, text, pair = sidebar.current_model(), sidebar.current_text(), sidebar.current_pair()
bert = guards.model_or_stop(name)
facts = guards.check_text(name, text, cut=sidebar.text_was_cut(), pair=pair,
                          prompt="Type a sentence in the sidebar, then switch heads off here.")
if facts is None:
    st.stop()
L, H = bert.config.num_hidden_layers, bert.config.num_attention_heads
if models.shared_heads_note(bert):  # ALBERT: one set of heads, several layers
    st.info(models.shared_heads_note(bert))
runs = 2 * L * H + 2  # the importance ranking and the pruning curve
rank = ranking(name, text, pair, facts["n_tokens"])
why_not = {"ask": "press **Rank the heads** below first",
           "too long": f"it is offered for texts of up to {RANK_MAX_TOKENS} tokens"}
intact = guards.computed_or_stop(models.attend, name, text, pair)
tokens = intact.labels
note("Switching a head off sets its attention weights to zero for this one run (a head mask), "
     "so it adds nothing to its layer's output. The model itself is never changed.")

# the link's choice: how, which heads or layers are off, k (ignored with a message if unknown)
ss = st.session_state
link.take_choice(pending, "how", HOW, "hl_how", "The link's way of switching heads off is not "
                 "one of heads, layers or top; it was ignored.")
if "off" in pending:  # heads ("L1 H3") or layers ("L6"), comma-separated
    by_layer = ss.get("hl_how") == HOW["layers"]
    parse = parse_layer if by_layer else HeadId.parse
    known, ignored = [], set()
    for raw in filter(str.strip, pending.pop("off").split(",")[:L * H]):
        try:
            item = parse(raw)
        except ValueError:
            ignored.add(raw.strip())
            continue
        if item < L if by_layer else item.layer < L and item.head < H:
            known += [item] if item not in known else []
        else:
            ignored.add(item)
    names = [layer_names(L)[i] for i in known] if by_layer else [str(h) for h in known]
    ss["hl_layers" if by_layer else "hl_heads"] = names
    if ignored:
        st.warning(f"{len(ignored)} of the link's heads or layers are not in this model; they "
                   "were ignored.", icon=style.ICON_LINK)
if "k" in pending:
    value, note = link.clamp_int(pending.pop("k"), 0, H, "k")
    if value is not None:
        ss.hl_k = value
    if note:
        st.warning(note, icon=style.ICON_LINK)
ss.setdefault("hl_k", H)
ss.hl_k = min(ss.hl_k, H)  # after a model change

# on a projector: one row (how, which, the two numbers) above the output change
if presenting():
    how_col, pick, off_col, change_col = st.columns([1.3, 3, 1.4, 1.6],
                                                    vertical_alignment="bottom")
else:
    st.subheader("Switch heads off")
    how_col = pick = st
how = tucked(ss.get("hl_how") or HOW["heads"], how_col).radio(
    "How", list(HOW.values()), horizontal=True, key="hl_how")
mask, off, k = np.ones((L, H)), [], None
if how == "Single heads":
    off = pick.multiselect("Heads to switch off", head_names(L, H), key="hl_heads",
                           placeholder="Choose heads, e.g. L1 H3")
    for item in map(HeadId.parse, off):
        mask[item.layer, item.head] = 0
elif how == "Whole layers":
    off = pick.multiselect("Layers to switch off", layer_names(L), key="hl_layers")
    for item in off:
        mask[parse_layer(item)] = 0
else:
    k = pick.slider("Heads kept in each layer (the most important on this sentence)", 0, H,
                    key="hl_k")
    if rank == "ready":
        mask = ab.top_k_mask(importance_view(name, text, pair)["importance"], k)
    else:  # the mask stays all ones until the heads are ranked
        st.info(f"Keeping the top k needs the ranking of the heads: {why_not[rank]}.")

how_param = next(short for short, shown in HOW.items() if shown == how)
link.write_query_params(how=None if how_param == "heads" else how_param,
                        off=",".join(off) or None, k=k)

view = ablation_view(name, text, pair, tuple(map(tuple, mask.tolist())))
n_off = int((mask == 0).sum())
c1, c2 = (off_col, change_col) if presenting() else st.columns(2)
c1.metric("Heads switched off", f"{n_off} of {L * H}")
c2.metric("Output change (mean 1 − cos)" if presenting() else
          "Output change (mean 1 − cos of the final layer)", f"{view['change'].mean():.4f}")
plot(st, fg.token_change_figure(tokens, view["change"]), room=CHANGE_ROOM,
     key="hl_token_change", config={"displayModeBar": False})

if n_off:
    lowest = int(np.argwhere(mask == 0)[:, 0].min())
    if lowest == L - 1:
        st.markdown(f"**The maps.** Only heads of the last layer, L{L}, are off: no head reads "
                    "a changed input, so no map moves; the change is in the output above. A "
                    "head that is off has an all-zero map.")
    else:
        st.markdown(f"**The maps.** Layers up to L{lowest + 1} see the same input as before; "
                    "from the next layer on, every head reads a changed input, so its map "
                    "moves. A head that is off has an all-zero map.")
    plot(st, fg.map_change_figure(view["map_change"], mask), key="hl_map_change",
         config={"displayModeBar": False})
    above = view["map_change"].copy()
    above[mask == 0] = -1  # suggest the head still on whose map moved most
    if above.max() <= 0:  # none moved (only the last layer is off, or every head): one that is off
        above = (mask == 0).astype(float)
    best = np.unravel_index(np.argmax(above), above.shape)
    pick = st.selectbox("Compare one head, intact and ablated", head_names(L, H),
                        index=HeadId(*map(int, best)).index(H), key="hl_pick")
    picked = HeadId.parse(pick)
    layer, head = picked.layer, picked.head
    plot(st, fg.side_by_side_figure(
        view["intact"][layer, head], tokens[:MAX_PAIR_TOKENS], view["ablated"][layer, head],
        tokens[:MAX_PAIR_TOKENS],
        f"{pick}, intact", f"{pick}, with the heads off"), key="hl_pair",
        config={"displayModeBar": False})
    if len(tokens) > MAX_PAIR_TOKENS:
        st.caption(f"The maps show the first {MAX_PAIR_TOKENS} tokens.")

st.subheader("Which heads help predict a masked word?")
if not masked_words.can_mask(bert):  # a decoder: no [MASK] token at all
    st.info(masked_words.no_mask_notice(bert), icon=style.ICON_INFO)
elif not bert.has_mlm_head:
    st.caption(masked_words.no_head_notice(bert, name).replace(
        " Masking a word still shows how every head's attention moves.", " With one, this "
        "section switches off each head alone and measures how much the masked word's "
        "probability drops (Michel et al. 2019, on the masked-LM output)."))
else:
    st.caption("Each head is switched off alone and the masked-LM head predicts the masked word "
               "again: the drop in its probability is the head's importance for this word "
               "(Michel et al. 2019 in ablation form, measured on the model's own output). "
               "Choose a word to mask, or leave none to use the first [MASK] typed in the text "
               "(whose target is then the intact model's top prediction).")
    position = masked_words.mask_choice(intact, "hl_mask")
    if position is None and not facts["masks"]:
        st.info("Type [MASK] in the sentence or choose a word to mask.", icon=style.ICON_TYPE)
    elif rank != "ready":
        st.info(f"This needs {L * H + 1} forward passes: {why_not[rank]}.")
    else:
        mi = guards.computed_or_none(models.mask_importance, name, text, pair, position)
        if mi is not None:
            plot(st, fg.mask_importance_figure(mi["importance"], mi["target"]),
                 key="hl_mask_importance", config={"displayModeBar": False})
            best = np.unravel_index(np.argmax(mi["importance"]), mi["importance"].shape)
            st.caption(f"With every head on, P(“{guards.md_text(mi['target'])}”) = "
                       f"{mi['p_intact']:.4f}. The head it needs most here is "
                       f"{HeadId(*map(int, best))} (−{mi['importance'].max():.4f}); a negative "
                       "drop means the word gets likelier without that head.")

st.subheader("Which heads matter? (Michel et al. 2019, ablation form)")
st.caption("Each head is switched off alone and the final layer is compared with the intact "
           "run (mean 1 − cos over tokens). One batched forward pass serves many heads. "
           "Michel et al. 2019 (*Are Sixteen Heads Really Better than One?*) found that most "
           "heads can go with little change; the curve shows how many can go here, removing "
           "the least important first. This measures one sentence's hidden states, not a "
           "task's accuracy.")
if rank == "ask":
    st.button(f"Rank the heads ({runs} forward passes of {facts['n_tokens']} tokens)",
              key="hl_rank", on_click=rank_now, args=(name, text, pair))
    st.caption(f"Texts of more than {RANK_AUTO_TOKENS} tokens are ranked on request.")
    st.stop()
if rank == "too long":
    st.info(f"This text has {facts['n_tokens']} tokens. The ranking switches off each head "
            f"in turn ({runs} forward passes of the whole text), and {why_not[rank]}.")
    st.stop()
imp_view = importance_view(name, text, pair)
imp = imp_view["importance"]
plot(st, fg.importance_figure(imp), key="hl_importance", config={"displayModeBar": False})
left, right = st.columns([1, 2])
ranking = pd.DataFrame({"head": head_names(L, H), "importance": imp.ravel()})
ranking = ranking.sort_values("importance", ascending=False).reset_index(drop=True)
ranking.index += 1
left.dataframe(ranking.style.format({"importance": "{:.4f}"}), key="hl_ranking", height=340)
plot(right, fg.pruning_curve_figure(imp_view["curve"]), key="hl_pruning",
     config={"displayModeBar": False})
curve = imp_view["curve"]
for limit in (0.01, 0.05):
    can_go = int(np.argmax(curve > limit)) - 1 if (curve > limit).any() else len(curve) - 1
    right.caption(f"{can_go} of {L * H} heads can go before the mean change passes {limit}.")
