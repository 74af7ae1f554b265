"""Hook points: the named values of one forward pass, recorded on request or replaced by a hook.

Every analysis reads what the encoder computed in the run that made the maps, instead of
re-deriving a layer from its weights. The model's forward calls `tap(name, value)` at each hook
point (mha_core.encoder, mha_core.attention); without a Tap nothing is recorded and nothing extra is
computed. Layers are counted as run: ALBERT's shared layers unrolled, one entry per attention
layer executed. TransformerLens's `run_with_cache` and hook points are the model for this.

    out, cache = bert.model.run_with_cache(ids, names=("q", "k", "weights"))
    cache["q"]          # (L, B, H, T, K): every run layer's queries, stacked
    cache["q", 3]       # (B, H, T, K): the fourth run layer's
    out = bert.model(ids, hooks={("z", 2): lambda z, layer: z * 0})   # patch one value

A hook is called as fn(value, layer) (layer: the run layer, 0-based; None for "embed") and
returns the value to use instead, or None to keep it. Keys name a value in every layer ("z") or
in one (("z", 2)). Shape letters: B batch, T tokens, D hidden size, H heads, K head size,
F feed-forward size, L layers run.
"""

from collections import defaultdict

import torch

# name -> (shape, what it is); the one table of hook points (docs/forward-cache.md shows it)
NAMES = {
    "embed": ("(B, T, D)", "the embeddings' output: the first layer's input (not per layer)"),
    "attn_in": ("(B, T, D)", "what the attention block reads: the layer's input, or its "
                             "pre-norm of it (ModernBERT)"),
    "q": ("(B, H, T, K)", "queries as scored (ModernBERT: after rotary), with b_Q"),
    "k": ("(B, H, T, K)", "keys as scored (ModernBERT: after rotary), with b_K"),
    "v": ("(B, H, T, K)", "values, with b_V"),
    "score_c2c": ("(B, H, T, T)", "DeBERTa: content-to-content term, over sqrt(3 K)"),
    "score_c2p": ("(B, H, T, T)", "DeBERTa: content-to-position term, over sqrt(3 K)"),
    "score_p2c": ("(B, H, T, T)", "DeBERTa: position-to-content term, over sqrt(3 K)"),
    "scores": ("(B, H, T, T)", "the scaled scores before the mask (DeBERTa: the terms' sum)"),
    "mask": ("(B|1, 1, 1|T, T)", "the additive mask the layer adds to the scores "
                                        "(padding; ModernBERT's band in local layers); None "
                                        "where nothing is masked"),
    "weights": ("(B, H, T, T)", "softmax(scores + mask), times the head mask: the maps"),
    "single_head": ("(B, T, T)", "the layer's weights read as one head of width D: the heads' "
                                 "scores summed over sqrt(H), one softmax"),
    "z": ("(B, H, T, K)", "each head's weighted sum of values: weights @ v"),
    "head_out": ("(B, H, T, D)", "each head's share of the output, z_h W_O,h (without b_O); "
                                 "computed only when asked for"),
    "attn_out": ("(B, T, D)", "the attention block's output: the heads' shares summed, + b_O"),
    "resid_mid": ("(B, T, D)", "the stream after attention: LN(x + attn_out) post-LN, "
                               "x + attn_out pre-LN (ModernBERT)"),
    "ffn_act": ("(B, T, F)", "the feed-forward's hidden activation: act(x W_in), or GeGLU's "
                             "act(a) * g"),
    "ffn_out": ("(B, T, D)", "the feed-forward block's output, before the residual"),
    "resid_post": ("(B, T, D)", "the layer's output: the next layer's input"),
}


class HookError(ValueError):
    """A name that is no hook point, or a hook that returned a tensor of another shape."""


def check_names(names) -> None:
    unknown = [n for n in names if n not in NAMES]
    if unknown:
        raise HookError(f"no hook point named {', '.join(map(repr, unknown))}; the names are "
                        f"{', '.join(NAMES)}")


class Tap:
    """What one forward records (names, optionally only in some run layers) and which values
    it replaces (hooks). Made for one call; the shared model never holds one."""

    def __init__(self, names=(), hooks=None, layers=None, everywhere=()):
        self.names = frozenset(names)
        self.everywhere = frozenset(everywhere)  # names recorded in every layer regardless
        self.hooks = dict(hooks or {})
        check_names(self.names | {k[0] if isinstance(k, tuple) else k for k in self.hooks})
        self.layers = None if layers is None else frozenset(layers)
        self.layer = None  # the run layer being computed; set by the layer loop
        self.cache = defaultdict(dict)  # name -> {layer: value}

    def hooked(self, name: str) -> bool:
        """Whether a hook may replace this value in the current layer."""
        return name in self.hooks or (name, self.layer) in self.hooks

    def check_layers(self, n_layers: int) -> None:
        """Refuse a hook on a layer the run does not have ("embed" has none): it would never
        fire, silently."""
        for key in self.hooks:
            if isinstance(key, tuple):
                name, layer = key
                if name == "embed" or not isinstance(layer, int) or not 0 <= layer < n_layers:
                    raise HookError(f"the hook on {key!r} would never run: layers run from 0 to "
                                    f"{n_layers - 1}, and 'embed' takes no layer")

    def wants(self, name: str) -> bool:
        """Whether anything reads this value in the current layer: compute it only then."""
        return (name in self.names and self._recorded(name)) or self.hooked(name)

    def _recorded(self, name: str) -> bool:
        return (self.layers is None or self.layer is None or self.layer in self.layers
                or name in self.everywhere)

    def __call__(self, name: str, value):
        """The value the forward goes on with: the hook's replacement, if any; recorded."""
        for key in (name, (name, self.layer)):
            fn = self.hooks.get(key)
            if fn is not None:
                new = fn(value, self.layer)
                if new is not None:
                    if isinstance(value, torch.Tensor) and (
                            not isinstance(new, torch.Tensor) or new.shape != value.shape):
                        raise HookError(f"the hook on {name!r} returned "
                                        f"{getattr(new, 'shape', type(new))}, not a tensor "
                                        f"of shape {tuple(value.shape)}")
                    value = new
        if name in self.names and self._recorded(name):
            self.cache[name][self.layer] = value
        return value


class ForwardCache:
    """The values one forward recorded: cache[name] stacks the run layers in order
    (L, B, ...); cache[name, layer] is one layer's (B, ...); "embed" is (B, T, D)."""

    def __init__(self, recorded: dict):
        self._values = {name: dict(by_layer) for name, by_layer in recorded.items()}

    def __contains__(self, name) -> bool:
        return name in self._values

    def names(self) -> list:
        return list(self._values)

    def layers(self, name: str) -> list:
        """The run layers that recorded name, in order."""
        return sorted(k for k in self._values[name] if k is not None)

    def __getitem__(self, key):
        name, layer = key if isinstance(key, tuple) else (key, "all")
        if name not in self._values:
            raise KeyError(f"{name!r} was not recorded; ask for it by name (recorded: "
                           f"{', '.join(self._values) or 'nothing'})")
        by_layer = self._values[name]
        if layer != "all":
            return by_layer[layer]
        if None in by_layer:
            return by_layer[None]
        values = [by_layer[i] for i in self.layers(name)]
        if any(v is None for v in values):
            return values  # "mask" where a layer masks nothing
        if len({v.shape for v in values}) > 1:  # ModernBERT: padding (B,1,1,T), band (B,1,T,T)
            values = torch.broadcast_tensors(*values)
        return torch.stack(values)

    def to(self, device) -> "ForwardCache":
        """A copy with every tensor moved (e.g. to the CPU for a cache shared by sessions)."""
        return ForwardCache({n: {i: None if v is None else v.to(device)
                                 for i, v in d.items()} for n, d in self._values.items()})

    def __repr__(self):
        return f"ForwardCache({', '.join(f'{n}: {len(d)}' for n, d in self._values.items())})"


def replace_attention(layer: int, fn) -> dict:
    """Hooks that replace run layer `layer`'s attention block by fn(attn_in (B, T, D), mask)
    -> (B, T, D): the layer's norms, residual and feed-forward stay the model's own. fn sees
    exactly what the layer's attention read, with the layer's own mask (padding, band). The
    hooks keep that run's input between two hook points: make them for each call, never share
    one dict between threads."""
    seen = {}

    def remember(name):
        def hook(value, _layer):
            seen[name] = value
        return hook

    return {("attn_in", layer): remember("x"), ("mask", layer): remember("mask"),
            ("attn_out", layer): lambda value, _layer: fn(seen["x"], seen["mask"])}
