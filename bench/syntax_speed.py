"""Clark et al.'s head scoring on a treebank: ours (batched, mha_core.syntax) against a plain
per-sentence loop over transformers' eager BertModel doing the same scoring on the same data.

Both start from nothing: the model load and the treebank read are inside each timing. They run
in one process, alternating which goes first, so both see the same machine load. Prints wall
and CPU seconds of each, the ratios, and whether the two tables agree arc for arc.

    .venv/bin/python bench/syntax_speed.py [--treebank FILE] [--model DIR] [--reps 1]

The default treebank is UD English-EWT's dev set in ../shared/ud/ (or $HEADSCOPE_UD_DIR); it is
not part of the project.
"""

import argparse
import os
import statistics
import sys
import time
from collections import Counter, defaultdict
from pathlib import Path

import numpy as np
import torch

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

UD_DIR = Path(os.environ.get("HEADSCOPE_UD_DIR") or ROOT.parent / "shared" / "ud")
OFFSETS = (-3, -2, -1, 1, 2, 3)


def ours(model, treebank):
    import mha_core
    from mha_core.syntax import score_treebank
    from mha_core.treebank import read_treebank

    bert = mha_core.load_bert(model)
    scores = score_treebank(bert, read_treebank(treebank, max_bytes=2**40))
    return {rel: scores.correct[r] for r, rel in enumerate(scores.relations)}, scores.used


def plain_loop(model, treebank):
    """One sentence at a time: tokenise its words, run transformers' BertModel, merge pieces
    into words, drop [CLS]/[SEP], zero the diagonal, argmax rows and columns, count."""
    import conllu
    from transformers import AutoTokenizer, BertModel

    from mha_core.loading import resolve_source

    path = str(resolve_source(model))
    hf = BertModel.from_pretrained(path, attn_implementation="eager").eval()
    tok = AutoTokenizer.from_pretrained(path, use_fast=True)
    L, H = hf.config.num_hidden_layers, hf.config.num_attention_heads
    correct = defaultdict(lambda: np.zeros((L, H, 2), dtype=np.int64))
    n, used = Counter(), 0
    with open(treebank, encoding="utf-8") as f:
        for sentence in conllu.parse_incr(f):
            words = [t for t in sentence if isinstance(t["id"], int)]
            enc = tok([t["form"] for t in words], is_split_into_words=True, return_tensors="pt")
            T = enc["input_ids"].size(1)
            if T > min(128, hf.config.max_position_embeddings):
                continue
            used += 1
            with torch.no_grad():
                out = hf(**enc, output_attentions=True)
            att = torch.stack(out.attentions)[:, 0].numpy()  # (L, H, T, T)
            P = np.zeros((len(words), T))  # (W, T) one-hot: the pieces of each word
            for t, w in enumerate(enc.word_ids(0)):
                if w is not None:
                    P[w, t] = 1
            m = (P / P.sum(1, keepdims=True)) @ att @ P.T  # (L, H, W, W): mean from, sum to
            m[..., np.arange(len(words)), np.arange(len(words))] = 0
            dep, head = m.argmax(-1), m.argmax(-2)  # (L, H, W)
            for i, t in enumerate(words):
                rel = t["deprel"].split(":")[0]
                if rel in ("punct", "root"):
                    continue
                for key in (rel, "all"):
                    n[key] += 1
                    correct[key][..., 0] += dep[..., i] == t["head"] - 1
                    correct[key][..., 1] += head[..., i] == t["head"] - 1
    return dict(correct), used


def timed(fn, *args):
    w, c = time.perf_counter(), time.process_time()
    out = fn(*args)
    return out, time.perf_counter() - w, time.process_time() - c


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--treebank", default=str(UD_DIR / "en_ewt-ud-dev.conllu"))
    ap.add_argument("--model", default=None, help="a checkpoint directory (default: bundled)")
    ap.add_argument("--reps", type=int, default=1)
    args = ap.parse_args()
    if not Path(args.treebank).exists():
        sys.exit(f"{args.treebank} not found: set HEADSCOPE_UD_DIR or pass --treebank")
    print(f"treebank {args.treebank}; model {args.model or 'bundled'}; torch "
          f"{torch.__version__}, {torch.get_num_threads()} threads, {os.cpu_count()} cores; "
          f"load average {os.getloadavg()[0]:.1f}")
    times = {"ours": [], "loop": []}
    results = {}
    for rep in range(args.reps):
        order = [("ours", ours), ("loop", plain_loop)]
        for name, fn in (order if rep % 2 == 0 else order[::-1]):
            results[name], wall, cpu = timed(fn, args.model, args.treebank)
            times[name].append((wall, cpu))
            print(f"  rep {rep + 1} {name:<5} wall {wall:6.2f} s  cpu {cpu:6.2f} s", flush=True)
    (a, used_a), (b, used_b) = results["ours"], results["loop"]
    diff = sum(int(np.abs(a[k] - b[k]).sum()) for k in b)
    total = sum(int(v.sum()) for v in b.values())
    print(f"sentences scored: ours {used_a}, loop {used_b}; relations {sorted(a) == sorted(b)}; "
          f"right predictions that differ: {diff} of {total}")
    wall = {k: statistics.median(w for w, _ in v) for k, v in times.items()}
    cpu = {k: statistics.median(c for _, c in v) for k, v in times.items()}
    print(f"{'':<6}{'wall s':>8}{'cpu s':>8}")
    for k in times:
        print(f"{k:<6}{wall[k]:>8.2f}{cpu[k]:>8.2f}")
    print(f"speed-up (loop / ours): wall {wall['loop'] / wall['ours']:.2f}x, "
          f"cpu {cpu['loop'] / cpu['ours']:.2f}x")


if __name__ == "__main__":
    main()
