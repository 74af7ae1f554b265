"""Debian's chromium driven by playwright (never `playwright install`), and driving the Explorer.

Streamlit draws over a websocket and keeps the old chart on screen during a rerun, so we never
wait for load events: we wait until the page itself shows what we expect."""

import shutil

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
                 "--no-first-run", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync"]


def launch(playwright):
    """Debian's chromium with the flags this machine needs (see the README)."""
    return playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)


def no_exception(pg) -> bool:
    """Streamlit renders an uncaught exception as [data-testid=stException]."""
    return pg.locator('[data-testid="stException"]').count() == 0


# THE condition "the Explorer's maps are drawn for these tokens": every test and benchmark that
# waits for the Explorer waits on it, so this is the one place to change when the grid changes.
# Today the per-head grid is plotly's (.st-key-ex_grid .js-plotly-plot): true once it has
# `heads` heatmaps whose keys and queries are exactly `tokens` and its drawn tick labels show
# them (plotly draws &lt; as "<"; labels carry zero-width marks). The attention component
# (DESIGN.md) marks its host element with data-drawn, the shown tokens joined by single spaces,
# after each draw: once the grid is drawn by it under the key ex_grid, the first branch reads
# that instead (if it lands under another key, change the selector here).
MAPS_DRAWN = """([tokens, heads]) => {
  const host = document.querySelector('.st-key-ex_grid [data-drawn]');
  if (host) return host.dataset.drawn === tokens.join(' ');
  const gd = document.querySelector('.st-key-ex_grid .js-plotly-plot');
  if (!gd || !gd.data || gd.data.length !== heads) return false;
  // zero-width spaces tell repeated tokens apart (ui.labels.axis_labels)
  const bare = s => String(s).replaceAll('\\u200b', '');
  const plain = s => bare(s).replaceAll('&lt;', '<').replaceAll('&gt;', '>')
                           .replaceAll('&amp;', '&');
  const same = xs => xs.length === tokens.length && xs.every((x, i) => plain(x) === tokens[i]);
  if (!gd.data.every(t => same(Array.from(t.x)) && same(Array.from(t.y)))) return false;
  const drawn = new Set([...gd.querySelectorAll('.xtick text, .ytick text')]
                        .map(e => bare(e.textContent)));
  return tokens.every(t => drawn.has(t));
}"""
GRID_SHOWS = MAPS_DRAWN  # the name the older tests and benchmarks import


# True once the single-head map is drawn for `tokens`
SINGLE_SHOWS = """(tokens) => {
  const gd = document.querySelector('.st-key-ex_single .js-plotly-plot');
  if (!gd || !gd.data || !gd.data.length) return false;
  const xs = Array.from(gd.data[0].x).map(x => String(x).replaceAll('\u200b', ''));
  return xs.join('|') === tokens.join('|') && gd.getBoundingClientRect().height > 100
    && gd.querySelector('.gtitle')?.textContent.includes('single head');
}"""


def sentence_box(page):
    return page.locator('[data-testid="stSidebar"] textarea').first


def type_text(page, text: str):
    """Select the sentence and type the new one key by key, as a person does. (Pasting it with
    fill() or insert_text() and pressing Ctrl+Enter at once can submit the old value: the text
    area has not taken the paste yet.)"""
    box = sentence_box(page)
    box.click()
    box.press("Control+a")
    box.press_sequentially(text)


def submit(page):
    """Ctrl+Enter applies a Streamlit text area."""
    sentence_box(page).press("Control+Enter")


def type_sentence(page, text: str):
    type_text(page, text)
    submit(page)


def wait_for_grid(page, tokens, heads: int, timeout_ms: int = 60_000):
    """Until the Explorer's maps are drawn for `tokens` (MAPS_DRAWN)."""
    page.wait_for_function(MAPS_DRAWN, arg=[list(tokens), heads], polling="raf",
                           timeout=timeout_ms)


def box_of(page, key: str):
    return page.locator(f".st-key-{key} .js-plotly-plot").first.bounding_box()
