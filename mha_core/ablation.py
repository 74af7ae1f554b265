"""Switching heads off: how the output changes, which heads matter (Michel et al. 2019, in
ablation form), and how many can go. Every ablation is a head_mask argument of one call; the
shared model is never changed.

Shape letters: N masks, L layers, H heads, T tokens, D hidden size.
"""

import numpy as np
import torch


def output_change(intact, changed) -> torch.Tensor:
    """1 - cosine between final hidden states, per token: (T, D), (..., T, D) -> (..., T).
    Clamped at 0: identical vectors can give -1e-7 in float32."""
    cos = torch.nn.functional.cosine_similarity(changed, intact.expand_as(changed), dim=-1)
    return (1 - cos).clamp_min(0)


def batched_last_hidden(bert, enc, masks, max_tokens=8192, max_map_bytes=2**26, progress=None):
    """The final hidden state for each head mask: masks (N, L, H) -> (N, T, D). One forward
    serves many masks, in chunks of at most max_tokens tokens and one layer's maps of at most
    max_map_bytes (no layer's maps are kept); the model is untouched. progress(done, N) is
    called after each chunk."""
    T, H = enc.input_ids.numel(), bert.config.num_attention_heads
    step = max(1, min(max_tokens // T, max_map_bytes // (4 * H * T * T)))
    outs = []
    with torch.inference_mode():
        for start in range(0, masks.size(0), step):
            m = masks[start:start + step].to(bert.device)  # (B, L, H)
            ids = enc.input_ids[None].expand(m.size(0), T).to(bert.device)  # (B, T)
            types = enc.token_type_ids[None].expand(m.size(0), T).to(bert.device)  # (B, T)
            out = bert.model(ids, token_type_ids=types, head_mask=m, output_attentions=False)
            outs.append(out.last_hidden_state)
            if progress is not None:
                progress(start + m.size(0), masks.size(0))
    return torch.cat(outs)  # (N, T, D), on the model's device


def head_importance(bert, text, text_pair=None, progress=None) -> np.ndarray:
    """Michel et al. 2019 in ablation form: switch off each head alone and measure the mean
    1 - cosine of the final hidden states against the intact model. Returns (L, H)."""
    L, H = bert.config.num_hidden_layers, bert.config.num_attention_heads
    enc = bert.encode(text, text_pair)
    masks = torch.ones(1 + L * H, L * H)  # row 0 intact; row 1 + i switches head i off
    masks[1:] -= torch.eye(L * H)
    last = batched_last_hidden(bert, enc, masks.view(-1, L, H), progress=progress)  # (1+L*H, T, D)
    change = output_change(last[0], last[1:]).mean(-1).cpu()  # (L*H,)
    return change.view(L, H).numpy().astype(np.float64)  # (L, H)


def pruning_curve(bert, text, importance, text_pair=None, progress=None) -> np.ndarray:
    """Switch heads off cumulatively, least important first: entry k is the mean output change
    with the k least important heads off, k = 0 .. L*H. Returns (L*H + 1,)."""
    L, H = bert.config.num_hidden_layers, bert.config.num_attention_heads
    order = np.argsort(np.asarray(importance).ravel(), kind="stable")  # least important first
    masks = torch.ones(L * H + 1, L * H)
    for k in range(1, L * H + 1):
        masks[k:, order[k - 1]] = 0
    enc = bert.encode(text, text_pair)
    last = batched_last_hidden(bert, enc, masks.view(-1, L, H), progress=progress)  # (L*H+1, T, D)
    return output_change(last[0], last).mean(-1).cpu().numpy().astype(np.float64)


def top_k_mask(importance, k: int) -> np.ndarray:
    """Keep the k most important heads of each layer: (L, H) of 0/1."""
    imp = np.asarray(importance)
    mask = np.zeros_like(imp)
    if k > 0:
        keep = np.argsort(-imp, axis=1, kind="stable")[:, :k]  # (L, k)
        np.put_along_axis(mask, keep, 1.0, axis=1)
    return mask


def map_change(intact, changed) -> np.ndarray:
    """How far each head's map moved: mean over rows of the total variation distance
    0.5 * sum_k |a - b|. (..., T, T) twice -> (...); 0 = unchanged, 1 = disjoint."""
    a, b = torch.as_tensor(intact), torch.as_tensor(changed)
    return (0.5 * (a - b).abs().sum(-1)).mean(-1).numpy().astype(np.float64)
