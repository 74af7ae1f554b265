"""How long does Corpus search take? Indexing a corpus of 2,000 sentences, and a search after it.

    .venv/bin/python bench/corpus_search.py [--sentences 2000] [--queries 300] [--threads 1]

Goals: indexing <= 30 s, search <= 100 ms, on the bundled model. Peers side by side
in one run: padded batches of 2,048 and 8,192 tokens against one sentence at a time (indexing);
numpy's argpartition against a full argsort (search). The corpus is made here, seeded, from
templates (8 to ~60 tokens a line). The machine's load average is printed before and after:
numbers measured while other work runs are noisy. The CPU seconds of this process are printed
beside the wall time: on a busy machine they say what the work costs, the wall time how long
someone waited.
"""

import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench import harness as h  # noqa: E402

SUBJECTS = ["the man", "a woman", "the astronomer", "my neighbour", "the old dog", "a student",
            "the teacher", "our cat", "the children", "a farmer", "the pilot", "the banker"]
VERBS = ["saw", "met", "followed", "painted", "heard", "called", "found", "watched", "helped",
         "photographed", "visited", "forgot"]
OBJECTS = ["the man", "a bird", "the river", "the bank", "a telescope", "the street", "an arrow",
           "the letter", "a banana", "the garden", "the old bridge", "a small boat"]
ADJUNCTS = ["with a telescope", "in the morning", "near the bank", "because it was late",
            "on the mat", "after the storm", "like an arrow", "without a word",
            "across the street", "before dinner", "by the river", "with great care"]


def make_corpus(n: int, seed: int = 0) -> list:
    rng = np.random.default_rng(seed)
    pick = lambda xs: xs[rng.integers(len(xs))]  # noqa: E731
    lines = []
    for i in range(n):
        clauses = [f"{pick(SUBJECTS)} {pick(VERBS)} {pick(OBJECTS)} {pick(ADJUNCTS)}"
                   for _ in range(1 + rng.integers(4))]
        line = ", and ".join(clauses) + "."
        if i % 10 == 9:  # a few pairs, read as everywhere else
            line += f" [SEP] {pick(SUBJECTS)} {pick(VERBS)} it."
        lines.append(line[0].upper() + line[1:])
    return lines


def pct(xs, q):
    return float(np.percentile(np.asarray(xs) * 1000, q))


def main():
    ap = h.parser(__doc__)
    ap.add_argument("--sentences", type=int, default=2000)
    ap.add_argument("--queries", type=int, default=300)
    ap.add_argument("--threads", type=int, default=1, help="torch threads (the app uses 1)")
    ap.add_argument("--layers", type=int, nargs="+", default=[2, 6],
                    help="1-based, as on the page (2: its default; 6: the last, the most work)")
    ap.add_argument("--skip-one-by-one", action="store_true")
    args = ap.parse_args()

    import torch

    import mha_core
    from mha_core.corpus_search import build_index, matches, search

    torch.set_num_threads(args.threads)
    print(h.machine())
    bert = mha_core.load_model()
    corpus = make_corpus(args.sentences)
    lengths = [len(bert.encode(s, max_length=128).tokens) for s in corpus]
    print(f"corpus: {len(corpus)} lines, tokens per line p50 {np.median(lengths):.0f}, "
          f"max {max(lengths)}, total {sum(lengths):,}; torch threads {args.threads}")
    bert.attend("warm up")

    index = None
    for layer in (n - 1 for n in args.layers):
        print(f"\nindexing at layer {layer + 1} (goal <= 30 s)")
        peers = [("batches of 2,048 tokens (the app)", 2048), ("batches of 8,192 tokens", 8192)]
        if not args.skip_one_by_one and layer == args.layers[0] - 1:
            peers.append(("one sentence at a time", 1))
        first = None
        for label, budget in peers:
            t, cpu = time.perf_counter(), time.process_time()
            built = build_index(bert, corpus, layer, max_length=128, max_batch_tokens=budget)
            dt, dcpu = time.perf_counter() - t, time.process_time() - cpu
            print(f"  {label:36s} {dt:6.2f} s wall, {dcpu:6.2f} s CPU   {len(built):,} tokens, "
                  f"{built.vectors.nbytes / 2**20:.1f} MB of vectors")
            first = built if first is None else first
            if budget == 1:
                same = np.abs(built.vectors - first.vectors).max()
                print(f"  (one-by-one vs batched vectors: max |diff| {same:.2e})")
        index = first if index is None else index

    print(f"\nsearch after indexing, {args.queries} queries, top 10 (goal <= 100 ms)")
    rng = np.random.default_rng(1)
    queries = index.vectors[rng.integers(len(index), size=args.queries)] + rng.normal(
        0, 0.01, (args.queries, index.vectors.shape[1])).astype(np.float32)
    times = {"argpartition + matches (the app)": [], "full argsort": []}
    cpu = {k: [] for k in times}
    for q in queries:
        c, t = time.process_time(), time.perf_counter()
        rows, scores = search(index, q, 10)
        matches(index, rows, scores, head=0)
        times["argpartition + matches (the app)"].append(time.perf_counter() - t)
        cpu["argpartition + matches (the app)"].append(time.process_time() - c)
        c, t = time.process_time(), time.perf_counter()
        s = index.vectors @ (q / np.linalg.norm(q))
        np.argsort(-s)[:10]
        times["full argsort"].append(time.perf_counter() - t)
        cpu["full argsort"].append(time.process_time() - c)
    for label, xs in times.items():
        print(f"  {label:36s} wall p50 {pct(xs, 50):6.2f} ms  p90 {pct(xs, 90):6.2f} ms  "
              f"p99 {pct(xs, 99):6.2f} ms  max {max(xs) * 1000:6.2f} ms;  "
              f"CPU p50 {pct(cpu[label], 50):6.2f} ms")
    print(f"\nafter: {h.load()}")


if __name__ == "__main__":
    main()
