"""Norm-weighted attention (Kobayashi et al. 2020, "Attention is Not Only a Weight"): how much of
token j's transformed vector actually reaches token i through head h.

    f_h(x_j) = (x_j W_V,h + b_V,h) W_O,h        W_O,h: head h's K rows of the output projection
    ||alpha_ij f_h(x_j)|| = alpha_ij ||f_h(x_j)||   (alpha >= 0; the output bias b_O is excluded)

    maps = result_norm_maps(bert, bert.attend(text))   # (L, H, T, T) raw norms
    shown = row_normalised(maps)                       # each row sums to 1, for display

Everything comes from the forward pass already made: x_j is the layer's input, which the
result's hidden_states hold; only each head's value vectors are projected again. The model is
read, never changed. A head switched off by a head mask has alpha = 0, so its norms are 0.

Shape letters: L layers, H heads, T tokens, D hidden size, K = D / H; "..." any batch dims.
"""

import numpy as np
import torch

from .metrics import token_kinds

KINDS = ("cls", "sep", "punct")


@torch.no_grad()
def value_norms(model, hidden_states) -> torch.Tensor:
    """||f_h(x_j)|| for every layer, head and token: hidden_states (L+1, ..., T, D), the
    encoder's per-layer inputs (the last entry, the final output, is not used) -> (L, ..., H, T).
    """
    out = []
    for i, x in zip(range(model.config.num_hidden_layers), hidden_states):
        layer = model.layer(i)
        attn = layer.attn
        lead = x.shape[:-2]
        x = layer.attention_input(x.reshape(-1, *x.shape[-2:]))  # (B, T, D)
        _, _, v = attn.project(x)  # (B, H, T, K): x W_V,h + b_V,h
        H, K = v.size(1), v.size(-1)
        w_o = attn.out.weight.view(-1, H, K)  # (D, H, K): column block h is W_O,h transposed
        f = torch.einsum("bhtk,dhk->bhtd", v, w_o)  # (B, H, T, D): f_h(x_j), without b_O
        out.append(f.norm(dim=-1).reshape(*lead, H, x.size(1)))  # (..., H, T)
    return torch.stack(out)  # (L, ..., H, T)


def norm_maps(model, attentions, hidden_states) -> torch.Tensor:
    """||alpha_ij f_h(x_j)||: attentions (L, ..., H, T, T), hidden_states (L+1, ..., T, D) of the
    same forward pass -> (L, ..., H, T, T), raw norms (rows do not sum to 1)."""
    return attentions * value_norms(model, hidden_states)[..., None, :]  # key j's norm, every row


def result_norm_maps(bert, res) -> torch.Tensor:
    """The norm maps of an AttentionResult (anything with .attentions (L, H, T, T) and
    .hidden_states (L+1, T, D)): (L, H, T, T) raw norms."""
    return norm_maps(bert.model, res.attentions, res.hidden_states)


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
            kinds = token_kinds(res.tokens, res.special)
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
    over a treebank's sentences (default: the hand-made sample), as the README's table."""
    import argparse

    from .api import load_bert
    from .treebank import DEFAULT_TREEBANK, read_treebank

    ap = argparse.ArgumentParser(prog="python -m mha_core.norms")
    ap.add_argument("treebank", nargs="?", default=str(DEFAULT_TREEBANK))
    ap.add_argument("--model", default=None)
    ap.add_argument("--limit", type=int, default=None, help="the first N sentences only")
    args = ap.parse_args(argv)
    texts = [s.text for s in read_treebank(args.treebank, max_bytes=2**40)][:args.limit]
    bert = load_bert(args.model)
    out = weight_and_norm_shares(bert, texts)
    print(f"{bert}: {out['n']} sentences; share of each row on [CLS] / [SEP] / punctuation")
    print(f"{'layer':<7}" + "".join(f"{k + ' ' + by:>16}" for k in KINDS
                                    for by in ("weight", "norm")))
    for layer in range(bert.config.num_hidden_layers):
        print(f"L{layer + 1:<6}" + "".join(f"{100 * out[by][k][layer]:>15.1f}%" for k in KINDS
                                           for by in ("weight", "norm")))


if __name__ == "__main__":
    main()
