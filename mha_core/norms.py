"""Norm-weighted attention (Kobayashi et al. 2020, "Attention is Not Only a Weight"): how much of
token j's transformed vector actually reaches token i through head h.

    f_h(x_j) = (x_j W_V,h + b_V,h) W_O,h        W_O,h: head h's K rows of the output projection
    ||alpha_ij f_h(x_j)|| = alpha_ij ||f_h(x_j)||   (alpha >= 0; the output bias b_O is excluded)

    maps = result_norm_maps(bert, bert.attend(text))   # (L, H, T, T) raw norms
    shown = row_normalised(maps)                       # each row sums to 1, for display

The values come from the encoder's forward cache (mha_core.hooks) of a run of the result's text
with its head mask: what each layer computed (after ModernBERT's pre-norm; one entry per layer
run). The model is read, never changed. A head switched off by a head mask has alpha = 0, so
its norms are 0.

Shape letters: L layers, H heads, T tokens, D hidden size, K = D / H; "..." any batch dims.
"""

import numpy as np
import torch

from .metrics import token_kinds

KINDS = ("cls", "sep", "punct")


@torch.no_grad()
def value_norms(model, cache) -> torch.Tensor:
    """||f_h(x_j)|| for every layer run, head and token, from a forward cache that recorded the
    values "v" (mha_core.hooks): (L, B, H, T). f_h(x_j) is head h's share of the output for
    value j, computed by the layer's own head_outputs, as the forward computes its head_out."""
    return torch.stack([model.layer(i).attn.head_outputs(cache["v", i]).norm(dim=-1)
                        for i in cache.layers("v")])  # (L, B, H, T)


def norm_maps(attentions, norms) -> torch.Tensor:
    """||alpha_ij f_h(x_j)||: attentions (L, ..., H, T, T) and value norms (L, ..., H, T) of
    the same forward pass -> (L, ..., H, T, T), raw norms (rows do not sum to 1)."""
    return attentions * norms[..., None, :]  # key j's norm, in every row


@torch.no_grad()
def result_norm_maps(bert, res, layer: int | None = None) -> torch.Tensor:
    """The norm maps of an AttentionResult: (L, H, T, T) raw norms, on the CPU; with `layer`,
    that run layer's alone (H, T, T), from a run that stops there. The values are read from a
    run of the result's text with its head mask (Model.trace)."""
    if layer is None:
        cache = bert.trace(res, ("v",))
        return norm_maps(res.attentions, value_norms(bert.model, cache)[:, 0].to("cpu"))
    cache = bert.trace(res, ("v",), layers=[layer])
    return norm_maps(res.attentions[layer], value_norms(bert.model, cache)[0, 0].to("cpu"))


def row_normalised(maps: torch.Tensor) -> torch.Tensor:
    """Each row divided by its sum, so it reads like attention weights; a row of zeros (a head
    switched off) stays zero."""
    total = maps.sum(dim=-1, keepdim=True)
    return torch.where(total > 0, maps / total.clamp_min(1e-30), maps)


def kind_shares(maps, kinds: dict) -> dict:
    """Per layer, the mean share (over heads and query rows) of each row that lands on [CLS],
    [SEP] and punctuation: maps (L, H, T, T) with rows summing to 1 -> {kind: (L,)}."""
    maps = torch.as_tensor(maps, dtype=torch.float32)
    return {k: (maps @ torch.as_tensor(kinds[k], dtype=torch.float32)).mean(dim=(1, 2)).numpy()
            for k in KINDS}


def weight_and_norm_shares(bert, texts, progress=None) -> dict:
    """Kobayashi et al.'s comparison on the loaded model, averaged over texts:
    {"weight": {kind: (L,)}, "norm": {kind: (L,)}, "n": texts used}. A text the tokenizer
    reduces to [CLS] and [SEP] alone is left out. progress(done, total) after each text."""
    sums = {"weight": {k: 0.0 for k in KINDS}, "norm": {k: 0.0 for k in KINDS}}
    n = 0
    for i, text in enumerate(texts):
        res = bert.attend(text)
        if not all(res.special):
            kinds = token_kinds(res.labels, res.special)
            for name, maps in (("weight", res.attentions),
                               ("norm", row_normalised(result_norm_maps(bert, res)))):
                for k, v in kind_shares(maps, kinds).items():
                    sums[name][k] = sums[name][k] + v
            n += 1
        if progress:
            progress(i + 1, len(texts))
    L = bert.config.num_hidden_layers
    return {name: {k: (np.asarray(v) / n if n else np.zeros(L)) for k, v in d.items()}
            for name, d in sums.items()} | {"n": n}


def main(argv=None):
    """python -m mha_core.norms [TREEBANK.conllu] [--model DIR] [--limit N]: the shares per layer
    over a treebank's sentences (default: the hand-made sample), as in docs/how-it-is-built.md's
    table."""
    import argparse

    from .api import add_device_argument, load_model
    from .treebank import DEFAULT_TREEBANK, read_treebank

    ap = argparse.ArgumentParser(prog="python -m mha_core.norms")
    ap.add_argument("treebank", nargs="?", default=str(DEFAULT_TREEBANK))
    ap.add_argument("--model", default=None)
    ap.add_argument("--limit", type=int, default=None, help="the first N sentences only")
    add_device_argument(ap)
    args = ap.parse_args(argv)
    texts = [s.text for s in read_treebank(args.treebank, max_bytes=2**40)][:args.limit]
    try:
        bert = load_model(args.model, device=args.device)
    except ValueError as e:
        ap.error(str(e))
    out = weight_and_norm_shares(bert, texts)
    print(f"{bert}: {out['n']} sentences; share of each row on [CLS] / [SEP] / punctuation")
    print(f"{'layer':<7}" + "".join(f"{k + ' ' + by:>16}" for k in KINDS
                                    for by in ("weight", "norm")))
    for layer in range(bert.config.num_hidden_layers):
        print(f"L{layer + 1:<6}" + "".join(f"{100 * out[by][k][layer]:>15.1f}%" for k in KINDS
                                           for by in ("weight", "norm")))


if __name__ == "__main__":
    main()
