"""The attention component's payloads read back in numpy, as the browser decodes them (core.js
`decode`, explore.js `decodeRows`, lines.js's reading of a lines payload): for the tests, which
read what a page sent with these. tests/unit/test_payload_fixtures.py holds both readers, this
one and core.js, to the same hand-made bytes (tests/fixtures/payloads.json).

Shape letters: L layers (L' sent), H heads, T tokens."""

import base64
import json

import numpy as np

U2 = 65535  # 16-bit levels: weight = level / 65535 (headscope.ui.attention.payload.pack)


def unpack(d: dict) -> np.ndarray:
    """An array packed by payload.pack (levels back to weights), as the browser decodes it."""
    raw = np.frombuffer(base64.b64decode(d["b64"]), dtype="<" + d["dtype"])
    out = raw.astype(np.float32)
    if d["dtype"] == "u2":
        out = out / U2
    elif d["dtype"] == "u1":
        out = out / 255
    elif d["dtype"] != "f4":
        out = raw.astype(np.int64)
    if d.get("tril"):  # the lower triangles back in place, zeros above
        shape = d["shape"]
        full = np.zeros(shape, dtype=out.dtype)
        full[..., *np.tril_indices(shape[-1])] = out.reshape(*shape[:-2], -1)
        return full
    return out.reshape(d["shape"])


def unpack_lines(p: dict) -> dict:
    """{(layer, head): (q, k, w)} from a lines payload: the browser's reading of it."""
    q, k, w, off = (unpack(p[x]) for x in ("q", "k", "w", "offsets"))
    out = {}
    for i in range(p["layers"] * p["heads"]):
        s = slice(off[i], off[i + 1])
        out[divmod(i, p["heads"])] = (q[s], k[s], w[s])
    return out


def unpack_rows(d: dict, name: str) -> np.ndarray:
    """Rows sent as explorer_payload.rows, as explore.js decodeRows reads them: the ordinary
    tokens' levels times their row's sum (name_ns). (..., T) weights."""
    a, total = unpack(d[name]), unpack(d[f"{name}_ns"])
    ordinary = ~np.asarray(d["special"], dtype=bool)
    a[..., ordinary] *= total[..., None]
    return a


def norm_view(d: dict, maps) -> tuple:
    """(shares, sums) of the norm maps the browser makes from the weights maps (L', H(+1), T, T)
    of the sent layers and the value norms ||f(x_j)|| (L, H, T): alpha_ij ||f(x_j)||, shares
    (L', H, T, T) each row divided by its sum, sums (L', H, T) the raw rows' sums."""
    H = d["heads"]
    raw = maps[:, :H] * unpack(d["vnorm"])[d["sent"]][:, :, None, :]  # (L', H, T, T)
    sums = raw.sum(axis=-1)
    return raw / np.where(sums > 0, sums, 1.0)[..., None], sums


def payload_bytes(p: dict) -> int:
    """The payload's size as JSON text (what travels to the browser, give or take)."""
    return len(json.dumps(p))
