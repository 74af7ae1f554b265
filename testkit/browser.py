"""Debian's chromium driven by playwright (never `playwright install`), and driving the Explorer
and the attention component.

Streamlit draws over a websocket and keeps the old chart on screen during a rerun, so we never
wait for load events: we wait until the page itself shows what we expect."""

import shutil

from headscope.ui.attention.payload import WINDOW

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
                 "--no-first-run", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync"]


def launch(playwright):
    """Debian's chromium, headless, without a sandbox or GPU and without its own network calls
    (update checks, sync): CHROMIUM_ARGS."""
    return playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)


def no_exception(pg) -> bool:
    """Streamlit renders an uncaught exception as [data-testid=stException]."""
    return pg.locator('[data-testid="stException"]').count() == 0


# The attention component (headscope/ui/attention) marks its host element after each draw:
# data-drawn is the shown tokens joined by single spaces, data-heads the heads in a grid, data-tag
# what the page tagged it with (the Explorer: "layer 2"). The one place that says "the Explorer is
# drawn".
HOST = ".st-key-{key} [data-drawn]"
# The Explorer is one component: it draws its parts (ex_grid, ex_big, ex_focus_grid,
# ex_focus_bars) inside its shadow root, each under an element classed as a keyed element would
# be (.st-key-ex_grid). Playwright's locators look inside shadow roots; page JS does it with FIND,
# which looks in the page, then inside the Explorer's component.
FIND = ("((sel) => document.querySelector(sel) || [...document.querySelectorAll("
        "'[data-view=explorer]')].map(h => h.shadowRoot && h.shadowRoot.querySelector(sel))"
        ".find(Boolean) || null)")
COMPONENT_SHOWS = """([sel, tokens, tag]) => {
  const host = FIND(sel);
  return !!host && host.dataset.drawn === tokens.join(' ')
    && (tag === null || host.dataset.tag === tag);
}""".replace("FIND", FIND)
GRID_SHOWS = """([sel, tokens, heads]) => {
  const host = FIND(sel);
  return !!host && host.dataset.drawn === tokens.join(' ') && host.dataset.heads === String(heads);
}""".replace("FIND", FIND)


def windowed(tokens) -> list:
    """What the Explorer's maps show of these tokens at first: a longer text shows its first
    WINDOW tokens (the page's window slider moves it); the focus grid reads every token."""
    return list(tokens)[:WINDOW]
# Every map of the Explorer shows these tokens: the component's grid, focus grid, enlarged head
# and focus bars (the maps these tokens, the focus views every token), whether drawn from the
# route's answer to Enter (explorer.js, sentence.js) or from the page's run. What a reader sees.
MAPS_SHOW = """([sel, all, heads]) => {
  const host = FIND(sel), tokens = all.slice(0, WINDOW);
  if (!host || host.dataset.drawn !== tokens.join(' ') || host.dataset.heads !== String(heads))
    return false;
  const drawn = k => FIND(`.st-key-${k} [data-drawn]`)?.dataset.drawn;
  return drawn('ex_big') === tokens.join(' ') && drawn('ex_focus_grid') === all.join(' ')
    && drawn('ex_focus_bars') === all.join(' ');
}""".replace("WINDOW", str(WINDOW)).replace("FIND", FIND)
# ... and the page's own run has reached them: the component holds the run's data for these
# tokens (not only the route's: data-fast is "drawn" until then), and nothing on the page is
# stale from the previous run. What a test waits for before it goes on.
EXPLORER_DRAWN = ("([sel, all, heads]) => (" + MAPS_SHOW + ")([sel, all, heads])"
                  " && FIND('.st-key-ex_view [data-drawn]')?.dataset.fast !== 'drawn'"
                  " && !document.querySelector('[data-stale=\"true\"]')").replace("FIND", FIND)


def _on_the_grid(condition: str) -> str:
    """A condition of (sel, tokens, heads) as one of (tokens, heads), on the Explorer's grid."""
    return (f"([tokens, heads]) => ({condition})([{HOST.format(key='ex_grid')!r}, tokens, "
            "heads])")


# The same for callers that pass only (tokens, heads): the benchmarks
MAPS_DRAWN = _on_the_grid(EXPLORER_DRAWN)
EVERY_MAP_SHOWS = _on_the_grid(MAPS_SHOW)


def host(page, key: str):
    """The attention component's host element under the element with this key (a locator)."""
    return page.locator(HOST.format(key=key)).first


def wait_for_component(page, key: str, tokens, tag=None, timeout_ms: int = 60_000):
    page.wait_for_function(COMPONENT_SHOWS, arg=[HOST.format(key=key), list(tokens), tag],
                           polling="raf", timeout=timeout_ms)


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
    """The Explorer's grid (heads, single head and mean) shows these tokens (windowed)."""
    page.wait_for_function(GRID_SHOWS, arg=[HOST.format(key="ex_grid"), windowed(tokens), heads],
                           polling="raf", timeout=timeout_ms)


def wait_for_explorer(page, tokens, heads: int, timeout_ms: int = 60_000):
    """Every map of the Explorer shows these tokens (see EXPLORER_DRAWN)."""
    page.wait_for_function(EXPLORER_DRAWN, arg=[HOST.format(key="ex_grid"), list(tokens), heads],
                           polling="raf", timeout=timeout_ms)


def box_of(page, key: str):
    """The bounding box of a keyed chart or component."""
    return page.locator(f".st-key-{key}").first.bounding_box()


# Any page settled with these elements drawn ({key: kind}): the script run is over (the app's
# data-test-script-state; the running-man icon is not shown in every layout), no lazily loaded
# element is still a skeleton, nothing is stale from a previous run, every plotly chart of the
# page is laid out, and each keyed element is drawn: "plotly" a laid-out chart, "component" the
# attention component's host marked data-drawn, "table" a table with rows, "shown" any element
# with a size. Then the elements' boxes and the page's height must stay the same over three
# polls in a row (a rerun or a late chart moves them).
SETTLED = """([keys, kinds]) => {
  const app = document.querySelector('[data-testid="stApp"]');
  if (!app || app.dataset.testScriptState !== 'notRunning') return false;
  if (document.querySelector('[data-testid="stSkeleton"], [data-testid="stSkeletonElement"], '
                             + '[data-testid="stAppSkeleton"], [data-stale="true"]'))
    return false;
  const main = document.querySelector('[data-testid="stMain"]');
  if (!main) return false;
  const laidOut = gd => !!(gd._fullLayout && gd.querySelector('.main-svg'));
  if (![...document.querySelectorAll('.js-plotly-plot')].every(laidOut)) return false;
  const boxes = [];
  for (let i = 0; i < keys.length; i++) {
    const el = FIND('.st-key-' + keys[i]);
    if (!el) return false;
    const kind = kinds[i];
    if (kind === 'plotly') {
      const gd = el.querySelector('.js-plotly-plot');
      if (!gd || !laidOut(gd)) return false;
    } else if (kind === 'component' && !el.querySelector('[data-drawn]')) return false;
    else if (kind === 'table' && !el.querySelector('table tbody tr')) return false;
    const r = el.getBoundingClientRect();
    if (!(r.width > 0 && r.height > 0)) return false;
    boxes.push([r.x, r.y, r.width, r.height].map(Math.round).join(','));
  }
  const now = boxes.join(' ') + ' ' + main.scrollHeight;
  window.__settledSeen = window.__settledLast === now ? (window.__settledSeen || 0) + 1 : 0;
  window.__settledLast = now;
  return window.__settledSeen >= 2;
}""".replace("FIND", FIND)


def wait_settled(page, elements: dict, timeout_ms: int = 90_000):
    """Until the page has settled with these elements ({key: kind}, see SETTLED) drawn."""
    page.wait_for_function(SETTLED, arg=[list(elements), list(elements.values())],
                           polling=100, timeout=timeout_ms)


# The page's script run is over (the app's data-test-script-state)
RUN_OVER = """() => document.querySelector('[data-testid="stApp"]')?.dataset.testScriptState
  === 'notRunning'"""


def close_start_card(page):
    """A session opened at the app's root without a view link shows the start card
    (headscope/ui/start_card.py) above the Explorer: close it and wait until it is gone. The
    click waits for the page's first run to end: a click while the run still redraws the card
    can land on a button being replaced, and be lost (seen once in a full make test)."""
    card = page.locator(".st-key-start_card")
    card.wait_for(timeout=90_000)
    page.wait_for_function(RUN_OVER, timeout=90_000)
    card.get_by_role("button", name="Close").click()
    card.wait_for(state="detached", timeout=60_000)
