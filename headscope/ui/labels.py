"""The one way user text (tokens, words, sentences) becomes a label in a figure.

Plotly reads a little HTML in every text it draws (<b>, <br>, <a href>, entities), so a token
such as "<script>" or "&amp;" must be escaped, and control or format characters made visible,
before it goes into a title, a tick, a hover text or a cell. Every figure builder passes user
text through `label` (or `axis_labels`, which calls it); nothing else escapes.
"""

import html
import unicodedata

ZWSP = "\u200b"  # tells repeated tokens apart on a categorical axis; invisible when drawn


def visible(s) -> str:
    """A token as plain text a reader can see: control characters made visible (NUL -> ␀) and
    format characters such as right-to-left overrides shown as <U+202E>."""
    out = []
    for ch in str(s):
        if ch < " ":
            ch = chr(0x2400 + ord(ch))  # the Control Pictures block: ␀ ␁ ... ␟
        elif ch == "\x7f":
            ch = "␡"
        elif unicodedata.category(ch) in ("Cc", "Cf", "Zl", "Zp"):
            ch = f"<U+{ord(ch):04X}>"
        out.append(ch)
    return "".join(out) or "␣"


def label(s, max_chars: int | None = None) -> str:
    """User text as plotly text: visible(), cut to max_chars (with "…") if given, then &, < and
    > escaped, so plotly's pseudo-HTML never turns user text into markup."""
    text = visible(s)
    if max_chars is not None and len(text) > max_chars:
        text = text[:max_chars - 1] + "…"
    return html.escape(text, quote=False)


def labels(seq, max_chars: int | None = None) -> list:
    return [label(s, max_chars) for s in seq]


def axis_labels(seq) -> list:
    """Labels made unique, so a categorical axis keeps repeated tokens ("the" twice) apart.
    Repeats get invisible zero-width spaces; tick text and hover still read as the token."""
    seen, out = {}, []
    for s in map(label, seq):
        n = seen.get(s, 0)
        seen[s] = n + 1
        out.append(s + ZWSP * n)
    return out
