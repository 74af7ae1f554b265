"""How fast are the analyses of All heads and the Head lab? Enter -> the atlas fully drawn in
chromium, the importance ranking, the pruning curve and corpus mode's sentences per second, on
the bundled model (6 x 12 heads) and on a bert-base-shaped model with random weights (12 x 12
heads, d_model 768) that this script builds.

    .venv/bin/python bench/atlas_latency.py [--runs 10] [--threads 1]

12-token sentences. Prints figures (median and p90); asserts nothing about time.
"""

import os
import random
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench import harness as h  # noqa: E402

BUNDLED = "all-MiniLM-L6-v2 (bundled)"
BASE = "bert-base-shaped (random)"
# words that are one token in both vocabularies; 10 of them + [CLS] + [SEP] = 12 tokens
WORDS = ("the a i saw man with telescope cat sat on mat bank river money went to we of time "
         "like an arrow fruit animal cross street because it was too tired hello world").split()


def sentences(n, seed):
    rng = random.Random(seed)
    return [" ".join(rng.choice(WORDS) for _ in range(10)) for _ in range(n)]


def browser_atlas(url, model, texts):
    """Seconds from Ctrl+Enter in the sidebar's text box to the new atlas drawn, per text."""
    times = []
    with h.chromium() as b:
        page = b.new_page(viewport={"width": 1400, "height": 1000})
        page.goto(url)
        link = page.get_by_role("link", name="All heads")
        link.wait_for(timeout=120_000)
        link.click()
        page.locator(".st-key-ah_atlas .gtitle").wait_for(timeout=120_000)
        if model != BUNDLED:
            page.locator("[data-testid=stSidebar]").get_by_label("Model", exact=True).click()
            page.get_by_role("option", name=model).click()
            page.wait_for_function("() => document.querySelector('.st-key-ah_atlas .gtitle')"
                                   "?.textContent.startsWith('12 layers')", timeout=120_000)
        box = page.locator("[data-testid=stSidebar]").get_by_label("Sentence", exact=True)
        for i, text in enumerate(texts):
            box.fill(text)
            t0 = time.perf_counter()
            box.press("Control+Enter")
            page.wait_for_function(
                "t => document.querySelector('.st-key-ah_atlas .gtitle')?.textContent.includes(t)",
                arg=text, polling="raf", timeout=120_000)
            if i:  # the first one warms up caches and the figure code
                times.append(time.perf_counter() - t0)
        assert page.locator('[data-testid="stException"]').count() == 0
    return times


def timed(runs, fn, *args):
    out = []
    for _ in range(runs):
        t0 = time.perf_counter()
        fn(*args)
        out.append(time.perf_counter() - t0)
    return out


def main():
    ap = h.parser(__doc__)
    ap.add_argument("--runs", type=int, default=10)
    ap.add_argument("--threads", type=int, default=None,
                    help="torch threads, here and in the app server (default: torch's own)")
    args = ap.parse_args()
    import torch

    from mha_core import ablation as ab
    from mha_core import metrics as mt
    from testkit.models import save_tiny_bert

    if args.threads:
        torch.set_num_threads(args.threads)
        os.environ["OMP_NUM_THREADS"] = str(args.threads)  # the server inherits them
        os.environ["HEADSCOPE_TORCH_THREADS"] = str(args.threads)

    import mha_core

    tmp = h.run_dir("atlas")
    base_dir = save_tiny_bert(tmp / "bert-base-random", layers=12, heads=12, hidden=768)
    models = {BUNDLED: mha_core.load_model(), BASE: mha_core.load_model(str(base_dir))}
    texts = sentences(args.runs + 1, seed=0)
    for name, bert in models.items():
        counts = {len(bert.encode(t).tokens) for t in texts}
        assert counts == {12}, f"{name}: token counts {counts}"

    print(h.machine())
    print(f"torch {torch.__version__}, {torch.get_num_threads()} threads; 12-token sentences")
    print(f"{'model':28s} {'heads':>5s}  {'what':34s} {'median':>8s} {'p90':>8s}")

    def row(name, what, xs, unit="s"):
        bert = models[name]
        heads = bert.config.num_hidden_layers * bert.config.num_attention_heads
        print(f"{name:28s} {heads:5d}  {what:34s} {statistics.median(xs):7.3f}{unit} "
              f"{h.percentile(xs, .9):7.3f}{unit}")

    for name, bert in models.items():
        t = texts[0]
        ab.head_importance(bert, t)  # warm-up
        row(name, "importance ranking (1 + L*H runs)",
            timed(args.runs, ab.head_importance, bert, t))
        imp = ab.head_importance(bert, t)
        row(name, "pruning curve (L*H + 1 runs)",
            timed(max(3, args.runs // 3), ab.pruning_curve, bert, t, imp))
        corpus = sentences(50, seed=1)
        t0 = time.perf_counter()
        for s in corpus:
            mt.result_metrics(bert.attend(s))
        rate = len(corpus) / (time.perf_counter() - t0)
        heads = bert.config.num_hidden_layers * bert.config.num_attention_heads
        print(f"{name:28s} {heads:5d}  {'corpus mode (sentences / s)':34s} {rate:8.1f}")

    with h.app("atlas", env={"HEADSCOPE_MODELS": f"{BASE}={base_dir}"}) as (url, _, _):
        for name in models:
            row(name, "Enter -> atlas drawn (chromium)", browser_atlas(url, name, texts))


if __name__ == "__main__":
    main()
