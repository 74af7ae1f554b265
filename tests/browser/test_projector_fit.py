"""Presentation mode on a projector: every link of the teaching guide, and
every page the guide does not link, opened with `present=1` at 1280×720 and 1920×1080, is
legible from the back of a room. For each step the test measures the main figure:

- the smallest token label, title and printed number in CSS px: the attention component's own
  data attributes (data-label-px, data-title-px, data-number-px), plotly's SVG text through
  computed style, any other DOM text through computed style; at least 18 px at 1280 px wide;
- shown tokens without a readable label: the component's data-unlabelled, and plotly tick
  labels that overlap their neighbour; 0 for texts of up to 16 tokens;
- the contrast of the page's result text (captions and markdown in the main area, alpha
  blended on the white page, and the focus grid's ink on its cells): WCAG AA, 4.5:1;
- control labels (widget labels, buttons) cut with an ellipsis: none;
- presentation mode on (its 20 px root font), no sideways scrolling, the figure's top on the
  first screen, no traceback.

Screenshots of every step go to bench/out/screens/guide-<n>-<page>-<w>x<h>.png (full page, a red
dashed line where the first screen ends) and the figures to bench/out/screens/legibility.txt
(`pytest -s` prints them). Links are read from docs/teaching.md, absolute or relative."""

import re
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from testkit.browser import no_exception, wait_settled

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
SCREENS = ROOT / "bench" / "out" / "screens"
GUIDE = ROOT / "docs" / "teaching.md"
TEXT = "text=I%20saw%20the%20man%20with%20a%20telescope."
LEAST_PX = 18  # at 1280 px wide
AA = 4.5

# page (its url path, "" for the Explorer) -> its link when the guide has none, and the keys of
# its main figure with how to tell that it is drawn (testkit.browser's SETTLED: "plotly",
# "component", "table" or "shown")
PAGES = {
    "explorer": ("", TEXT, {"ex_grid": "component", "ex_focus_grid": "component",
                            "ex_focus_bars": "component"}),
    "head_view": ("head_view", TEXT, {"hv_lines": "component"}),
    "inside_mha": ("inside_mha", TEXT, {"im_toy_1_1": "plotly"}),
    # nothing is drawn before Train is pressed: its row of controls
    "training_lab": ("training_lab", "", {"tl_seed": "shown"}),
    "all_heads": ("all_heads", TEXT, {"ah_atlas": "plotly"}),
    "head_lab": ("head_lab", TEXT, {"hl_token_change": "plotly"}),
    "two_readings": ("two_readings", "", {"tr_grid": "plotly"}),
    "corpus_search": ("corpus_search", TEXT, {"cs_results": "table"}),
    "what_heads_learn": ("what_heads_learn", "", {"wh_matrix": "plotly"}),
    "next_word": ("next_word", "model=SmolLM2-135M-Instruct%20(bundled)&text=The%20capital%20of"
                  "%20France%20is", {"nw_strip": "plotly"}),
    "sinks": ("sinks", TEXT, {"sk_grids": "plotly"}),
    "papers": ("papers", "", {"pp_figure": "shown"}),  # an image: its top is measured
}
BY_PATH = {path: name for name, (path, _, _) in PAGES.items()}
SIZES = [(1280, 720), (1920, 1080)]


def guide_steps() -> list:
    """(page name, path?query) for every link of the guide to this app, in order (absolute
    links to any host or relative ones), then every page the guide does not link."""
    steps = []
    for url in re.findall(r"\]\(([^)\s]+)\)", GUIDE.read_text()):
        parts = urlsplit(url)
        path = parts.path.strip("/").removeprefix("./").strip("/")
        if "?" in url and path in BY_PATH and (BY_PATH[path], path) not in steps[-1:]:
            query = "&".join(p for p in parts.query.split("&") if p and p != "present=1")
            step = (BY_PATH[path], f"{path}?{query}")
            if step not in steps:
                steps.append(step)
    linked = {name for name, _ in steps}
    steps += [(name, f"{path}?{query}") for name, (path, query, _) in PAGES.items()
              if name not in linked]
    return steps


# The main figure's smallest text by kind, its unlabelled tokens, the page's contrast and cut
# control labels (see the file)
MEASURE = (Path(__file__).with_name("legibility.js")).read_text()
SCROLL = """() => {
  const main = document.querySelector('[data-testid="stMain"]');
  return {top: main.scrollTop, width: innerWidth,
          scroll_width: Math.max(document.scrollingElement.scrollWidth,
                                 main.scrollWidth - main.clientWidth + innerWidth)};
}"""
# For the full-page screenshot only, after measuring: the main area (Streamlit scrolls it, not
# the document) grows to its content so the document scrolls, and a red line marks where the
# first screen ends. The viewport stays the same.
UNROLL = """() => {
  const style = document.createElement('style');
  style.textContent = '.stApp, [data-testid="stAppViewContainer"], [data-testid="stMain"]'
                    + '{height: auto !important; overflow: visible !important;}';
  document.head.appendChild(style);
  const fold = document.createElement('div');
  fold.style.cssText = 'position:absolute;left:0;right:0;height:0;z-index:100000;'
                     + 'border-top:2px dashed red;pointer-events:none;top:' + innerHeight + 'px';
  document.body.appendChild(fold);
}"""


def problems_of(step: str, m: dict, s: dict, height: int) -> list:
    # (the component's text grows with the window, 27 px at 1920; plotly's stays at 18)
    out = [f"{step}: {kind} text {m[kind]} px < {LEAST_PX}"
           for kind in ("label", "title", "number") if m[kind] < LEAST_PX]
    out += [f"{step}: small: {t}" for t in m["small"]] if out else []
    if m["unlabelled"]:
        out.append(f"{step}: {m['unlabelled']} shown tokens without a readable label")
    if m["contrast"] < AA:
        out.append(f"{step}: text contrast {m['contrast']:.2f}:1 < {AA}:1: {m['faint']}")
    if m["cut"]:
        out.append(f"{step}: control labels cut: {m['cut']}")
    if not 0 <= m["top"] < height:
        out.append(f"{step}: the main figure starts at y {m['top']:.0f}, off the first screen")
    if s["scroll_width"] > s["width"]:
        out.append(f"{step}: scrolls sideways ({s['scroll_width']} > {s['width']} px)")
    if s["top"]:
        out.append(f"{step}: opened scrolled down by {s['top']} px")
    return out


def save_table(size: str, rows: list) -> str:
    """legibility.txt: one row per step and size (the other size's rows kept)."""
    path = SCREENS / "legibility.txt"
    head = "step".ljust(28) + "size".rjust(10) + "label".rjust(7) + "title".rjust(7) + \
        "number".rjust(8) + "unlab".rjust(7) + "contrast".rjust(10)
    kept = [r for r in (path.read_text().splitlines()[1:] if path.exists() else [])
            if size not in r.split()[1:2]]
    lines = [head] + sorted(kept + rows)
    path.write_text("\n".join(lines) + "\n")
    return "\n".join(lines)


@pytest.mark.parametrize("width,height", SIZES, ids=[f"{w}x{h}" for w, h in SIZES])
def test_every_guide_step_is_legible_on_a_projector(app_url, browser, width, height):
    SCREENS.mkdir(parents=True, exist_ok=True)
    ctx = browser.new_context(viewport={"width": width, "height": height})
    page = ctx.new_page()
    problems, rows, size = [], [], f"{width}x{height}"
    try:
        for n, (name, link) in enumerate(guide_steps(), 1):
            step = f"{n:02d}-{name}"
            path, _, query = link.partition("?")
            main = PAGES[name][2]
            page.goto(f"{app_url}/{path}?{query + '&' if query else ''}present=1",
                      wait_until="commit")
            wait_settled(page, main)
            assert page.evaluate("getComputedStyle(document.documentElement).fontSize") \
                == "20px", f"{step}: presentation mode is off"
            assert no_exception(page), step
            m = page.evaluate(MEASURE, [list(main), LEAST_PX])
            s = page.evaluate(SCROLL)
            problems += problems_of(step, m, s, height)
            rows.append(f"{step:28}{size:>10}{m['label']:7.1f}{m['title']:7.1f}"
                        f"{m['number']:8.1f}{m['unlabelled']:7d}{m['contrast']:10.2f}")
            page.evaluate(UNROLL)
            page.screenshot(path=str(SCREENS / f"guide-{step}-{size}.png"), full_page=True)
    finally:
        ctx.close()
    table = save_table(size, rows)
    print(f"\nsmallest text (CSS px) and contrast per step, {SCREENS / 'legibility.txt'}:\n"
          + table)
    assert not problems, "\n".join(problems)
