"""bertviz's head_view/model_view against headscope's in plain pages (no Jupyter), on the bundled
model at 16/128/400 tokens: the time from navigation start to the view drawn in chromium
(bertviz: its SVG has its lines; ours: the host's data-drawn) and the elements each leaves.

Why not in JupyterLab (bench/notebook_views.py): bertviz's views are an HTML output (require.js's
<script src> from a CDN, then its controls) and a separate Javascript output calling
`require.config(...)`/`requirejs(['jquery', 'd3'], ...)`. In JupyterLab 4.6 that Javascript
output showed "Javascript Error: require is not defined" (a run's screenshot at 16 tokens) even
after the bench had seen window.require be a function, and at 128 tokens nothing drew at all:
bertviz does not draw reliably there, for a reason not pinned down further. Here bertviz's own
page, `head_view(..., html_action='return')`, is opened as a file: the same HTML and JS, with
its CDN files (require.js 2.3.6, d3 5.7.0, jQuery 2.1.0 for 2.0.0, see notebook_views.py)
served from --cdn. Ours is the
standalone HTML (headscope.export.write_html), the same drawing core as the widget. Any other
request is aborted and counted.

    HF_HUB_OFFLINE=1 python bench/plain_views.py --cdn DIR [--sizes 16 128 400]
bertviz above 128 tokens needs GBs in the renderer (ANCHORS: 6.9 GB for its head view at 400,
over 9 GB for its model view): only with --bertviz-400.
"""

import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.notebook_views import WORDS, bench_args, cdn_route  # noqa: E402
from testkit.browser import launch  # noqa: E402

DRAWN = {"headscope": "document.querySelector('div.hs-host[data-drawn]')",
         "bertviz": "document.querySelector('div[id^=bertviz-] svg line')"}


def pages(bert, n: int, root: Path) -> dict:
    """{(tool, view): path} of the four pages for an n-token text."""
    import torch
    from bertviz import head_view, model_view

    from headscope import export, view_input
    text = " ".join(WORDS[i % len(WORDS)] for i in range(n))
    res = bert.attend(text, max_length=n)
    assert len(res.tokens) == n, (len(res.tokens), n)
    att = tuple(torch.as_tensor(a)[None] for a in res.attentions)  # L x (1, H, T, T)
    seen = view_input.read(res, model=bert.name)
    out = {}
    for view, fn in (("head_view", head_view), ("model_view", model_view)):
        p = root / f"bertviz_{view}_{n}.html"
        p.write_text("<!doctype html><meta charset='utf-8'><body>"
                     + fn(att, res.tokens, html_action="return").data, encoding="utf-8")
        out["bertviz", view] = p
        p = root / f"headscope_{view}_{n}.html"
        export.write_html(view_input.lines(seen, view.split("_")[0]), p)
        out["headscope", view] = p
    return out


def measure(browser, path: Path, tool: str, cdn: Path, timeout_s: float):
    ctx = browser.new_context(viewport={"width": 1400, "height": 1000})
    outside = []
    ctx.route("**/*", cdn_route(cdn, "file:", outside))
    page = ctx.new_page()
    try:
        page.goto(path.as_uri(), wait_until="commit")
        t = page.wait_for_function(f"() => {DRAWN[tool]} && performance.now()", polling="raf",
                                   timeout=timeout_s * 1000).json_value()
        return t / 1000, page.evaluate("document.getElementsByTagName('*').length"), outside
    except Exception:  # noqa: BLE001 - a view not drawn in time is a result
        return None, None, outside
    finally:
        ctx.close()


def main(argv=None) -> int:
    args = bench_args(__doc__, argv)
    if args is None:
        return 2
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    from playwright.sync_api import sync_playwright

    import mha_core
    bert = mha_core.load_bert()
    with tempfile.TemporaryDirectory(prefix="hs_plain") as tmp, sync_playwright() as p:
        browser = launch(p)
        for n in args.sizes:
            got = {}
            for (tool, view), path in pages(bert, n, Path(tmp)).items():
                if tool == "bertviz" and n > 128 and not args.bertviz_400:
                    print(f"T={n:4d}  bertviz   {view:10s} skipped (--bertviz-400)")
                    continue
                load = open("/proc/loadavg").read().split()[0]
                t0 = time.time()
                s, els, outside = measure(browser, path, tool, args.cdn, args.timeout)
                got[tool, view] = s
                shown = "not drawn" if s is None else f"{s:7.2f} s  {els:>9,} elements"
                print(f"T={n:4d}  {tool:9s} {view:10s} {shown}  {len(outside)} outside requests"
                      f"  ({time.time() - t0:.0f} s, load {load})", flush=True)
            for view in ("head_view", "model_view"):
                ours, theirs = got.get(("headscope", view)), got.get(("bertviz", view))
                if ours and theirs:
                    print(f"T={n:4d}  {view}: headscope {theirs / ours:5.1f}x faster to draw")
        browser.close()
    print(f"load average at the end: {open('/proc/loadavg').read().strip()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
