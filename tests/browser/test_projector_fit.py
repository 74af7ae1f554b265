"""Presentation mode on a projector (issue 14): at 1280×720 and 1920×1080, every page opened
with `present=1` (and the teaching guide's link where the guide has one) shows its main figure
whole on the first screen, with no sideways scrolling. One test per size visits every page in
turn; each page's full-page screenshot goes to bench/out/screens/<page>-<w>x<h>.png for a
person to look at, and the pages' full heights to bench/out/screens/heights.txt (`pytest -s`
prints them)."""

import re
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from testkit.browser import no_exception, wait_settled

ROOT = Path(__file__).resolve().parents[2]
SCREENS = ROOT / "bench" / "out" / "screens"
GUIDE = ROOT / "docs" / "teaching.md"
TEXT = "text=I%20saw%20the%20man%20with%20a%20telescope."

# page (its url path, "" for the Explorer) -> its link when the guide has none, and the keys of
# its main figure (every one must fit) with how to tell that it is drawn (testkit.browser's
# SETTLED: "plotly", "component", "table" or "shown")
PAGES = {
    "explorer": ("", TEXT, {"ex_grid": "component", "ex_focus_grid": "component"}),
    "head_view": ("head_view", TEXT, {"hv_lines": "component"}),
    "inside_mha": ("inside_mha", TEXT, {"im_toy_1_1": "plotly", "im_toy_next": "shown"}),
    "training_lab": ("training_lab", "", {"tl_train_heads": "shown"}),
    "all_heads": ("all_heads", TEXT, {"ah_atlas": "plotly"}),
    "head_lab": ("head_lab", TEXT, {"hl_token_change": "plotly"}),
    "two_readings": ("two_readings", "", {"tr_grid": "plotly"}),
    "corpus_search": ("corpus_search", TEXT, {"cs_results": "table"}),
    "what_heads_learn": ("what_heads_learn", "", {"wh_matrix": "plotly"}),
    "about": ("about", "", {}),  # text only: its height is recorded, nothing has to fit
}
SIZES = [(1280, 720), (1920, 1080)]


def guide_links() -> dict:
    """The first link of the teaching guide to each page: url path -> query, present=1 left
    out (the test adds it to every page)."""
    links = {}
    for url in re.findall(r"\]\((http://localhost:8501/[^)\s]*)\)", GUIDE.read_text()):
        parts = urlsplit(url)
        query = "&".join(p for p in parts.query.split("&") if p and p != "present=1")
        links.setdefault(parts.path.strip("/"), query)
    return links


MEASURE = """(keys) => {
  const main = document.querySelector('[data-testid="stMain"]');
  const boxes = {};
  for (const k of keys) {
    const r = document.querySelector('.st-key-' + k).getBoundingClientRect();
    boxes[k] = {x: r.x, y: r.y, w: r.width, h: r.height};
  }
  return {boxes, width: innerWidth, height: innerHeight, top: main.scrollTop,
          scroll_width: Math.max(document.scrollingElement.scrollWidth,
                                 main.scrollWidth - main.clientWidth + innerWidth),
          full_height: Math.max(document.scrollingElement.scrollHeight, main.scrollHeight)};
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


def fit_problems(name: str, m: dict) -> list:
    out = []
    if m["scroll_width"] > m["width"]:
        out.append(f"{name}: scrolls sideways ({m['scroll_width']} > {m['width']} px)")
    if m["top"]:
        out.append(f"{name}: opened scrolled down by {m['top']} px")
    for key, b in m["boxes"].items():
        if b["y"] < 0 or b["y"] + b["h"] > m["height"] or b["x"] < 0 or \
                b["x"] + b["w"] > m["width"]:
            out.append(f"{name}: {key} at x {b['x']:.0f}, y {b['y']:.0f}, {b['w']:.0f}×"
                       f"{b['h']:.0f} leaves the {m['width']}×{m['height']} screen")
    return out


def save_heights(size: str, heights: dict):
    """heights.txt: one row per page, one column per size (the other size's column kept)."""
    path = SCREENS / "heights.txt"
    table = {}  # page -> {size: height}
    if path.exists():
        rows = path.read_text().splitlines()
        sizes = rows[0].split()[1:] if rows else []
        for row in rows[1:]:
            cells = row.split()
            table[cells[0]] = dict(zip(sizes, cells[1:]))
    for page_name, h in heights.items():
        table.setdefault(page_name, {})[size] = str(h)
    sizes = [f"{w}x{h}" for w, h in SIZES]
    lines = ["page".ljust(18) + "".join(s.rjust(11) for s in sizes)]
    lines += [p.ljust(18) + "".join(table[p].get(s, "-").rjust(11) for s in sizes)
              for p in PAGES if p in table]
    path.write_text("\n".join(lines) + "\n")
    return "\n".join(lines)


@pytest.mark.parametrize("width,height", SIZES, ids=[f"{w}x{h}" for w, h in SIZES])
def test_every_pages_main_figure_fits_the_projector(app_url, browser, width, height):
    SCREENS.mkdir(parents=True, exist_ok=True)
    links = guide_links()
    ctx = browser.new_context(viewport={"width": width, "height": height})
    page = ctx.new_page()
    problems, heights, rows = [], {}, []
    try:
        for name, (path, default, main) in PAGES.items():
            query = links.get(path, default)
            page.goto(f"{app_url}/{path}?{query + '&' if query else ''}present=1",
                      wait_until="commit")
            wait_settled(page, main)
            # presentation mode is on (its CSS: 20 px text) and no page shows a traceback
            assert page.evaluate("getComputedStyle(document.documentElement).fontSize") \
                == "20px", name
            m = page.evaluate(MEASURE, list(main))
            assert no_exception(page), name
            problems += fit_problems(name, m)
            heights[name] = round(m["full_height"])
            rows += [f"  {name:17} {k:16} y {b['y']:5.0f}  h {b['h']:5.0f}  bottom "
                     f"{b['y'] + b['h']:5.0f}" for k, b in m["boxes"].items()]
            page.evaluate(UNROLL)
            page.screenshot(path=str(SCREENS / f"{name}-{width}x{height}.png"), full_page=True)
    finally:
        ctx.close()
    size = f"{width}x{height}"
    table = save_heights(size, heights)
    print(f"\nmain figures at {size} (screen height {height}):\n" + "\n".join(rows))
    print(f"\nfull page heights in presentation mode (px), {SCREENS / 'heights.txt'}:\n{table}")
    assert not problems, "\n".join(problems)
