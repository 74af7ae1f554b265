"""How much faster than bertviz 1.4.1 are our head view and model view? Side by side in one run,
on the bundled model, at --sizes tokens, in chromium, offline.

    .venv/bin/python bench/views_vs_bertviz.py app [--runs 3] [--sizes 16,128,400]
    .venv/bin/python bench/views_vs_bertviz.py page [--sizes 16,128,400]
    .venv/bin/python bench/views_vs_bertviz.py notebook [--sizes 16,128,400]
    (each: [--cdn DIR] [--fetch] [--timeout 120] [--bertviz-400] [--no-bertviz])

app       Ours on the app's Head view page: Enter (a new text of T tokens in the sidebar) ->
          the head view drawn, and -> the model view drawn, timed until the component's
          data-drawn shows the new tokens and two animation frames have passed (laid out and
          painted); plus navigation (a fresh link) -> head view drawn, Streamlit's own front
          end starting included. bertviz: its own page (head_view/model_view with
          html_action="return") opened from file://, navigation -> every SVG line of its view
          in the page and two frames later. Median and p95 of --runs, chromium's CPU, the
          component's own decode + draw.
page      Both as plain pages from file://: our standalone HTML (headscope.export.write_html,
          the same drawing core as the notebook widget) against bertviz's own page; navigation
          start -> the view drawn (its first line: bertviz's SVG has one; ours: data-drawn),
          and the page's DOM elements.
notebook  Both in one real JupyterLab (testkit.jupyter): Shift+Enter on the view's cell -> the
          view drawn, and the page's DOM elements. The attention tuple is computed once per
          size in a first cell, so both views get the same transformers-style input.

bertviz comes from this environment (`pip install 'headscope[bench]'`, or `--fetch`: bertviz
1.4.1 without its dependencies, and IPython, in a venv of its own in ~/.cache/headscope/). It loads
require.js, d3 and jQuery from a CDN; the browser is answered from local copies in --cdn
(require.js, d3.min.js, jquery.min.js; jQuery 2.1.0 for bertviz's 2.0.0, which npm lacks):
`--fetch` gets them with `npm pack requirejs@2.3.6 d3@5.7.0 jquery@2.1.0`. Any other request
leaving 127.0.0.1 is aborted and counted. Without bertviz or its files, ours is measured alone.
bertviz above 128 tokens needs 7-9 GB in the renderer and minutes: only with --bertviz-400.
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench import harness as h  # noqa: E402

WHERE = ("app", "page", "notebook")
CDN = {"require.js/2.3.6/require.min.js": "require.js", "d3/5.7.0/d3.min.js": "d3.min.js",
       "jquery/2.0.0/jquery.min.js": "jquery.min.js"}  # bertviz's URL tail -> the file in --cdn
NPM = {"requirejs@2.3.6": ("package/require.js", "require.js"),
       "d3@5.7.0": ("package/dist/d3.min.js", "d3.min.js"),
       "jquery@2.1.0": ("package/dist/jquery.min.js", "jquery.min.js")}
CACHE = Path.home() / ".cache" / "headscope"
VENV = CACHE / "bertviz-venv"  # --fetch: bertviz without its dependencies
WORDS = "the quick brown fox jumps over a lazy dog while seven students watch it".split()
# after the DOM is complete: the start of the frame after next, so the frame holding the new
# lines or pixels has been laid out and painted (bertviz's 1M SVG lines take seconds for that)
PAINTED = "() => new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)))"
LINES = "() => document.getElementsByTagName('line').length"


# --- bertviz, offline ------------------------------------------------------------------------

def fetch(cdn: Path):
    """bertviz 1.4.1 (no dependencies) and IPython into VENV; its three CDN files into cdn."""
    import glob
    import shutil
    import subprocess
    import tarfile
    import tempfile

    py = VENV / "bin" / "python"
    if not py.exists():
        subprocess.run([sys.executable, "-m", "venv", str(VENV)], check=True)
    for args in (["--no-deps", "bertviz==1.4.1"], ["ipython"]):
        subprocess.run([str(py), "-m", "pip", "install", "-q", *args], check=True)
    cdn.mkdir(parents=True, exist_ok=True)
    if not shutil.which("npm"):
        raise SystemExit("--fetch: npm is not installed (it fetches bertviz's CDN files)")
    with tempfile.TemporaryDirectory() as tmp:
        subprocess.run(["npm", "pack", "--silent", *NPM], cwd=tmp, check=True)
        for spec, (member, name) in NPM.items():
            tgz = next(Path(tmp).glob(spec.split("@")[0] + "-*.tgz"))
            with tarfile.open(tgz) as tar:
                (cdn / name).write_bytes(tar.extractfile(member).read())
    return Path(glob.glob(str(VENV / "lib" / "python*" / "site-packages"))[0])


def bertviz_site(args) -> str | None:
    """Where bertviz is importable from ("" for this environment), or None (with the reason
    printed): then ours is measured alone."""
    import glob

    if args.no_bertviz:
        return None
    missing = [f for f in CDN.values() if not (args.cdn / f).is_file()]
    if missing:
        print(f"bertviz skipped: {', '.join(missing)} missing in {args.cdn} (--fetch gets them)")
        return None
    try:
        import bertviz  # noqa: F401

        return ""
    except ImportError:
        sites = glob.glob(str(VENV / "lib" / "python*" / "site-packages"))
        if sites and list(Path(sites[0]).glob("bertviz")):
            sys.path.append(sites[0])  # after this environment's packages: torch comes from it
            return sites[0]
    print("bertviz skipped: not installed (pip install 'headscope[bench]', or --fetch)")
    return None


def cdn_route(cdn: Path, local: str, outside: list):
    """A playwright route: bertviz's CDN files (its own cdnjs URLs, or the notebook's
    /bench-cdn/ path) answered from `cdn`; URLs starting with `local` (the notebook server, or
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


def bertviz_page(res, view: str, path: Path) -> Path:
    """bertviz's own page for an attend() result: its head_view/model_view HTML."""
    import torch
    from bertviz import head_view, model_view

    att = tuple(torch.as_tensor(a)[None] for a in res.attentions)  # L x (1, H, T, T)
    fn = head_view if view == "head" else model_view
    path.write_text("<!doctype html><meta charset='utf-8'><body>"
                    + fn(att, res.tokens, html_action="return").data, encoding="utf-8")
    return path


def open_timed(browser, path: Path, drawn: str, cdn: Path, timeout_s: float, watch=None,
               painted: bool = False):
    """Navigation to a file:// page -> `drawn` (a JS expression) true, or with `painted` until
    two frames later (laid out and painted): (seconds by the page's clock, DOM elements,
    chromium CPU seconds, requests aborted), the first three None when it did not draw in
    time."""
    ctx = browser.new_context(viewport={"width": 1400, "height": 1000})
    outside = []
    ctx.route("**/*", cdn_route(cdn, "file:", outside))
    page = ctx.new_page()
    try:
        if watch:
            watch.start()
        page.goto(path.as_uri(), wait_until="commit", timeout=timeout_s * 1000)
        t = page.wait_for_function(f"() => ({drawn}) && performance.now()", polling="raf",
                                   timeout=timeout_s * 1000).json_value()
        page.evaluate(PAINTED)
        if painted:
            t = page.evaluate("performance.now()")
        cpu = None
        if watch:
            watch.poll()
            cpu = watch.total()
        return t / 1000, page.evaluate("document.getElementsByTagName('*').length"), cpu, outside
    except Exception as e:  # noqa: BLE001 - a view not drawn in time is a result
        print(f"    not drawn in {timeout_s:.0f} s: {type(e).__name__}", flush=True)
        return None, None, None, outside
    finally:
        ctx.close()


def attend(bert, n: int):
    """The bundled model's result for an n-token text (the same for both tools)."""
    res = bert.attend(" ".join(WORDS[i % len(WORDS)] for i in range(n)), max_length=n)
    assert len(res.tokens) == n, (len(res.tokens), n)
    return res


def fmt(x, unit="s") -> str:
    return "–" if x is None else f"{x:.3f} {unit}" if x < 10 else f"{x:.1f} {unit}"


# --- app: ours on the Head view page ---------------------------------------------------------

def in_app(args, site):
    import time
    from urllib.parse import quote

    from testkit.browser import HOST, sentence_box

    bert, H = h.bundled()
    L = bert.config.num_hidden_layers
    lines = HOST.format(key="hv_lines")

    def wait_drawn(page, tokens, view):
        page.wait_for_function(
            "([sel, want, view]) => { const h = document.querySelector(sel);"
            " return !!h && h.dataset.drawn === want && h.dataset.view === view; }",
            arg=[lines, " ".join(tokens), view], polling="raf", timeout=60_000)
        page.evaluate(PAINTED)

    def put_text(page, text):
        """The text in the sidebar's box, not yet applied (filled, then its last character
        typed, so the text area has taken the value before Enter)."""
        box = sentence_box(page)
        box.fill(text[:-1])
        box.press("End")
        box.press_sequentially(text[-1])
        page.wait_for_function("([el, t]) => el.value === t", arg=[box.element_handle(), text])

    rows, tmp = [], h.run_dir("views")
    with h.app("views") as (url, _, _), h.chromium() as browser:
        watch = h.CpuWatch()
        page = browser.new_page(viewport={"width": 1280, "height": 800})
        page.goto(url + "/head_view")
        wait_drawn(page, bert.encode(h.FIRST).tokens, "head")
        for T in args.sizes:
            r = {k: [] for k in ("head", "model", "nav", "head_cpu", "model_cpu", "head_draw",
                                 "model_draw", "bv_head", "bv_model", "bv_head_cpu",
                                 "bv_model_cpu")}
            for i in range(args.runs):
                for view in ("head", "model"):
                    if page.locator(lines).get_attribute("data-view") != view:
                        page.locator(".st-key-hv_lines .hs-tab").nth(
                            0 if view == "head" else 1).click()
                        page.wait_for_function(
                            "([s, v]) => document.querySelector(s).dataset.view === v",
                            arg=[lines, view])
                    text = h.text_of(bert, T, 2 * i + (view == "model") + 10 * T)
                    tokens = bert.encode(text).tokens
                    put_text(page, text)
                    watch.start()
                    t = time.perf_counter()
                    sentence_box(page).press("Control+Enter")
                    wait_drawn(page, tokens, view)
                    r[view].append(time.perf_counter() - t)
                    r[view + "_draw"].append(float(page.locator(lines).get_attribute(
                        "data-draw-ms")) / 1000)
                    watch.poll()
                    r[view + "_cpu"].append(watch.total())
                text = h.text_of(bert, T, 1000 + i + 10 * T)
                fresh = browser.new_page(viewport={"width": 1280, "height": 800})
                t = time.perf_counter()
                fresh.goto(url + "/head_view?text=" + quote(text))
                wait_drawn(fresh, bert.encode(text).tokens, "head")
                r["nav"].append(time.perf_counter() - t)
                fresh.close()
                print(f"T={T} run {i + 1}: ours head {r['head'][-1]:.3f} s, model "
                      f"{r['model'][-1]:.3f} s, navigation {r['nav'][-1]:.3f} s", flush=True)
            page.locator(".st-key-hv_lines .hs-tab").nth(0).click()
            for view in ("head", "model") if site is not None else ():
                if view == "model" and T >= 400 and not args.bertviz_400:
                    print(f"T={T}: bertviz model view not run (--bertviz-400)")
                    continue
                n = (H if view == "head" else L * H) * T * T  # its SVG lines
                for i in range(args.runs if T < 400 else 1):
                    res = bert.attend(h.text_of(bert, T, 500 + i))
                    path = bertviz_page(res, view, tmp / f"bertviz_{view}_{T}_{i}.html")
                    s, _, cpu, _ = open_timed(browser, path, f"({LINES})() >= {n}", args.cdn,
                                              args.timeout, watch, painted=True)
                    if s is None:
                        break
                    r["bv_" + view].append(s)
                    r[f"bv_{view}_cpu"].append(cpu)
                    print(f"T={T} run {i + 1}: bertviz {view} view {s:.2f} s (CPU {cpu:.1f} s)",
                          flush=True)
            rows.append((T, r))
    print("\nmedian of the runs (ours: Enter -> drawn; bertviz: navigation -> every line drawn)")
    out = []
    for T, r in rows:
        for view in ("head", "model"):
            ours, bv = h.median(r[view]), h.median(r["bv_" + view])
            p95 = h.percentile(r[view], 0.95) if r[view] else None
            out.append([T, f"{view} view", fmt(ours), fmt(p95), fmt(h.median(r[view + "_draw"])),
                        fmt(h.median(r[view + "_cpu"])), fmt(bv),
                        fmt(h.median(r[f"bv_{view}_cpu"])),
                        f"{bv / ours:.0f}×" if ours and bv else "–"])
        out.append([T, "head view, a fresh link", fmt(h.median(r["nav"])), "", "", "", "", "",
                    ""])
    print(h.table(["T", "view", "ours", "ours p95", "of which drawing", "ours CPU", "bertviz",
                   "bertviz CPU", "bertviz / ours"], out))


# --- page: both as plain pages ---------------------------------------------------------------

def in_page(args, site):
    import time

    from headscope import export, views

    bert, _ = h.bundled()
    drawn = {"headscope": "document.querySelector('div.hs-host[data-drawn]')",
             "bertviz": "document.querySelector('div[id^=bertviz-] svg line')"}
    tmp = h.run_dir("views")
    with h.chromium() as browser:
        for n in args.sizes:
            res = attend(bert, n)
            seen = views.read(res, model=bert.name)
            got = {}
            for view in ("head", "model"):
                pages = {"headscope": tmp / f"headscope_{view}_{n}.html"}
                export.write_html(views.lines(seen, view), pages["headscope"])
                if site is not None and (n <= 128 or args.bertviz_400):
                    pages["bertviz"] = bertviz_page(res, view, tmp / f"bertviz_{view}_{n}.html")
                elif site is not None:
                    print(f"T={n:4d}  bertviz   {view} view skipped (--bertviz-400)")
                for tool, path in pages.items():
                    t0 = time.time()
                    s, els, _, outside = open_timed(browser, path, drawn[tool], args.cdn,
                                                    args.timeout)
                    got[tool, view] = s
                    shown = "not drawn" if s is None else f"{s:7.2f} s  {els:>9,} elements"
                    print(f"T={n:4d}  {tool:9s} {view} view  {shown}  {len(outside)} outside "
                          f"requests  ({time.time() - t0:.0f} s, {h.load()})", flush=True)
            ratios(n, got)


def ratios(n, got):
    for view in ("head", "model"):
        ours, theirs = got.get(("headscope", view)), got.get(("bertviz", view))
        if ours and theirs:
            print(f"T={n:4d}  {view} view: headscope {theirs / ours:5.1f}x faster to draw")


# --- notebook: both in one JupyterLab --------------------------------------------------------

SETUP = """import sys; sys.path.extend({paths!r})
import numpy as np, torch
import headscope.widgets  # imported here: the views' cells time the views alone
{bertviz}d = np.load({path!r})
att = tuple(torch.from_numpy(a)[None] for a in d["attentions"])  # L x (1, H, T, T)
tokens = [str(t) for t in d["tokens"]]
from IPython.display import HTML, display  # bertviz's require.js, loaded once before its views
display(HTML('<script src="/bench-cdn/require.js/2.3.6/require.min.js"></script>'))"""
CELLS = {  # name -> (cell, the page's test for "the k-th such view is drawn")
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


def lab_size(browser, root: Path, n: int, names, args, site):
    import shutil
    import tempfile

    from testkit.jupyter import APP_READY, notebook, start_lab, stop_lab

    nb = f"t{n}.ipynb"
    shutil.rmtree(root / ".jupyter" / "workspaces", ignore_errors=True)  # open this one alone
    setup = SETUP.format(paths=[site] if site else [], path=str(root / f"t{n}.npz"),
                         bertviz="import bertviz\n" if site is not None else "")
    notebook(root / nb, setup, *(CELLS[v][0] for v in names))
    proc, url, token = start_lab(root, root / f"lab{n}.log")
    ctx = browser.new_context(viewport={"width": 1400, "height": 1000})
    outside = []
    ctx.route("**/*", cdn_route(args.cdn, url + "/", outside))
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
        if site is not None:  # bertviz's code fails ("require is not defined") without it
            page.wait_for_function("() => typeof window.require === 'function'", timeout=60_000)
        seen = {}
        for i, name in enumerate(names):
            kind = CELLS[name][1]
            seen[kind] = seen.get(kind, 0) + 1
            cells.nth(i + 1).locator(".jp-InputArea-editor").click()
            t0 = page.evaluate("performance.now()")
            page.keyboard.press("Shift+Enter")
            try:
                t1 = page.wait_for_function(f"(k) => ({kind}) && performance.now()",
                                            arg=seen[kind], polling="raf",
                                            timeout=args.timeout * 1000).json_value()
                out[name] = ((t1 - t0) / 1000,
                             page.evaluate("document.getElementsByTagName('*').length"))
            except Exception:  # noqa: BLE001 - a view not drawn in time is a result
                out[name] = (None, None)
                shot = Path(tempfile.gettempdir()) / f"views_vs_bertviz_T{n}.png"
                page.screenshot(path=str(shot))
                print(f"T={n}: {name} not drawn in {args.timeout:.0f} s; the page: {shot}")
                break  # the page is still busy with it: later views would be measured wrong
    finally:
        ctx.close()
        stop_lab(proc)
    return out, outside


def in_notebook(args, site):
    import time

    import numpy as np

    bert, _ = h.bundled()
    root = h.run_dir("views-lab")
    with h.chromium() as browser:
        for n in args.sizes:
            res = attend(bert, n)
            np.savez(root / f"t{n}.npz", attentions=res.attentions.numpy(),
                     tokens=np.array(res.tokens))
            names = ["headscope head_view", "headscope model_view"]
            if site is not None and (n <= 128 or args.bertviz_400):
                names += ["bertviz head_view", "bertviz model_view"]
            t = time.time()
            got, outside = lab_size(browser, root, n, names, args, site)
            for name in names:
                s, els = got.get(name, (None, None))
                shown = "not drawn" if s is None else f"{s:7.2f} s  {els:>9,} elements"
                print(f"T={n:4d}  {name:22s} {shown}   ({h.load()})", flush=True)
            print(f"T={n:4d}  requests leaving 127.0.0.1: {len(outside)}  "
                  f"({time.time() - t:.0f} s)")
            ratios(n, {(name.split()[0], name.split()[1].removesuffix("_view")): s
                       for name, (s, _) in got.items()})


def main():
    ap = h.parser(__doc__)
    ap.add_argument("where", choices=WHERE)
    ap.add_argument("--sizes", nargs="+", action=h.Ints, default=[16, 128, 400],
                    help="text lengths in tokens (default 16,128,400)")
    ap.add_argument("--runs", type=int, default=3, help="app: runs per size")
    ap.add_argument("--cdn", type=Path, default=CACHE / "bertviz-cdn",
                    help="bertviz's CDN files (require.js, d3.min.js, jquery.min.js)")
    ap.add_argument("--fetch", action="store_true",
                    help="install bertviz 1.4.1 in ~/.cache/headscope/, its CDN files in --cdn")
    ap.add_argument("--timeout", type=float, default=120, help="seconds a view may take")
    ap.add_argument("--bertviz-400", action="store_true",
                    help="also bertviz above 128 tokens (its model view at 400 in app)")
    ap.add_argument("--no-bertviz", action="store_true", help="ours alone")
    args = ap.parse_args()
    import os

    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    print(h.machine())
    if args.fetch:
        print(f"bertviz in {fetch(args.cdn)}; its CDN files in {args.cdn}")
    site = bertviz_site(args)
    {"app": in_app, "page": in_page, "notebook": in_notebook}[args.where](args, site)
    print(h.load())


if __name__ == "__main__":
    main()
