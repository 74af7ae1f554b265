"""The Head view page and the attention component in Debian's chromium: hovering a token keeps
only its lines, a head switched off loses its lines, the segment filter, PNG and SVG downloads,
and a 512-token text. Line counts are read from the component's test hooks (data-lines,
data-line-queries, data-line-keys) and checked against bert.attend."""

import json
import struct
import xml.etree.ElementTree as ET
from urllib.parse import quote

import numpy as np
import pytest

from testkit.browser import host, no_exception, wait_for_component, wait_for_grid

TEXT = "I saw the man with a telescope."
LEVEL = 1 / 65535  # the component gets weights as 16-bit levels


def hooks(page, key):
    return page.evaluate(
        "(sel) => Object.assign({}, document.querySelector(sel).dataset)",
        f".st-key-{key} [data-drawn]")


def wait_hook(page, key, name, value, timeout=15_000):
    page.wait_for_function(
        "([sel, name, value]) => document.querySelector(sel)?.dataset[name] === value",
        arg=[f".st-key-{key} [data-drawn]", name, value], timeout=timeout)


def count_bounds(weights, thr):
    """How many lines a threshold keeps, give or take the 16-bit rounding of each weight."""
    w = np.asarray(weights)
    return int((w >= thr + LEVEL).sum()), int((w >= thr - LEVEL).sum())


def token_point(page, key, side, i):
    """Page coordinates of token i in the left (queries) or right (keys) column."""
    g = json.loads(hooks(page, key)["geometry"])
    box = page.locator(f".st-key-{key} canvas.hs-lines").bounding_box()
    x = g["left"] - 15 if side == "q" else g["right"] + 15
    return box["x"] + x, box["y"] + g["top"] + (i + 0.5) * g["row"]


@pytest.fixture
def opened(app_url, page, bundled):
    page.goto(app_url + "/head_view?layer=2&text=" + quote(TEXT))
    wait_for_component(page, "hv_lines", bundled.encode(TEXT).tokens)
    wait_hook(page, "hv_lines", "layer", "2")
    return page


def test_hovering_a_token_keeps_only_its_lines(opened, bundled):
    page = opened
    res = bundled.attend(TEXT)
    A = res.attentions.numpy()[1]  # (H, T, T): layer 2
    h0 = hooks(page, "hv_lines")
    thr = float(h0["threshold"])
    lo, hi = count_bounds(A, thr)
    assert lo <= int(h0["lines"]) <= hi  # every head's lines above the threshold
    q = res.tokens.index("with")
    page.mouse.move(*token_point(page, "hv_lines", "q", q))
    wait_hook(page, "hv_lines", "lineQueries", str(q))
    lo, hi = count_bounds(A[:, q, :], thr)
    assert lo <= int(hooks(page, "hv_lines")["lines"]) <= hi
    k = res.tokens.index("man")  # a key on the right: only the lines into it
    page.mouse.move(*token_point(page, "hv_lines", "k", k))
    wait_hook(page, "hv_lines", "lineKeys", str(k))
    lo, hi = count_bounds(A[:, :, k], thr)
    assert lo <= int(hooks(page, "hv_lines")["lines"]) <= hi
    page.mouse.move(5, 5)  # away: every line again
    wait_hook(page, "hv_lines", "lines", h0["lines"])
    assert no_exception(page)


def test_switching_a_head_off_removes_its_lines_and_the_link_follows(opened, bundled):
    page = opened
    A = bundled.attend(TEXT).attentions.numpy()[1]  # (H, T, T)
    thr = float(hooks(page, "hv_lines")["threshold"])
    page.locator(".st-key-hv_lines .hs-swatch", has_text="H3").first.click()
    wait_hook(page, "hv_lines", "headsOn", "1,2,4,5,6,7,8,9,10,11,12")
    lo, hi = count_bounds(np.delete(A, 2, axis=0), thr)
    assert lo <= int(hooks(page, "hv_lines")["lines"]) <= hi
    page.wait_for_url(lambda url: "heads=1%2C2%2C4%2C5%2C" in url, timeout=30_000)
    # the model view: click layer 4, head 7 to open it alone in the head view
    page.locator(".st-key-hv_lines .hs-tab", has_text="Model view").click()
    wait_hook(page, "hv_lines", "view", "model")
    box = page.locator(".st-key-hv_lines canvas.hs-lines").bounding_box()
    g = json.loads(hooks(page, "hv_lines")["geometry"])
    layer, head = 3, 6  # from 0
    page.mouse.click(box["x"] + g["left"] + head * (g["w"] + g["gap"]) + g["w"] / 2,
                     box["y"] + g["top"] + layer * (g["h"] + g["gap"]) + g["h"] / 2)
    wait_hook(page, "hv_lines", "view", "head")
    assert hooks(page, "hv_lines")["layer"] == "4" and hooks(page, "hv_lines")["headsOn"] == "7"
    page.wait_for_url(lambda url: "layer=4" in url and "heads=7" in url, timeout=30_000)
    assert no_exception(page)


def test_png_and_svg_downloads_are_valid_files_of_the_shown_size(opened, bundled, tmp_path):
    page = opened
    canvas = page.locator(".st-key-hv_lines canvas.hs-lines")
    px = canvas.evaluate("c => [c.width, c.height]")
    css = canvas.evaluate("c => [parseFloat(c.style.width), parseFloat(c.style.height)]")
    with page.expect_download() as got:
        page.locator(".st-key-hv_lines .hs-btn", has_text="PNG").click()
    png = (tmp_path / "view.png")
    got.value.save_as(png)
    data = png.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and data[12:16] == b"IHDR"
    fig = json.loads(hooks(page, "hv_lines")["figure"])  # the figure: caption, view, legend
    size = list(struct.unpack(">II", data[16:24]))
    assert size == [fig["width"], fig["height"]]
    assert size[0] >= 2 * css[0] and size[1] >= 2 * css[1] and size[0] >= px[0]  # at 2x
    assert got.value.suggested_filename.endswith(".png")

    with page.expect_download() as got:
        page.locator(".st-key-hv_lines .hs-btn", has_text="SVG").click()
    svg = tmp_path / "view.svg"
    got.value.save_as(svg)
    root = ET.parse(svg).getroot()  # well-formed XML
    assert root.tag == "{http://www.w3.org/2000/svg}svg"
    assert float(root.get("width")) == pytest.approx(css[0], abs=0.5)
    assert float(root.get("height")) > css[1]  # the view, a caption above and a legend below
    texts = [t.text for t in root.iter("{http://www.w3.org/2000/svg}text")]
    tokens = bundled.encode(TEXT).tokens
    assert texts[0].startswith("head view · layer ")
    assert texts[-12:] == [f"head {h}" for h in range(1, 13)]  # the head-colour legend
    assert texts[-12 - 2 * len(tokens):-12] == [t for t in tokens for _ in (0, 1)]  # L and R
    paths = list(root.iter("{http://www.w3.org/2000/svg}path"))
    drawn = sum(p.get("d").count("M") for p in paths)
    assert drawn == int(hooks(page, "hv_lines")["lines"])  # the lines shown, one path a colour
    assert len(paths) <= 12 * 16  # never an element per line


def test_a_512_token_text_draws_in_every_view(app_url, page, bundled):
    text = " ".join(["word", "another", "sentence", "keeps", "going"] * 130)
    tokens = bundled.encode(text).tokens
    assert len(tokens) == 512
    page.goto(app_url + "/head_view?text=" + quote(text))  # typing 3,000 characters: too slow
    wait_for_component(page, "hv_lines", tokens, timeout_ms=90_000)
    h = hooks(page, "hv_lines")
    assert 0 < int(h["lines"]) <= 20_000  # capped per frame
    page.locator(".st-key-hv_lines .hs-tab", has_text="Model view").click()
    wait_hook(page, "hv_lines", "view", "model")
    assert 0 < int(hooks(page, "hv_lines")["lines"]) <= 60_000
    # the threshold is shown and adjustable: a higher one draws fewer lines
    before = int(hooks(page, "hv_lines")["linesAbove"])
    page.locator(".st-key-hv_lines .hs-thr input").fill("0.3")
    wait_hook(page, "hv_lines", "threshold", "0.300")
    assert int(hooks(page, "hv_lines")["linesAbove"]) < before
    assert page.locator(".st-key-hv_lines .hs-thr-val").text_content() == "≥ 0.300"
    page.goto(app_url + "/?text=" + quote(text))  # the Explorer's grid at 512 tokens
    wait_for_grid(page, tokens, bundled.config.num_attention_heads, timeout_ms=90_000)
    assert no_exception(page)


def test_segment_filter_keeps_one_direction_between_the_two_sentences(component_url, page,
                                                                      bundled):
    a, b = "The cat sat on the mat.", "It was warm there."
    res = bundled.attend(a, text_pair=b)
    seg = np.array(res.encoded.token_type_ids.tolist())
    page.goto(component_url + f"/?text={quote(a)}&pair={quote(b)}")
    wait_for_component(page, "tc_lines", res.tokens)
    A = res.attentions.numpy()[1]  # (H, T, T): the script opens layer 2
    thr = float(hooks(page, "tc_lines")["threshold"])
    select = page.locator(".st-key-tc_lines select.hs-select").nth(1)
    assert select.is_visible()
    for name, (sq, sk) in {"A→B": (0, 1), "B→A": (1, 0), "A→A": (0, 0), "B→B": (1, 1)}.items():
        select.select_option(name)
        lo, hi = count_bounds(A[:, seg == sq][:, :, seg == sk], thr)
        page.wait_for_function(
            "([sel, lo, hi]) => { const n = +document.querySelector(sel).dataset.lines;"
            " return n >= lo && n <= hi; }",
            arg=[".st-key-tc_lines [data-drawn]", lo, hi], timeout=10_000)
        h = hooks(page, "tc_lines")
        qs = {int(x) for x in h["lineQueries"].split(",") if x}
        ks = {int(x) for x in h["lineKeys"].split(",") if x}
        assert qs and all(seg[q] == sq for q in qs) and all(seg[k] == sk for k in ks), name
    select.select_option("all")
    lo, hi = count_bounds(A, thr)
    page.wait_for_function(
        "([sel, lo, hi]) => { const n = +document.querySelector(sel).dataset.lines;"
        " return n >= lo && n <= hi; }", arg=[".st-key-tc_lines [data-drawn]", lo, hi],
        timeout=10_000)


def test_the_segment_filter_is_hidden_for_one_sentence(app_url, page, bundled):
    page.goto(app_url + "/head_view")
    wait_for_component(page, "hv_lines", bundled.encode(TEXT).tokens)
    assert not page.locator(".st-key-hv_lines select.hs-select").nth(1).is_visible()
    assert host(page, "hv_lines").get_attribute("data-view") == "head"
