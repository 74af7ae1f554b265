"""Seed sweep for the training lab: is the multi-head advantage real, or one lucky seed?

    .venv/bin/python bench/lab_seeds.py            # 8 seeds (about a minute on a free CPU)
    .venv/bin/python bench/lab_seeds.py --seeds 5

For every seed it trains, at the same d_model, one head against h heads on the lab's task, at
the short setting the unit test uses and at the page's default setting, and prints a table:
seed, 1-head accuracy, h-head accuracy, margin. Then the symmetry check (identical heads stay
identical; random init and attention dropout make them differ) and wide vs narrow vs random.
Accuracy = both answers (PREV and MARKED) right, on the same 512 held-out sequences.
"""

import argparse
import statistics
import sys
import time
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from mha_core.toy import LabConfig, train  # noqa: E402

TEST_STEPS = 300  # tests/unit/test_lab_advantage.py trains this long


def sweep(seeds, steps, heads):
    print(f"\n1 head vs {heads} heads, d_model {LabConfig().d_model}, {steps} steps")
    print(f"{'seed':>4} {'1-head acc':>10} {f'{heads}-head acc':>10} {'margin':>7} "
          f"{'s (1 head)':>10} {f's ({heads} heads)':>11}")
    margins = []
    for seed in seeds:
        one = train(LabConfig(n_heads=1, steps=steps, seed=seed))
        many = train(LabConfig(n_heads=heads, steps=steps, seed=seed))
        margin = many.final_accuracy - one.final_accuracy
        margins.append(margin)
        print(f"{seed:>4} {one.final_accuracy:>10.3f} {many.final_accuracy:>10.3f} "
              f"{margin:>+7.3f} {one.seconds:>10.1f} {many.seconds:>11.1f}", flush=True)
    print(f"margin: min {min(margins):+.3f}, mean {statistics.mean(margins):+.3f}, "
          f"max {max(margins):+.3f}")
    return margins


def symmetry(seeds, steps=TEST_STEPS, heads=4):
    print(f"\nsymmetry, {heads} heads, {steps} steps: largest weight gap between two heads "
          "(0 = identical) and final head diversity (mean pairwise TV distance of the maps)")
    print(f"{'seed':>4} {'random':>16} {'identical':>16} {'identical+drop':>16}")
    for seed in seeds:
        cells = []
        for kw in (dict(init="random"), dict(init="identical"),
                   dict(init="identical", attn_dropout=0.1)):
            r = train(LabConfig(n_heads=heads, steps=steps, seed=seed, **kw))
            cells.append(f"{r.max_head_gap[-1]:.1e} / {r.diversity[-1]:.2f}")
        print(f"{seed:>4} " + " ".join(f"{c:>16}" for c in cells), flush=True)


def modes(seeds, steps=600, heads=2):
    print(f"\nwide vs narrow vs random slices, {heads} heads, {steps} steps: accuracy "
          "(attention parameters)")
    print(f"{'seed':>4} {'wide':>14} {'narrow':>14} {'random':>14}")
    for seed in seeds:
        cells = []
        for mode in ("wide", "narrow", "random"):
            r = train(LabConfig(n_heads=heads, mode=mode, steps=steps, seed=seed))
            cells.append(f"{r.final_accuracy:.3f} ({r.attn_params})")
        print(f"{seed:>4} " + " ".join(f"{c:>14}" for c in cells), flush=True)


def long_single(seeds, steps=2000):
    print(f"\none head trained longer ({steps} steps): accuracy at 600 and at {steps} steps")
    for seed in seeds:
        r = train(LabConfig(n_heads=1, steps=steps, seed=seed, eval_every=100))
        at600 = r.accuracy[list(r.steps).index(600)]
        print(f"{seed:>4} {at600:>6.3f} {r.final_accuracy:>6.3f}", flush=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, default=8)
    ap.add_argument("--threads", type=int, default=1,
                    help="torch threads (1 is fastest for these tiny models on a shared CPU; "
                         "the results do not depend on it)")
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    seeds = range(args.seeds)
    t0 = time.perf_counter()
    sweep(seeds, TEST_STEPS, 2)
    sweep(seeds, LabConfig().steps, 2)
    sweep(seeds, LabConfig().steps, 4)
    symmetry(seeds[:5])
    modes(seeds[:5])
    long_single(seeds[:3])
    print(f"\ntotal {time.perf_counter() - t0:.0f} s")


if __name__ == "__main__":
    main()
