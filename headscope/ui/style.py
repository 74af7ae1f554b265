"""Colours, fonts and the page's constant CSS, in one place. No user text here, ever."""

import base64
from pathlib import Path

from plotly.colors import diverging, sequential

from mha_core.patterns import PATTERNS

# One fixed scale, 0 to 1, shared by every attention map so maps can be compared: plotly.py's
# "Blues", spelled out, since the Explorer's figures skip the validation that would spell it
# out (and plotly.js's own "Blues" runs the other way: dark for 0)
COLORSCALE = [[i / (len(sequential.Blues) - 1), c] for i, c in enumerate(sequential.Blues)]
# Differences (-1 to 1, e.g. masked minus original attention): plotly.py's "RdBu" reversed,
# spelled out, with pure white at 0: blue where attention fell, red where it rose
DIVERGING = [[i / (len(diverging.RdBu) - 1), "rgb(255,255,255)" if i == 5 else c]
             for i, c in enumerate(reversed(diverging.RdBu))]
# Accuracies (0 to 1) on the What heads learn page: plotly.py's "Viridis", spelled out for the
# same reason
ACCURACY_SCALE = [[i / (len(sequential.Viridis) - 1), c] for i, c in enumerate(sequential.Viridis)]
FONT = dict(size=13)
# 24 distinguishable colours for token identities (focus token views); they repeat after 24
# (no greys: grey means a special token or "other")
PALETTE = ("#1f77b4 #ff7f0e #2ca02c #d62728 #9467bd #8c564b #e377c2 #bcbd22 #17becf #393b79 "
           "#e7ba52 #637939 #ad494a #7b4173 #3182bd #e6550d #31a354 #756bb1 #9c9ede #fdae6b "
           "#a1d99b #ce6dbd #8ca252 #843c39").split()
# Special tokens are greys, so heads that point at words stand out; [CLS] and [SEP] apart
SPECIAL_COLORS = {"[CLS]": "#8c8c8c", "[SEP]": "#cfcfcf"}
SPECIAL_COLOR = "#b0b0b0"  # any other special token ([MASK], [PAD], a model's own)
# 12 distinct head colours for the head view's lines (bertviz's d3 category10 repeats heads 1
# and 2 as heads 11 and 12); models with more heads get further hues in the browser
HEAD_COLORS = ("#1f77b4 #ff7f0e #2ca02c #d62728 #9467bd #8c564b #e377c2 #17becf #bcbd22 "
               "#393b79 #637939 #e7298a").split()
OTHER_COLOR = "#dddddd"  # "other keys" in stacked bars
# One colour per pattern label (mha_core.patterns defines them beside the labels), by short name
LABEL_COLOURS = {p.short: p.colour for p in PATTERNS}

# Constant CSS: less empty space above the page, so the per-head grid and the single-head maps
# fit one 1280x800 screen; in presentation mode, larger text everywhere (Streamlit sizes its
# text in rem) and charts PROJECTOR_SCALE times larger (presentation.plot). The top navigation
# bar is 75 px high at 20 px text: the page starts 10 px below it (4.25rem). A page's heading
# (headscope.ui.page, a container keyed <prefix>_heading) is one line there, cut with an ellipsis.
PAGE_CSS = "<style>[data-testid='stMainBlockContainer']{padding:2rem 2rem 2rem 2rem}</style>"
PRESENT_CSS = ("<style>html{font-size:20px}"
               "[data-testid='stMainBlockContainer']{padding-top:4.25rem}"
               "[class*='_heading'] [data-testid='stCaptionContainer'] p{white-space:nowrap;"
               "overflow:hidden;text-overflow:ellipsis}"
               # captions carry key results: 19 px, dark enough for WCAG AA (not Streamlit's
               # text at 60% opacity, 3.9:1); widget labels at 20 px
               "[data-testid='stCaptionContainer']{font-size:0.95rem;color:#4a4c57;opacity:1}"
               "[data-testid='stWidgetLabel'] p{font-size:1rem}"
               "[data-testid='stTable'] table{font-size:0.95rem}</style>")
PROJECTOR_SCALE = 1.35
# presentation mode's smallest text in figures (CSS px): legible from the back of a room
PRESENT_MIN_PX = 18

# Alert icons: Material symbols, bundled with Streamlit (emoji render as boxes where no emoji
# font is installed, as on many classroom machines)
ICON_ERROR = ":material/block:"
ICON_TYPE = ":material/edit:"
ICON_CUT = ":material/content_cut:"
ICON_INFO = ":material/info:"
ICON_LINK = ":material/link:"
ICON_LANGUAGE = ":material/translate:"
ICON_UNKNOWN = ":material/help:"
ICON_TREE = ":material/account_tree:"
ICON_WAIT = ":material/hourglass_top:"

# The favicon is a file in the repository: an emoji favicon comes from a CDN (Twemoji) and a
# Material one from Google's font servers, and a classroom may be offline. Sent as a data URL
# (345 bytes): given as a file, Streamlit serves it as a media file of the run that set the page
# config, a full run, and drops it after a fragment's run; the tab then asked for it again
# (the address bar changed) and lost its icon to a 404.
FAVICON = "data:image/png;base64," + base64.b64encode(
    (Path(__file__).resolve().parent / "assets" / "favicon.png").read_bytes()).decode("ascii")
