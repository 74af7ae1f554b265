"""Every page declares itself (headscope.ui.page.Page): its prefix, its kept widgets, its link
parameters. The frame lists no page's widgets, every key a page draws carries its prefix, and two
pages that both have a "heads" setting keep their own (they once shared the key `lab_heads`)."""

import ast

import pytest

from headscope.ui.link import FRAME_PARAMS
from testkit.apptest import PAGES, _walk, go_to, open_app, survives
from testkit.server import ROOT

FRAME_KEYS = {"model", "text", "pair", "preset", "present_toggle", "present_leave",
              # the start card (headscope/ui/start_card.py, the Explorer draws it) and its lesson
              "start_card", "start_close", "start_both_ways", "start_both_ways_map",
              "share_box"}  # the copy-link box (headscope/ui/share.py)


def declaration(page: str) -> dict:
    """The Page(...) call of a page script, read from its source: prefix, keep, link."""
    tree = ast.parse((ROOT / "pages" / f"{page}.py").read_text())
    calls = [n for n in ast.walk(tree) if isinstance(n, ast.Call)
             and getattr(n.func, "id", None) == "Page"]
    assert len(calls) == 1, f"pages/{page}.py must declare exactly one Page(...)"
    call = calls[0]
    out = {"prefix": ast.literal_eval(call.args[0]), "keep": (), "link": ()}
    out.update({k.arg: ast.literal_eval(k.value) for k in call.keywords})
    return out


def drawn_keys(at) -> set:
    """The user keys of every widget and keyed element the run drew."""
    keys = set()
    for node in _walk(at._tree):
        if getattr(node, "key", None):
            keys.add(node.key)
        pid = getattr(getattr(node, "proto", None), "id", None)
        if isinstance(pid, str) and pid.startswith("$$ID") and not pid.endswith("-None"):
            keys.add(pid.rsplit("-", 1)[-1])
    return keys


def written_keys(page: str) -> list:
    """Every key= a page's source passes: string constants, and the fixed start of f-strings."""
    out = []
    for node in ast.walk(ast.parse((ROOT / "pages" / f"{page}.py").read_text())):
        for kw in getattr(node, "keywords", []) if isinstance(node, ast.Call) else []:
            if kw.arg != "key":
                continue
            v = kw.value
            if isinstance(v, ast.Constant):
                out.append(v.value)
            elif isinstance(v, ast.JoinedStr):
                first = v.values[0]
                out.append(first.value if isinstance(first, ast.Constant) else "")
            else:
                out.append("")  # a key computed otherwise: not allowed
    return out


@pytest.mark.parametrize("page", PAGES)
def test_every_key_a_page_writes_carries_its_prefix(page):
    """All keys, also of widgets drawn only in some states (a button after ranking, the live
    charts of a training run), read from the page's source."""
    prefix = declaration(page)["prefix"] + "_"
    for key in written_keys(page):
        assert key.startswith(prefix), (page, key)


def test_the_frame_names_no_page_widget():
    frame = (ROOT / "headscope" / "frame" / "app.py").read_text()
    for page in PAGES:
        for key in declaration(page)["keep"]:
            assert key not in frame, (page, key)


@pytest.mark.parametrize("page", PAGES)
def test_every_key_a_page_draws_carries_its_prefix(bundled, page):
    spec = declaration(page)
    prefixes = {spec["prefix"] + "_" for spec in map(declaration, PAGES)}
    assert len(prefixes) == len(PAGES)  # no two pages share a prefix
    assert not set(spec["link"]) & set(FRAME_PARAMS)
    at = open_app(page)
    survives(at)
    for key in drawn_keys(at) - FRAME_KEYS:
        assert key.startswith(spec["prefix"] + "_"), (page, key)
    assert all(k.startswith(spec["prefix"] + "_") for k in spec["keep"])


def test_both_labs_keep_their_own_heads_setting(bundled):
    """Lesson 3's route: the Training lab's heads box (a number), then the Head lab's heads to
    switch off (names), then back and forth: each page shows its own value, no traceback."""
    at = open_app("training_lab")
    at.selectbox(key="tl_heads").set_value(4).run()
    go_to(at, "head_lab")
    survives(at)
    at.multiselect(key="hl_heads").select("L2 H3").run()
    go_to(at, "training_lab")
    survives(at)
    assert at.selectbox(key="tl_heads").value == 4
    go_to(at, "head_lab")
    survives(at)
    assert at.multiselect(key="hl_heads").value == ["L2 H3"]
