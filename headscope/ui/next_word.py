"""The Next word page's computations, cached per model and text (numpy out, bounded like every
cache of models.py): a decoder's top-k next tokens after every token, the top-k at one position
with heads switched off (a head mask on the call: the shared model never changes), and one
token's direct logit attribution (mha_core.logit_attribution).

Shape letters: T tokens, k predictions a position, V vocabulary, L layers, H heads.
"""

import numpy as np
import streamlit as st

from mha_core.text import readable

from . import models

TOP_K = 5
# The page reads at most this many tokens: each position's distribution over the vocabulary is
# V floats (49,152 for SmolLM2: 192 KB a token), for every token in the strip
MAX_TOKENS = 256
DECODER = models.BUNDLED_DECODER  # the bundled decoder's name in the model list


def _encoded(bert, text: str):
    return bert.encode(text, max_length=MAX_TOKENS)


def words(bert, ids) -> list:
    """Token ids as a reader reads them (a byte-level BPE's Ġ decoded: mha_core.text.readable)."""
    return readable(bert.tokenizer, bert.tokenizer.convert_ids_to_tokens(list(ids)))


def _mask(bert, off) -> np.ndarray | None:
    """(L, H) ones with a 0 at each (layer, head) of `off`; None when nothing is off."""
    if not off:
        return None
    mask = np.ones((bert.config.num_hidden_layers, bert.config.num_attention_heads), np.float32)
    for layer, head in off:
        mask[layer, head] = 0
    return mask


@st.cache_data(**models.bounded(), show_spinner="Predicting the next token after every token…")
def predictions(name: str, text: str, top_k: int = TOP_K) -> dict:
    """After every token: the top_k next tokens and their probabilities, and the probability and
    rank (1 = the model's first choice) of the token that really follows."""
    import torch

    bert = models.bert_or_raise(name)
    enc = _encoded(bert, text)
    with models.long_here(bert, text, None, "Predicting the next token in this long text"):
        probs = bert.next_word_probabilities(enc)  # (T, V)
    top = probs.topk(min(top_k, probs.size(-1)), dim=-1)  # (T, k) each
    ids = enc.input_ids.to(probs.device)  # (T,)
    follows = probs[torch.arange(len(ids) - 1), ids[1:]]  # (T-1,)
    rank = (probs[:-1] > follows[:, None]).sum(-1) + 1  # (T-1,)
    return dict(tokens=list(enc.tokens), truncated=enc.truncated, n_full=enc.n_tokens_full,
                top_words=[words(bert, row) for row in top.indices.tolist()],
                top_p=top.values.numpy(), next_p=follows.numpy(), next_rank=rank.numpy())


@st.cache_data(**models.bounded(), show_spinner="Running the model with the heads off…")
def switched(name: str, text: str, position: int, off: tuple, top_k: int = TOP_K) -> dict:
    """At `position`: the words in the top_k with every head on or with the heads of `off`
    ((layer, head) pairs, 0-based) switched off, plus the token that really follows; each
    word's probability in both runs, most likely (heads on) first."""
    bert = models.bert_or_raise(name)
    enc = _encoded(bert, text)
    with models.long_here(bert, text, None, "Running this long text with heads off"):
        before = bert.next_word_probabilities(enc, positions=[position])[0]  # (V,)
        after = bert.next_word_probabilities(enc, _mask(bert, off), [position])[0]  # (V,)
    ids = [*before.topk(top_k).indices.tolist(), *after.topk(top_k).indices.tolist()]
    if position + 1 < len(enc.input_ids):
        ids.append(int(enc.input_ids[position + 1]))
    ids = sorted(set(ids), key=lambda i: (-float(before[i]), -float(after[i])))
    return dict(words=words(bert, ids), ids=ids, before=before[ids].numpy(),
                after=after[ids].numpy())


def target_id(tokenizer, word: str) -> int | None:
    """Whether a typed word is one token for this model (mha_core.logit_attribution.spellings:
    as the vocabulary spells it, after a space, as typed): one such token's id, or None. Which
    spelling is attributed is the model's choice at that position (resolve_target)."""
    from mha_core.logit_attribution import spellings

    ids = spellings(tokenizer, word.strip())
    return ids[0] if ids else None


@st.cache_data(**models.bounded(), show_spinner="Splitting the logit into its parts…")
def attribution(name: str, text: str, position: int, word: str | None) -> dict:
    """The direct logit attribution at `position` of `word` (None: the model's top next token),
    as Attribution.as_dict() plus the shown word, the tokens and the model; or {"pieces": the
    word's tokens} when the word is not one token."""
    from mha_core.logit_attribution import logit_attribution

    bert = models.bert_or_raise(name)
    target = None
    if word is not None:
        if target_id(bert.tokenizer, word) is None:
            from mha_core.text import token_ids

            return dict(pieces=words(bert, token_ids(bert.tokenizer, " " + word.strip())))
        target = word.strip()  # of its one-token spellings, the model's likelier one there
    enc = _encoded(bert, text)
    with models.long_here(bert, text, None, "Splitting this long text's logit"):
        a = logit_attribution(bert, enc, position, target)
    return dict(a.as_dict(), word=words(bert, [a.target])[0], heads=a.heads, mlps=a.mlps,
                out_biases=a.out_biases, tokens=list(enc.tokens), model=name)


def attribution_json(attr: dict, text: str) -> str:
    """The attribution as a JSON file: Attribution.as_dict()'s fields, the tokens, the text
    and the model."""
    import json

    out = {k: v.tolist() if isinstance(v, np.ndarray) else v for k, v in attr.items()}
    out["text"] = text
    return json.dumps(out, ensure_ascii=False, indent=1)
