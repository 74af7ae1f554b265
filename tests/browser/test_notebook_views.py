"""The notebook widget's ES module (headscope.ui.attention.bundle.anywidget_js: the Streamlit
component's drawing core + the anywidget adapter) in a plain page with a stand-in anywidget model
fed the bundled model's real maps as binary buffers; and the standalone HTML from file:// with every
request that is not file:// or blob: blocked and recorded."""

import base64
import json
import struct
from xml.sax.saxutils import escape

import pytest

from headscope import export, view_input, widgets
from headscope.ui.attention import bundle

TEXT = "The cat sat on the mat because it was tired."

# The stand-in model: get/set/on/off/save_changes/send, as anywidget's; packed arrays arrive as
# DataViews (what anywidget hands over for a bytes trait), sent here as base64 under "dv"
STAND_IN = """async ([src, payload, css]) => {
  const toDv = (x) => {
    if (Array.isArray(x)) return x.map(toDv);
    if (x && typeof x === 'object') {
      if ('dv' in x) {
        const b = Uint8Array.from(atob(x.dv), (c) => c.charCodeAt(0));
        const copy = new Uint8Array(b.length + 3); copy.set(b, 3);   // an unaligned view
        return { ...Object.fromEntries(Object.entries(x).filter(([k]) => k !== 'dv')),
                 bytes: new DataView(copy.buffer, 3, b.length) };
      }
      return Object.fromEntries(Object.entries(x).map(([k, v]) => [k, toDv(v)]));
    }
    return x;
  };
  const state = { payload: toDv(payload), view: {}, css }, handlers = {};
  window.sent = []; window.saved = [];
  const model = {
    get: (k) => state[k], set: (k, v) => { state[k] = v; },
    on: (ev, f) => { (handlers[ev] ||= []).push(f); },
    off: (ev, f) => { handlers[ev] = (handlers[ev] || []).filter((g) => g !== f); },
    save_changes: () => window.saved.push(JSON.parse(JSON.stringify(state.view))),
    send: (m) => window.sent.push(m),
  };
  const mod = await import(URL.createObjectURL(new Blob([src], { type: 'text/javascript' })));
  document.body.replaceChildren();
  const el = document.createElement('div');
  document.body.append(el);
  mod.default.render({ model, el });
}"""


def _dv(p):
    """The widget's binary payload with its bytes as base64 under "dv" (for page.evaluate)."""
    if isinstance(p, dict):
        if "bytes" in p:
            return {k: v for k, v in p.items() if k != "bytes"} | {
                "dv": base64.b64encode(p["bytes"]).decode()}
        return {k: _dv(v) for k, v in p.items()}
    if isinstance(p, list):
        return [_dv(v) for v in p]
    return p


@pytest.fixture(scope="module")
def seen(bundled):
    return view_input.read(bundled.attend(TEXT), model=bundled.name)


def _mount(page, payload):
    page.set_content("<!doctype html><meta charset='utf-8'><body></body>")
    css = widgets.View.css.default_value  # the widget's css trait: its shadow root's style
    page.evaluate(STAND_IN, [bundle.anywidget_js(), _dv(widgets._binary(payload)), css])


def _drawn(page, tokens):
    page.wait_for_function("t => { const h = document.querySelector('div.hs-host');"
                           " return h && h.dataset.drawn === t; }", arg=" ".join(tokens))


def _png_size(path) -> tuple:
    head = open(path, "rb").read(24)
    assert head[:8] == b"\x89PNG\r\n\x1a\n"
    return struct.unpack(">II", head[16:24])


def test_widget_grid_draws_hovers_clicks_and_exports(page, seen, tmp_path):
    _mount(page, view_input.grid(seen, layer=2))
    _drawn(page, seen.tokens)
    host = page.locator("div.hs-host")
    # the component's CSS reached the shadow root: a button has attention.css's border
    assert page.locator(".hs-btn").first.evaluate("e => getComputedStyle(e).borderTopColor") \
        == "rgb(208, 208, 216)"
    H = seen.att.shape[1]
    assert host.get_attribute("data-heads") == str(H)
    assert host.get_attribute("data-maps") == str(H + 2)  # the heads, summed head, mean
    m = json.loads(host.get_attribute("data-layout"))[0]
    G = len(seen.tokens)
    over = page.locator("canvas.hs-over")
    q, k = 2, 5
    over.hover(position={"x": m["x"] + (k + 0.5) * m["size"] / G,
                         "y": m["y"] + (q + 0.5) * m["size"] / G})
    page.wait_for_function("() => document.querySelector('div.hs-host').dataset.hover === '2:5'")
    tip = page.locator(".hs-tip-text").inner_text()
    assert tip == f"{seen.tokens[q]} → {seen.tokens[k]}: {seen.att[2, 0, q, k]:.3f}"
    over.click(position={"x": m["x"] + 3, "y": m["y"] + 3})  # head 1: enlarged, sent to Python
    page.wait_for_function("() => document.querySelector('div.hs-host').dataset.selected === '1'")
    assert page.evaluate("window.sent") == [{"event": "head", "value": 0}]
    with page.expect_download() as dl:
        page.locator("button.hs-btn", has_text="PNG").click()
    png = tmp_path / "grid.png"
    dl.value.save_as(png)
    w, h = _png_size(png)
    fig = json.loads(host.get_attribute("data-figure"))
    assert (w, h) == (fig["width"], fig["height"])
    assert w >= 2 * fig["screen"][0] and h >= 2 * fig["screen"][1]
    assert fig["caption"] == ["layer 3 · heads, summed head and mean", f"“{TEXT}”",
                              f"model: {seen.model}"]
    with page.expect_download() as dl:  # the same figure as SVG: caption, titles, labels, scale
        page.locator("button.hs-btn", has_text="SVG").click()
    svg = tmp_path / "grid.svg"
    dl.value.save_as(svg)
    xml = svg.read_text(encoding="utf-8")
    for line in fig["caption"]:
        assert f">{escape(line)}<" in xml
    assert xml.count("<rect") >= (H + 2) * G * G  # a cell each
    assert f">{escape(seen.tokens[1])}<" in xml and ">head 1<" in xml and ">summed head<" in xml
    assert "linearGradient" in xml and ">0.5<" in xml  # the colour scale and its middle


def test_widget_head_view_hover_state_and_svg(page, seen, tmp_path):
    _mount(page, view_input.lines(seen, "head", layer=1))
    _drawn(page, seen.tokens)
    host = page.locator("div.hs-host")
    assert int(host.get_attribute("data-lines")) > 0
    geo = json.loads(host.get_attribute("data-geometry"))
    i = 3
    page.locator("canvas.hs-lines").hover(position={"x": geo["left"] - 10,
                                                    "y": geo["top"] + (i + 0.5) * geo["row"]})
    page.wait_for_function("() => document.querySelector('div.hs-host').dataset.hover === 'q:3'")
    # hovering query 3: only its lines, to the keys its heads attend to above the threshold
    assert host.get_attribute("data-line-queries") == "3"
    keys = {int(x) for x in host.get_attribute("data-line-keys").split(",")}
    strong = {int(k) for k in (seen.att[1, :, i] >= 0.5).nonzero()[1]}
    assert strong <= keys
    page.locator("button.hs-tab", has_text="Model view").click()
    page.wait_for_function("() => document.querySelector('div.hs-host').dataset.view === 'model'")
    assert page.evaluate("window.saved")[-1]["mode"] == "model"  # the view trait, saved
    # the model view's PNG: 2x, its token labels left (queries) and right (keys) of every layer
    L, H, G = *seen.att.shape[:2], len(seen.tokens)
    n = int(host.get_attribute("data-token-labels")) // (2 * L)  # per side and layer (thinned)
    step = -(-G // n)
    assert n == len(range(0, G, step)) and step <= 2
    with page.expect_download() as dl:
        page.locator("button.hs-btn", has_text="PNG").click()
    png = tmp_path / "model.png"
    dl.value.save_as(png)
    fig = json.loads(host.get_attribute("data-figure"))
    assert _png_size(png) == (fig["width"], fig["height"]) and fig["width"] >= 2 * fig["screen"][0]
    assert fig["legend"] == list(range(1, H + 1))
    with page.expect_download() as dl:
        page.locator("button.hs-btn", has_text="SVG").click()
    svg = tmp_path / "model.svg"
    dl.value.save_as(svg)
    xml = svg.read_text(encoding="utf-8")
    assert f">model view · {L} layers × {H} heads<" in xml
    assert f">L{L}<" in xml and f">H{H}<" in xml and f">head {H}<" in xml  # labels, legend
    assert xml.count("<path") >= L * H
    for t in seen.tokens[::step]:
        assert xml.count(f">{escape(t)}<") >= 2 * L  # queries and keys in every layer's row


def test_standalone_html_offline_from_file(browser, seen, tmp_path):
    path = tmp_path / "view.html"
    export.write_html(view_input.lines(seen, "head", layer=0), path)
    ctx = browser.new_context(viewport={"width": 1280, "height": 800})
    requests = []
    ctx.on("request", lambda r: requests.append(r.url))
    ctx.route("**/*", lambda r: r.continue_() if r.request.url.startswith(("file:", "blob:"))
              else r.abort())
    page = ctx.new_page()
    try:
        page.goto(path.as_uri())
        _drawn(page, seen.tokens)
        assert page.locator(".hs-btn").first.evaluate(  # the CSS travelled in the file
            "e => getComputedStyle(e).borderTopColor") == "rgb(208, 208, 216)"
        geo = json.loads(page.locator("div.hs-host").get_attribute("data-geometry"))
        page.locator("canvas.hs-lines").hover(position={"x": geo["right"] + 10,
                                                        "y": geo["top"] + 2.5 * geo["row"]})
        page.wait_for_function("() => document.querySelector('div.hs-host').dataset.hover"
                               " === 'k:2'")
    finally:
        ctx.close()
    assert requests and all(u.startswith(("file:", "blob:")) for u in requests), requests


def test_standalone_html_keeps_tokens_as_text(browser, tmp_path):
    tokens = ["[CLS]", "</script><b>x</b>", "a&b", "[SEP]"]
    att = [[[[0.25] * 4] * 4]]  # (1, 1, 4, 4)
    path = tmp_path / "hostile.html"
    export.write_html(view_input.lines(view_input.read(att, tokens), "head"), path)
    assert "</script><b>" not in path.read_text(encoding="utf-8")
    page = browser.new_page()
    try:
        page.goto(path.as_uri())
        _drawn(page, tokens)
        assert page.locator("b").count() == 0
    finally:
        page.close()
