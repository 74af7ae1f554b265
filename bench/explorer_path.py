"""Where Enter -> every Explorer map drawn goes, in chromium: the whole path, split.

Starts `streamlit run app.py` on a free port and Debian's chromium; a script injected before
the page loads (no change to the app or the component) records, with performance.now():
Ctrl+Enter's keydown; every websocket frame the page sends and receives (a wrapper around
WebSocket); the first canvas operation after the send (the component begins to draw: its data
is decoded by then); the component hosts' data-drawn changes (a MutationObserver); and each
commit of React's tree (React's devtools hook). The server is bench/timed_server.py, which
stamps each script run's start and end in Unix time, placed on the page's clock through
performance.timeOrigin (same machine). For each of --n held-out sentences prints the p50/p95 of:

  keydown -> rerun sent        the browser's delay before it sends the rerun
  sent -> server run starts    the server's delay before the script runs
  server's script run          the script run (start -> end, the server's clock)
  run ends -> last message     the rest of the messages sent, and the page's JS getting to them
  sent -> first message        the server starts answering
  sent -> last message         the script run and the deltas' transfer (script_finished is
                               among the last messages)
  last message -> grid drawn   what the browser does after the last message for the grid
  first canvas clear -> grid drawn   the component's drawing after its first clearRect
  grid drawn -> every map drawn the other views: the focus grid, enlarged head and focus bars
                               (all four drawn by the attention component; plotly before)
  component's own drawing      the four views' data-draw-ms summed (decode + draw in the page)
  keydown -> every map drawn   the whole path (testkit.browser.EXPLORER_DRAWN, polled per
                               animation frame, as bench/browser_latency.py)
and the frames and bytes received, the server's runs and React's commits per Enter (in all,
and after the last message), with the load average.

    .venv/bin/python bench/explorer_path.py [--n 15] [--link]
    .venv/bin/python bench/explorer_path.py --app bench/explorer_floor_app.py   # the floor
"""

import argparse
import os
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.browser_latency import SENTENCES  # noqa: E402
from bench.measure import percentile  # noqa: E402
from testkit.browser import (  # noqa: E402
    CHROMIUM,
    CHROMIUM_ARGS,
    submit,
    type_text,
    wait_for_explorer,
    wait_for_grid,
)
from testkit.server import start_app, stop_app  # noqa: E402

RECORDER = """(() => {
  const T = window.__hs = {key: [], sent: [], recv: [], canvas: [], drawn: [], commits: []};
  // React calls this hook (its devtools' entry point) once per commit of the page's tree
  window.__REACT_DEVTOOLS_GLOBAL_HOOK__ = {supportsFiber: true, renderers: new Map(),
    inject: () => 1, onScheduleFiberRoot() {}, onCommitFiberUnmount() {},
    onPostCommitFiberRoot() {}, onCommitFiberRoot() { T.commits.push(performance.now()); }};
  document.addEventListener('keydown', (e) => {
    if (e.key === 'Enter' && e.ctrlKey) T.key.push(performance.now());
  }, true);
  const Orig = window.WebSocket, send = Orig.prototype.send;
  Orig.prototype.send = function (d) {
    T.sent.push(performance.now());
    return send.call(this, d);
  };
  function Wrapped(...args) {
    const ws = new Orig(...args);
    ws.addEventListener('message', (ev) =>
      T.recv.push([performance.now(), ev.data.byteLength || ev.data.size || 0]));
    return ws;
  }
  Wrapped.prototype = Orig.prototype;
  for (const k of ['CONNECTING', 'OPEN', 'CLOSING', 'CLOSED']) Wrapped[k] = Orig[k];
  window.WebSocket = Wrapped;
  const clear = CanvasRenderingContext2D.prototype.clearRect;
  CanvasRenderingContext2D.prototype.clearRect = function (...a) {
    T.canvas.push(performance.now());
    return clear.apply(this, a);
  };
  new MutationObserver((ms) => {
    for (const m of ms) {
      const host = m.target.closest('[class*="st-key-"]');
      const key = host && (host.className.match(/st-key-(\\S+)/) || [])[1];
      T.drawn.push([performance.now(), key]);
    }
  }).observe(document, {attributes: true, subtree: true, attributeFilter: ['data-drawn']});
})();"""

# the decode + draw time each view of the component puts on its host
# (headscope/ui/attention/main.js)
DRAW_MS = """() => ['ex_grid', 'ex_focus_grid', 'ex_big', 'ex_focus_bars'].reduce((sum, k) =>
  sum + parseFloat(document.querySelector(`.st-key-${k} [data-drawn]`)?.dataset.drawMs || 0), 0)"""
RESET = "() => { const T = window.__hs; for (const k in T) T[k].length = 0; }"


def split(t: dict, t_all: float, origin: float, runs: list) -> dict:
    """origin: the page's performance.timeOrigin (Unix ms); runs: [(start, end)] of the
    server's script runs since the Enter, in Unix ms (bench/timed_server.py)."""
    key = t["key"][0]
    sent = next(s for s in t["sent"] if s >= key)
    recv = [(at, n) for at, n in t["recv"] if sent <= at <= t_all]
    grid = next(at for at, k in t["drawn"] if k == "ex_grid" and at >= sent)
    last = max(at for at, _ in recv if at <= grid)
    canvas = next((c for c in t["canvas"] if c >= last), grid)
    start, end = runs[0][0] - origin, runs[-1][1] - origin  # on the page's clock
    return {"keydown -> rerun sent": sent - key,
            "sent -> server run starts": start - sent,
            "server's script run": end - start,
            "run ends -> last message": last - end,
            "sent -> first message": recv[0][0] - sent,
            "sent -> last message": last - sent,
            "last message -> grid drawn": grid - last,
            "first canvas clear -> grid drawn": grid - canvas,
            "grid drawn -> every map drawn": t_all - grid,
            "keydown -> every map drawn": t_all - key,
            "frames received": len(recv), "kB received": sum(n for _, n in recv) / 1000,
            "React commits": sum(1 for c in t["commits"] if key <= c <= t_all),
            "React commits after the last message": sum(1 for c in t["commits"]
                                                        if last <= c <= t_all),
            "server runs": len(runs)}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--n", type=int, default=15)
    ap.add_argument("--link", action="store_true", help="open a student's shared link "
                    "(?text=...: no start card) instead of the bare Explorer")
    ap.add_argument("--app", help="another Streamlit script with the same sentence box and "
                    "maps (bench/explorer_floor_app.py: the four maps alone)")
    args = ap.parse_args()
    from playwright.sync_api import sync_playwright

    import mha_core

    bert = mha_core.load_bert()  # the expected tokens only
    heads = bert.config.num_attention_heads
    tmp = Path(tempfile.mkdtemp())
    stamps = tmp / "runs.txt"
    proc, url = start_app(tmp / "streamlit.log", launcher=(str(Path(__file__).with_name(
        "timed_server.py")),), env_extra={"HEADSCOPE_RUN_TIMES": str(tmp / "times.txt"),
                                          "HEADSCOPE_RUN_STAMPS": str(stamps)},
                           script=args.app and Path(args.app).resolve())
    rows, load0 = [], os.getloadavg()
    try:
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
            page = browser.new_page(viewport={"width": 1280, "height": 800})
            page.add_init_script(RECORDER)
            page.goto(url + ("/?text=I+saw+the+man+with+a+telescope." if args.link else ""))
            wait_for_grid(page, bert.encode("I saw the man with a telescope.").tokens, heads)
            for text in SENTENCES[:args.n]:
                tokens = bert.encode(text).tokens
                type_text(page, text)
                page.evaluate(RESET)
                done = len(stamps.read_text().splitlines()) if stamps.exists() else 0
                submit(page)
                wait_for_explorer(page, tokens, heads, timeout_ms=60_000)
                t_all = page.evaluate("performance.now()")
                page.wait_for_function(f"() => performance.now() > {t_all} + 300")  # runs end
                runs = [tuple(map(float, line.split()))
                        for line in stamps.read_text().splitlines()[done:]]
                rows.append(split(page.evaluate("window.__hs"), t_all,
                                  page.evaluate("performance.timeOrigin"), runs))
                rows[-1]["component's own drawing"] = page.evaluate(DRAW_MS)
            browser.close()
    finally:
        stop_app(proc)
    where = args.app or ("a shared link" if args.link else "the bare Explorer")
    print(f"{len(rows)} sentences ({where}); load average {load0[0]:.1f} -> "
          f"{os.getloadavg()[0]:.1f} (1 min); ms unless said")
    for name in rows[0]:
        xs = [r[name] for r in rows]
        print(f"{name:32s} p50 {percentile(xs, .5):8.1f}   p95 {percentile(xs, .95):8.1f}")


if __name__ == "__main__":
    main()
