"""Every page opens in chromium on a tiny random model of every family, decoders included:
one server offers all eight through HEADSCOPE_MODELS (conftest's family_app); for each family one
browser page opens the Explorer by its link (?model=tiny-<family>, a sentence and a pair), then
every other page by the sidebar's links in the same session (no reload: the model stays chosen),
waits until the page's main content is drawn and the page has settled
(testkit.browser.wait_settled), and finds the family's model chosen, no Streamlit exception
element and no traceback text.

One test per family, looping over the pages, so xdist spreads the families over its workers."""

from urllib.parse import urlencode

import pytest

from testkit.browser import no_exception, wait_settled
from tests.browser.conftest import FAMILIES

pytestmark = pytest.mark.slow

LINK = {"text": "The cat sat on the mat.", "pair": "I saw the man."}
# page (its url path, "" for the Explorer) -> the keys of its main content and how to tell that
# each is drawn (testkit.browser's SETTLED: "component", "plotly", "table" or "shown")
PAGES = {
    "": {"ex_grid": "component", "ex_focus_grid": "component"},
    "head_view": {"hv_lines": "component"},
    "inside_mha": {"im_toy_1_1": "plotly"},
    "training_lab": {"tl_one_head_bars": "plotly"},  # nothing is trained before Train
    "all_heads": {"ah_atlas": "plotly", "ah_rollout": "plotly"},
    "head_lab": {"hl_token_change": "plotly", "hl_importance": "plotly"},
    "next_word": {"nw_main": "shown"},  # the strip, or on an encoder why there is none
    "sinks": {"sk_grids": "plotly"},
    "papers": {"pp_figure": "shown"},  # Clark et al.'s figure (an image)
    "two_readings": {"tr_grid": "plotly"},
    "corpus_search": {"cs_results": "table"},
    "what_heads_learn": {"wh_matrix": "plotly"},
    "glossary": {"gl_terms": "shown"},
    "about": {"ab_guide": "shown"},
}
# keys drawn in a tab not shown at first (no size, so not waited for): present once settled
HIDDEN = {"inside_mha": ["im_real_layer", "im_real_query"]}
TRACEBACK = "() => document.body.innerText.includes('Traceback (most recent call last)')"
SHOWN = "keys => keys.filter(k => document.querySelector('.st-key-' + k))"
NAV = '[data-testid="stSidebarNav"]'
CHOSEN = '[data-testid="stSidebar"] input[aria-label="Model"]'


def test_every_page_lists_its_main_content():
    """The table above names every page of the app (a new page must say what it draws)."""
    from testkit.apptest import PAGES as SCRIPTS

    assert sorted(p or "explorer" for p in PAGES) == sorted(SCRIPTS)


@pytest.mark.parametrize("family", FAMILIES)
def test_every_page_opens_on_the_family(family_app, browser, family):
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    url, _ = family_app
    ctx = browser.new_context(viewport={"width": 1280, "height": 800})
    page = ctx.new_page()
    query = urlencode({"model": f"tiny-{family}", **LINK})
    try:
        for path, main in PAGES.items():
            if path:  # the sidebar's link: the same session, its model kept
                link = page.locator(f'{NAV} a[href$="/{path}"]')
                if not link.count():  # a long navigation shows its first pages: "View more"
                    page.locator('[data-testid="stSidebarNavViewButton"]').click()
                link.click()
            else:
                page.goto(f"{url}/?{query}")
            where = f"tiny-{family}, page /{path}"
            try:
                wait_settled(page, main)
            except PlaywrightTimeout:
                shown = page.evaluate(SHOWN, list(main))
                raise AssertionError(f"{where} did not settle; of {list(main)} it shows {shown}, "
                                     f"exception: {not no_exception(page)}") from None
            assert no_exception(page), where
            for key in HIDDEN.get(path, []):
                assert page.locator(f".st-key-{key}").count() == 1, (where, key)
            assert not page.evaluate(TRACEBACK), where
            assert f"tiny-{family}" in page.locator(CHOSEN).input_value(), where
    finally:
        ctx.close()
