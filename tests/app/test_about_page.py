"""The About page: what headscope is, how it checks itself, its limits, and the teaching guide
rendered in the app with links that work on any host."""

import re

from testkit.apptest import PAGES, open_app, survives


def test_about_renders_the_guide_with_relative_links(bundled):
    at = open_app("about")
    survives(at)
    text = "\n".join(m.value for m in at.markdown)
    assert "How it checks itself" in " ".join(h.value for h in at.subheader)
    assert len(re.findall(r"^## Lesson \d: .* \(15 min\)$", text, flags=re.M)) == 3
    assert "](http" not in text  # every link is relative to the serving host
    links = re.findall(r"\]\((\./[^)\s]*)\)", text)
    assert len(links) >= 10
    for link in links:
        page = link[2:].split("?", 1)[0] or "explorer"
        assert page in PAGES, link
        assert "present=1" not in link  # students read About too: the normal view
    assert "already has `present=1`" not in text


def test_about_names_every_page_of_the_navigation():
    import ast
    from pathlib import Path

    app = Path(__file__).resolve().parents[2] / "app.py"
    titles = [kw.value.value for node in ast.walk(ast.parse(app.read_text()))
              if isinstance(node, ast.Call) and getattr(node.func, "attr", "") == "Page"
              for kw in node.keywords if kw.arg == "title"]
    assert len(titles) == len(PAGES)
    at = open_app("about")
    listed = next(m.value for m in at.markdown if "**Explorer**" in m.value)
    for title in titles:
        assert f"**{title}**" in listed, title
