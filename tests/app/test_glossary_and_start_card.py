"""The Glossary page (docs/glossary.md, one vocabulary for every page) and the start card's
session memory: closed once, it stays closed; a link to a view never shows it."""

import pytest

from testkit.apptest import open_app, survives
from testkit.server import ROOT

GLOSSARY = (ROOT / "docs" / "glossary.md").read_text()
TERMS = ["nats", "Entropy", "Query, key, value", "[CLS] and [SEP]", "## pieces", "Top key",
         "Total variation", "Norm-weighted", "Summed head", "Trained one-head model",
         "Best-fit single head", "Focus token", "1 − cos"]


@pytest.mark.parametrize("term", TERMS)
def test_the_glossary_defines_the_term(term):
    bold = GLOSSARY.split("**")[1::2]  # each entry starts with its term in bold
    assert any(term.lower() in b.lower() for b in bold), term


def test_the_glossary_gives_the_scale_of_nats():
    flat = " ".join(GLOSSARY.split())
    assert "0 nats = all the attention on one target; ln T nats = spread evenly" in flat


def test_the_glossary_page_shows_the_document():
    at = open_app("glossary")
    survives(at)
    text = " ".join(m.value for m in at.markdown)
    for term in TERMS:
        assert term in text, term


def test_the_start_card_is_remembered_closed(bundled):
    at = open_app("explorer")
    assert at.button(key="start_close")
    at.button(key="start_close").click().run()
    survives(at)
    assert not any(b.key == "start_close" for b in at.button)
    at.text_area(key="text").set_value("The cat sat on the mat.").run()  # another run
    assert not any(b.key == "start_close" for b in at.button)


def test_a_link_to_a_view_shows_no_start_card(bundled):
    at = open_app("explorer", text="The cat sat on the mat.", layer="2")
    assert not any(b.key == "start_close" for b in at.button)


RETIRED = {"focus word": "focus token", "enlarge head": "Head", "looks most at": "top key"}


def test_retired_terms_are_used_nowhere():
    """One vocabulary: the words the glossary replaced appear in no page, view or document."""
    files = [*ROOT.glob("pages/*.py"), *ROOT.glob("headscope/ui/**/*.py"), *ROOT.glob("docs/*.md"),
             ROOT / "README.md"]
    found = [(f.relative_to(ROOT), old) for f in files for old in RETIRED
             if old in " ".join(f.read_text().lower().split())]
    assert not found, found
