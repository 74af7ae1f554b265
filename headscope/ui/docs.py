"""The project's own documents shown in the app: the teaching guide (About) and the glossary.

The guide's links are made relative to the server that serves the app and open in the same
tab: Streamlit's markdown opens every link in a new tab (a fresh session, presentation mode
off), so the guide is drawn as HTML from our own markdown (markdown-it, CommonMark), where a
plain link stays in the tab. No user text goes into either document."""

import re

from markdown_it import MarkdownIt

from ..files import GUIDE

DOCS = GUIDE
GUIDE_HOST = "http://localhost:8501/"  # the guide assumes `make run` on the teacher's machine


PRESENT_NOTE = ("Every link below already has `present=1`. For the students' own screens, use "
                "**Copy link**: one click in the row shows the same view's link without "
                "`present=1` (the address bar never carries it) and, beside it, its **QR code**, "
                "large enough for the class to scan from the screen.")


def teaching_guide(present: bool = False) -> str:
    """docs/teaching.md as markdown for the About page, with links that work on any host
    (localhost:8501 links become relative, "./two_readings?..."). present: the reader is in
    presentation mode (a teacher at the projector), so the links keep present=1; otherwise
    (students read About too) they open the normal view."""
    text = (DOCS / "teaching.md").read_text(encoding="utf-8")
    if not present:
        flat = re.sub(r"\s+", " ", PRESENT_NOTE)
        text = re.sub(r"\s+".join(map(re.escape, flat.split(" "))),
                      "Here the links open the normal view; **Copy link** gives a projector's "
                      "link, and a QR code for phones.", text)
        text = re.sub(r"[?&]present=1(?=[)&])", "", text)
    return re.sub(r"\]\(" + re.escape(GUIDE_HOST), "](./", text)


def glossary() -> str:
    """docs/glossary.md, the one vocabulary of the app, the guide and the README."""
    return (DOCS / "glossary.md").read_text(encoding="utf-8")


def as_html(markdown: str) -> str:
    """Our own markdown as HTML whose links stay in the tab (no target attribute; Streamlit's
    st.html keeps the page's styles)."""
    return MarkdownIt("commonmark").render(markdown).strip()  # st.html strips it too
