"""What can one visitor cost a worker? The worst case of every expensive thing a visitor can
start, with the bounds in place: its CPU seconds and peak RSS, and what it does to another
session of the same worker meanwhile.

    .venv/bin/python bench/bounds.py [--only corpus_index ...] [--quick]

Each action runs in a fresh child process (a worker with the model loaded and nothing else), so
the peak RSS (ru_maxrss) is that action's on top of a fresh worker. The child process is a
real worker (`headscope run`, this file as its launcher) that runs the action in a thread of its
own process, beside the app's sessions, with its own copy of the model; another student is a
real session speaking the protocol (testkit.protocol.Session): Enter in the Explorer with a new
12-word sentence, again and again, and its Enter -> script finished p95 is printed, alone first
and then while the action runs. Torch uses one thread, as in the app.
The machine's load average is printed with every figure: other work on a shared machine makes
these numbers noisy. Also printed: the recall@10 that the corpus index's int8 (and float16)
vectors keep against float32, on the same corpus.
"""

import argparse
import contextlib
import json
import os
import resource
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench import harness as h  # noqa: E402

ACTIONS = ["treebank_chain", "treebank_upload", "treebank_scoring", "corpus_index",
           "attend_512", "attend_512_x8", "attend_512_x8_slot", "head_lab_ranking", "tsne"]
WORDS = ("the old man saw a small bird near the river bank with great care because it was "
         "late in the morning after the storm").split()


def rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def row(i: int, form: str, head: int, rel: str) -> str:
    return f"{i}\t{form}\t_\t_\t_\t_\t{head}\t{rel}\t_\t_\n"


def sentence_rows(n: int) -> str:
    return "".join(row(i, WORDS[i % len(WORDS)], i + 1 if i < n else 0, "dep" if i < n else "root")
                   for i in range(1, n + 1))


async def student(url: str, go: Path, done: Path, quick: bool) -> tuple:
    """Another student on the same worker, speaking the protocol: Explorer reruns with a new
    12-word sentence each (Enter -> script finished, seconds), for a few seconds alone, then
    from the moment `go` is written until the action writes `done`."""
    from testkit.protocol import Session, text_value

    rng = np.random.default_rng(0)
    s = Session(url)
    await s.connect()
    await s.rerun()  # the first run: the Explorer, its widgets' ids
    alone, during = [], []

    async def enter():
        run = await s.rerun({"text": text_value(" ".join(rng.choice(WORDS, 12)) + ".")})
        return run.seconds if not run.error else float("nan")

    t_end = time.perf_counter() + (5 if quick else 15)
    while time.perf_counter() < t_end:
        alone.append(await enter())
    go.write_text("go")
    while not done.exists():
        during.append(await enter())
    await s.close()
    return alone, during


def run_action(name: str, bert, quick: bool) -> dict:
    """The action's own work; returns what it measured beside the time."""
    from mha_core import treebank as tbk

    if name == "treebank_chain":  # 40k words in one sentence: refused by the cap, then uncapped
        text = sentence_rows(40_000)
        try:
            tbk.read_conllu(text, tbk.MAX_UPLOAD_WORDS, tbk.MAX_UPLOAD_SENTENCES)
        except tbk.TreebankError as e:
            refused = str(e)[:60]
        tbk.read_conllu(text)
        return dict(detail=f"capped: '{refused}…'; uncapped: read")
    if name == "treebank_upload":  # ~10 MB: 20,000 sentences of ~22 words, the most allowed
        one = sentence_rows(22) + "\n"
        data = (one * (tbk.MAX_BYTES // len(one.encode())))
        n = min(tbk.MAX_UPLOAD_SENTENCES, data.count("\n\n"))
        data = one * n
        got = tbk.read_conllu(data.encode(), tbk.MAX_UPLOAD_WORDS, tbk.MAX_UPLOAD_SENTENCES)
        return dict(detail=f"{len(data.encode()) / 2**20:.1f} MB, {len(got):,} sentences read")
    if name == "treebank_scoring":  # the app scores at most 3,000 sentences
        from headscope.ui.treebanks import MAX_SENTENCES
        from mha_core.syntax import score_treebank

        sample = tbk.read_treebank(tbk.DEFAULT_TREEBANK)
        n = 300 if quick else MAX_SENTENCES
        sentences = (sample * (n // len(sample) + 1))[:n]
        sc = score_treebank(bert, sentences)
        return dict(detail=f"{sc.used:,} sentences scored")
    if name == "corpus_index":  # 2,000 lines of ~140 words at the last layer (the page's max)
        from bench.corpus_search import make_corpus
        from mha_core.corpus_search import build_index

        lines = [" ".join(make_corpus(40, seed=i)[:8])[:900] for i in range(200 if quick else 2000)]
        index = build_index(bert, lines, bert.config.num_hidden_layers - 1, max_length=128)
        return dict(detail=f"{len(index):,} tokens, {index.nbytes / 2**20:.0f} MB stored")
    if name.startswith("attend_512"):  # the 1.5 GB transient of docs/limits.md: hostile links
        import pickle

        from headscope.ui.budget import heavy

        def one(i, out):  # a 512-token text through st.cache_data: run, pickle, copy back
            with heavy() if name.endswith("slot") else contextlib.nullcontext():  # as the app
                res = bert.attend(" ".join(WORDS[i:] + WORDS * 40))
            blob = pickle.dumps(res, protocol=pickle.HIGHEST_PROTOCOL)  # Streamlit's, after
            out.append((len(pickle.loads(blob).tokens), len(blob)))

        out, n = [], 1 if name == "attend_512" else 8  # x8: eight sessions' page loads at once
        threads = [threading.Thread(target=one, args=(i, out)) for i in range(n)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        del threads
        import gc

        gc.collect()
        with open("/proc/self/status") as f:
            now = next(int(line.split()[1]) // 1024 for line in f if line.startswith("VmRSS"))
        return dict(detail=f"{n} x {out[0][0]} tokens, {out[0][1] / 2**20:.0f} MB pickled "
                           f"each; RSS after: {now} MB; MALLOC_ARENA_MAX="
                           f"{os.environ.get('MALLOC_ARENA_MAX', 'unset')}")
    if name == "head_lab_ranking":  # 2·L·H + 2 forward passes of RANK_MAX_TOKENS tokens
        from mha_core import ablation as ab

        text = " ".join((WORDS * 20)[:230])
        imp = ab.head_importance(bert, text)
        ab.pruning_curve(bert, text, imp)
        return dict(detail=f"{len(bert.encode(text).tokens)} tokens")
    if name == "tsne":  # What heads learn: 2,000 tokens -> 4,000 points
        from mha_core import qk_space as qk

        texts = [" ".join(np.random.default_rng(i).choice(WORDS, 20)) for i in range(120)]
        space = qk.qk_vectors(bert, texts, 0, 0, 400 if quick else qk.MAX_TOKENS)
        qk.project(*qk.normalise(space.queries, space.keys), "t-SNE")
        return dict(detail=f"{2 * len(space.tokens):,} points")
    raise ValueError(name)


def serve(name: str, quick: bool, argv: list):
    """A worker (`headscope run`, as make run) that also runs the action in a thread of its
    own process, once the file HEADSCOPE_BOUNDS_GO exists, with its own copy of the model;
    what it measured goes to HEADSCOPE_BOUNDS_DONE as json."""
    go, done = Path(os.environ["HEADSCOPE_BOUNDS_GO"]), Path(os.environ["HEADSCOPE_BOUNDS_DONE"])

    import mha_core

    bert = mha_core.load_model()  # before any other thread imports transformers
    bert.attend("warm up")

    def action():
        while not go.exists():
            time.sleep(0.05)
        base_rss = rss_mb()  # the worker with the app's sessions and this copy of the model
        cpu, wall = time.thread_time(), time.perf_counter()  # this thread's CPU (1 torch thread)
        try:
            out = run_action(name, bert, quick)
        except Exception as e:  # the student stops; the parent prints it as failed
            out = dict(error=repr(e))
        out.update(action=name, cpu=round(time.thread_time() - cpu, 2),
                   wall=round(time.perf_counter() - wall, 2), base_rss=round(base_rss),
                   peak_rss=round(rss_mb()), load=os.getloadavg()[0])
        tmp = done.with_suffix(".tmp")
        tmp.write_text(json.dumps(out))
        tmp.rename(done)

    threading.Thread(target=action, name="bounds-action", daemon=True).start()
    from headscope.cli import run

    sys.exit(run(argv[argv.index("run") + 2:] if "run" in argv else argv))


def child(name: str, quick: bool):
    """Start a worker running the action (serve) and play the other student against it."""
    import asyncio
    import tempfile

    from testkit.server import start_app, stop_app

    tmp = Path(tempfile.mkdtemp(prefix=f"bounds-{name}-"))
    go, done = tmp / "go", tmp / "done.json"
    proc, url = start_app(tmp / "server.log", launcher=(__file__, "--quick" if quick else
                                                        "--no-quick", "--serve", name),
                          env_extra={"HEADSCOPE_BOUNDS_GO": str(go),
                                     "HEADSCOPE_BOUNDS_DONE": str(done)})
    try:
        alone, during = asyncio.run(student(url, go, done, quick))
    finally:
        stop_app(proc)
    out = json.loads(done.read_text())
    if "error" in out:
        sys.exit(f"{name}: {out['error']}")
    p95 = lambda xs: round(float(np.nanpercentile(xs, 95)) * 1000) if xs else None  # noqa: E731
    out.update(p95_alone=p95(alone), p95_during=p95(during), n_during=len(during))
    print(json.dumps(out))


def recall(quick: bool):
    """recall@10 of int8 and float16 vectors against float32, queries from other lines."""
    import torch

    import mha_core
    from bench.corpus_search import make_corpus
    from mha_core.corpus_search import build_index, quantise

    torch.set_num_threads(1)
    bert = mha_core.load_model()
    lines = make_corpus(300 if quick else 1500, seed=3)
    ref = build_index(bert, lines, 1, dtype=np.float32)
    queries = build_index(bert, make_corpus(100, seed=4), 1, dtype=np.float32).vectors
    top = lambda V, q, k=10: set(np.argpartition(-(V @ q), k)[:k].tolist())  # noqa: E731
    for dtype in (np.int8, np.float16):
        stored, scales = quantise(ref.vectors, dtype)
        V = stored.astype(np.float32) * scales[:, None]
        got = [len(top(V, q) & top(ref.vectors, q)) / 10 for q in queries]
        print(f"  recall@10 of {np.dtype(dtype).name:8s} vs float32: {np.mean(got):.4f} "
              f"(min {min(got):.1f}) over {len(queries):,} queries, {len(ref):,} tokens; "
              f"load {os.getloadavg()[0]:.2f}")
    # int8 with one scale per dimension (the few large dimensions no longer set every row's
    # step): v ~= stored * dim_scale, and a query scores stored @ (q * dim_scale)
    dim_scale = np.abs(ref.vectors).max(axis=0) / 127.0  # (D,)
    dim_scale[dim_scale == 0] = 1.0
    V = np.rint(ref.vectors / dim_scale).astype(np.int8).astype(np.float32) * dim_scale  # (N, D)
    got = [len(top(V, q) & top(ref.vectors, q)) / 10 for q in queries]
    print(f"  recall@10 of int8/dim  vs float32: {np.mean(got):.4f} (min {min(got):.1f}); "
          f"load {os.getloadavg()[0]:.2f}")


def main():
    ap = h.parser(__doc__)
    ap.add_argument("--only", nargs="+", choices=ACTIONS + ["recall"])
    ap.add_argument("--quick", action="store_true", help="smaller worst cases (a smoke run)")
    ap.add_argument("--no-quick", dest="quick", action="store_false")
    ap.add_argument("--child", help=argparse.SUPPRESS)
    ap.add_argument("--serve", help=argparse.SUPPRESS)  # a worker's launcher: the app + action
    args, rest = ap.parse_known_args()
    if args.serve:
        return serve(args.serve, args.quick, rest)
    if args.child:
        return recall(args.quick) if args.child == "recall" else child(args.child, args.quick)
    print(h.machine())
    print(f"{'action':18s} {'CPU s':>6s} {'wall s':>6s} {'peak RSS':>9s} {'fresh':>6s} "
          f"{'other p95 alone -> during':>26s}  load  what")
    for name in args.only or ACTIONS + ["recall"]:
        cmd = [sys.executable, __file__, "--child", name] + ["--quick"] * args.quick
        env = dict(os.environ, HF_HUB_OFFLINE="1")
        done = subprocess.run(cmd, capture_output=True, text=True, env=env, cwd=ROOT)
        if done.returncode:
            print(f"{name}: failed\n{done.stderr[-2000:]}")
            continue
        if name == "recall":
            print(done.stdout.rstrip())
            continue
        r = json.loads(done.stdout.strip().splitlines()[-1])
        print(f"{name:18s} {r['cpu']:6.1f} {r['wall']:6.1f} {r['peak_rss']:6d} MB "
              f"{r['base_rss']:4d} MB {r['p95_alone']:12d} -> {r['p95_during']} ms "
              f"(n={r['n_during']}) "
              f"{r['load']:6.2f}  {r['detail']}")
    print(f"load average after: {os.getloadavg()}")


if __name__ == "__main__":
    main()
