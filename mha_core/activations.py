"""The intermediate values of one forward pass, on request (what TransformerLens users call the
cache): every head's queries, keys and values, its output before and after the output
projection, and the hidden states.

    res = bert.attend("I saw the man with a telescope.")
    acts = bert.activations(res)      # or activations(bert, res)
    acts.q[2, 9]                      # layer 3, head 10: (T, K) queries, with b_Q
    acts.head_out.sum(1) + b_O        # (L, T, D): each layer's attention output (before its LN)

They are recomputed from the result's hidden states (each layer's input) and attention maps, so
attend() stays as cheap as before and a head switched off by head_mask has z = 0 and
head_out = 0, as in the forward pass. Shape letters: L layers, H heads, T tokens, K head size,
D hidden size.
"""

from dataclasses import dataclass

import torch


@dataclass(frozen=True)
class Activations:
    q: torch.Tensor  # (L, H, T, K) x W_Q,h + b_Q,h, x the layer's input
    k: torch.Tensor  # (L, H, T, K)
    v: torch.Tensor  # (L, H, T, K)
    z: torch.Tensor  # (L, H, T, K) each head's weighted sum of values: attentions @ v
    head_out: torch.Tensor  # (L, H, T, D) z_h W_O,h: head h's share of the output, without b_O
    hidden_states: torch.Tensor  # (L+1, T, D) embeddings, then each layer's output

    def __repr__(self):
        return (f"Activations(q/k/v/z {tuple(self.q.shape)}, head_out {tuple(self.head_out.shape)},"
                f" hidden_states {tuple(self.hidden_states.shape)})")


@torch.no_grad()
def activations(bert, res) -> Activations:
    """The activations of an AttentionResult of this bert (see the module's docstring)."""
    qs, ks, vs, zs, outs = [], [], [], [], []
    for layer, x, probs in zip(bert.model.layers, res.hidden_states, res.attentions):
        attn = layer.attn
        q, k, v = attn.project(x[None])  # (1, H, T, K) each
        z = probs[None] @ v  # (1, H, T, T) @ (1, H, T, K) -> (1, H, T, K)
        H, K = v.size(1), v.size(-1)
        w_o = attn.out.weight.view(-1, H, K)  # (D, H, K): column block h is W_O,h transposed
        outs.append(torch.einsum("htk,dhk->htd", z[0], w_o))  # (H, T, D)
        qs.append(q[0])
        ks.append(k[0])
        vs.append(v[0])
        zs.append(z[0])
    return Activations(q=torch.stack(qs), k=torch.stack(ks), v=torch.stack(vs),  # (L, H, T, K)
                       z=torch.stack(zs), head_out=torch.stack(outs),  # (L, H, T, D)
                       hidden_states=res.hidden_states)
