"""Hover -> highlight drawn, measured in the page with performance.now().

The Explorer's grid (the hovered row and column in all 14 maps) and the Head view (only the
hovered token's lines), at several lengths. For every mouse move the component records on its
host element data-hover-work-ms, its handler's own work (performance.now() at its start and
after drawing), and data-hover-ms, from the input event (event.timeStamp: chromium delivers
mouse moves aligned to frames, so this includes waiting for the frame) to the end of drawing.
No server round trip is involved.

    .venv/bin/python bench/hover_latency.py [--moves 150] [--sizes 10,128,512]
"""

import argparse
import json
import random
import sys
import tempfile
from pathlib import Path
from urllib.parse import quote

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.head_view_latency import text_of  # noqa: E402
from bench.measure import percentile  # noqa: E402
from testkit.browser import CHROMIUM, CHROMIUM_ARGS, HOST, wait_for_component  # noqa: E402
from testkit.server import start_app, stop_app  # noqa: E402


def hover_series(page, key, points, moves):
    """Move over `points` [(x, y)], each time waiting until the component took the hover, and
    return (handler work, event -> drawn) in ms."""
    sel = HOST.format(key=key)
    work, total = [], []
    for i in range(moves):
        page.mouse.move(*points[i % len(points)])
        page.wait_for_function("(s) => !!document.querySelector(s).dataset.hover", arg=sel,
                               polling="raf", timeout=10_000)
        work.append(float(page.locator(sel).get_attribute("data-hover-work-ms")))
        total.append(float(page.locator(sel).get_attribute("data-hover-ms")))
        page.mouse.move(2, 2)  # off the canvas (the hover hook empties), so the next is new
        page.wait_for_function("(s) => !document.querySelector(s).dataset.hover", arg=sel,
                               polling="raf", timeout=10_000)
    return work, total


def summary(name, xs):
    return (f"{name}: p50 {percentile(xs, 0.5):.2f} ms  p95 {percentile(xs, 0.95):.2f} ms  "
            f"max {max(xs):.2f} ms  (n={len(xs)})")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--moves", type=int, default=150)
    ap.add_argument("--sizes", default="10,128,512")
    args = ap.parse_args()

    from playwright.sync_api import sync_playwright

    import mha_core

    bert = mha_core.load_bert()
    heads = bert.config.num_attention_heads
    rng = random.Random(0)
    proc, url = start_app(Path(tempfile.mkdtemp()) / "streamlit.log")
    try:
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
            page = browser.new_page(viewport={"width": 1280, "height": 800})
            for T in (int(x) for x in args.sizes.split(",")):
                text = text_of(bert, T, 7)
                tokens = bert.encode(text).tokens
                G = len(tokens)
                # the Explorer: cells of random maps
                page.goto(url + "/?text=" + quote(text))
                wait_for_component(page, "ex_grid", tokens, timeout_ms=120_000)
                maps = json.loads(page.locator(HOST.format(key="ex_grid"))
                                  .get_attribute("data-layout"))
                box = page.locator(".st-key-ex_grid canvas.hs-main").bounding_box()
                page.mouse.wheel(0, 0)
                points = []
                for _ in range(args.moves):
                    m = rng.choice(maps)
                    q, k = rng.randrange(G), rng.randrange(G)
                    cell = m["size"] / G
                    points.append((box["x"] + m["x"] + (k + 0.5) * cell,
                                   box["y"] + m["y"] + (q + 0.5) * cell))
                points = [pt for pt in points if pt[1] < 790]  # on the first screen
                work, total = hover_series(page, "ex_grid", points, args.moves)
                print(f"Explorer grid, T={G} ({heads} heads + 2 maps)")
                print("  " + summary("handler: hovered row and column drawn in every map", work))
                print("  " + summary("input event -> drawn", total), flush=True)
                # the head view: tokens of the left column
                page.goto(url + "/head_view?text=" + quote(text))
                wait_for_component(page, "hv_lines", tokens, timeout_ms=120_000)
                g = json.loads(page.locator(HOST.format(key="hv_lines"))
                               .get_attribute("data-geometry"))
                box = page.locator(".st-key-hv_lines canvas.hs-lines").bounding_box()
                points = [(box["x"] + g["left"] - 15, box["y"] + g["top"] + (i + 0.5) * g["row"])
                          for i in range(G) if box["y"] + g["top"] + (i + 1) * g["row"] < 790]
                rng.shuffle(points)
                work, total = hover_series(page, "hv_lines", points, args.moves)
                print(f"Head view, T={G}, every head on")
                print("  " + summary("handler: only that token's lines drawn", work))
                print("  " + summary("input event -> drawn", total), flush=True)
            browser.close()
    finally:
        stop_app(proc)


if __name__ == "__main__":
    main()
