"""Our forward (with every attention map) against transformers' eager forward, same weights.

Interleaved in one process: for each T, the two models alternate call by call, so both see the
same machine load. Prints the median time of each and the median ratio ours/theirs.

    .venv/bin/python bench/core_vs_transformers.py [--reps 30]
"""

import argparse
import statistics
import sys
import time
from functools import partial
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
import mha_core  # noqa: E402


def timed(fn):
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--reps", type=int, default=30)
    ap.add_argument("--lengths", type=int, nargs="+", default=[16, 128, 512])
    args = ap.parse_args()

    from transformers import BertModel

    bert = mha_core.load_bert()
    hf = BertModel.from_pretrained(str(bert.path), attn_implementation="eager").eval()
    print(f"model: {bert}; torch {torch.__version__}, {torch.get_num_threads()} threads")
    print(f"{'T':>5} {'ours ms':>9} {'transformers ms':>16} {'ratio ours/theirs':>18}")
    g = torch.Generator().manual_seed(0)
    for T in args.lengths:
        ids = torch.randint(1000, bert.config.vocab_size, (1, T), generator=g)  # (B, T)
        ids[0, 0], ids[0, -1] = bert.tokenizer.cls_token_id, bert.tokenizer.sep_token_id
        types = torch.zeros_like(ids)

        ours = partial(bert.model, ids, token_type_ids=types)
        theirs = partial(hf, ids, token_type_ids=types, output_attentions=True,
                         output_hidden_states=True)

        with torch.inference_mode():
            for _ in range(3):  # warm-up
                ours(), theirs()
            t_ours, t_theirs, ratios = [], [], []
            for i in range(args.reps):
                if i % 2:  # alternate which goes first
                    a, b = timed(ours), timed(theirs)
                else:
                    b, a = timed(theirs), timed(ours)
                t_ours.append(a)
                t_theirs.append(b)
                ratios.append(a / b)
        print(f"{T:>5} {1e3 * statistics.median(t_ours):>9.2f} "
              f"{1e3 * statistics.median(t_theirs):>16.2f} {statistics.median(ratios):>18.3f}")


if __name__ == "__main__":
    main()
