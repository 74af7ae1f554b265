"""What a stand-in for a layer's attention reproduces: R² on the held-out tokens, the summed head
(the layer's own weights read as one head), the best original heads chosen greedily (Michel et
al. 2019, per layer), and the change of the model's output when a layer's attention is replaced.

    R² = 1 - ||Y - Ŷ||² / ||Y - mean(Y)||²   over the real (unpadded) tokens, mean(Y) the mean
                                              vector of those tokens

Shape letters: B sentences, T tokens, D hidden size, H heads, K = D / H, N real tokens.
"""

import torch
import torch.nn.functional as F

from ..attention import attention, merge_heads


def r2(y, y_hat, keep) -> float:
    """R² of y_hat against y (both (B, T, D)) over the tokens where keep (B, T) is 1."""
    sel = keep.bool()
    y, y_hat = y[sel].double(), y_hat[sel].double()  # (N, D)
    total = ((y - y.mean(0)) ** 2).sum()
    return float(1 - ((y - y_hat) ** 2).sum() / total)


def summed_head_output(attn, x, mask=None):
    """(a) the summed head: the layer's single-head map (attn.single_head, the heads' scores
    summed, one softmax) applied to the layer's own value projection, then its output
    projection: out(A · value(x)). x (B, T, D) -> (B, T, D)."""
    a = attn.single_head(x, mask)  # (B, T, T)
    _, _, v = attn.project(x)  # (B, H, T, K)
    return attn.out(a @ merge_heads(v))  # (B, T, T) @ (B, T, D) -> (B, T, D)


def head_contributions(attn, x, mask=None):
    """What each head writes into the layer's output: (H, B, T, D), summing to the output
    minus the output bias. Head h's context times its K columns of W_O."""
    ctx, _ = attention(*attn.project(x), mask)  # (B, H, T, K)
    H, K = attn.n_heads, attn.d_model // attn.n_heads
    w_o = attn.out.weight.view(attn.d_model, H, K)  # (D, H, K): (out, in) cut per head
    return torch.einsum("bhtk,dhk->hbtd", ctx, w_o)  # (H, B, T, D)


def kept_output(contrib, bias, heads):
    """The layer's output with only `heads` (0-based) switched on: their contributions plus the
    output bias, as a head_mask keeping those heads gives. contrib (H, B, T, D) -> (B, T, D)."""
    y = bias.expand_as(contrib[0]).clone()
    for h in heads:
        y = y + contrib[h]
    return y


def greedy_heads(fit, held):
    """Michel et al.'s setting within one layer: keep k original heads, k = 1..H, adding each
    time the head that raises the fit part's R² most. fit and held are (contrib (H, B, T, D),
    bias (D,), y (B, T, D), keep (B, T)). Returns (the heads in the order chosen, 0-based;
    the held-out R² for k = 1..H). Entry 1 is (b), the best original head alone."""
    H = fit[0].size(0)
    chosen, curve = [], []
    for _ in range(H):
        rest = [h for h in range(H) if h not in chosen]
        best = max(rest, key=lambda h: _kept_r2(fit, chosen + [h]))
        chosen.append(best)
        curve.append(_kept_r2(held, chosen))
    return chosen, curve


def _kept_r2(part, heads) -> float:
    contrib, bias, y, keep = part
    return r2(y, kept_output(contrib, bias, heads), keep)


@torch.no_grad()
def run_replaced(model, b, replace=None, head_mask=None):
    """The model's last hidden states (B, T, D) with some layers' attention replaced:
    replace maps a layer index (0-based) to a callable (x (B, T, D), mask) -> (B, T, D);
    head_mask (L, H) switches original heads off. The layers' own norms and feed-forward
    blocks are used as they are; the model is not changed."""
    replace = replace or {}
    x = model.embeddings(b.input_ids, b.token_type_ids)  # (B, T, D)
    mask = b.mask
    for i, layer in enumerate(model.layers):
        if i in replace:
            a = replace[i](x, mask)  # (B, T, D)
        else:
            a, _ = layer.attn(x, mask, None if head_mask is None else head_mask[i])
        x = layer.attn_norm(x + a)  # (B, T, D)
        x = layer.ffn_norm(x + layer.ffn_out(layer.act(layer.ffn_in(x))))  # (B, T, D)
    return x


def mean_pooled(hidden, keep):
    """The sentence embedding of a mean-pooling model: (B, T, D), (B, T) -> (B, D)."""
    w = keep.to(hidden.dtype)[..., None]  # (B, T, 1)
    return (hidden * w).sum(1) / w.sum(1)


def embedding_cosine(intact, changed, keep) -> float:
    """The mean over sentences of the cosine between mean-pooled embeddings."""
    cos = F.cosine_similarity(mean_pooled(intact, keep), mean_pooled(changed, keep), dim=-1)
    return float(cos.mean())


def mask_positions(b, mask_id: int, special, rate: float = 0.15, seed: int = 0):
    """A copy of the batch's ids with ~rate of the non-special tokens (at least one per
    sentence) replaced by [MASK], and the (B, T) bool of masked positions. special (B, T) bool."""
    g = torch.Generator().manual_seed(seed)
    pick = (torch.rand(b.keep.shape, generator=g) < rate) & b.keep.bool() & ~special  # (B, T)
    for i in range(pick.size(0)):
        cand = (b.keep[i].bool() & ~special[i]).nonzero().flatten()
        if not pick[i].any() and cand.numel():
            pick[i, cand[torch.randint(cand.numel(), (1,), generator=g)]] = True
    ids = b.input_ids.masked_fill(pick, mask_id)  # (B, T)
    return ids, pick


def mlm_scores(model, hidden, targets, pick):
    """Masked-LM loss (nats) and top-1 accuracy at the picked positions."""
    logits = model.mlm_logits(hidden[pick])  # (M, V)
    gold = targets[pick]  # (M,)
    return float(F.cross_entropy(logits, gold)), float((logits.argmax(-1) == gold).float().mean())
