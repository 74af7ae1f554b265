"""The project's own documents shown in the app (About): the teaching guide, with its links made
relative so that they open on whatever host serves the app."""

import re
from pathlib import Path

DOCS = Path(__file__).resolve().parent.parent / "docs"
GUIDE_HOST = "http://localhost:8501/"  # the guide assumes `make run` on the teacher's machine


def teaching_guide() -> str:
    """docs/teaching.md as markdown whose links work on any host: localhost:8501 links become
    relative ("./two_readings?..."). Our own text; no user text goes into it."""
    text = (DOCS / "teaching.md").read_text(encoding="utf-8")
    return re.sub(r"\]\(" + re.escape(GUIDE_HOST), "](./", text)
