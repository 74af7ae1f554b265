"""Where chromium's main thread spends an Explorer Enter: the page's JS by file, and the
rendering work (style, layout, paint) beside it.

Starts `streamlit run app.py` and Debian's chromium, opens a student's shared link, and for
--n held-out sentences types one and presses Ctrl+Enter until every map shows it
(testkit.browser.EXPLORER_DRAWN). Over those Enters it records, through the devtools protocol,
a sampling CPU profile of the page (Profiler, 100 us), or with --trace a timeline trace (one
at a time: each slows the page). It prints, per Enter: from the profile, the JS self time by
file (Streamlit's chunks are named by what they hold: react-dom, emotion, Slider, ...; our
component's module is attention.<hash>.js), the time under each file (inclusive) and the top
functions; from the trace, the renderer main thread's busy time and its time in each kind of
event (script, style, layout, paint, GC: each kind's outermost events; the kinds overlap, a
layout forced by a script counting in both, so they do not add up to the busy time).

    .venv/bin/python bench/frontend_profile.py [--n 10] [--top 25] [--trace]
"""

import argparse
import collections
import json
import os
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.browser_latency import SENTENCES  # noqa: E402
from testkit.browser import launch, submit, type_text, wait_for_explorer, wait_for_grid  # noqa: E402
from testkit.server import start_app, stop_app  # noqa: E402

# trace events on the renderer's main thread that are the page's work, by kind (nested events
# of a kind are counted once: only its outermost; kinds overlap)
KINDS = {"FunctionCall": "script", "EvaluateScript": "script", "v8.compile": "script",
         "RunMicrotasks": "script", "EventDispatch": "script", "TimerFire": "script",
         "FireAnimationFrame": "script", "v8.callFunction": "script",
         "UpdateLayoutTree": "style", "Layout": "layout", "PrePaint": "paint",
         "Paint": "paint", "Layerize": "paint", "UpdateLayer": "paint", "Commit": "paint",
         "MinorGC": "gc", "MajorGC": "gc", "ParseHTML": "parse", "ParseAuthorStyleSheet": "style"}


def main_thread(events) -> tuple:
    """(pid, tid) of the renderer's main thread that ran our page (the busiest CrRendererMain)."""
    names = {(e["pid"], e["tid"]) for e in events
             if e.get("ph") == "M" and e.get("name") == "thread_name"
             and e["args"].get("name") == "CrRendererMain"}
    busy = collections.Counter((e["pid"], e["tid"]) for e in events
                               if (e.get("pid"), e.get("tid")) in names and e.get("ph") == "X")
    return busy.most_common(1)[0][0]


def split_trace(events) -> dict:
    """Busy ms on the page's main thread by kind, each kind's outermost events only, and in
    all ('busy': RunTask, the scheduler's top-level tasks)."""
    pid, tid = main_thread(events)
    mine = sorted((e for e in events if e.get("pid") == pid and e.get("tid") == tid
                   and e.get("ph") == "X" and "dur" in e),
                  key=lambda e: (e["ts"], -e["dur"]))  # a parent before a child starting with it
    out = collections.Counter()
    open_until = {}  # kind -> end of its current outermost event
    for e in mine:
        if e["name"] == "RunTask":
            out["busy"] += e["dur"] / 1000
        kind = KINDS.get(e["name"])
        if kind and e["ts"] >= open_until.get(kind, -1):
            out[kind] += e["dur"] / 1000
            open_until[kind] = e["ts"] + e["dur"]
    return out


def _file(frame) -> str:
    return frame["url"].rsplit("/", 1)[-1] or f"({frame['functionName'] or 'program'})"


def profile_times(profile) -> tuple:
    """From a Profiler.Profile, in ms: JS self time by file, by (function, file, line, col),
    and the time under each file (a sample counts for every file on its stack: Streamlit's
    element chunks, Slider.*.js and so on, say what rendering each kind of element costs)."""
    nodes = {n["id"]: n for n in profile["nodes"]}
    parent = {c: n["id"] for n in profile["nodes"] for c in n.get("children", ())}
    by_file, by_fn, under = collections.Counter(), collections.Counter(), collections.Counter()
    # timeDeltas[i] is the time before sample i: sample i stands for the next delta (as devtools)
    for node, dt in zip(profile["samples"], profile["timeDeltas"][1:] + [0]):
        frame = nodes[node]["callFrame"]
        by_file[_file(frame)] += dt / 1000
        by_fn[(frame["functionName"] or "(anonymous)", _file(frame), frame["lineNumber"],
               frame["columnNumber"])] += dt / 1000
        files, at = set(), node
        while at is not None:
            files.add(_file(nodes[at]["callFrame"]))
            at = parent.get(at)
        for f in files:
            under[f] += dt / 1000
    return by_file, by_fn, under


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--n", type=int, default=10)
    ap.add_argument("--top", type=int, default=25)
    ap.add_argument("--trace", action="store_true", help="record the timeline trace instead of "
                    "the CPU profile (each slows the page; one at a time)")
    args = ap.parse_args()
    from playwright.sync_api import sync_playwright

    import mha_core

    bert = mha_core.load_bert()  # the expected tokens only
    heads = bert.config.num_attention_heads
    tmp = Path(tempfile.mkdtemp())
    proc, url = start_app(tmp / "streamlit.log")
    load0 = os.getloadavg()
    try:
        with sync_playwright() as p:
            browser = launch(p)
            page = browser.new_page(viewport={"width": 1280, "height": 800})
            page.goto(url + "/?text=I+saw+the+man+with+a+telescope.")
            wait_for_grid(page, bert.encode("I saw the man with a telescope.").tokens, heads)
            cdp = page.context.new_cdp_session(page)
            cdp.send("Profiler.enable")
            cdp.send("Profiler.setSamplingInterval", {"interval": 100})
            by_file, by_fn, kinds, under = (collections.Counter() for _ in range(4))
            texts = SENTENCES[:args.n]
            for text in texts:
                type_text(page, text)
                if args.trace:
                    browser.start_tracing(page=page, categories=[
                        "devtools.timeline", "disabled-by-default-devtools.timeline"])
                else:
                    cdp.send("Profiler.start")
                submit(page)
                wait_for_explorer(page, bert.encode(text).tokens, heads, timeout_ms=60_000)
                if args.trace:
                    kinds.update(split_trace(json.loads(browser.stop_tracing())["traceEvents"]))
                else:
                    f, fn, u = profile_times(cdp.send("Profiler.stop")["profile"])
                    by_file.update(f)
                    by_fn.update(fn)
                    under.update(u)
            browser.close()
    finally:
        stop_app(proc)
    n = len(texts)
    print(f"{n} Enters on a shared link; load average {load0[0]:.1f} -> "
          f"{os.getloadavg()[0]:.1f}; ms per Enter (means)")
    if args.trace:
        print("renderer main thread: " + ", ".join(f"{k} {v / n:.1f}" for k, v in
                                                   kinds.most_common()))
        return
    print(f"profiled {sum(by_file.values()) / n:.1f} ms, of which idle "
          f"{by_file['((idle))'] / n:.1f}")
    print("JS self time by file:")
    for f, ms in by_file.most_common(12):
        print(f"  {ms / n:7.1f}  {f}")
    print("time under each file (inclusive):")
    for f, ms in under.most_common(args.top):
        print(f"  {ms / n:7.1f}  {f}")
    print("JS self time by function:")
    for (fn, f, line, col), ms in by_fn.most_common(args.top):
        print(f"  {ms / n:7.1f}  {fn[:40]:40s} {f}:{line + 1}:{col + 1}")


if __name__ == "__main__":
    main()
