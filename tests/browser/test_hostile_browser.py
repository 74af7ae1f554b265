"""Hostile text through the Head view page and the Explorer in a real browser: the fixed list of
tests/fuzz/test_hostile_list.py, markup made to run script, and a hypothesis fuzz. Each page is
opened from a link carrying the text; no dialog may open, no script run, no element appear
from the text, and the component shows the text's own tokens."""

import os
from urllib.parse import quote

from hypothesis import HealthCheck, given, settings

from testkit.browser import FIND, HOST, no_exception, windowed
from tests.conftest import CI
from tests.fuzz.test_fuzz_pages import TEXT
from tests.fuzz.test_hostile_list import FIXED

# url path -> the page's component key, and what it shows of the tokens
PAGES = {"": ("ex_grid", windowed), "head_view": ("hv_lines", list)}
RUNS = ["<img src=x onerror=\"window.__hs_pwned=1\">", "\"><svg onload=window.__hs_pwned=1>",
        "</script><script>window.__hs_pwned=1</script>", "<iframe src=javascript:alert(1)>",
        "javascript:window.__hs_pwned=1", "&lt;b&gt; &amp; <b>bold</b>"]
INJECTED = ", ".join(f'[data-testid="stMain"] {tag}'
                     for tag in ("img", "iframe", "script", "object", "embed", "[onerror]",
                                 "[onload]", "b"))
SHOWN = """([sel, want]) => {
  if (document.querySelector('[data-testid="stException"]')) return true;
  const host = FIND(sel);
  if (want !== null) return !!host && host.dataset.drawn === want;
  return !!document.querySelector('[data-testid="stAlert"]')
    && !document.querySelector('[data-stale="true"]');
}""".replace("FIND", FIND)


def check(page, url, bundled, text):
    """Open every page on `text` and check that nothing ran and the tokens are shown."""
    dialogs = []
    page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
    enc = bundled.encode(text) if text.strip() else None
    # a typed [SEP] with nothing before it: the pages say to type sentence A first (an alert)
    a_blank = "[SEP]" in text and not text.partition("[SEP]")[0].strip()
    words = enc is not None and not all(enc.special) and not a_blank
    for path, (key, shown) in PAGES.items():
        page.goto(f"{url}/{path}?text={quote(text)}")
        page.wait_for_function(SHOWN, arg=[HOST.format(key=key),
                                           " ".join(shown(enc.tokens)) if words else None],
                               timeout=60_000)
        assert no_exception(page), (path, text[:40])
        assert page.evaluate("window.__hs_pwned") is None, (path, text[:40])
        assert page.locator(INJECTED).count() == 0, (path, text[:40])
    assert dialogs == [], text[:40]


def test_fixed_hostile_list_in_the_browser(app_url, page, bundled):
    for text in [*FIXED, *RUNS]:
        check(page, app_url, bundled, text)


EXAMPLES = max(1, int(12 * float(os.environ.get("HEADSCOPE_FUZZ_EXAMPLES", "360")) / 360))


@settings(max_examples=EXAMPLES, deadline=None, derandomize=CI, database=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(text=TEXT)
def test_fuzz_through_the_component_in_the_browser(app_url, browser, bundled, text):
    ctx = browser.new_context(viewport={"width": 1280, "height": 800})
    try:
        check(ctx.new_page(), app_url, bundled, text[:2000])
    finally:
        ctx.close()
