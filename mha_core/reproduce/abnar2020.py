"""Abnar & Zuidema 2020, "Quantifying Attention Flow in Transformers": does attention, read raw,
rolled out or as a flow, rank the input tokens the way their real importance does?

For each sentence the model predicts one token: a decoder the sentence's last word from the
words before it (read at the position before it), an encoder with a masked-LM head the last
word masked ([MASK] in its place, read there). The target is the last token that is neither
special nor punctuation. Each input token j (an encoder's special tokens and the mask left out)
gets two importances:
    blank-out   p(target) - p(target with token j replaced by the tokenizer's UNK token)
    gradient    || d log p(target) / d e_j ||, e_j token j's embedding as the first layer reads
                it (the embeddings' output)
and three attention readings per layer l, from the predicting position's row:
    raw         layer l's weights, heads averaged
    rollout     mha_core.rollout (0.5 W + 0.5 I, multiplied layer after layer)
    flow        mha_core.flow (max-flow through the same graph)
The score is Spearman's rank correlation over the input tokens, per sentence, then averaged
(mean and standard deviation), as the paper's tables give it. Flow is bounded: sentences over
MAX_FLOW_TOKENS tokens are skipped.
"""

import warnings

import numpy as np
import torch
from scipy.stats import spearmanr

from ..flow import attention_flow
from ..rollout import rollout
from .common import Paper, Published, Unsupported, is_punct, lm_kind, lm_logits, rounded
from .corpus import encode_corpus

PAPER = Paper("abnar2020", "Abnar & Zuidema 2020, Quantifying Attention Flow in Transformers",
              "arXiv:2005.00928, ACL 2020", "a 6-layer × 8-head GPT-2-style encoder with [CLS] "
              "trained on subject–verb agreement", "2,000 test sentences of Linzen et al. 2016",
              default_model="bundled-decoder")
METHODS = ("raw", "rollout", "flow")
IMPORTANCES = ("blankout", "gradient")
# their Tables 1 and 2 (SpearmanR, layers 1..6 of their model)
TABLES = {"blankout": {"raw": (0.69, 0.10, -0.11, -0.09, 0.20, 0.29),
                       "rollout": (0.32, 0.38, 0.51, 0.62, 0.70, 0.71),
                       "flow": (0.32, 0.44, 0.70, 0.70, 0.71, 0.70)},
          "gradient": {"raw": (0.53, 0.16, -0.06, 0.00, 0.24, 0.46),
                       "rollout": (0.22, 0.27, 0.39, 0.47, 0.53, 0.54),
                       "flow": (0.22, 0.31, 0.54, 0.61, 0.60, 0.61)}}
PANELS = 2  # the figure's panels side by side
PUBLISHED = tuple(Published(f"{m} vs {i}, last layer (their layer 6)", f"{TABLES[i][m][-1]:.2f}")
                  for i in IMPORTANCES for m in METHODS)
MAX_FLOW_TOKENS = 24
MIN_INPUTS = 3  # a rank correlation over fewer tokens says nothing


def setup(model, enc, kind: str):
    """(ids (T,), types (T,), position read q, target id, candidate positions) or None when the
    sentence has no usable target."""
    ids, types = enc.input_ids.clone(), enc.token_type_ids.clone()
    words = [i for i, (t, s) in enumerate(zip(enc.tokens, enc.special))
             if not s and not is_punct(t)]
    if not words:
        return None
    p = words[-1]
    target = int(ids[p])
    if kind == "next":
        ids, types, q = ids[:p], types[:p], p - 1
        cands = list(range(p))
    else:
        ids[p] = model.tokenizer.mask_token_id
        q = p
        cands = [i for i, s in enumerate(enc.special) if not s and i != p]
    if len(cands) < MIN_INPUTS:
        return None
    return ids, types, q, target, cands


@torch.no_grad()
def blankout(model, ids, types, q, target, cands, kind: str, unk: int) -> np.ndarray:
    """p(target) intact minus with each candidate replaced by UNK: (C,). One batch."""
    batch = ids[None].repeat(len(cands) + 1, 1)  # (1 + C, T)
    batch[torch.arange(1, len(cands) + 1), torch.tensor(cands)] = unk
    dev = model.device
    out = model.model(batch.to(dev), token_type_ids=types[None].expand_as(batch).to(dev),
                      output_attentions=False)
    p = lm_logits(model, out.last_hidden_state[:, q], kind).softmax(-1)[:, target].cpu()
    return (p[0] - p[1:]).double().numpy()  # (C,)


def gradient_and_maps(model, ids, types, q, target, kind: str):
    """(||d log p / d e_j|| (T,), the run's maps (L, H, T, T), p(target)) from one forward and
    backward; the embeddings' output is made a leaf by a hook (mha_core.hooks)."""
    leaf = {}

    def grab(value, _layer):
        leaf["e"] = value.detach().requires_grad_(True)
        return leaf["e"]

    dev = model.device
    with torch.enable_grad():
        out = model.model(ids[None].to(dev), token_type_ids=types[None].to(dev),
                          hooks={"embed": grab})
        logp = lm_logits(model, out.last_hidden_state[0, q], kind).log_softmax(-1)[target]
        (grad,) = torch.autograd.grad(logp, [leaf["e"]])
    maps = torch.stack(out.attentions)[:, 0].detach().double().cpu().numpy()  # (L, H, T, T)
    return grad[0].norm(dim=-1).double().cpu().numpy(), maps, float(logp.detach().exp())


def spearman(a, b) -> float:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # a constant input gives NaN, left out of the mean
        return float(spearmanr(a, b)[0])


def sentence_scores(model, enc, kind: str, unk: int):
    """{importance: {method: (L,) Spearman}} and p(target) for one sentence, or None."""
    s = setup(model, enc, kind)
    if s is None:
        return None
    ids, types, q, target, cands = s
    blank = blankout(model, ids, types, q, target, cands, kind, unk)
    grad, maps, p = gradient_and_maps(model, ids, types, q, target, kind)
    readings = {"raw": maps.mean(1)[:, q, :], "rollout": rollout(maps)[:, q, :].double().numpy(),
                "flow": attention_flow(maps, q)}  # (L, T) each
    imp = {"blankout": blank, "gradient": grad[cands]}
    return {i: {m: np.array([spearman(r[cands], imp[i]) for r in readings[m]])
                for m in METHODS} for i in IMPORTANCES}, p


def run(model, corpus, progress=None) -> dict:
    kind = lm_kind(model)  # Unsupported without an LM head
    unk = model.tokenizer.unk_token_id
    if unk is None:
        raise Unsupported(f"{model.name}'s tokenizer has no UNK token to blank a word out with.")
    kept, skipped = encode_corpus(model, corpus.texts, MAX_FLOW_TOKENS, min_tokens=4)
    per, probs, no_target = [], [], 0
    for k, (_, enc) in enumerate(kept):
        got = sentence_scores(model, enc, kind, unk)
        if got is None:
            no_target += 1
        else:
            per.append(got[0])
            probs.append(got[1])
        if progress:
            progress(k + 1, len(kept))
    if not per:
        raise ValueError(f"no sentence of the corpus has a target with {MIN_INPUTS} input tokens "
                         f"in {MAX_FLOW_TOKENS} tokens")
    out = {"sentences": len(per), "skipped": skipped | {"no_target": no_target},
           "prediction": "next word" if kind == "next" else "masked word",
           "mean_p_target": rounded(np.mean(probs)), "max_tokens": MAX_FLOW_TOKENS}
    for i in IMPORTANCES:
        out[i] = {}
        for m in METHODS:
            stack = np.stack([s[i][m] for s in per])  # (N, L)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                out[i][m] = {"mean": rounded(np.nanmean(stack, 0)),
                             "std": rounded(np.nanstd(stack, 0))}
    return out


def rows(res: dict, model) -> list:
    out = []
    for i in IMPORTANCES:
        for m in METHODS:
            mean, std = res[i][m]["mean"][-1], res[i][m]["std"][-1]
            text = "n/a" if mean is None else f"{mean:.2f} ± {std:.2f}"
            out.append((f"{m} vs {'blank-out' if i == 'blankout' else 'input gradient'}, last "
                        f"layer ({len(res[i][m]['mean'])}; theirs 6)", text,
                        f"{TABLES[i][m][-1]:.2f}"))
    return out


def differs(res: dict, model) -> str:
    return (f"The paper trained a 6-layer agreement classifier and read its [CLS] row on 2,000 "
            f"Linzen et al. sentences; ours reads {model.name} predicting the "
            f"{res['prediction']} (the sentence's last word) on {res['sentences']} sentences of "
            f"≤ {res['max_tokens']} tokens, with the gradient's L2 norm per token (the paper does "
            f"not say which reduction).")


def figure(res: dict, fig) -> None:
    """Mean Spearman per layer (depth as a share of the model's layers), ours solid, the
    paper's dashed; blank-out left, gradient right."""
    axes = fig.subplots(1, 2, sharey=True)
    for ax, i in zip(axes, IMPORTANCES):
        for k, m in enumerate(METHODS):
            ours = np.array(res[i][m]["mean"], dtype=float)
            L = len(ours)
            ax.plot(np.arange(1, L + 1) / L, ours, marker="o", color=f"C{k}", label=f"{m} (ours)")
            theirs = TABLES[i][m]
            ax.plot(np.arange(1, 7) / 6, theirs, linestyle="--", color=f"C{k}",
                    label=f"{m} (paper)")
        ax.axhline(0, color="grey", linewidth=0.5)
        ax.set(xlabel="depth (layer / layers)", title=f"vs {i.replace('blankout', 'blank-out')}",
               ylim=(-1, 1))
    axes[0].set_ylabel("Spearman's ρ (mean over sentences)")
    axes[1].legend(fontsize="small")
