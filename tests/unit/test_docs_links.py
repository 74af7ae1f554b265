"""Every relative link (and its #anchor) and every repository path named in README.md and
docs/*.md resolves, and the README stays short enough to read in a minute."""

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DOCS = sorted([ROOT / "README.md", *(ROOT / "docs").glob("*.md")])
NOT_YET_MERGED: set[str] = set()  # docs written on a branch not merged yet; empty on main
LINK = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)\)")
TOP = ("mha_core", "pages", "tests", "testkit", "bench", "deploy", "docs", "headscope",
       ".streamlit", ".ci")
FILES = ("app.py", "Makefile", "Dockerfile", "pyproject.toml", "requirements.txt",
         "requirements-dev.txt")
# a path that starts at the top of the repository: not after a letter, a dot or a slash
# (../shared/..., a URL, a module name such as mha_core.syntax)
PATH = re.compile(r"(?<![\w./-])((?:" + "|".join(map(re.escape, TOP)) + r")/[\w./*-]*)")


def rel(path: Path) -> str:
    return path.relative_to(ROOT).as_posix()


def prose(text: str) -> str:
    """The text without HTML comments (the hidden "remeasure" notes); code blocks stay: they
    name paths too."""
    return re.sub(r"<!--.*?-->", "", text, flags=re.S)


def slug(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens."""
    text = re.sub(r"[`*_]|\[([^\]]*)\]\([^)]*\)", r"\1", heading.strip()).lower()
    return re.sub(r"[^\w\- ]", "", text).replace(" ", "-")


def anchors(path: Path) -> set:
    text = re.sub(r"```.*?```", "", path.read_text(encoding="utf-8"), flags=re.S)
    return {slug(m) for m in re.findall(r"^#{1,6} (.+)$", text, flags=re.M)}


def missing(target: Path) -> bool:
    return not target.exists() and rel(target) not in NOT_YET_MERGED


@pytest.mark.parametrize("doc", DOCS, ids=rel)
def test_every_relative_link_resolves(doc):
    bad = []
    for target in LINK.findall(prose(doc.read_text(encoding="utf-8"))):
        if re.match(r"[a-z]+:", target):  # http:, https:, mailto:
            continue
        file, _, anchor = target.partition("#")
        path = (doc.parent / file).resolve() if file else doc
        if not path.is_relative_to(ROOT):
            bad.append(f"{target} (outside the repository)")
        elif missing(path):
            bad.append(f"{target} (no such file)")
        elif anchor and path.suffix == ".md" and path.exists() and anchor not in anchors(path):
            bad.append(f"{target} (no heading #{anchor} in {rel(path)})")
    assert not bad, f"{rel(doc)}: " + "; ".join(bad)


@pytest.mark.parametrize("doc", DOCS, ids=rel)
def test_every_repository_path_resolves(doc):
    text = prose(doc.read_text(encoding="utf-8"))
    bad = []
    for name in PATH.findall(text):
        name = name.rstrip(".,:;")
        if "*" in name:
            if not list(ROOT.glob(name)):
                bad.append(name)
        elif missing(ROOT / name):
            bad.append(name)
    for name in re.findall(r"`([\w.-]+)`", text):
        if name in FILES and not (ROOT / name).exists():
            bad.append(name)
    assert not bad, f"{rel(doc)} names paths that do not exist: {sorted(set(bad))}"


def test_the_readme_is_short_and_keeps_the_two_commands():
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    assert len(text.splitlines()) <= 200
    assert "make run" in text and "make test" in text
    assert "![" in text  # the screenshot


def test_every_doc_is_linked_from_the_readme():
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    linked = {m.split("#")[0] for m in LINK.findall(text)}
    unlinked = [rel(d) for d in DOCS[1:] if rel(d) not in linked]
    assert not unlinked, f"docs not linked from the README: {unlinked}"
