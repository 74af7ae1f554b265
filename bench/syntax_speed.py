"""How fast is scoring every head against a treebank (Clark et al.'s protocol)? Ours (batched,
mha_core.syntax) against a plain per-sentence loop over transformers' eager BertModel doing the
same scoring on the same data.

Each measurement is a fresh Python process that starts from nothing: importing the libraries,
loading the model and reading the treebank are inside each timing, as for someone who runs the
command once. The two alternate within one run (ours, loop, loop, ours, ...), so both see the
same machine load. Prints wall and CPU seconds of every run, the median and best of each, their
ratios, and whether the two tables agree arc for arc.

    .venv/bin/python bench/syntax_speed.py [--treebank FILE] [--model DIR] [--reps 3]

The default treebank is UD English-EWT's dev set in ../shared/ud/ (or $HEADSCOPE_UD_DIR); it is
not part of the project. On a machine shared with other work, look at the best runs too: a
contended core slows both sides, but not always equally.
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench import harness as h  # noqa: E402

UD_DIR = Path(os.environ.get("HEADSCOPE_UD_DIR") or ROOT.parent / "shared" / "ud")


def ours(model, treebank):
    sys.path.insert(0, str(ROOT))
    import mha_core
    from mha_core.syntax import score_treebank
    from mha_core.treebank import read_treebank

    bert = mha_core.load_model(model)
    scores = score_treebank(bert, read_treebank(treebank, max_bytes=2**40))
    return {rel: scores.correct[r] for r, rel in enumerate(scores.relations)}, scores.used


def plain_loop(model, treebank):
    """One sentence at a time: tokenise its words, run transformers' BertModel, merge pieces
    into words, drop [CLS]/[SEP], zero the diagonal, argmax rows and columns, count."""
    from collections import Counter, defaultdict

    import conllu
    import numpy as np
    import torch
    from transformers import AutoTokenizer, BertModel

    sys.path.insert(0, str(ROOT))
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


def child(which, model, treebank, out):
    """One timed run in this (fresh) process; the result goes to `out` as JSON."""
    w, c = time.perf_counter(), time.process_time()
    correct, used = (ours if which == "ours" else plain_loop)(model, treebank)
    wall, cpu = time.perf_counter() - w, time.process_time() - c
    Path(out).write_text(json.dumps(dict(wall=wall, cpu=cpu, used=used,
                                         correct={k: v.tolist() for k, v in correct.items()})))


def run(which, args):
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "out.json"
        cmd = [sys.executable, __file__, "--child", which, "--treebank", args.treebank,
               "--out", str(out)] + (["--model", args.model] if args.model else [])
        subprocess.run(cmd, check=True, env={**os.environ, "HF_HUB_OFFLINE": "1"},
                       stderr=subprocess.DEVNULL)
        return json.loads(out.read_text())


def main():
    ap = h.parser(__doc__)
    ap.add_argument("--treebank", default=str(UD_DIR / "en_ewt-ud-dev.conllu"))
    ap.add_argument("--model", default=None, help="a checkpoint directory (default: bundled)")
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--child", choices=("ours", "loop"), help=argparse.SUPPRESS)
    ap.add_argument("--out", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        return child(args.child, args.model, args.treebank, args.out)
    if not Path(args.treebank).exists():
        sys.exit(f"{args.treebank} not found: set HEADSCOPE_UD_DIR or pass --treebank")
    print(h.machine())
    print(f"treebank {args.treebank}; model {args.model or 'bundled'}")
    runs = {"ours": [], "loop": []}
    for rep in range(args.reps):
        order = ("ours", "loop") if rep % 2 == 0 else ("loop", "ours")
        for which in order:
            runs[which].append(run(which, args))
            r = runs[which][-1]
            print(f"  rep {rep + 1} {which:<5} wall {r['wall']:6.2f} s  cpu {r['cpu']:6.2f} s  "
                  f"(load average {os.getloadavg()[0]:.1f})", flush=True)
    a, b = runs["ours"][-1], runs["loop"][-1]
    diff = sum(abs(x - y) for k in b["correct"]
               for x, y in zip(_flat(a["correct"].get(k, [])), _flat(b["correct"][k])))
    total = sum(sum(_flat(v)) for v in b["correct"].values())
    print(f"sentences scored: ours {a['used']}, loop {b['used']}; same relations: "
          f"{sorted(a['correct']) == sorted(b['correct'])}; right predictions that differ: "
          f"{diff} of {total}")
    print(f"{'':<6}{'median wall':>12}{'best wall':>11}{'median cpu':>12}")
    stats = {}
    for k, rs in runs.items():
        stats[k] = (statistics.median(r["wall"] for r in rs), min(r["wall"] for r in rs),
                    statistics.median(r["cpu"] for r in rs))
        print(f"{k:<6}{stats[k][0]:>12.2f}{stats[k][1]:>11.2f}{stats[k][2]:>12.2f}")
    print(f"speed-up (loop / ours): median wall {stats['loop'][0] / stats['ours'][0]:.2f}x, "
          f"best wall {stats['loop'][1] / stats['ours'][1]:.2f}x, "
          f"median cpu {stats['loop'][2] / stats['ours'][2]:.2f}x")


def _flat(x):
    if isinstance(x, list):
        for y in x:
            yield from _flat(y)
    else:
        yield x


if __name__ == "__main__":
    main()
