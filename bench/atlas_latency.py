"""Issue 4's benchmark: Enter -> atlas fully drawn in real chromium, the importance ranking, and
corpus mode's sentences per second, on the bundled model (6 x 12 heads) and on a bert-base-shaped
model with random weights (12 x 12 heads, d_model 768) that this script builds.

    HF_HUB_OFFLINE=1 .venv/bin/python bench/atlas_latency.py [--runs 10]

Prints figures; asserts nothing about time.
"""

import argparse
import os
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from mha_core import ablation as ab  # noqa: E402
from mha_core import metrics as mt  # noqa: E402
from testkit.browser import CHROMIUM, CHROMIUM_ARGS  # noqa: E402
from testkit.models import save_tiny_bert  # noqa: E402
from testkit.server import start_app, stop_app  # noqa: E402

BUNDLED = "all-MiniLM-L6-v2 (bundled)"
BASE = "bert-base-shaped (random)"
# words that are one token in both vocabularies; 10 of them + [CLS] + [SEP] = 12 tokens
WORDS = ("the a i saw man with telescope cat sat on mat bank river money went to we of time "
         "like an arrow fruit animal cross street because it was too tired hello world").split()


def sentences(n, seed):
    rng = random.Random(seed)
    return [" ".join(rng.choice(WORDS) for _ in range(10)) for _ in range(n)]


def pct(xs, q):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(round(q / 100 * (len(xs) - 1))))]


def browser_atlas(url, model, texts):
    """Seconds from Ctrl+Enter in the sidebar's text box to the new atlas drawn, per text."""
    from playwright.sync_api import sync_playwright

    times = []
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
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
        b.close()
    return times


def timed(runs, fn, *args):
    out = []
    for _ in range(runs):
        t0 = time.perf_counter()
        fn(*args)
        out.append(time.perf_counter() - t0)
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=10)
    ap.add_argument("--threads", type=int, default=None,
                    help="torch threads, here and in the app server (default: torch's own)")
    args = ap.parse_args()
    import torch

    if args.threads:
        torch.set_num_threads(args.threads)
        os.environ["OMP_NUM_THREADS"] = str(args.threads)  # the server inherits it

    import mha_core

    tmp = Path(tempfile.mkdtemp(prefix="headscope-bench-"))
    base_dir = save_tiny_bert(tmp / "bert-base-random", layers=12, heads=12, hidden=768)
    models = {BUNDLED: mha_core.load_bert(), BASE: mha_core.load_bert(str(base_dir))}
    texts = sentences(args.runs + 1, seed=0)
    for name, bert in models.items():
        counts = {len(bert.encode(t).tokens) for t in texts}
        assert counts == {12}, f"{name}: token counts {counts}"

    print(f"torch {torch.__version__}, {torch.get_num_threads()} threads, load average "
          f"{os.getloadavg()[0]:.1f} on {os.cpu_count()} cores; 12-token sentences")
    print(f"{'model':28s} {'heads':>5s}  {'what':34s} {'median':>8s} {'p90':>8s}")

    def row(name, what, xs, unit="s"):
        bert = models[name]
        heads = bert.config.num_hidden_layers * bert.config.num_attention_heads
        print(f"{name:28s} {heads:5d}  {what:34s} {statistics.median(xs):7.3f}{unit} "
              f"{pct(xs, 90):7.3f}{unit}")

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

    proc, url = start_app(tmp / "streamlit.log", {"HEADSCOPE_MODELS": f"{BASE}={base_dir}"})
    try:
        for name in models:
            row(name, "Enter -> atlas drawn (chromium)", browser_atlas(url, name, texts))
    finally:
        stop_app(proc)


if __name__ == "__main__":
    main()
