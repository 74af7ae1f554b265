"""Michel et al. 2019, "Are Sixteen Heads Really Better than One?": rank the heads by how much
the loss depends on them, switch off the least important ones in steps of 10 %, and see how far
pruning goes before the loss rises.

Importance: I_h = E_x |dL(x) / d xi_h|, xi the (L, H) head-mask gates at 1 (the forward's float
head_mask, made to require a gradient; the model's weights are not touched), each layer's
scores divided by their L2 norm (the paper's normalisation), then ranked over the model.
The loss L is the language-model loss: a decoder's next-token cross-entropy at every position,
or an encoder's masked-LM loss at MASK_SHARE of its word pieces (chosen by a seeded generator
per sentence). Importance is measured on the corpus's even-numbered sentences and the pruning
curve on the odd-numbered ones (held out). The share prunable is the largest step whose loss,
and every smaller step's, stays within 1 % of the intact model's; beside it, the same with top-1
accuracy of the predicted tokens within 1 point (the paper judged by accuracy).
"""

import numpy as np
import torch

from .common import Paper, Published, lm_kind, lm_logits, pct, rounded
from .corpus import MAX_TOKENS, encode_corpus

PAPER = Paper("michel2019", "Michel et al. 2019, Are Sixteen Heads Really Better than One?",
              "arXiv:1905.10650, NeurIPS 2019", "bert-base-uncased fine-tuned on MNLI "
              "(and a 6-layer WMT Transformer)", "MNLI (importance on training data, accuracy "
                                                  "on the dev set)",
              default_model="bundled-decoder")
PANELS = 2  # the figure's panels side by side
PUBLISHED = (Published("share of heads prunable without a noticeable drop",
                       "40 % (BERT on MNLI accuracy); 20 % (WMT BLEU)"),)
STEPS = tuple(k / 10 for k in range(10))  # 0 %, 10 %, ..., 90 % of the heads switched off
RISE = 0.01  # "the loss rises 1 %"
DROP = 0.01  # top-1 accuracy may fall by 1 point (of the predicted tokens)
MASK_SHARE = 0.15


def lm_batch(model, enc, kind: str, seed: int):
    """(input ids (T,), token types (T,), positions read (P,), targets (P,)) of one sentence."""
    ids, types = enc.input_ids.clone(), enc.token_type_ids.clone()
    if kind == "next":
        return ids, types, torch.arange(len(ids) - 1), ids[1:].clone()
    words = [i for i, s in enumerate(enc.special) if not s]
    rng = np.random.default_rng(seed)
    pick = np.sort(rng.choice(words, max(1, round(MASK_SHARE * len(words))), replace=False))
    pos = torch.as_tensor(pick, dtype=torch.long)
    targets = ids[pos].clone()
    ids[pos] = model.tokenizer.mask_token_id
    return ids, types, pos, targets


def losses(model, batch, kind: str, head_mask) -> tuple:
    """Summed cross-entropy and top-1 hits per head mask: head_mask (N, L, H) -> (N,), (N,).
    One forward of N copies of the sentence."""
    ids, types, pos, targets = batch
    dev, N = model.device, head_mask.size(0)
    out = model.model(ids[None].expand(N, -1).to(dev), head_mask=head_mask.to(dev),
                      token_type_ids=types[None].expand(N, -1).to(dev), output_attentions=False)
    logits = lm_logits(model, out.last_hidden_state[:, pos.to(dev)], kind)  # (N, P, V)
    t = targets.to(dev)[None].expand(N, -1)
    ce = torch.nn.functional.cross_entropy(logits.transpose(1, 2), t, reduction="none")  # (N, P)
    return ce.sum(-1), (logits.argmax(-1) == t).sum(-1)


def importance(model, batches, kind: str, progress=None) -> np.ndarray:
    """E|dL/dxi| over the batches (each sentence's mean loss): (L, H), before normalising."""
    L, H = model.config.num_hidden_layers, model.config.num_attention_heads
    total = torch.zeros(L, H, dtype=torch.float64)
    for k, batch in enumerate(batches):
        xi = torch.ones(1, L, H, requires_grad=True)
        with torch.enable_grad():
            ce, _ = losses(model, batch, kind, xi)
            (g,) = torch.autograd.grad(ce[0] / len(batch[3]), [xi])
        total += g[0].abs().double().cpu()
        if progress:
            progress(k + 1)
    return (total / max(1, len(batches))).numpy()


def normalise(imp: np.ndarray) -> np.ndarray:
    """Each layer's scores over their L2 norm (Michel et al., Sec. 4)."""
    norm = np.linalg.norm(imp, axis=1, keepdims=True)
    return imp / np.where(norm > 0, norm, 1)


def pruning_masks(scores: np.ndarray) -> torch.Tensor:
    """One (L, H) mask per step of STEPS, the least important heads off: (S, L, H)."""
    L, H = scores.shape
    order = np.argsort(scores.ravel(), kind="stable")  # least important first ("order")
    masks = torch.ones(len(STEPS), L * H)
    for s, share in enumerate(STEPS):
        masks[s, order[:round(share * L * H)]] = 0
    return masks.view(len(STEPS), L, H)


def last_ok(oks) -> float:
    """The largest step of STEPS up to which every step is ok (step 0 always is)."""
    best = 0.0
    for share, ok in zip(STEPS, oks):
        if not ok:
            break
        best = share
    return best


def prunable(curve) -> float:
    """The largest step whose loss, and every smaller step's, is within RISE of step 0."""
    return last_ok(loss <= (1 + RISE) * curve[0] for loss in curve)


def prunable_by_accuracy(acc) -> float:
    """The same with top-1 accuracy, Michel et al.'s own yardstick: at most DROP below step 0."""
    return last_ok(a >= acc[0] - DROP for a in acc)


def run(model, corpus, progress=None) -> dict:
    kind = lm_kind(model)  # Unsupported without an LM head
    kept, skipped = encode_corpus(model, corpus.texts, MAX_TOKENS, min_tokens=3)
    batches = [lm_batch(model, enc, kind, seed=i) for i, enc in kept]
    fit, held = batches[0::2], batches[1::2] or batches[0::2]
    if not fit:
        raise ValueError("no sentence of the corpus fits (all too long, or under 3 tokens)")
    n_steps = len(fit) + len(held)
    tick = (lambda k: progress(k, n_steps)) if progress else None
    raw = importance(model, fit, kind, tick)
    scores = normalise(raw)
    masks = pruning_masks(scores)
    ce, hits, count = torch.zeros(len(STEPS), dtype=torch.float64), torch.zeros(len(STEPS)), 0
    with torch.inference_mode():
        for k, batch in enumerate(held):
            c, h = losses(model, batch, kind, masks)
            ce += c.double().cpu()
            hits += h.cpu()
            count += len(batch[3])
            if progress:
                progress(len(fit) + k + 1, n_steps)
    curve, acc = (ce / count).numpy(), (hits / count).double().numpy()
    return {"sentences": len(kept), "fit_sentences": len(fit), "held_out_sentences": len(held),
            "skipped": skipped, "loss": "next-token" if kind == "next" else "masked-LM",
            "predicted_tokens": count, "steps": list(STEPS), "loss_curve": rounded(curve),
            "accuracy_curve": rounded(acc), "prunable_by_accuracy": prunable_by_accuracy(acc),
            "importance": rounded(raw), "importance_normalised": rounded(scores),
            "order": [[int(i) // scores.shape[1], int(i) % scores.shape[1]]
                      for i in np.argsort(scores.ravel(), kind="stable")],
            "prunable": prunable(curve), "rise": RISE}


def rows(res: dict, model) -> list:
    c, a = res["loss_curve"], res["accuracy_curve"]
    half = STEPS.index(0.5)
    return [(f"{PUBLISHED[0].measure} (ours: {res['loss']} loss within {100 * res['rise']:.0f} %)",
             pct(res["prunable"]), PUBLISHED[0].value),
            (f"the same, top-1 {res['loss'].split('-')[0]}-word accuracy within 1 point (the "
             f"paper's yardstick; noisy on {res['predicted_tokens']} tokens)",
             pct(res["prunable_by_accuracy"]), PUBLISHED[0].value),
            ("loss intact → with 50 % of heads off", f"{c[0]:.3f} → {c[half]:.3f} nats per token "
             f"(top-1 {pct(a[0])} → {pct(a[half])})", "–")]


def differs(res: dict, model) -> str:
    return (f"The paper pruned bert-base fine-tuned on MNLI and judged the drop by accuracy; ours "
            f"prunes {model.name} judged by its {res['loss']} loss on "
            f"{res['held_out_sentences']} held-out sentences, importance from "
            f"{res['fit_sentences']} others, ranked once (not re-estimated after each step).")


def figure(res: dict, fig) -> None:
    """Left: the loss relative to the intact model as heads are switched off; right: each
    head's normalised importance."""
    left, right = fig.subplots(1, 2)
    curve = np.array(res["loss_curve"], dtype=float)
    share = 100 * np.array(res["steps"])
    left.plot(share, curve / curve[0], marker="o", label=f"{res['loss']} loss (ours)")
    left.axhline(1 + res["rise"], color="grey", linestyle="--", label="+1 %")
    left.axvline(40, color="C3", linestyle=":", label="40 %: the paper's BERT")
    left.set(xlabel="% of heads switched off (least important first)",
             ylabel="loss ÷ intact loss", title="Pruning by importance")
    left.legend(fontsize="small")
    imp = np.array(res["importance_normalised"], dtype=float)
    im = right.imshow(imp, aspect="auto", cmap="viridis")
    right.set(xlabel="head", ylabel="layer", title="Importance |∂L/∂ξ| (per layer L2-normalised)")
    L, H = imp.shape
    right.set_yticks(range(0, L, max(1, L // 10)))
    right.set_yticklabels([str(i + 1) for i in range(0, L, max(1, L // 10))])
    right.set_xticks(range(H))
    right.set_xticklabels([str(h + 1) for h in range(H)])
    fig.colorbar(im, ax=right, shrink=0.8)
