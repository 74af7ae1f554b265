"""The About page: what headscope is, how it checks itself, its limits, and the teaching guide
rendered in the app with links relative to the serving host that open in the same tab (and keep
presentation mode for a reader who is in it)."""

import re

import pytest

from testkit.apptest import PAGES, html_and_markdown, open_app, survives


def guide_html(at) -> str:
    html, _ = html_and_markdown(at)
    return next(h for h in html if "Lesson 1" in h)


@pytest.mark.parametrize("present", [False, True])
def test_about_renders_the_guide_with_relative_same_tab_links(bundled, present):
    at = open_app("about", **({"present": "1"} if present else {}))
    survives(at)
    assert "How it checks itself" in " ".join(h.value for h in at.subheader)
    html = guide_html(at)
    assert len(re.findall(r"<h2>Lesson \d: .* \(15 min\)</h2>", html)) == 3
    assert "http" not in html.split("<h2>", 1)[1]
    assert "target=" not in html  # a plain link stays in the tab (st.markdown's open a new one)
    links = re.findall(r'<a href="(\./[^"]*)"', html)
    assert len(links) >= 10
    for link in links:
        page = link[2:].split("?", 1)[0] or "explorer"
        assert page in PAGES, link
        # students read About too: the normal view; a teacher in presentation mode stays in it
        assert ("present=1" in link) == present, link
    assert ("already has <code>present=1</code>" in html) == present


def test_about_names_every_page_of_the_navigation():
    import ast
    from pathlib import Path

    app = Path(__file__).resolve().parents[2] / "headscope" / "frame" / "app.py"
    titles = [kw.value.value for node in ast.walk(ast.parse(app.read_text()))
              if isinstance(node, ast.Call) and getattr(node.func, "attr", "") == "Page"
              for kw in node.keywords if kw.arg == "title"]
    assert len(titles) == len(PAGES)
    at = open_app("about")
    listed = next(m.value for m in at.markdown if "**Explorer**" in m.value)
    for title in titles:
        assert f"**{title}**" in listed, title
