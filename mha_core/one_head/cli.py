"""python -m mha_core.one_head CORPUS --json OUT: is one head enough? For every layer of a model,
R² on held-out sentences of the summed head, the best original head(s), the best-fit single head
and fitted layers of h heads, with the downstream cost (see mha_core/one_head/__init__.py).
Torch runs on one thread unless --threads says otherwise; results are cached per (model,
corpus, settings) in ~/.cache/headscope/one_head."""

import argparse
import hashlib
import json
import os
import sys
import time
from pathlib import Path

import torch

from ..api import add_device_argument, load_model
from ..loading import CheckpointError
from .data import read_corpus
from .fit import FITTED, FitConfig, fitted_meaning
from .run import Settings, measure_seed, n_fits, summarise

SUMMED = ("the layer's own attention (the family's scores, position terms and rotary "
          "included) read as one head: the heads' scores summed, one softmax")
CACHE = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "headscope" / "one_head"


def cache_key(model_name: str, texts: list, settings: Settings, device: str = "cpu") -> str:
    blob = json.dumps([model_name, texts, settings.as_dict()]
                      + ([] if device == "cpu" else [device]), sort_keys=True)
    return hashlib.sha256(blob.encode()).hexdigest()[:20]


def measure(bert, texts, settings: Settings, cache: Path | None = CACHE, progress=True) -> dict:
    """The whole measurement (summarise(...) plus model, settings, timing), from the cache when
    this (model, corpus, settings) was measured before."""
    texts = list(texts)[:settings.sentences]
    key = cache_key(bert.name, texts, settings, bert.device.type)
    hit = cache / f"{key}.json" if cache else None
    if hit and hit.is_file():
        return json.loads(hit.read_text())
    total = n_fits(settings, bert.config.num_hidden_layers) * settings.fit.steps
    bar = None
    if progress:
        print(f"estimate: ~{estimate_minutes(bert, texts, settings):.1f} min on one free core "
              "(the bar's ETA follows the real speed)", file=sys.stderr)
        from tqdm import tqdm

        bar = tqdm(total=total, unit="step", desc="fitting", file=sys.stderr)
    start = time.perf_counter()
    runs = [measure_seed(bert, texts, settings, seed, bar.update if bar else None)
            for seed in settings.seeds]
    if bar:
        bar.close()
    c = bert.config
    out = {"model": bert.name, "heads": c.num_attention_heads, "d_model": c.hidden_size,
           "n_layers": c.num_hidden_layers, "corpus_sentences": len(texts),
           "family": bert.family.name, "device": str(bert.device),
           "fitted_head": FITTED, "summed_head": SUMMED,
           "on_this_family": fitted_meaning(c),
           "settings": settings.as_dict(), "optimiser": "Adam, full batch over the fit tokens",
           **summarise(runs), "per_seed": runs, "seconds": round(time.perf_counter() - start, 1),
           "threads": torch.get_num_threads(), "loadavg": _loadavg()}
    if hit:
        hit.parent.mkdir(parents=True, exist_ok=True)
        hit.write_text(json.dumps(out))
    return out


SECONDS_PER_TOKEN_STEP = 1e-4  # one Adam step of a D = 384 layer, per fit token, one thread


def estimate_minutes(bert, texts, settings: Settings) -> float:
    """The run's length from the fit tokens, the steps and a measured per-token cost (~0.1 s a
    step for ~1,100 tokens of all-MiniLM-L6-v2 on one thread at load ~3), scaled by D²."""
    n = sum(bert.encode(t, max_length=settings.max_tokens).input_ids.numel() for t in texts)
    steps = n_fits(settings, bert.config.num_hidden_layers) * settings.fit.steps
    scale = (bert.config.hidden_size / 384) ** 2
    return steps * n * (1 - settings.held_out) * SECONDS_PER_TOKEN_STEP * scale / 60


def _loadavg() -> str:
    try:
        return " ".join(Path("/proc/loadavg").read_text().split()[:3])
    except OSError:
        return "unknown"


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python -m mha_core.one_head", description=__doc__)
    p.add_argument("corpus", help="a .conllu treebank or a text file of one sentence a line")
    p.add_argument("--json", required=True, help="where to write the results")
    p.add_argument("--model", default=None, help="a checkpoint directory (default: bundled)")
    d = Settings()
    p.add_argument("--sentences", type=int, default=d.sentences)
    p.add_argument("--seeds", type=int, nargs="+", default=list(d.seeds))
    p.add_argument("--steps", type=int, default=d.fit.steps)
    p.add_argument("--lr", type=float, default=d.fit.lr)
    p.add_argument("--eval-every", type=int, default=d.fit.eval_every)
    p.add_argument("--heads", type=int, nargs="+", default=list(d.heads),
                   help="fitted h besides H (H itself is always fitted)")
    p.add_argument("--layers", type=int, nargs="+", default=[],
                   help="measure only these layers (from 1); the whole-model check needs all")
    p.add_argument("--no-fresh", action="store_true", help="skip the fresh-start fit of h = H")
    p.add_argument("--threads", type=int, default=1, help="torch threads (default 1: the "
                   "machine is shared)")
    p.add_argument("--no-cache", action="store_true")
    add_device_argument(p)
    a = p.parse_args(argv)
    torch.set_num_threads(a.threads)
    try:
        texts = read_corpus(a.corpus)
        if a.steps < 1 or a.sentences < 2 or a.lr <= 0 or a.eval_every < 1:
            raise ValueError("--steps and --eval-every must be at least 1, --sentences at "
                             "least 2 and --lr positive")
        settings = Settings(sentences=a.sentences, seeds=tuple(a.seeds), heads=tuple(a.heads),
                            fresh_full=not a.no_fresh, layers=tuple(a.layers),
                            fit=FitConfig(steps=a.steps, lr=a.lr, eval_every=a.eval_every))
        bert = load_model(a.model, device=a.device)
    except (ValueError, OSError, CheckpointError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    n = n_fits(settings, bert.config.num_hidden_layers)
    where = (f"{torch.get_num_threads()} CPU thread(s)" if bert.device.type == "cpu"
             else str(bert.device))
    print(f"{bert.name}: {min(len(texts), settings.sentences)} sentences, {n} fits of "
          f"{settings.fit.steps} steps on {where}", file=sys.stderr)
    out = measure(bert, texts, settings, None if a.no_cache else CACHE)
    Path(a.json).write_text(json.dumps(out, indent=1) + "\n")
    for row in out["layers"]:
        print(sentence(row, out["heads"]))
    print(f"{out['seconds']} s, load average {out['loadavg']}", file=sys.stderr)
    return 0


def sentence(row: dict, H: int) -> str:
    """The per-layer answer in words, computed from the numbers (layer from 1)."""
    f = row["fitted"]
    more = "; ".join(f"{h} heads, {_pct(f[str(h)])}" for h in (2, 4) if str(h) in f)
    return (f"Layer {row['layer']}: the best-fit single head reproduces {_pct(f['1'])} of what "
            f"the {H} heads write" + (f"; {more}" if more else "") + f". The best original "
            f"head alone (head {row['best_head']}): {_pct(row['best_head_r2'])}; the summed "
            f"head: {_pct(row['summed'])}.")


def _pct(v: float) -> str:
    """R² as a share; below 0 it is worse than writing the mean vector for every token."""
    return f"{100 * v:.0f}%" if v >= 0 else f"none (R² {v:.2f})"
