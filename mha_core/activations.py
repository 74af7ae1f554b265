"""The intermediate values of one forward pass, per head (what TransformerLens users call the
cache): every head's queries, keys and values, its output before and after the output
projection, and the hidden states, for every attention layer run.

    res = bert.attend("I saw the man with a telescope.")
    acts = bert.activations(res)      # or activations(bert, res)
    acts.q[2, 9]                      # layer 3, head 10: (T, K) queries, with b_Q
    acts.head_out.sum(1) + b_O        # (L, T, D): each layer's attention output (before its LN)

They are read from the encoder's forward cache (mha_core.hooks) of a run of the result's text
with the result's head mask, so they are what the layers computed: after ModernBERT's pre-norm
and rotary, one entry per layer run (ALBERT's shared layers unrolled), DeBERTa's queries and
keys as its scores read them. A head switched off by head_mask has z = 0 and head_out = 0.
Shape letters: L layers run, H heads, T tokens, K head size, D hidden size.
"""

from dataclasses import dataclass

import torch

NAMES = ("attn_in", "q", "k", "v", "z", "head_out")


@dataclass(frozen=True)
class Activations:
    q: torch.Tensor  # (L, H, T, K) queries as scored, with b_Q
    k: torch.Tensor  # (L, H, T, K) keys as scored, with b_K
    v: torch.Tensor  # (L, H, T, K) values, with b_V
    z: torch.Tensor  # (L, H, T, K) each head's weighted sum of values: attentions @ v
    head_out: torch.Tensor  # (L, H, T, D) z_h W_O,h: head h's share of the output, without b_O
    hidden_states: torch.Tensor  # (L+1, T, D) embeddings, then each layer's output
    attn_in: torch.Tensor | None = None  # (L, T, D) what each layer's attention read

    def __repr__(self):
        return (f"Activations(q/k/v/z {tuple(self.q.shape)}, head_out {tuple(self.head_out.shape)},"
                f" hidden_states {tuple(self.hidden_states.shape)})")


@torch.no_grad()
def activations(bert, res) -> Activations:
    """The activations of an AttentionResult of this bert (see the module's docstring), on
    the CPU."""
    cache = bert.trace(res, NAMES)
    got = {n: cache[n][:, 0].to("cpu") for n in NAMES}  # (L, ...): batch of one
    return Activations(q=got["q"], k=got["k"], v=got["v"], z=got["z"],
                       head_out=got["head_out"], hidden_states=res.hidden_states,
                       attn_in=got["attn_in"])
