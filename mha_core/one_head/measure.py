"""What a stand-in for a layer's attention reproduces: R² on the held-out tokens, the summed head
(the layer's own weights read as one head), the best original heads chosen greedily (Michel et
al. 2019, per layer), and the change of the model's output when a layer's attention is replaced
through the encoder's hooks (mha_core.hooks.replace_attention).

    R² = 1 - ||Y - Ŷ||² / ||Y - mean(Y)||²   over the real (unpadded) tokens, mean(Y) the mean
                                              vector of those tokens

Every input is what the forward recorded (one_head.data.layer_io); the layer's own modules are
used only to apply its output projection to other weights (the summed head) and to cut z into
each head's share, exactly as the forward does. Shape letters: B sentences, T tokens, D hidden
size, H heads, K = D / H.
"""

import torch
import torch.nn.functional as F

from ..attention import merge_heads
from ..hooks import replace_attention


def r2(y, y_hat, keep) -> float:
    """R² of y_hat against y (both (B, T, D)) over the tokens where keep (B, T) is 1. Weighted
    sums rather than a boolean selection: no host round trip on a GPU."""
    w = keep.to(torch.float64)[..., None]  # (B, T, 1)
    y, y_hat = y.double(), y_hat.double()
    mean = (y * w).sum((0, 1)) / w.sum()  # (D,)
    total = (((y - mean) ** 2) * w).sum()
    return float(1 - (((y - y_hat) ** 2) * w).sum() / total)


def summed_head_output(attn, io):
    """(a) the summed head: the layer's single-head map (the run's "single_head", the heads'
    scores summed, one softmax) applied to the run's values, then the layer's output
    projection: out(A · V). -> (B, T, D)."""
    return attn.out(io.single_head @ merge_heads(io.v))  # (B, T, T) @ (B, T, D) -> (B, T, D)


def output_bias(attn):
    """b_O, or zeros where the family has none (ModernBERT)."""
    return attn.out.bias if attn.out.bias is not None else attn.out.weight.new_zeros(
        attn.out.weight.size(0))


def head_contributions(attn, io):
    """What each head wrote into the layer's output in the run: (H, B, T, D), summing to the
    output minus b_O (the forward's own head_outputs of the recorded z)."""
    return attn.head_outputs(io.z).transpose(0, 1)  # (B, H, T, D) -> (H, B, T, D)


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
def run_replaced(bert, b, replace=None, head_mask=None, input_ids=None):
    """The model's last hidden states (B, T, D) with some run layers' attention replaced:
    replace maps a run layer (0-based) to a callable (x (B, T, D), mask) -> (B, T, D), switched
    in through the encoder's hooks; head_mask (L, H) switches original heads off. The layers'
    own norms, residuals and feed-forward blocks run as they are; the model is not changed."""
    hooks = {}
    for i, fn in (replace or {}).items():
        hooks |= replace_attention(i, fn)
    hm = None if head_mask is None else head_mask.to(bert.device)
    out = bert.model(**b.inputs(input_ids), head_mask=hm, hooks=hooks, output_attentions=False)
    return out.last_hidden_state  # (B, T, D)


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
    sentence) replaced by [MASK] (on the batch's device), and the masked positions as two long
    tensors (sentence, token) of M each, on the same device. special (B, T) bool. The draw is
    made on the CPU, so a seed gives the same positions on every device."""
    g = torch.Generator().manual_seed(seed)
    keep, special = b.keep.cpu().bool(), special.cpu()
    pick = (torch.rand(keep.shape, generator=g) < rate) & keep & ~special  # (B, T)
    for i in range(pick.size(0)):
        cand = (keep[i] & ~special[i]).nonzero().flatten()
        if not pick[i].any() and cand.numel():
            pick[i, cand[torch.randint(cand.numel(), (1,), generator=g)]] = True
    device = b.input_ids.device
    where = tuple(i.to(device) for i in pick.nonzero(as_tuple=True))  # (M,), (M,)
    return b.input_ids.masked_fill(pick.to(device), mask_id), where


def mlm_scores(model, hidden, targets, where):
    """Masked-LM loss (nats) and top-1 accuracy at the positions `where` (sentence, token)."""
    logits = model.mlm_logits(hidden[where])  # (M, V)
    gold = targets[where]  # (M,)
    return float(F.cross_entropy(logits, gold)), float((logits.argmax(-1) == gold).float().mean())
