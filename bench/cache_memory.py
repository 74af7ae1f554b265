"""Memory against the number of distinct sentences: does it stop growing?

Drives the whole app in one process (Streamlit's AppTest, app.py's frame around the Explorer,
the same page code a browser session runs) through N distinct sentences, one session each
time as a class would. Every 25th sentence is a long text (~480 tokens), the rest are short.
The process-wide st.cache_data budget is read from .streamlit/config.toml, as `streamlit run`
does. Prints, every `--every` sentences, the process RSS and the bytes held by every
st.cache_data cache together.

    .venv/bin/python bench/cache_memory.py [--sentences 1000] [--every 100]
"""

import argparse
import random
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

WORDS = ("the a teacher student model head layer word sentence attention river bank money "
         "telescope man woman saw found kept gave quickly slowly because while before after "
         "red small old new bright quiet city garden train station night morning with of on "
         "in to from under over near").split()


def sentence(i: int, rng: random.Random) -> str:
    n = 400 if i % 25 == 24 else rng.randint(5, 20)  # every 25th: a long text
    return f"Sentence {i}: " + " ".join(rng.choice(WORDS) for _ in range(n)) + "."


def rss_mb() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def cached_mb() -> float:
    from streamlit.runtime.caching import cache_data_api

    stats = cache_data_api.get_data_cache_stats_provider().get_stats()
    return sum(s.byte_length for family in stats.values() for s in family) / 2**20


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--sentences", type=int, default=1000)
    ap.add_argument("--every", type=int, default=100)
    args = ap.parse_args()

    import os

    os.chdir(ROOT)  # .streamlit/config.toml
    from streamlit import config
    from streamlit.runtime.caching.global_cache_budget import (
        reconfigure_global_cache_budget_from_config,
    )

    reconfigure_global_cache_budget_from_config()  # what `streamlit run` does at start-up
    from headscope.ui import models
    from testkit.apptest import open_app

    budget = config.get_option("server.maxCacheDataSize")
    print(f"st.cache_data budget (server.maxCacheDataSize): {budget}; per function: "
          f"{models.CACHE_ENTRIES} entries, {models.CACHE_BUDGET}, {models.CACHE_TTL} s")
    print(f"{'sentences':>9} {'RSS MB':>8} {'cached MB':>10} {'s/sentence':>11}")
    rng, t0 = random.Random(0), time.perf_counter()
    for i in range(args.sentences):
        at = open_app("explorer", text=sentence(i, rng))  # a new session, as a student
        assert not at.exception, [e.value for e in at.exception]
        if (i + 1) % args.every == 0 or i == 0:
            rate = (time.perf_counter() - t0) / (i + 1)
            print(f"{i + 1:9d} {rss_mb():8.0f} {cached_mb():10.1f} {rate:11.2f}",
                  flush=True)


if __name__ == "__main__":
    main()
