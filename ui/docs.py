"""The project's own documents shown in the app (About): the teaching guide, with its links made
relative so that they open on whatever host serves the app."""

import re
from pathlib import Path

DOCS = Path(__file__).resolve().parent.parent / "docs"
GUIDE_HOST = "http://localhost:8501/"  # the guide assumes `make run` on the teacher's machine


PRESENT_NOTE = ("Every link below already has `present=1`. For the students' own screens, use "
                "**Copy link**: it gives the same view without `present=1` (the address bar "
                "never carries it).")


def teaching_guide() -> str:
    """docs/teaching.md as markdown for the About page, which students read too: links that work
    on any host (localhost:8501 links become relative, "./two_readings?...") and open in the
    normal view (no present=1). Our own text; no user text goes into it."""
    text = (DOCS / "teaching.md").read_text(encoding="utf-8")
    flat = re.sub(r"\s+", " ", PRESENT_NOTE)
    text = re.sub(r"\s+".join(map(re.escape, flat.split(" "))),
                  "Here the links open the normal view; use Copy link for a projector's link.",
                  text)
    text = re.sub(r"[?&]present=1(?=[)&])", "", text)
    return re.sub(r"\]\(" + re.escape(GUIDE_HOST), "](./", text)
