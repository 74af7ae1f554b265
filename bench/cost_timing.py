"""Does the cost calculator's FLOP count predict the time? Predicted FLOP ratios of the three
attention designs against measured forward times in torch, for a few sizes.

    .venv/bin/python bench/cost_timing.py

Designs at the same d_model: 1 head of d_model ("one"), h heads of d_model/h ("split"),
h heads of d_model each ("full"). Prints params, FLOPs (formula == torch's FLOP counter, see
tests/unit/test_cost.py), attention-map memory, median forward time, and time / FLOP ratios
relative to one head. Times depend on the machine and its load; nothing asserts them.
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench import harness  # noqa: E402

SIZES = [(512, 8, 128, 1), (512, 8, 512, 1), (256, 8, 1024, 1), (768, 12, 128, 4)]


def main():
    harness.parser(__doc__).parse_args()
    from mha_core import toy

    print(harness.machine())
    print(f"{'d':>4} {'h':>3} {'T':>5} {'B':>2} {'design':>6} {'params':>10} {'GFLOP':>7} "
          f"{'maps MB':>8} {'ms':>8} {'FLOP ×':>7} {'time ×':>7}")
    for d, h, T, B in SIZES:
        costs = {k: toy.attention_cost(k, d, h, T, B) for k in toy.DESIGNS}
        times = {k: toy.time_forward(toy.cost_module(k, d, h), T, B, repeats=5)
                 for k in toy.DESIGNS}
        for k, c in costs.items():
            print(f"{d:>4} {h:>3} {T:>5} {B:>2} {k:>6} {c.params:>10,} {c.flops / 1e9:>7.3f} "
                  f"{c.map_bytes / 2**20:>8.2f} {times[k] * 1e3:>8.2f} "
                  f"{c.flops / costs['one'].flops:>7.2f} {times[k] / times['one']:>7.2f}",
                  flush=True)


if __name__ == "__main__":
    main()
