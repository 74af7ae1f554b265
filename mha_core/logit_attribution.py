"""Direct logit attribution: what each head, each feed-forward block, the embeddings and the
biases add to one token's logit at one position, read off the forward cache of one run.

A pre-norm decoder's last residual stream is a sum of what every block wrote into it:

    x = embed + sum_l (sum_h head_out_lh + b_O,l) + sum_l ffn_out_l

and the logit of token t is norm(x) . W_U[t]. The final norm is not linear in x, so its scale is
held at its value in this run, as TransformerLens's `apply_ln_to_stack` holds it: s = 1 / rms(x)
(RMSNorm) or 1 / std(x) (LayerNorm, which also centres each part). Then every part's term is
(centred(part) * s * w) . W_U[t], and the terms add up to the model's logit exactly (LayerNorm's
bias b adds one more term, b . W_U[t]). A head's term says how much that head, through what it
wrote at this position, pushes token t up (> 0) or down (< 0), other things held.

Post-norm encoders (BERT) renormalise the stream in every layer, and a masked-LM head has a
non-linear transform before its decoder: there the parts do not add up, so only decoders are
attributed.

Shape letters: L layers, H heads, T tokens, D hidden size.
"""

from dataclasses import dataclass

import numpy as np
import torch

from .text import Encoded, token_ids


@dataclass(frozen=True)
class Attribution:
    position: int  # the token whose next token is predicted (0-based)
    target: int  # the token id attributed
    target_token: str
    logit: float  # the model's own logit of the target there
    probability: float  # its softmax probability
    heads: np.ndarray  # (L, H): each head's term
    out_biases: np.ndarray  # (L,): each attention block's output bias b_O
    mlps: np.ndarray  # (L,): each feed-forward block's output
    embeddings: float  # the token (and position) embeddings
    norm_bias: float  # the final LayerNorm's bias (GPT-2); 0 for RMSNorm
    scale: float  # the final norm's scale s, held at this run's value

    def total(self) -> float:
        """The sum of every term: the logit, to float rounding."""
        return float(self.heads.sum() + self.out_biases.sum() + self.mlps.sum()
                     + self.embeddings + self.norm_bias)

    def as_dict(self) -> dict:
        """Plain lists and numbers, for JSON."""
        return dict(position=self.position, target=self.target, target_token=self.target_token,
                    logit=self.logit, probability=self.probability, heads=self.heads.tolist(),
                    out_biases=self.out_biases.tolist(), mlps=self.mlps.tolist(),
                    embeddings=self.embeddings, norm_bias=self.norm_bias, scale=self.scale,
                    sum_of_parts=self.total())


@torch.no_grad()
def logit_attribution(bert, source, position: int = -1, target: int | str | None = None,
                      head_mask=None) -> Attribution:
    """Each part's term in the logit of `target` (a token id, a token string, or None: the
    model's top next token) at `position` (negative counts from the end) of a decoder's run on
    `source` (a text or an Encoded), with heads switched off by head_mask (L, H) if given."""
    bert.require_lm_head()
    model, cfg = bert.model, bert.config
    enc = source if isinstance(source, Encoded) else bert.encode(source)
    T = len(enc.tokens)
    if not -T <= position < T:
        raise ValueError(f"position {position} is outside the text's {T} tokens")
    pos = position % T
    out, cache = model.run_with_cache(  # z, not head_out: H times fewer floats kept
        **bert.one_input(enc, bert.check_head_mask(head_mask)), output_attentions=False,
        names=("embed", "z", "ffn_out", "attn_out"))
    logits = model.lm_logits(out.last_hidden_state[0, pos])  # (V,)
    t = resolve_target(bert, target, logits)
    # the last residual stream, before the final norm: what every block wrote into it
    x = cache["embed"][0, pos] + cache["attn_out"][:, 0, pos].sum(0) \
        + cache["ffn_out"][:, 0, pos].sum(0)  # (D,)
    norm = model.final_norm
    layer_norm = isinstance(norm, torch.nn.LayerNorm)
    u = model.unembedding()[t]  # (D,)
    if norm.weight is not None:
        u = u * norm.weight  # (D,)
    if layer_norm:
        scale = torch.rsqrt(x.var(unbiased=False) + norm.eps)
    else:
        scale = torch.rsqrt(x.pow(2).mean() + (norm.eps or torch.finfo(x.dtype).eps))

    def term(parts):  # (..., D) -> (...,)
        if layer_norm:
            parts = parts - parts.mean(dim=-1, keepdim=True)
        return (parts * scale) @ u

    shares = torch.stack([model.layer(i).attn.head_outputs(cache["z", i][:, :, pos:pos + 1])
                          for i in range(cfg.num_hidden_layers)])  # (L, 1, H, 1, D)
    heads = term(shares[:, 0, :, 0])  # (L, H, D) -> (L, H)
    mlps = term(cache["ffn_out"][:, 0, pos])  # (L, D) -> (L,)
    zeros = x.new_zeros(cfg.hidden_size)
    b_o = torch.stack([model.layer(i).attn.out.bias if model.layer(i).attn.out.bias is not None
                       else zeros for i in range(cfg.num_hidden_layers)])  # (L, D)
    bias = getattr(norm, "bias", None)
    norm_bias = float(bias @ model.unembedding()[t]) if bias is not None else 0.0
    return Attribution(
        position=pos, target=t, target_token=bert.tokenizer.convert_ids_to_tokens(t),
        logit=float(logits[t]), probability=float(logits.softmax(-1)[t]),
        heads=heads.cpu().numpy(), out_biases=term(b_o).cpu().numpy(),
        mlps=mlps.cpu().numpy(), embeddings=float(term(cache["embed"][0, pos])),
        norm_bias=norm_bias, scale=float(scale))


def spellings(tokenizer, word: str) -> list:
    """Every token id that is this word alone: the token as the vocabulary spells it ("ĠParis",
    ","), the word after a space (" Paris"), the word as typed ("Paris"); [] when each of them
    takes several tokens."""
    ids = []
    vocab = tokenizer.get_vocab()
    if word in vocab:
        ids.append(vocab[word])
    for spelled in (" " + word.strip(), word.strip()):
        found = token_ids(tokenizer, spelled) if spelled.strip() else []
        if len(found) == 1:
            ids.append(found[0])
    return list(dict.fromkeys(ids))


def resolve_target(bert, target, logits) -> int:
    """A token id from an id, a word or a token string (of its one-token spellings, the one
    the model rates higher here: " Paris" after "is", "," after "Paris"), or None (the top
    one)."""
    V = logits.size(-1)
    if target is None:
        return int(logits.argmax())
    if isinstance(target, int) and not isinstance(target, bool):
        if not 0 <= target < V:
            raise ValueError(f"token id {target} is outside the vocabulary (0..{V - 1})")
        return target
    if not isinstance(target, str):
        raise TypeError(f"target must be a token id, a token string or None, got {target!r}")
    ids = [i for i in spellings(bert.tokenizer, target) if i < V]
    if not ids:
        raise ValueError(f"{target!r} is not one token for this model's tokenizer; choose a word "
                         f"the model reads as one token")
    return max(ids, key=lambda i: float(logits[i]))
