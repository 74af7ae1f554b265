"""One measurement of a model on a corpus: for every layer and seed, (a) the summed head, (b)
the best original heads, (c) the best-fit single head, (d) fitted layers of h heads, the
downstream cost of the fitted single head, and the Michel check on the whole model.
Seeds change the fit/held-out split (and the fresh start); the summary is their mean and
spread (max - min).

Shape letters: B sentences, T tokens, D hidden size, L layers, H heads.
"""

from dataclasses import asdict, dataclass, field

import numpy as np
import torch

from .data import batch, layer_io, split_sentences
from .fit import FitConfig, as_replacement, fit_layer, start_layer
from .measure import (
    embedding_cosine,
    greedy_heads,
    head_contributions,
    mask_positions,
    mlm_scores,
    output_bias,
    r2,
    run_replaced,
    summed_head_output,
)


@dataclass(frozen=True)
class Settings:
    sentences: int = 153  # the first this many sentences of the corpus
    held_out: float = 0.25  # the share of sentences held out (split by sentence)
    seeds: tuple = (0, 1, 2)
    heads: tuple = (1, 2, 4)  # fitted h besides H (always added)
    fresh_full: bool = True  # also fit h = H from a fresh start
    max_tokens: int = 64  # each sentence cut to this many tokens
    layers: tuple = ()  # the layers measured (from 1); () = all, and the whole-model check
    fit: FitConfig = field(default_factory=FitConfig)

    def as_dict(self) -> dict:
        return asdict(self)


def n_fits(settings: Settings, n_layers: int) -> int:
    """How many optimiser runs the measurement takes (for the estimate and the progress bar)."""
    per_layer = len(set(settings.heads)) + 1 + int(settings.fresh_full)
    return per_layer * len(settings.layers or range(n_layers)) * len(settings.seeds)


def hs_of(settings: Settings, H: int) -> list:
    return sorted({h for h in settings.heads if h < H}) + [H]


def measure_seed(bert, texts, settings: Settings, seed: int, progress=None) -> dict:
    """One seed's split: every measured run layer's row, the downstream cost of its fitted
    single head, and (when every layer is measured) the whole-model check."""
    H, L = bert.config.num_attention_heads, bert.config.num_hidden_layers
    fit_idx, held_idx = split_sentences(len(texts), settings.held_out, seed)
    bf = batch(bert, [texts[i] for i in fit_idx], settings.max_tokens)
    bh = batch(bert, [texts[i] for i in held_idx], settings.max_tokens)
    fit_io, held_io = layer_io(bert, bf), layer_io(bert, bh)
    intact = run_replaced(bert, bh)  # (B, T, D)
    layers, singles, best_heads = [], {}, []
    for i in range(L):
        if settings.layers and i + 1 not in settings.layers:
            continue
        attn, fit, held = bert.model.layer(i).attn, fit_io[i], held_io[i]
        with torch.no_grad():
            summed = r2(held.y, summed_head_output(attn, held), held.keep)
            parts = [(head_contributions(attn, p), output_bias(attn), p.y, p.keep)
                     for p in (fit, held)]
            order, best_k = greedy_heads(*parts)
        fitted, curves = {}, {}
        for h in hs_of(settings, H):
            key = "H" if h == H else str(h)  # the schema: {"1", "2", "4", "H"}
            f = start_layer(attn, h, "layer", seed)
            curves[key] = fit_layer(f, fit.part(), held.part(), settings.fit, progress)
            fitted[key] = curves[key][-1][1]
            if h == 1:
                singles[i] = f.requires_grad_(False)
        row = {"layer": i + 1, "summed": summed, "best_head": order[0] + 1,
               "best_head_r2": best_k[0], "best_k": best_k, "greedy_order": [h + 1 for h in order],
               "fitted": fitted, "curves": curves}
        if settings.fresh_full:
            f = start_layer(attn, H, "fresh", seed)
            row["curves"]["fresh_H"] = fit_layer(f, fit.part(), held.part(), settings.fit,
                                                 progress)
            row["fitted_fresh_H"] = row["curves"]["fresh_H"][-1][1]
        changed = run_replaced(bert, bh, {i: as_replacement(singles[i])})
        row["downstream"] = {"cosine": embedding_cosine(intact, changed, bh.keep)}
        best_heads.append(order[0])
        layers.append(row)
    out = {"seed": seed, "sentences": {"fit": len(fit_idx), "held_out": len(held_idx)},
           "tokens": {"fit": bf.n_tokens, "held_out": bh.n_tokens}, "layers": layers}
    if len(layers) < L:
        return out
    keep_best = torch.zeros(L, H)  # (L, H)
    keep_best[range(len(best_heads)), best_heads] = 1
    all_fitted = {i: as_replacement(f) for i, f in singles.items()}
    whole = {"best_original_heads": {"cosine": embedding_cosine(
                 intact, run_replaced(bert, bh, head_mask=keep_best), bh.keep)},
             "best_fit_single_heads": {"cosine": embedding_cosine(
                 intact, run_replaced(bert, bh, all_fitted), bh.keep)}}
    if bert.has_mlm_head:
        _add_mlm(bert, bh, layers, singles, keep_best, whole, seed)
    return {**out, "whole_model": whole}


def _add_mlm(bert, bh, layers, singles, keep_best, whole, seed):
    """Masked-LM loss and top-1 accuracy at ~15% masked held-out tokens, intact and changed."""
    special = torch.isin(bh.input_ids.cpu(), torch.tensor(bert.tokenizer.all_special_ids))
    ids, pick = mask_positions(bh, bert.tokenizer.mask_token_id, special, seed=seed)

    def scores(**kw):
        hidden = run_replaced(bert, bh, input_ids=ids, **kw)
        loss, acc = mlm_scores(bert.model, hidden, bh.input_ids, pick)
        return {"mlm_loss": loss, "mlm_top1": acc}

    base = scores()
    for row in layers:
        got = scores(replace={row["layer"] - 1: as_replacement(singles[row["layer"] - 1])})
        row["downstream"].update({f"{k}_intact": base[k] for k in base} | got)
    whole["best_original_heads"].update(scores(head_mask=keep_best))
    whole["best_fit_single_heads"].update(scores(replace={
        i: as_replacement(f) for i, f in singles.items()}))
    whole["intact"] = base


def summarise(runs: list) -> dict:
    """The seeds' mean (and spread = max - min) of every number, per layer and for the whole
    model; the best head is the one most seeds chose."""
    def agg(values):
        if isinstance(values[0], dict):
            return {k: agg([v[k] for v in values]) for k in values[0]}
        if isinstance(values[0], list):
            if values[0] and isinstance(values[0][0], (list, tuple)):  # a curve [(step, R²)]
                return [[s, float(np.mean([v[j][1] for v in values]))]
                        for j, (s, _) in enumerate(values[0])]
            return [float(np.mean(col)) for col in zip(*values)]
        return float(np.mean(values))

    def spread(values):
        if isinstance(values[0], dict):
            return {k: spread([v[k] for v in values]) for k in values[0] if k != "curves"}
        if isinstance(values[0], list):
            return [float(np.ptp(col)) for col in zip(*values)] if not isinstance(
                values[0][0], (list, tuple)) else None
        return float(np.ptp(values))

    layers = []
    for rows in zip(*[r["layers"] for r in runs]):
        heads = [r["best_head"] for r in rows]
        numeric = [{k: v for k, v in r.items() if k not in ("layer", "best_head", "greedy_order")}
                   for r in rows]
        out = {"layer": rows[0]["layer"], "best_head": max(set(heads), key=heads.count),
               "best_head_per_seed": heads, **agg(numeric)}
        out["spread"] = {k: v for k, v in spread(numeric).items() if v is not None}
        layers.append(out)
    whole = {}
    if "whole_model" in runs[0]:
        whole = {"whole_model": agg([r["whole_model"] for r in runs]),
                 "whole_model_spread": spread([r["whole_model"] for r in runs])}
    return {"layers": layers, **whole, "sentences": runs[0]["sentences"],
            "tokens": {k: [r["tokens"][k] for r in runs] for k in ("fit", "held_out")}}
