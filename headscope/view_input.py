"""What a notebook view or a standalone page shows: the caller's input read as one attention
tensor with its tokens, and the attention component's payload (headscope.ui.attention.payload) for
it.

Inputs, as bertviz users know them or as headscope returns them:
    "a text"                        run through a model (the bundled one unless model= is given)
    AttentionResult                 mha_core's result (has the summed head)
    (attention, tokens)             transformers' output_attentions tuple, L x (1, H, T, T), or
                                    any (L, H, T, T) array, with the T token strings
No Streamlit, no anywidget here."""

from dataclasses import dataclass
from functools import cache

import numpy as np

from headscope.ui.attention.payload import grid_payload, lines_payload

SPECIAL = {"[CLS]", "[SEP]", "[PAD]", "<s>", "</s>", "<pad>", "[MASK]", "<mask>"}


@dataclass(frozen=True)
class Attention:
    """One text's attention: att (L, H, T, T), tokens T, special T bools; single (L, T, T) the
    summed head (each layer's weights read as one head) or None when the input has no model;
    causal: a decoder's maps (the grid draws the upper triangle as not attendable)."""
    att: np.ndarray
    tokens: tuple
    special: tuple
    single: np.ndarray | None = None
    text: str = ""
    model: str = ""
    causal: bool = False


@cache
def _bert(source, device=None):
    """One loaded model per (source, device); device None: HEADSCOPE_DEVICE, else "auto"."""
    import mha_core

    from .settings import settings

    return mha_core.load_model(source, device=device or settings().device,
                               cache_dir=settings().cache or None)


def _as_array(attention) -> np.ndarray:
    """(L, H, T, T) float32 from a tuple/list of per-layer tensors or one array."""
    if isinstance(attention, (tuple, list)):
        if not attention:
            raise ValueError("attention is empty: pass "
                             "model(..., output_attentions=True).attentions")
        layers = [_numpy(a) for a in attention]
        layers = [a[0] if a.ndim == 4 and a.shape[0] == 1 else a for a in layers]  # (H, T, T)
        if any(a.ndim != 3 for a in layers):
            raise ValueError("each layer's attention must be (1, H, T, T) or (H, T, T); got "
                             f"{[tuple(a.shape) for a in layers][:3]} (a batch of one text only)")
        return np.stack(layers).astype(np.float32)  # (L, H, T, T)
    a = _numpy(attention)
    if a.ndim == 5 and a.shape[1] == 1:
        a = a[:, 0]  # (L, 1, H, T, T) -> (L, H, T, T)
    if a.ndim != 4 or a.shape[-1] != a.shape[-2]:
        raise ValueError(f"attention must be (L, H, T, T); got shape {tuple(a.shape)}")
    return a.astype(np.float32)


def _numpy(a) -> np.ndarray:
    if hasattr(a, "detach"):
        a = a.detach().float().cpu().numpy()
    return np.asarray(a)


def read(source, tokens=None, model=None, text_pair=None) -> Attention:
    """Any supported input as an Attention (see the module's docstring)."""
    from mha_core.api import AttentionResult

    if isinstance(source, str):
        bert = model if hasattr(model, "attend") else _bert(model)
        return read(bert.attend(source, text_pair), model=bert)
    if isinstance(source, AttentionResult):
        return Attention(_numpy(source.attentions), tuple(source.labels), tuple(source.special),
                         _numpy(source.single_head), source.text + (
                             f" [SEP] {source.text_pair}" if source.text_pair else ""),
                         str(getattr(model, "name", model) or source.model or ""),
                         source.causal)
    if tokens is None:
        raise ValueError("pass the tokens with the attention: head_view(attention, tokens), "
                         "e.g. tokenizer.convert_ids_to_tokens(inputs['input_ids'][0])")
    att = _as_array(source)
    tokens = tuple(str(t) for t in tokens)
    if att.shape[-1] != len(tokens):
        raise ValueError(f"the attention covers {att.shape[-1]} tokens but {len(tokens)} tokens "
                         "were given")
    return Attention(att, tokens, tuple(t in SPECIAL for t in tokens),
                     model=str(getattr(model, "name", model) or ""))


def meta(a: Attention, title: str) -> dict:
    """The caption a figure carries: what is shown, the sentence, the model."""
    return dict(title=title, text=a.text, model=a.model)


def lines(a: Attention, mode: str = "head", layer: int = 0, heads=None) -> dict:
    """The head view (mode "head") or model view ("model") payload; layer and heads 0-based."""
    L, H = a.att.shape[:2]
    if not 0 <= layer < L:
        raise ValueError(f"layer must be 0..{L - 1} (0-based); got {layer}")
    heads = list(range(H)) if heads is None else [int(h) for h in heads]
    if not heads or any(not 0 <= h < H for h in heads):
        raise ValueError(f"heads must be a non-empty list of 0..{H - 1}; got {heads}")
    p = lines_payload(a.att, a.tokens, a.special, view=dict(mode=mode, layer=layer, heads=heads))
    return dict(p, meta=meta(a, ""))


def grid(a: Attention, layer: int = 0, selected=None) -> dict:
    """The Explorer's grid for one layer: its heads, the summed head (when the input has one) and
    the mean of the heads, on one colour scale."""
    L, H, T, _ = a.att.shape
    if not 0 <= layer < L:
        raise ValueError(f"layer must be 0..{L - 1} (0-based); got {layer}")
    heads = a.att[layer]  # (H, T, T)
    extra = [] if a.single is None else [a.single[layer]]  # (T, T)
    maps = np.stack([*heads, *extra, heads.mean(axis=0)])  # (H + 2 or H + 1, T, T)
    titles = [f"head {h + 1}" for h in range(H)] + (["summed head"] if extra else []) \
        + ["mean of heads"]
    p = grid_payload(maps, a.tokens, a.special, titles, heads=H, selected=selected)
    return dict(p, causal=a.causal, meta=meta(a, f"layer {layer + 1} · heads, summed head and mean"
                         if extra else f"layer {layer + 1} · heads and mean"))
