"""Masking a word (exBERT's question): what the masked-LM head predicts there, how every head's
attention moves when the word is hidden, and which heads the prediction needs (Michel et al.
2019 in ablation form, measured on the masked word's probability).

A word is masked token by token, as exBERT does: the token's id becomes [MASK] and nothing else
changes, so the masked sentence has the same T positions and its maps compare cell by cell.

Shape letters: N masks, L layers, H heads, T tokens, V vocabulary.
"""

from dataclasses import dataclass, replace

import numpy as np
import torch

from .ablation import batched_last_hidden, map_change
from .text import Encoded

MAX_MASKS = 5  # typed [MASK]s a page lists predictions for (fill_mask itself has no limit)


def maskable(enc: Encoded) -> list:
    """Token positions a reader may mask: every token but [CLS], [SEP] and typed [MASK]s."""
    return [t for t, s in enumerate(enc.special) if not s and t not in enc.masks]


def first_maskable(enc: Encoded, positions):
    """The first of these token positions a reader may mask (a shown word of several pieces is
    masked by its first piece, one piece at a time, as exBERT does), or None: [CLS], [SEP] and
    typed [MASK]s cannot be masked."""
    allowed = set(maskable(enc))
    return next((int(t) for t in positions if int(t) in allowed), None)


def mask_tokens(enc: Encoded, positions, mask_token_id: int, mask_token: str = "[MASK]"):
    """enc with the tokens at `positions` replaced by [MASK]: ids and token strings change;
    offsets, word ids and segments stay, so the masked sentence lines up with the original."""
    positions = sorted(set(int(p) for p in positions))
    bad = [p for p in positions if not 0 <= p < len(enc.tokens) or enc.special[p]]
    if bad:
        raise ValueError(f"position(s) {bad} cannot be masked: positions run from 1 to "
                         f"{len(enc.tokens) - 2} and [CLS]/[SEP] stay")
    ids = enc.input_ids.clone()  # (T,)
    ids[positions] = mask_token_id
    tokens = [mask_token if t in positions else tok for t, tok in enumerate(enc.tokens)]
    masks = tuple(sorted(set(enc.masks) | set(positions)))
    pieces = tuple(mask_token if t in positions else p for t, p in enumerate(enc.pieces))
    return replace(enc, input_ids=ids, tokens=tokens, pieces=pieces, masks=masks,
                   n_masks_full=enc.n_masks_full + len(masks) - len(enc.masks))


@dataclass(frozen=True)
class MaskedWord:
    position: int  # the token masked
    token: str  # what was there
    predictions: list  # top-k (token, probability) at the mask; [] without a masked-LM head
    p_original: float | None  # the probability the model gives the original token there
    rank_original: int | None  # its rank among all V tokens (1 = the top prediction)
    attentions: torch.Tensor  # (L, H, T, T) every head's map with the token masked
    change: np.ndarray  # (L, H) how far each head's map moved: mean total variation over rows


def mask_word(bert, text: str, text_pair: str | None = None, position: int = 1,
              top_k: int = 5) -> MaskedWord:
    """Mask the token at `position` (an index into bert.encode(text, text_pair).tokens) and
    compare: predictions at the mask (with a masked-LM head) and every head's map against the
    original sentence's."""
    enc = bert.encode(text, text_pair)
    masked = mask_tokens(enc, [position], bert.tokenizer.mask_token_id,
                         bert.tokenizer.mask_token)
    original = bert.attend_encoded(enc)
    after = bert.attend_encoded(masked)
    predictions, p_original, rank = [], None, None
    if bert.has_mlm_head:
        probs = bert.mask_probabilities(masked)[masked.masks.index(position)]  # (V,)
        top = probs.topk(min(top_k, probs.numel()))
        predictions = list(zip(bert.tokenizer.convert_ids_to_tokens(top.indices.tolist()),
                               top.values.tolist()))
        target = int(enc.input_ids[position])
        p_original = float(probs[target])
        rank = int((probs > probs[target]).sum()) + 1
    return MaskedWord(position, enc.tokens[position], predictions, p_original, rank,
                      after.attentions, map_change(original.attentions, after.attentions))


@dataclass(frozen=True)
class MaskImportance:
    position: int  # the masked token
    target: str  # the token whose probability is measured
    p_intact: float  # its probability with every head on
    importance: np.ndarray  # (L, H) p_intact - p with that head alone off (> 0: the head helps)


def mask_importance(bert, text: str, text_pair: str | None = None,
                    position: int | None = None) -> MaskImportance:
    """Michel et al. 2019 in ablation form, on the masked-LM output: switch off each head alone
    and measure how much the probability of the right word at a [MASK] drops. With `position`
    the token there is masked and its own probability is measured; without, the first [MASK]
    typed in the text is used and the target is the intact model's top prediction there."""
    bert.require_mlm_head()
    L, H = bert.config.num_hidden_layers, bert.config.num_attention_heads
    enc = bert.encode(text, text_pair)
    if position is None:
        if not enc.masks:
            raise ValueError("there is no [MASK] in the text: type one or choose a word to mask")
        position, masked = enc.masks[0], enc
        target = int(bert.mask_probabilities(enc)[0].argmax())
    else:
        masked = mask_tokens(enc, [position], bert.tokenizer.mask_token_id,
                             bert.tokenizer.mask_token)
        target = int(enc.input_ids[position])
    masks = torch.ones(1 + L * H, L * H)  # row 0 intact; row 1 + i switches head i off
    masks[1:] -= torch.eye(L * H)
    last = batched_last_hidden(bert, masked, masks.view(-1, L, H))  # (1 + L*H, T, D)
    with torch.inference_mode():
        probs = bert.model.mlm_logits(last[:, position]).softmax(-1)[:, target]  # (1 + L*H,)
    probs = probs.cpu()
    drop = (probs[0] - probs[1:]).view(L, H)  # (L, H)
    return MaskImportance(position, bert.tokenizer.convert_ids_to_tokens(target),
                          float(probs[0]), drop.numpy().astype(np.float64))
