"""Head view and model view: ours (the attention component on the Head view page) against
bertviz 1.4.1, side by side in one run, at T = 16, 128 and 400 tokens (bundled model).

Ours: Enter (a new text of T tokens in the sidebar) -> the head view drawn, and -> the model view
drawn (the page left in model view), timed in chromium until the component's data-drawn shows
the new tokens; plus navigation (a fresh link) -> head view drawn, which includes Streamlit's
own front end starting. bertviz: navigation -> every SVG line of its view in the page, from HTML
that its own head_view()/model_view() returned (html_action="return"). Both then wait for the
frame after next (two animation frames), so what was added has been laid out and painted.

bertviz is installed into a throwaway venv under bench/out/ (`pip install --no-deps
bertviz==1.4.1` and IPython, which it imports) and run in this process with that venv's
site-packages appended to sys.path (torch comes from .venv). Its three CDN files (require.js
2.3.6, d3 5.7.0, jQuery 2.x: 2.0.0 is not on the npm registry, 2.1.0 is) are fetched with
`npm pack` into bench/out/ and served from 127.0.0.1. When any of that fails, bertviz is
skipped with a message and ours is still measured.

    .venv/bin/python bench/head_view_latency.py [--runs 3] [--sizes 16,128,400]
        [--bertviz-timeout 120] [--bertviz-model-400]
"""

import argparse
import functools
import glob
import http.server
import re
import shutil
import statistics
import subprocess
import sys
import tarfile
import tempfile
import threading
import time
from pathlib import Path
from urllib.parse import quote

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.measure import CpuWatch, percentile  # noqa: E402
from testkit.browser import CHROMIUM, CHROMIUM_ARGS, HOST, sentence_box  # noqa: E402
from testkit.server import start_app, stop_app  # noqa: E402

OUT = ROOT / "bench" / "out"
LIBS = {"requirejs@2.3.6": ("package/require.js", "require.min.js"),
        "d3@5.7.0": ("package/dist/d3.min.js", "d3.min.js"),
        "jquery@2.1.0": ("package/dist/jquery.min.js", "jquery.min.js")}
WORDS = ("the astronomer saw a man with a telescope while students in the old library read "
         "letters that their teachers had written about rivers mountains and distant cities "
         "because every sentence needs words").split()
LINE_COUNT = "() => document.getElementsByTagName('line').length"
# after the DOM is complete: the start of the frame after next, so the frame holding the new
# lines or pixels has been laid out and painted (bertviz's 1M SVG lines take seconds for that)
PAINTED = "() => new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)))"


def text_of(bert, T: int, variant: int) -> str:
    """A text of T tokens ([CLS] and [SEP] included; one more if its last word has two
    pieces); `variant` makes each run's text new (no cache hit on the server)."""
    words, i = [f"run{variant}"], variant
    while len(bert.encode(" ".join(words)).tokens) < T:
        words.append(WORDS[i % len(WORDS)])
        i += 1
    return " ".join(words)


# --- bertviz, offline ----------------------------------------------------------------------

def setup_bertviz() -> Path:
    """The throwaway venv's site-packages with bertviz 1.4.1, and the three libraries in OUT/lib.
    Raises with the reason when something cannot be fetched."""
    venv = OUT / "bertviz-venv"
    py = venv / "bin" / "python"
    if not py.exists():
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    for args in (["--no-deps", "bertviz==1.4.1"], ["ipython"]):
        subprocess.run([str(py), "-m", "pip", "install", "-q", *args], check=True,
                       capture_output=True)
    site = Path(glob.glob(str(venv / "lib" / "python*" / "site-packages"))[0])
    lib = OUT / "lib"
    lib.mkdir(parents=True, exist_ok=True)
    if not all((lib / name).exists() for _, name in LIBS.values()):
        if not shutil.which("npm"):
            raise RuntimeError("npm is not installed")
        with tempfile.TemporaryDirectory() as tmp:
            subprocess.run(["npm", "pack", "--silent", *LIBS], cwd=tmp, check=True,
                           capture_output=True)
            for spec, (member, name) in LIBS.items():
                tgz = next(Path(tmp).glob(spec.split("@")[0] + "-*.tgz"))
                with tarfile.open(tgz) as tar:
                    (lib / name).write_bytes(tar.extractfile(member).read())
    return site


def bertviz_html(site: Path, bert, text: str, view: str) -> str:
    """bertviz's own HTML for the text, its CDN addresses pointing at /lib on 127.0.0.1."""
    if str(site) not in sys.path:
        sys.path.append(str(site))  # after .venv's packages: torch and friends come from there
    import bertviz

    res = bert.attend(text)
    attention = [a[None] for a in res.attentions]  # L tensors (1, H, T, T), as HF returns them
    fn = bertviz.head_view if view == "head" else bertviz.model_view
    html = fn(attention, res.tokens, html_action="return").data
    # the three CDN files (require.js, d3, jQuery) by file name, whatever host they name
    html = re.sub(r"https?://[^\"']*/(require\.min\.js|d3\.min|jquery\.min)\b", r"/lib/\1",
                  html)
    if html.count("/lib/") < 3:
        raise RuntimeError("bertviz's HTML did not name its three CDN files as expected")
    return f"<!doctype html><html><head><meta charset='utf-8'></head><body>{html}</body></html>"


def serve(directory: Path):
    handler = functools.partial(QuietHandler, directory=str(directory))
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    return httpd, f"http://127.0.0.1:{httpd.server_address[1]}"


class QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


def time_bertviz(browser, url: str, lines: int, timeout_s: float, watch: CpuWatch):
    """Navigation -> `lines` SVG lines in the page. (seconds or None, chromium CPU seconds)."""
    page = browser.new_page(viewport={"width": 1280, "height": 800})
    # offline, as a user without the CDN: anything not on 127.0.0.1 is refused
    page.route(re.compile(r"^(?!http://127\.0\.0\.1[:/]).*"), lambda route: route.abort())
    try:
        watch.start()
        t = time.perf_counter()
        page.goto(url, wait_until="commit", timeout=timeout_s * 1000)
        page.wait_for_function(f"() => ({LINE_COUNT})() >= {lines}", polling="raf",
                               timeout=timeout_s * 1000)
        page.evaluate(PAINTED)
        dt = time.perf_counter() - t
        watch.poll()
        return dt, watch.total()
    except Exception as e:
        print(f"    bertviz did not finish: {type(e).__name__}", flush=True)
        return None, None
    finally:
        page.close()


# --- ours ----------------------------------------------------------------------------------

def put_text(page, text: str):
    """Put the text in the sidebar's box, not yet applied (a long text is filled, then its last
    character typed, so the text area has taken the value before Enter)."""
    box = sentence_box(page)
    box.fill(text[:-1])
    box.press("End")
    box.press_sequentially(text[-1])
    page.wait_for_function("([el, t]) => el.value === t", arg=[box.element_handle(), text])


def wait_drawn(page, tokens, view: str, timeout_s=60):
    page.wait_for_function(
        "([sel, want, view]) => { const h = document.querySelector(sel);"
        " return !!h && h.dataset.drawn === want && h.dataset.view === view; }",
        arg=[HOST.format(key="hv_lines"), " ".join(tokens), view], polling="raf",
        timeout=timeout_s * 1000)
    page.evaluate(PAINTED)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--sizes", default="16,128,400")
    ap.add_argument("--bertviz-timeout", type=float, default=120)
    ap.add_argument("--no-bertviz", action="store_true", help="measure ours only")
    ap.add_argument("--bertviz-model-400", action="store_true",
                    help="also try bertviz's model view at 400 tokens (>9 GB, >80 s here)")
    args = ap.parse_args()
    sizes = [int(x) for x in args.sizes.split(",")]

    from playwright.sync_api import sync_playwright

    import mha_core

    bert = mha_core.load_bert()
    L, H = bert.config.num_hidden_layers, bert.config.num_attention_heads
    OUT.mkdir(parents=True, exist_ok=True)
    try:
        if args.no_bertviz:
            raise RuntimeError("--no-bertviz")
        site = setup_bertviz()
        httpd, bv_url = serve(OUT)
        print(f"bertviz 1.4.1 from {site}, libraries served from {bv_url}/lib")
    except Exception as e:
        site = None
        print(f"bertviz skipped: {type(e).__name__}: {e}")
    proc, url = start_app(Path(tempfile.mkdtemp()) / "streamlit.log")
    rows = []
    try:
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
            watch = CpuWatch()
            page = browser.new_page(viewport={"width": 1280, "height": 800})
            page.goto(url + "/head_view")
            wait_drawn(page, bert.encode("I saw the man with a telescope.").tokens, "head")
            for T in sizes:
                r = dict(T=T, head=[], model=[], nav=[], head_cpu=[], model_cpu=[],
                         head_draw=[], model_draw=[],
                         bv_head=[], bv_model=[], bv_head_cpu=[], bv_model_cpu=[])
                for i in range(args.runs):
                    for view in ("head", "model"):
                        if page.locator(HOST.format(key="hv_lines")).get_attribute(
                                "data-view") != view:
                            page.locator(".st-key-hv_lines .hs-tab").nth(
                                0 if view == "head" else 1).click()
                            page.wait_for_function(
                                "([s, v]) => document.querySelector(s).dataset.view === v",
                                arg=[HOST.format(key="hv_lines"), view])
                        text = text_of(bert, T, 2 * i + (view == "model") + 10 * T)
                        tokens = bert.encode(text).tokens
                        put_text(page, text)
                        watch.start()
                        t = time.perf_counter()
                        sentence_box(page).press("Control+Enter")
                        wait_drawn(page, tokens, view)
                        r[view].append(time.perf_counter() - t)
                        r[view + "_draw"].append(float(page.locator(HOST.format(
                            key="hv_lines")).get_attribute("data-draw-ms")) / 1000)
                        watch.poll()
                        r[view + "_cpu"].append(watch.total())
                    text = text_of(bert, T, 1000 + i + 10 * T)
                    fresh = browser.new_page(viewport={"width": 1280, "height": 800})
                    t = time.perf_counter()
                    fresh.goto(url + "/head_view?text=" + quote(text))
                    wait_drawn(fresh, bert.encode(text).tokens, "head")
                    r["nav"].append(time.perf_counter() - t)
                    fresh.close()
                    print(f"T={T} run {i + 1}: ours head {r['head'][-1]:.3f} s, model "
                          f"{r['model'][-1]:.3f} s, navigation {r['nav'][-1]:.3f} s", flush=True)
                page.locator(".st-key-hv_lines .hs-tab").nth(0).click()
                if site is not None:
                    for view in ("head", "model"):
                        if view == "model" and T >= 400 and not args.bertviz_model_400:
                            print(f"T={T}: bertviz model view not run (past 9 GB and 80 s "
                                  "here, never drawn; --bertviz-model-400 to try)")
                            continue
                        n = (H if view == "head" else L * H) * T * T
                        for i in range(args.runs if T < 400 else 1):
                            name = f"bertviz_{view}_{T}_{i}.html"
                            (OUT / name).write_text(
                                bertviz_html(site, bert, text_of(bert, T, 500 + i), view))
                            dt, cpu = time_bertviz(browser, f"{bv_url}/{name}", n,
                                                   args.bertviz_timeout, watch)
                            (OUT / name).unlink()
                            if dt is None:
                                break
                            r["bv_" + view].append(dt)
                            r[f"bv_{view}_cpu"].append(cpu)
                            print(f"T={T} run {i + 1}: bertviz {view} view {dt:.2f} s "
                                  f"(CPU {cpu:.1f} s)", flush=True)
                rows.append(r)
            browser.close()
    finally:
        stop_app(proc)
    report(rows)


def med(xs):
    return statistics.median(xs) if xs else None


def report(rows):
    def fmt(x, unit="s"):
        return "–" if x is None else f"{x:.3f} {unit}" if x < 10 else f"{x:.1f} {unit}"

    print("\nmedian of the runs (ours: Enter -> drawn; bertviz: navigation -> every line drawn)")
    print("| T | view | ours | ours p95 | of which drawing | ours CPU | bertviz | bertviz CPU "
          "| bertviz / ours |")
    print("|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        for view in ("head", "model"):
            ours, bv = med(r[view]), med(r["bv_" + view])
            ratio = f"{bv / ours:.0f}×" if ours and bv else "–"
            p95 = percentile(r[view], 0.95) if r[view] else None
            print(f"| {r['T']} | {view} view | {fmt(ours)} | {fmt(p95)} | "
                  f"{fmt(med(r[view + '_draw']))} | {fmt(med(r[view + '_cpu']))} | {fmt(bv)} | "
                  f"{fmt(med(r[f'bv_{view}_cpu']))} | {ratio} |")
        print(f"| {r['T']} | head view, navigation (a fresh link, Streamlit starting) | "
              f"{fmt(med(r['nav']))} | | | | | | |")


if __name__ == "__main__":
    main()
