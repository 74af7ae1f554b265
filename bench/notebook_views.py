"""bertviz's head_view/model_view against headscope's, side by side in one real JupyterLab, on the
bundled model at 16/128/400 tokens: the time from Shift+Enter on the view's cell to the view
drawn in chromium (bertviz: its SVG has its lines; ours: the host's data-drawn), and how many
elements each leaves in the page. The attention tuple is computed once per size in a first cell,
so both views get the same transformers-style input (L x (1, H, T, T), tokens).

bertviz loads require.js, d3 and jQuery from a CDN; here the browser is served local copies
(ANCHORS: jQuery 2.0.0 is not on npm, 2.1.0 works). Get them once with npm:
    mkdir -p ~/.cache/headscope/bertviz-cdn && cd ~/.cache/headscope/bertviz-cdn
    npm pack requirejs@2.3.6 d3@5.7.0 jquery@2.1.0 && for f in *.tgz; do tar xzf $f; done
    (each tarball unpacks to package/: run the three one by one, or pass --cdn with the files
    require.js, d3.min.js, jquery.min.js side by side)
Any other request leaving 127.0.0.1 is aborted and counted.

    HF_HUB_OFFLINE=1 python bench/notebook_views.py --cdn DIR [--sizes 16 128 400]
bertviz at 400 tokens needs 7-9 GB in the renderer (ANCHORS): it runs only with --bertviz-400.
"""

import argparse
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from testkit.browser import launch  # noqa: E402
from testkit.jupyter import APP_READY, notebook, start_lab, stop_lab  # noqa: E402

CDN = {"require.js/2.3.6/require.min.js": "require.js", "d3/5.7.0/d3.min.js": "d3.min.js",
       "jquery/2.0.0/jquery.min.js": "jquery.min.js"}
WORDS = "the quick brown fox jumps over a lazy dog while seven students watch it".split()

SETUP = """import numpy as np, torch
import bertviz, headscope.widgets  # imported here: the views' cells time the views alone
d = np.load({path!r})
att = tuple(torch.from_numpy(a)[None] for a in d["attentions"])  # L x (1, H, T, T)
tokens = [str(t) for t in d["tokens"]]
from IPython.display import HTML, display  # bertviz's require.js, loaded once before its views
display(HTML('<script src="/bench-cdn/require.js/2.3.6/require.min.js"></script>'))"""
VIEWS = {  # name -> (cell, the page's test for "the k-th such view is drawn")
    "headscope head_view": ("from headscope.widgets import head_view\nhead_view(att, tokens)",
                            "document.querySelectorAll('div.hs-host[data-drawn]').length >= k"),
    "headscope model_view": ("from headscope.widgets import model_view\nmodel_view(att, tokens)",
                             "document.querySelectorAll('div.hs-host[data-drawn]').length >= k"),
    "bertviz head_view": ("from bertviz import head_view\nhead_view(att, tokens)",
                          "[...document.querySelectorAll('div[id^=bertviz-]')]"
                          ".filter((e) => e.querySelector('svg line')).length >= k"),
    "bertviz model_view": ("from bertviz import model_view\nmodel_view(att, tokens)",
                           "[...document.querySelectorAll('div[id^=bertviz-]')]"
                           ".filter((e) => e.querySelector('svg line')).length >= k"),
}


def tensors(bert, n: int, path: Path):
    text = " ".join(WORDS[i % len(WORDS)] for i in range(n))
    res = bert.attend(text, max_length=n)
    assert len(res.tokens) == n, (len(res.tokens), n)
    np.savez(path, attentions=res.attentions.numpy(), tokens=np.array(res.tokens))


def cdn_route(cdn: Path, local: str, outside: list):
    """A playwright route: bertviz's CDN files (its own cdnjs URLs, or the setup cell's
    /bench-cdn/ path) served from `cdn`; URLs starting with `local` (the notebook server, or
    file: for plain pages), blob: and data: go through; anything else is aborted and counted."""
    def route(r):
        url = r.request.url
        for tail, name in CDN.items():
            if url.split("?")[0].endswith(tail):
                return r.fulfill(path=str(cdn / name), content_type="text/javascript")
        if url.startswith((local, "blob:", "data:")):
            return r.continue_()
        outside.append(url)
        return r.abort()
    return route


def run_size(browser, root: Path, n: int, names, cdn: Path, timeout_s: float):
    nb = f"t{n}.ipynb"
    shutil.rmtree(root / ".jupyter" / "workspaces", ignore_errors=True)  # open this one alone
    notebook(root / nb, SETUP.format(path=str(root / f"t{n}.npz")), *(VIEWS[v][0] for v in names))
    proc, url, token = start_lab(root, root / f"lab{n}.log")
    ctx = browser.new_context(viewport={"width": 1400, "height": 1000})
    outside = []
    ctx.route("**/*", cdn_route(cdn, url + "/", outside))
    page = ctx.new_page()
    out = {}
    try:
        page.goto(f"{url}/lab/tree/{nb}?token={token}")
        page.wait_for_function(APP_READY, timeout=120_000)
        cells = page.locator(".jp-Notebook .jp-Cell")
        cells.first.locator(".jp-InputArea-editor").click()
        page.keyboard.press("Shift+Enter")  # the setup cell
        page.wait_for_function("() => /\\[1\\]/.test(document.querySelector("
                               "'.jp-Notebook .jp-Cell .jp-InputPrompt').textContent)",
                               timeout=120_000)
        # bertviz writes its script tag and runs its code in one output: without require.js
        # already there it fails ("require is not defined") whenever the script loads late
        page.wait_for_function("() => typeof window.require === 'function'", timeout=60_000)
        seen = {}
        for i, name in enumerate(names):
            kind = VIEWS[name][1]
            seen[kind] = seen.get(kind, 0) + 1
            cells.nth(i + 1).locator(".jp-InputArea-editor").click()
            t0 = page.evaluate("performance.now()")
            page.keyboard.press("Shift+Enter")
            try:
                t1 = page.wait_for_function(f"(k) => ({kind}) && performance.now()",
                                            arg=seen[kind], polling="raf",
                                            timeout=timeout_s * 1000).json_value()
                els = page.evaluate("document.getElementsByTagName('*').length")
                out[name] = ((t1 - t0) / 1000, els)
            except Exception:  # noqa: BLE001 - a view not drawn in time is a result
                out[name] = (None, None)
                shot = Path(tempfile.gettempdir()) / f"notebook_views_T{n}.png"
                page.screenshot(path=str(shot))
                print(f"T={n}: {name} not drawn in {timeout_s:.0f} s; the page: {shot}")
                break  # the page is still busy with it: later views would be measured wrong
    finally:
        ctx.close()
        stop_lab(proc)
    return out, outside


def bench_args(doc: str, argv=None):
    """The options both bertviz benchmarks take (this one and plain_views.py); None when
    bertviz's CDN files are missing from --cdn."""
    ap = argparse.ArgumentParser(description=doc.split("\n\n")[0])
    ap.add_argument("--sizes", type=int, nargs="+", default=[16, 128, 400])
    ap.add_argument("--cdn", type=Path, default=Path.home() / ".cache/headscope/bertviz-cdn")
    ap.add_argument("--timeout", type=float, default=120, help="seconds a view may take")
    ap.add_argument("--bertviz-400", action="store_true", help="also bertviz above 128 tokens")
    args = ap.parse_args(argv)
    missing = [f for f in CDN.values() if not (args.cdn / f).is_file()]
    if missing:
        print(f"missing in {args.cdn}: {', '.join(missing)} (see notebook_views.py's docstring)")
        return None
    return args


def main(argv=None) -> int:
    args = bench_args(__doc__, argv)
    if args is None:
        return 2
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    from playwright.sync_api import sync_playwright

    import mha_core

    bert = mha_core.load_bert()
    rows = []
    with tempfile.TemporaryDirectory(prefix="hs_nbbench") as tmp, sync_playwright() as p:
        root = Path(tmp)
        browser = launch(p)
        for n in args.sizes:
            tensors(bert, n, root / f"t{n}.npz")
            names = ["headscope head_view", "headscope model_view"]
            if n <= 128 or args.bertviz_400:
                names += ["bertviz head_view", "bertviz model_view"]
            load0 = open("/proc/loadavg").read().split()[0]
            t = time.time()
            got, outside = run_size(browser, root, n, names, args.cdn, args.timeout)
            for name in names:
                s, els = got.get(name, (None, None))
                rows.append((n, name, s, els, load0))
                shown = "not drawn" if s is None else f"{s:7.2f} s  {els:>9,} elements"
                print(f"T={n:4d}  {name:22s} {shown}   (load {load0})", flush=True)
            print(f"T={n:4d}  requests leaving 127.0.0.1: {len(outside)}  "
                  f"({time.time() - t:.0f} s)")
        browser.close()
    for n in args.sizes:
        by = {name: s for m, name, s, _, _ in rows if m == n}
        for view in ("head_view", "model_view"):
            ours, theirs = by.get(f"headscope {view}"), by.get(f"bertviz {view}")
            if ours and theirs:
                print(f"T={n:4d}  {view}: headscope {theirs / ours:5.1f}x faster to draw")
    print(f"load average at the end: {open('/proc/loadavg').read().strip()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
