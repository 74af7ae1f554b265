"""What the attention component is sent: a small JSON dict whose maps travel as base64 binary
(never nested lists, which are slow to serialise on the server and large on the wire). numpy in,
plain dicts out; no Streamlit. The browser decodes them (core.js `decode`); the tests read them
with testkit.payloads, checked against the same hand-made bytes as core.js.

Two payloads here, one per view family (shape letters: L layers, H heads, G shown tokens); the
Explorer's (every layer at once) is explorer_payload.py's:
    grid_payload   the heads of one layer plus extra maps (single head, mean), dense (M, G, G);
                   big=True: one map drawn large (the Explorer's enlarged head)
    lines_payload  every layer's heads as lines (head view, model view): sparse entries
"""

import base64

import numpy as np

from ..style import COLORSCALE, HEAD_COLORS, SPECIAL_COLOR

WINDOW = 40  # the most tokens a grid map shows at once: longer texts show a window of them
DENSE_F4_BYTES = 4_000_000  # above this a dense map set is sent as 16-bit levels, not float32
MAX_LINES = 250_000  # line entries sent at most (6 bytes each): 1.5 MB, 2 MB as base64
# weaker lines are not sent: drawn at 1% opacity they are invisible. At 128 tokens this halves
# what is sent (bundled model: 297k entries >= 0.005, 137k >= 0.01)
MIN_LINE_WEIGHT = 0.01
U2 = 65535  # 16-bit levels: weight = level / 65535, error <= 7.7e-6


def pack(arr, dtype: str = "f4", tril: bool = False) -> dict:
    """An array as {"dtype", "shape", "b64"}. dtype "f4" sends float32 as is; "u2" and "u1"
    send values in [0, 1] as 16- or 8-bit levels (the decoder divides by 65535 or 255);
    "i2"/"u4" send integers as they are. Little-endian, C order. tril: a decoder's maps
    (..., T, T), zero above the diagonal, sent as their lower triangles alone (row by row,
    T (T + 1) / 2 values a map: about half the bytes); "tril": true tells the decoder."""
    a = np.asarray(arr)
    values = a[..., *np.tril_indices(a.shape[-1])] if tril else a  # (..., T (T + 1) / 2)
    if dtype == "f4":
        raw = values.astype("<f4", copy=False)
    elif dtype in ("u2", "u1"):
        top = U2 if dtype == "u2" else 255
        raw = np.rint(np.clip(values, 0.0, 1.0) * top).astype("<" + dtype)
    elif dtype in ("i2", "u4"):
        raw = values.astype("<" + dtype, copy=False)
    else:
        raise ValueError(f"unknown dtype {dtype!r}")
    out = dict(dtype=dtype, shape=list(a.shape),
               b64=base64.b64encode(np.ascontiguousarray(raw).tobytes()).decode("ascii"))
    return dict(out, tril=True) if tril else out


def _common(labels, special, scale, segments=None) -> dict:
    """What every view gets: the shown tokens (raw text: the browser writes them only through
    textContent and canvas fillText), which are special, the colours and the size factor."""
    return dict(tokens=[str(t) for t in labels], special=[bool(s) for s in special],
                segments=None if segments is None else [int(s) for s in segments],
                colorscale=COLORSCALE, head_colors=list(HEAD_COLORS),
                special_color=SPECIAL_COLOR, scale=float(scale))


def grid_payload(maps, labels, special, titles, heads: int, selected=None, scale=1.0,
                 legend="weight", fit=False, raw=None, value_range=(0.0, 1.0), colorscale=None,
                 maskable=None, focus=None, short_titles=None, big=False) -> dict:
    """The Explorer's maps: maps (M, G, G) with the heads first (`heads` of them, clickable,
    shown as a grid) and extra maps after (single head, mean), titles M strings; selected: the
    enlarged head (outlined); fit: the maps shrink to fit the first screen below their top (a
    projector's layout).

    value_range: the colour scale's ends (one fixed scale for every map, with a legend); a
    scale other than 0..1 (the masked-word difference, -1..1) is sent as float32, and the hover
    then signs its values ("+0.123"). colorscale: plotly-style stops (default style.COLORSCALE).
    raw (M, G, G): a second number per cell for the hover (the raw norm ||alpha f(x)|| behind
    a norm-weighted map), NaN where a map has none; always float32. maskable (G bools): the
    query labels that a click masks (the component sends trigger "token" with the label's
    index). Maps in 0..1 are float32 while small, 16-bit levels beyond DENSE_F4_BYTES.
    focus: the focus token's index (its label is always drawn, bold); short_titles: M titles
    for the heads' thumbnails in presentation mode ("H3 · 1.54"). big: one map (heads=0) drawn
    large with every token labelled while the labels fit (the Explorer's enlarged head)."""
    maps = np.asarray(maps, dtype=np.float32)  # (M, G, G)
    lo, hi = (float(v) for v in value_range)
    unit = (lo, hi) == (0.0, 1.0)
    dtype = "f4" if maps.nbytes <= DENSE_F4_BYTES or not unit else "u2"
    extra = {}
    if raw is not None:
        raw = np.asarray(raw, dtype=np.float32)
        if raw.shape != maps.shape:
            raise ValueError(f"raw {raw.shape} must have the maps' shape {maps.shape}")
        extra["raw"] = pack(raw, "f4")
    if maskable is not None:
        extra["maskable"] = [bool(m) for m in maskable]
    if short_titles is not None:
        extra["short_titles"] = [str(t) for t in short_titles]
    common = _common(labels, special, scale)
    if colorscale is not None:
        common["colorscale"] = colorscale
    return dict(view="grid", maps=pack(maps, dtype), titles=[str(t) for t in titles],
                heads=int(heads), selected=None if selected is None else int(selected),
                legend=str(legend), fit=bool(fit), big=bool(big), range=[lo, hi],
                focus=None if focus is None else int(focus), **extra, **common)


def line_floor(att, min_weight: float = MIN_LINE_WEIGHT, max_lines: int = MAX_LINES) -> float:
    """The weakest weight sent: min_weight, raised so that at most max_lines entries pass."""
    flat = np.asarray(att, dtype=np.float32).ravel()
    strong = flat[flat >= min_weight]  # a few % of the weights: partition only these
    if strong.size <= max_lines:
        return float(min_weight)
    # the max_lines-th largest weight, nudged up past ties so the count stays within the cap
    kth = float(np.partition(strong, strong.size - max_lines)[strong.size - max_lines])
    return float(np.nextafter(np.float32(kth), np.float32(2)))


def lines_payload(att, labels, special, segments=None, view=None, scale=1.0,
                  min_weight: float = MIN_LINE_WEIGHT, max_lines: int = MAX_LINES,
                  maskable=None) -> dict:
    """Every head of every layer as line entries for the head view and the model view.

    att (L, H, G, G). Entries with weight >= floor (line_floor) are sent per (layer, head), the
    strongest first: query index q and key index k as uint16, weight as 16-bit levels, and
    `offsets` (L*H + 1) where each head's entries start. The browser draws from these; it never
    gets the dense maps. view: the page's view state ({mode, layer, heads, focus, seq}).
    maskable (G bools): the tokens a click also masks (trigger "token" with the index)."""
    att = np.asarray(att, dtype=np.float32)  # (L, H, G, G)
    L, H, G, _ = att.shape
    if G >= 65536:
        raise ValueError("lines_payload takes at most 65535 tokens")
    floor = line_floor(att, min_weight, max_lines)
    flat = att.reshape(-1)  # (L*H*G*G,)
    idx = np.flatnonzero(flat >= floor)  # ascending: grouped by head already
    w = flat[idx]
    head = idx // (G * G)
    # by head, the strongest first within a head: head + (1 - w) sorts both at once (w > 0)
    order = np.argsort(head + (1.0 - w.astype(np.float64)), kind="stable")
    head, cell, w = head[order], idx[order] % (G * G), w[order]
    counts = np.bincount(head, minlength=L * H)
    offsets = np.concatenate([[0], np.cumsum(counts)])  # (L*H + 1,)
    q, k = np.divmod(cell, G)
    return dict(view="lines", layers=L, heads=H, floor=floor, n_lines=int(w.size),
                q=pack(q, "i2" if G < 32768 else "u4"), k=pack(k, "i2" if G < 32768 else "u4"),
                w=pack(w, "u2"), offsets=pack(offsets, "u4"),
                state=dict(view or {}),
                maskable=None if maskable is None else [bool(m) for m in maskable],
                **_common(labels, special, scale, segments))
