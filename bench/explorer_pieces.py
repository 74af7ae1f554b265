"""The Explorer's work for one new sentence, piece by piece, outside Streamlit: the forward
pass, the views, the focus grid, the default-head rule, the payloads and the two plotly
figures, each timed (median of --n sentences after 3 warm-up ones) with torch's intra-op
threads set to --threads (the app sets 1: headscope/ui/threads.py).

    .venv/bin/python bench/explorer_pieces.py [--threads 1] [--n 15]
"""

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--n", type=int, default=15)
    args = ap.parse_args()
    import numpy as np
    import plotly.io as pio
    import torch

    import mha_core
    from headscope.ui import figures, masked_words
    from headscope.ui.attention import focus_payload, grid_payload
    from mha_core.metrics import token_kinds, word_focus
    from mha_core.shown import explorer_view, focus_targets

    torch.set_num_threads(args.threads)
    bert = mha_core.load_bert()
    took = {}

    def t(name, f, *a, **k):
        t0 = time.perf_counter()
        out = f(*a, **k)
        took.setdefault(name, []).append((time.perf_counter() - t0) * 1000)
        return out

    for i in range(args.n + 3):
        res = t("forward pass (attend)", bert.attend,
                f"The {i} quiet rivers run past the old mill number {i * 7} in spring.")
        heads, labels, special = t("explorer_view, one layer", explorer_view,
                                   res.attentions[1], res, False, False)  # (H, G, G)
        single = explorer_view(res.single_head[1], res, False, False)[0]  # (G, G)
        kinds = token_kinds(labels, special)
        words = [not (s or p) for s, p in zip(special, kinds["punct"])]
        t("word_focus (default head)", word_focus, heads, words)
        t("click_targets", masked_words.click_targets, res, False, False)
        att = t("explorer_view, all layers", explorer_view, res.attentions, res, False,
                False)[0]  # (L, H, G, G)
        top, weight, rows = t("focus_targets (focus grid)", focus_targets, att, 3)
        H = heads.shape[0]
        maps = np.concatenate([heads.numpy(), single.numpy()[None],
                               heads.mean(0).numpy()[None]])  # (H + 2, G, G)
        p = t("grid_payload", grid_payload, maps, labels, special,
              [f"h{h}" for h in range(H + 2)], heads=H, selected=0, fit=True)
        t("grid payload json", json.dumps, p)
        colors = figures.token_colors(labels, special)
        t("focus_payload", focus_payload, top.numpy(), weight.numpy(), labels, colors,
          labels[3], layer=1, head=0)
        f1 = t("enlarged head: figure", figures.heatmap, heads[0].numpy(), labels, height=520,
               title="x")
        t("enlarged head: to_json", lambda f: pio.to_json(f.to_dict(), validate=False), f1)
        f2 = t("focus bars: figure", figures.focus_bars, rows[1].numpy(), labels, special,
               labels[3], 1)
        t("focus bars: to_json", lambda f: pio.to_json(f.to_dict(), validate=False), f2)
    print(f"torch threads {torch.get_num_threads()}; load average {os.getloadavg()[0]:.1f}; "
          f"median of {args.n} sentences, ms")
    for name, xs in took.items():
        print(f"{statistics.median(xs[3:]):9.2f}  {name}")


if __name__ == "__main__":
    main()
