"""How fast does the Explorer answer? Enter -> every map drawn in chromium, where that time goes,
the server's part alone, and hover -> highlight drawn.

    .venv/bin/python bench/explorer_latency.py [enter] [--n 20] [--screenshot docs/explorer.png]
    .venv/bin/python bench/explorer_latency.py enter --models bundled bundled-decoder
    .venv/bin/python bench/explorer_latency.py split [--n 15] [--link]
    .venv/bin/python bench/explorer_latency.py server [--n 20] [--query text=Hi.]
    .venv/bin/python bench/explorer_latency.py hover [--moves 150] [--sizes 10,128,512]
    .venv/bin/python bench/explorer_latency.py views [--changes 200] [--sizes 12,32,128]
    .venv/bin/python bench/explorer_latency.py floor [--n 20]

enter   The app on a free port (`headscope run`) and Debian's chromium; types --n held-out
        sentences one after another and, for each, times Ctrl+Enter until (a) the attention
        component has drawn the heads, the summed head and the mean of the new tokens, (b)
        every map of the page shows them (testkit.browser.EVERY_MAP_SHOWS: what the reader
        sees, whether the route's answer or the page's run drew it), and (c) the page's run
        has reached the maps and nothing on the page is stale (testkit.browser.MAPS_DRAWN).
        Prints p50/p95 of each, chromium's CPU per Enter (this benchmark's chromium only, from
        Enter until 300 ms after the last map) and the server's part: Enter -> the browser
        received the run's "script finished". --checkout DIR serves another checkout's app
        (a git worktree of an earlier commit) to this same measure.
split   The same Enter, split into its parts by a script injected before the page loads (no
        change to the app): Ctrl+Enter's keydown, every websocket frame sent and received, the
        first canvas operation, the component hosts' data-drawn changes, React's commits
        (through its devtools hook); the server's runs are stamped by bench/timed_server.py and
        placed on the page's clock. p50/p95 of: keydown -> rerun sent, sent -> server run
        starts, the server's script run, run ends -> last message, last message -> grid drawn,
        grid drawn -> every map drawn, the component's own decode + draw, the whole path; and
        frames, kB, React commits and server runs per Enter. --link opens a student's shared
        link (?text=...: the start card closed) instead of the bare Explorer.
server  No browser: one session speaking Streamlit's websocket protocol (testkit.protocol, as
        a browser sends) against bench/timed_server.py. Opens the Explorer (--query: '' the
        bare root, 'text=Hi.' a shared link), then --n new sentences (a view change sends
        nothing: see views). Per kind: send -> script finished and the script run on the
        server's clock, p50/p95, and the kB and messages sent; and the server process's CPU
        per new sentence (/proc). --route: each sentence is first asked of the app's route
        (headscope/ui/explorer_route.py), as the browser's Enter does, so the CPU is the
        route's and the run's together.
views   View changes in chromium, drawn in the page (explorer.js): --changes of them in a
        seeded random order (layer, head, a focus token, a second focus token added, Whole
        words, Hide [CLS]/[SEP], By norm, the token window where there is one), each from the
        control's input event until the next animation frame after it (the page's clock).
        p50/p95/max per text length (--sizes, tokens), and the messages the page sent on its
        websocket meanwhile (counted on the socket: the goal is 0).
floor   Streamlit's own floor, beside the Explorer in one run: the same sentences typed into a
        page with nothing but a sidebar text area and a keyed fragment that draws the text as one
        element (bench/floor_app.py), timed as enter times the Explorer (Ctrl+Enter until the
        new text is drawn, none stale); the same page with the Explorer's payload computed and
        drawn by the attention component (until every map is drawn); then the Explorer by
        enter's measure. What any Streamlit page pays for a new sentence, what the maps add,
        and what the rest of the Explorer's page adds.
hover   Hover -> highlight drawn, measured in the page (performance.now()): the Explorer's
        grid (the hovered row and column in every map) and the Head view (only the hovered
        token's lines), at --sizes tokens. The component records its handler's own work
        (data-hover-work-ms) and input event -> drawn (data-hover-ms: from the event's
        timestamp, so waiting for the frame is in it). No server round trip.

Chromium shares the machine's cores with the server: on a small machine the browser's own work
is part of every figure. Prints the machine, date and load first; asserts nothing.
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench import harness as h  # noqa: E402

WHAT = ("enter", "split", "server", "hover", "views", "floor")
FLOOR_APP = Path(__file__).resolve().parent / "floor_app.py"
FLOOR_DRAWN = """([text]) => { const e = document.querySelector('.st-key-floor_out');
  return !!e && e.textContent.trim() === text
    && !document.querySelector('[data-stale="true"]'); }"""


def enter(args):
    """Enter -> the grid drawn, -> every map drawn, chromium's CPU, the server's part."""
    import mha_core

    with h.app("explorer", checkout=args.checkout) as (url, _, _), h.chromium() as browser:
        for source in args.models:  # one server and browser: the models measured side by side
            bert = mha_core.load_model(None if source == "bundled" else source, device="cpu")
            enter_model(args, url, browser, bert, source)


def enter_model(args, url, browser, bert, source):
    """enter's sentences on one model (a link's ?model= picks it)."""
    import time

    from testkit.browser import (
        EVERY_MAP_SHOWS,
        submit,
        type_sentence,
        type_text,
        wait_for_explorer,
        wait_for_grid,
    )

    heads = bert.config.num_attention_heads
    times, grid, maps, server, cpu = [], [], [], [], []
    page = browser.new_page(viewport={"width": 1280, "height": 800})
    clock = h.ServerClock(page)
    page.goto(url if source == "bundled" else f"{url}/?model={source}")
    wait_for_grid(page, bert.encode(h.FIRST).tokens, heads, timeout_ms=120_000)
    watch = h.CpuWatch()
    for text in h.SENTENCES[:args.n]:
        tokens = bert.encode(text).tokens
        type_text(page, text)
        watch.start()
        t_enter = time.perf_counter()
        submit(page)
        wait_for_grid(page, tokens, heads, timeout_ms=30_000)
        grid.append((time.perf_counter() - t_enter) * 1000)
        page.wait_for_function(EVERY_MAP_SHOWS, arg=[tokens, heads], polling="raf",
                               timeout=30_000)
        maps.append((time.perf_counter() - t_enter) * 1000)
        wait_for_explorer(page, tokens, heads, timeout_ms=30_000)
        times.append((time.perf_counter() - t_enter) * 1000)
        page.wait_for_timeout(300)  # the run may finish after the maps are drawn
        watch.poll()
        cpu.append(watch.total() * 1000)
        if clock.since(t_enter) is not None:
            server.append(clock.since(t_enter) * 1000)
        print(f"{grid[-1]:7.0f} ms grid  {maps[-1]:7.0f} ms maps  {times[-1]:7.0f} ms run  "
              f"{cpu[-1]:5.0f} ms CPU"
              f"  T={len(tokens):2d}  {text}", flush=True)
    if args.screenshot:
        type_sentence(page, h.FIRST)
        wait_for_grid(page, bert.encode(h.FIRST).tokens, heads)
        page.evaluate("document.activeElement.blur()")  # no focus ring in the picture
        page.mouse.move(150, 700)  # over the sidebar, off the charts
        page.wait_for_timeout(1500)  # let the focus views below finish drawing
        page.screenshot(path=args.screenshot)
        print(f"screenshot: {args.screenshot}")
    page.close()
    print(f"\n{bert.name}: {len(times)} sentences, Enter -> ; {h.load()}")
    print(f"  the component's {heads} heads + summed head + mean drawn: {h.spread(grid)}")
    print(f"  every map shows them: {h.spread(maps)}")
    print(f"  the page's run reached the maps, nothing stale: {h.spread(times)}")
    print(f"  chromium CPU per Enter: {h.spread(cpu)}")
    print(f"  'script finished' received (the server's part): {h.spread(server)}\n")


def floor(args):
    """Ctrl+Enter -> drawn on bench/floor_app.py (the text alone; then the Explorer's maps on a
    bare page), then enter on the Explorer."""
    import time

    from testkit.browser import submit, type_text, wait_for_explorer
    from testkit.server import start_app, stop_app

    bert, heads = h.bundled()
    for maps in (False, True):
        folder = h.run_dir("floor")
        env = {"HEADSCOPE_FLOOR_MAPS": "1"} if maps else {}
        proc, url = start_app(folder / "server.log", env_extra=env, script=FLOOR_APP)
        times = []
        try:
            with h.chromium() as browser:
                page = browser.new_page(viewport={"width": 1280, "height": 800})
                page.goto(url)
                page.wait_for_function(FLOOR_DRAWN, arg=[h.FIRST], polling="raf",
                                       timeout=60_000)
                for text in h.SENTENCES[:args.n]:
                    type_text(page, text)
                    t_enter = time.perf_counter()
                    submit(page)
                    page.wait_for_function(FLOOR_DRAWN, arg=[text.strip()], polling="raf",
                                           timeout=30_000)
                    if maps:
                        wait_for_explorer(page, bert.encode(text).tokens, heads)
                    times.append((time.perf_counter() - t_enter) * 1000)
        finally:
            stop_app(proc)
        what = ("the Explorer's payload and component on a bare page: Enter -> every map drawn"
                if maps else "the text alone: Enter -> the text drawn")
        print(f"\nStreamlit's floor, {what}, {len(times)} sentences; {h.load()}")
        print(f"  {h.spread(times)}")
    print()
    enter(args)


# What split injects before the page loads
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
# (headscope/ui/attention/js/main.js)
DRAW_MS = """() => ['ex_grid', 'ex_focus_grid', 'ex_big', 'ex_focus_bars'].reduce((sum, k) =>
  sum + parseFloat(document.querySelector(`.st-key-${k} [data-drawn]`)?.dataset.drawMs || 0), 0)"""
RESET = "() => { const T = window.__hs; for (const k in T) T[k].length = 0; }"


def parts(t: dict, t_all: float, origin: float, runs: list) -> dict:
    """One Enter's parts, ms. origin: the page's performance.timeOrigin (Unix ms); runs:
    [(start, end)] of the server's script runs since the Enter, in Unix ms."""
    key = t["key"][0]
    sent = next(s for s in t["sent"] if s >= key)
    recv = [(at, n) for at, n in t["recv"] if sent <= at <= t_all]
    grid = next(at for at, k in t["drawn"] if k == "ex_view" and at >= sent)  # the Explorer
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


def split(args):
    from testkit.browser import submit, type_text, wait_for_explorer, wait_for_grid

    bert, heads = h.bundled()
    rows = []
    with h.app("explorer-split", timed=True) as (url, _, folder), h.chromium() as browser:
        stamps = folder / "stamps.txt"
        page = browser.new_page(viewport={"width": 1280, "height": 800})
        page.add_init_script(RECORDER)
        page.goto(url + ("/?text=" + h.FIRST.replace(" ", "+") if args.link else ""))
        wait_for_grid(page, bert.encode(h.FIRST).tokens, heads)
        for text in h.SENTENCES[:args.n]:
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
            rows.append(parts(page.evaluate("window.__hs"), t_all,
                              page.evaluate("performance.timeOrigin"), runs))
            rows[-1]["component's own decode + draw"] = page.evaluate(DRAW_MS)
    where = "a shared link" if args.link else "the bare Explorer"
    print(f"{len(rows)} sentences ({where}); {h.load()}; ms unless said")
    for name in rows[0]:
        xs = [r[name] for r in rows]
        print(f"{name:40s} p50 {h.percentile(xs, .5):8.1f}   p95 {h.percentile(xs, .95):8.1f}")


def route_post(url: str, text: str) -> int:
    """What the browser's held Enter sends first (sentence.js): the route's status."""
    import json
    import urllib.request

    from headscope.ui import explorer_route
    from headscope.ui.models import BUNDLED

    body = json.dumps({"model": BUNDLED, "text": text, "pair": None}).encode()
    req = urllib.request.Request(f"{url}/{explorer_route.PATH}", data=body, method="POST",
                                 headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=60) as r:
        r.read()
        return r.status


def server(args):
    import asyncio
    import random
    import time

    from testkit.protocol import Session, text_value

    cpu, asked = [], []

    async def drive(url, pid):
        rng = random.Random(7)
        s = Session(url, cookie="bench", fragments=True)
        await s.connect()
        out = [("open", await s.rerun(query=args.query, timeout=300))]
        for _ in range(args.n):
            text = h.random_sentence(rng)
            c0 = h.cpu_seconds([pid])
            if args.route:  # as the browser does: the route's answer, then the page's rerun
                t0 = time.perf_counter()
                assert await asyncio.to_thread(route_post, url, text) == 200
                asked.append((time.perf_counter() - t0) * 1000)
            out.append(("new sentence", await s.rerun({"text": text_value(text)})))
            cpu.append((h.cpu_seconds([pid]) - c0) * 1000)
        await s.close()
        return out

    with h.app("explorer-server", timed=True) as (url, proc, folder):
        runs = asyncio.run(drive(url, proc.pid))
        server_runs = h.run_times(folder / "runs.txt")
        route_runs = [x * 1000 for x in h.run_times(folder / "runs.txt.route")]
    print(f"one protocol session, {args.n} rounds, opened with {args.query!r}"
          f"{', each sentence first asked of the route' if args.route else ''}; {h.load()}")
    print(f"the server process's CPU per new sentence (route and run, from /proc, 10 ms "
          f"ticks): p50 {h.percentile(cpu, .5):5.1f} ms, mean {sum(cpu) / len(cpu):5.1f} ms")
    if asked:
        print(f"the route: POST -> its answer read p50 {h.percentile(asked, .5):5.1f} ms, p95 "
              f"{h.percentile(asked, .95):5.1f} ms; its answer built on the server p50 "
              f"{h.percentile(route_runs, .5):5.1f} ms, p95 {h.percentile(route_runs, .95):5.1f}"
              " ms (the forward pass and payload; then the run reads them from the cache)")
    for kind in ("new sentence",):
        mine = [(i, r) for i, (k, r) in enumerate(runs) if k == kind]
        seen = [r.seconds * 1000 for _, r in mine]
        srv = [server_runs[i] * 1000 for i, _ in mine if i < len(server_runs)]
        kb = sum(r.bytes for _, r in mine) / len(mine) / 1000
        msgs = sum(r.messages for _, r in mine) / len(mine)
        print(f"{kind:13s} script run on the server p50 {h.percentile(srv, .5):5.1f} ms, p95 "
              f"{h.percentile(srv, .95):5.1f} ms; send -> script finished p50 "
              f"{h.percentile(seen, .5):5.1f} ms, p95 {h.percentile(seen, .95):5.1f} ms; "
              f"{kb:.1f} kB in {msgs:.0f} messages")


def hover(args):
    import json
    import random
    from urllib.parse import quote

    from testkit.browser import FIND, HOST, wait_for_component, windowed

    def series(page, key, points, moves):
        """Move over `points` [(x, y)], each time until the component took the hover: (handler
        work, event -> drawn) in ms."""
        sel = HOST.format(key=key)
        work, total = [], []
        for i in range(moves):
            page.mouse.move(*points[i % len(points)])
            page.wait_for_function(f"(s) => !!{FIND}(s).dataset.hover", arg=sel,
                                   polling="raf", timeout=10_000)
            work.append(float(page.locator(sel).get_attribute("data-hover-work-ms")))
            total.append(float(page.locator(sel).get_attribute("data-hover-ms")))
            page.mouse.move(2, 2)  # off the canvas (the hover empties), so the next is new
            page.wait_for_function(f"(s) => !{FIND}(s).dataset.hover", arg=sel,
                                   polling="raf", timeout=10_000)
        return work, total

    bert, heads = h.bundled()
    rng = random.Random(0)
    with h.app("explorer-hover") as (url, _, _), h.chromium() as browser:
        page = browser.new_page(viewport={"width": 1280, "height": 800})
        for T in args.sizes:
            text = h.text_of(bert, T, 7)
            tokens = bert.encode(text).tokens
            G = len(tokens)
            page.goto(url + "/?text=" + quote(text))  # the Explorer: cells of random maps
            shown = len(windowed(tokens))  # a longer text shows its first WINDOW tokens
            wait_for_component(page, "ex_grid", windowed(tokens), timeout_ms=120_000)
            maps = json.loads(page.locator(HOST.format(key="ex_grid")).get_attribute(
                "data-layout"))
            box = page.locator(".st-key-ex_grid canvas.hs-main").bounding_box()
            points = []
            for _ in range(args.moves):
                m = rng.choice(maps)
                q, k, cell = rng.randrange(shown), rng.randrange(shown), m["size"] / shown
                points.append((box["x"] + m["x"] + (k + 0.5) * cell,
                               box["y"] + m["y"] + (q + 0.5) * cell))
            points = [pt for pt in points if pt[1] < 790] or points  # on the first screen
            work, total = series(page, "ex_grid", points, args.moves)
            print(f"Explorer grid, T={G} ({heads} heads + 2 maps)")
            print(f"  handler, the row and column drawn in every map: {h.spread(work, digits=2)}")
            print(f"  input event -> drawn: {h.spread(total, digits=2)}", flush=True)
            page.goto(url + "/head_view?text=" + quote(text))  # the left column's tokens
            wait_for_component(page, "hv_lines", tokens, timeout_ms=120_000)
            g = json.loads(page.locator(HOST.format(key="hv_lines")).get_attribute(
                "data-geometry"))
            box = page.locator(".st-key-hv_lines canvas.hs-lines").bounding_box()
            points = [(box["x"] + g["left"] - 15, box["y"] + g["top"] + (i + 0.5) * g["row"])
                      for i in range(G) if box["y"] + g["top"] + (i + 1) * g["row"] < 790]
            rng.shuffle(points)
            work, total = series(page, "hv_lines", points, args.moves)
            print(f"Head view, T={G}, every head on")
            print(f"  handler, only that token's lines drawn: {h.spread(work, digits=2)}")
            print(f"  input event -> drawn: {h.spread(total, digits=2)}", flush=True)
    print(h.load())


# One view change in the page, timed from the control's input event to the next animation frame
# (explorer.js draws synchronously in the handler): [kind, ms]. The controls are the component's
# own, found in its shadow root.
CHANGE = """async ([kind, pick]) => {
  const x = document.querySelector('.st-key-ex_view [data-view=explorer]').shadowRoot;
  const q = (s) => x.querySelector(s), t0 = performance.now();
  const set = (input, value, type) => { input.value = String(value);
    input.dispatchEvent(new Event(type, {bubbles: true})); };
  const tokens = [...x.querySelectorAll('button.hs-tok')];
  if (kind === 'layer') { const r = q('.hs-ex-controls input[type=range]');
    set(r, 1 + (pick % +r.max), 'input'); }
  else if (kind === 'head') { const sel = q('.hs-ex-controls select');
    set(sel, pick % sel.options.length, 'change'); }
  else if (kind === 'focus') tokens[pick % tokens.length].click();
  else if (kind === 'add') tokens[pick % tokens.length].dispatchEvent(
    new MouseEvent('click', {bubbles: true, shiftKey: true}));
  else if (kind === 'window') { const r = [...x.querySelectorAll('input[type=range]')][1];
    if (!r || !r.isConnected) return [kind, null, null]; set(r, pick % (+r.max + 1), 'input'); }
  else { const box = [...x.querySelectorAll('input[role=switch]')][
    {words: 0, hide: 1, norm: 2}[kind]]; box.click(); }
  const drawn = performance.now() - t0;  // the handler's own work: derive and draw
  await new Promise((done) => requestAnimationFrame(() => done()));
  return [kind, performance.now() - t0, drawn];
}"""
KINDS = ("layer", "head", "focus", "add", "words", "hide", "norm", "window")


def views(args):
    """View changes drawn in the page, and the websocket messages sent meanwhile."""
    import random
    from urllib.parse import quote

    from testkit.browser import wait_for_explorer

    bert, heads = h.bundled()
    rng = random.Random(0)
    with h.app("explorer-views") as (url, _, _), h.chromium() as browser:
        page = browser.new_page(viewport={"width": 1280, "height": 800})
        sent = []
        page.on("websocket", lambda ws: ws.on("framesent", lambda f: sent.append(f)))
        for T in args.sizes:
            text = h.text_of(bert, T, 7)
            tokens = bert.encode(text).tokens
            page.goto(url + "/?text=" + quote(text))
            wait_for_explorer(page, tokens, heads, timeout_ms=120_000)
            page.wait_for_function("() => document.querySelector('[data-testid=\"stApp\"]')"
                                   "?.dataset.testScriptState === 'notRunning'")
            before, times, work = len(sent), {}, []
            for _ in range(args.changes):
                kind, ms, drawn = page.evaluate(CHANGE, [rng.choice(KINDS),
                                                         rng.randrange(10_000)])
                if ms is not None:
                    times.setdefault(kind, []).append(ms)
                    work.append(drawn)
            every = [x for xs in times.values() for x in xs]
            print(f"T={len(tokens)}: {len(every)} view changes, input -> next frame "
                  f"p50 {h.percentile(every, .5):.1f} ms, p95 {h.percentile(every, .95):.1f} ms, "
                  f"max {max(every):.1f} ms; of it the handler (derive + draw) p50 "
                  f"{h.percentile(work, .5):.1f}, p95 {h.percentile(work, .95):.1f} ms; "
                  f"messages sent to the server: {len(sent) - before}")
            for kind, xs in times.items():
                print(f"  {kind:7s} n={len(xs):3d} p50 {h.percentile(xs, .5):6.1f} "
                      f"p95 {h.percentile(xs, .95):6.1f} ms")
    print(h.load())


def main():
    ap = h.parser(__doc__)
    ap.add_argument("what", nargs="?", choices=WHAT, default="enter")
    ap.add_argument("--n", type=int, default=None,
                    help="sentences (enter: 20, split: 15) or rounds (server: 20)")
    ap.add_argument("--screenshot", help="enter: save the page on the telescope sentence here")
    ap.add_argument("--models", nargs="+", default=["bundled"],
                    help="enter: the models, one after another in one run (bundled, "
                         "bundled-decoder, or a name the server offers)")
    ap.add_argument("--checkout", default=None,
                    help="enter: serve this checkout's app (e.g. a git worktree of a baseline)")
    ap.add_argument("--link", action="store_true", help="split: open a student's shared link")
    ap.add_argument("--query", default="", help="server: the first run's query string")
    ap.add_argument("--route", action="store_true",
                    help="server: ask the route for each sentence first, as the browser does")
    ap.add_argument("--moves", type=int, default=150, help="hover: mouse moves per view")
    ap.add_argument("--sizes", nargs="+", action=h.Ints, default=None,
                    help="hover: text lengths in tokens (default 10,128,512); views: 12,32,128")
    ap.add_argument("--changes", type=int, default=200, help="views: view changes per text")
    args = ap.parse_args()
    args.n = args.n or {"split": 15}.get(args.what, 20)
    args.sizes = args.sizes or ([12, 32, 128] if args.what == "views" else [10, 128, 512])
    print(h.machine())
    {"enter": enter, "split": split, "server": server, "hover": hover,
     "views": views, "floor": floor}[args.what](args)


if __name__ == "__main__":
    main()
