"""How much memory does a worker need? Against the number of distinct sentences (does it stop
growing?), per connected session (and what idle sessions cost), and for the largest corpus index
the Corpus search page builds (does it stay within the plan of docs/limits.md?).

    .venv/bin/python bench/worker_memory.py sentences [--sentences 1000] [--every 100]
    .venv/bin/python bench/worker_memory.py sessions [--counts 1,30,100,300] [--idle 60]
    .venv/bin/python bench/worker_memory.py corpus-index [--lines 2000] [--layer 1]
    .venv/bin/python bench/worker_memory.py models

sentences     The whole app in this process (Streamlit's AppTest, the frame around the
              Explorer: the page code a browser session runs) through --sentences distinct
              sentences, one new session each, as a class would; every 25th a long text (~480
              tokens). The process-wide st.cache_data budget is read from .streamlit/config.toml,
              as `headscope run` does. Prints, every --every sentences, the process's RSS and
              the bytes held by every st.cache_data cache together.
sessions      For each count N, a fresh app process (`headscope run`) warmed by one session (the
              teacher opening the shared link); then N students connect through the protocol
              (testkit.protocol), open the same link one after another and stay connected,
              idle. Prints, per N, the process's RSS and threads before and after, the growth
              per session, and the CPU it uses over --idle seconds while they sit idle. A fresh
              process per count: RSS after churn says nothing per session.
corpus-index  This process as a fresh worker (the freed-memory setting of `headscope run`, the
              bundled model, one torch thread) builds the page's largest index: --lines lines of
              ~140 words, each read up to 128 tokens, through the corpus budget
              (headscope.ui.budget.corpus_indexes). Prints its size against the budget, the
              peak RSS over the worker before it (VmHWM) against the budget plus one heavy
              job's transient (HEAVY_TRANSIENT_MB below, docs/limits.md), and what the build
              left held afterwards against the index's size (+128 MB); exits 1 when either is
              over.
models        This process as a worker (one torch thread): RSS after importing the model code,
              after loading the bundled encoder and running a sentence, then after loading the
              bundled decoder (from its cached directory: the first load dequantises) and
              running the same sentence; and whether loading the encoder alone loaded the
              decoder (it must not: a worker that never shows the decoder never loads it).

RSS depends on the machine's allocator, libraries and load: quote it with the machine line
printed first.
"""

import os
import random
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench import harness as h  # noqa: E402

HEAVY_TRANSIENT_MB = 550  # docs/limits.md: one heavy job at a time, ~0.55 GB while it runs
LINK = "text=The+teacher+wrote+a+sentence+on+the+board+for+everyone."
WORDS = ("the a teacher student model head layer word sentence attention river bank money "
         "telescope man woman saw found kept gave quickly slowly because while before after "
         "red small old new bright quiet city garden train station night morning with of on "
         "in to from under over near").split()


def sentences(args):
    os.chdir(h.ROOT)  # .streamlit/config.toml
    from streamlit import config
    from streamlit.runtime.caching import cache_data_api
    from streamlit.runtime.caching.global_cache_budget import (
        reconfigure_global_cache_budget_from_config,
    )

    reconfigure_global_cache_budget_from_config()  # what `streamlit run` does at start-up
    from headscope.ui import models
    from testkit.apptest import open_app

    def cached_mb() -> float:
        stats = cache_data_api.get_data_cache_stats_provider().get_stats()
        return sum(s.byte_length for family in stats.values() for s in family) / 2**20

    def sentence(i: int, rng: random.Random) -> str:
        n = 400 if i % 25 == 24 else rng.randint(5, 20)  # every 25th: a long text
        return f"Sentence {i}: " + " ".join(rng.choice(WORDS) for _ in range(n)) + "."

    print(f"st.cache_data budget (server.maxCacheDataSize): "
          f"{config.get_option('server.maxCacheDataSize')}; per function: "
          f"{models.CACHE_ENTRIES} entries, {models.CACHE_BUDGET}, {models.CACHE_TTL} s")
    print(f"{'sentences':>9} {'RSS MB':>8} {'cached MB':>10} {'s/sentence':>11}")
    rng, t0 = random.Random(0), time.perf_counter()
    for i in range(args.sentences):
        at = open_app("explorer", text=sentence(i, rng))  # a new session, as a student
        assert not at.exception, [e.value for e in at.exception]
        if (i + 1) % args.every == 0 or i == 0:
            rate = (time.perf_counter() - t0) / (i + 1)
            print(f"{i + 1:9d} {h.rss_mb():8.0f} {cached_mb():10.1f} {rate:11.2f}", flush=True)


def sessions(args):
    import asyncio

    from testkit.protocol import Session

    def status(pid: int) -> dict:
        out = {}
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            key, _, value = line.partition(":")
            if key in ("VmRSS", "Threads"):
                out[key] = int(value.split()[0])
        return out

    async def hold(url: str, n: int, pid: int) -> dict:
        teacher = Session(url, cookie="teacher")
        await teacher.connect()
        await teacher.rerun(query=LINK, timeout=300)
        await asyncio.sleep(2)
        before = status(pid)
        students = [Session(url, cookie=f"s{i}") for i in range(n)]
        failed = 0
        for s in students:  # one at a time: memory, not queueing, is measured here
            await s.connect()
            run = await s.rerun(query=LINK, timeout=120)
            failed += bool(run.error or run.exceptions)
        await asyncio.sleep(2)
        after = status(pid)
        cpu0, t0 = h.cpu_seconds([pid]), time.perf_counter()
        await asyncio.sleep(args.idle)
        idle_cpu, idle_wall = h.cpu_seconds([pid]) - cpu0, time.perf_counter() - t0
        alive = sum(s.ws.state.name == "OPEN" for s in students)
        for s in students + [teacher]:
            await s.close()
        return dict(before=before, after=after, idle_cpu=idle_cpu, idle_wall=idle_wall,
                    alive=alive, failed=failed)

    print(f"{'sessions':>8s} {'RSS before MB':>13s} {'after MB':>9s} {'MB/session':>10s} "
          f"{'threads':>11s} {'idle CPU %':>10s} {'open':>5s} {'failed':>6s} {'load':>5s}")
    for n in args.counts:
        with h.app(f"sessions-{n}") as (url, proc, _):
            m = asyncio.run(hold(url, n, proc.pid))
        b, a = m["before"], m["after"]
        grown = (a["VmRSS"] - b["VmRSS"]) / 1024
        print(f"{n:8d} {b['VmRSS'] / 1024:13.0f} {a['VmRSS'] / 1024:9.0f} "
              f"{grown / max(n, 1):10.2f} {b['Threads']:5d}->{a['Threads']:<5d} "
              f"{100 * m['idle_cpu'] / m['idle_wall']:10.2f} {m['alive']:5d} "
              f"{m['failed']:6d} {os.getloadavg()[0]:5.1f}", flush=True)


def corpus_index(args) -> int:
    import numpy as np

    from headscope.ui import budget

    budget.return_freed_memory()  # as `headscope run` does, before the model's tensors
    import torch

    import mha_core
    from mha_core.corpus_search import build_index, encode_lines, index_bytes, indexed_tokens

    torch.set_num_threads(1)
    bert = mha_core.load_model()
    bert.attend("warm up")
    words = ("the old man saw a small bird near the river bank with great care because it "
             "was late in the morning after the storm").split()
    rng = np.random.default_rng(0)
    lines = [" ".join(rng.choice(words, 140)) for _ in range(args.lines)]
    base = h.rss_mb()
    encs = encode_lines(bert, lines, 128)
    need = index_bytes(indexed_tokens(encs), bert.config.hidden_size,
                       bert.config.num_attention_heads)
    index = budget.corpus_indexes.get_or_build("bench", need, lambda: build_index(
        bert, lines, args.layer - 1, max_length=128, encs=encs))
    encs = None  # the encodings go, as on the page
    peak, after, MB = h.peak_rss_mb() - base, h.rss_mb() - base, 2**20
    plan_peak = budget.CORPUS_BUDGET / MB + HEAVY_TRANSIENT_MB
    plan_after = index.nbytes / MB + 128
    print(f"{args.lines:,} lines, {len(index):,} tokens at layer {args.layer}: the index "
          f"{index.nbytes / MB:.0f} MB of a {budget.CORPUS_BUDGET / MB:.0f} MB corpus budget "
          f"(held by the budget: {budget.corpus_indexes.used() / MB:.0f} MB)")
    print(f"worker before the build {base:.0f} MB; the build's peak +{peak:.0f} MB (plan: "
          f"<= {plan_peak:.0f}); held after it +{after:.0f} MB (plan: <= {plan_after:.0f})")
    ok = peak <= plan_peak and after <= plan_after
    print("within the plan" if ok else "OVER THE PLAN")
    return 0 if ok else 1


def models(args):
    """RSS with the bundled encoder, then with the bundled decoder beside it."""
    import torch

    import mha_core

    torch.set_num_threads(1)
    text = "The teacher wrote a sentence on the board for everyone to read."
    print(f"imports: {h.rss_mb():.0f} MB")
    t = time.perf_counter()
    enc = mha_core.load_model(device="cpu")
    enc.attend(text)
    print(f"+ bundled encoder, one sentence: {h.rss_mb():.0f} MB "
          f"({time.perf_counter() - t:.1f} s); decoder loaded: "
          f"{'mha_core.gguf_file' in sys.modules}")
    t = time.perf_counter()
    dec = mha_core.load_model("bundled-decoder", device="cpu")
    dec.attend(text)
    print(f"+ bundled decoder, one sentence: {h.rss_mb():.0f} MB "
          f"({time.perf_counter() - t:.1f} s); peak {h.rss_mb(field='VmHWM'):.0f} MB")


def main():
    ap = h.parser(__doc__)
    ap.add_argument("what", choices=("sentences", "sessions", "corpus-index", "models"))
    ap.add_argument("--sentences", type=int, default=1000, help="sentences: how many")
    ap.add_argument("--every", type=int, default=100, help="sentences: print every N")
    ap.add_argument("--counts", nargs="+", action=h.Ints, default=[1, 30, 100, 300],
                    help="sessions: comma-separated session counts")
    ap.add_argument("--idle", type=float, default=60.0,
                    help="sessions: seconds the sessions sit idle")
    ap.add_argument("--lines", type=int, default=2000, help="corpus-index: corpus lines")
    ap.add_argument("--layer", type=int, default=1, help="corpus-index: the layer, 1-based")
    args = ap.parse_args()
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    print(h.machine())
    if args.what == "corpus-index":
        return corpus_index(args)
    {"sentences": sentences, "sessions": sessions, "models": models}[args.what](args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
