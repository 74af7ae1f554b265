"""The whole attention tensor as files (.npz, JSON, CSV): the app's downloads and `headscope
export`. No Streamlit. The enlarged head's CSV/JSON is the browser's (excontrols.js exDownload,
from the maps it draws)."""

import csv
import io
import json


def tensor_npz(tokens, att, **meta) -> bytes:
    """att (L, H, T, T) as a NumPy .npz: arrays "attentions" (float32) and "tokens" (str), and
    "meta" (a JSON string: model, text, numbering). np.load(f)["attentions"] reads it back."""
    import numpy as np

    out = io.BytesIO()
    np.savez_compressed(out, attentions=np.asarray(att, dtype=np.float32),
                        tokens=np.array([str(t) for t in tokens]),
                        meta=np.array(json.dumps(meta, ensure_ascii=False)))
    return out.getvalue()


def tensor_json(tokens, att, **meta) -> str:
    """{**meta, "shape": [L, H, T, T], "tokens": [...], "attentions": [[[[...]]]]} (6 decimals)."""
    import numpy as np

    a = np.round(np.asarray(att, dtype=np.float64), 6)
    return json.dumps({**meta, "shape": list(a.shape), "tokens": [str(t) for t in tokens],
                       "attentions": a.tolist()}, ensure_ascii=False)


def tensor_csv(tokens, att) -> str:
    """Long format, one row per weight: layer, head (from 1), query, key (from 0), their tokens,
    weight. L*H*T*T rows (1.2 M at 128 tokens on a 6 x 12 model)."""
    import numpy as np

    a = np.asarray(att, dtype=np.float32)  # (L, H, T, T)
    L, H, T, _ = a.shape
    tok = [str(t) for t in tokens]
    out = io.StringIO()
    w = csv.writer(out)
    w.writerow(["layer", "head", "query", "key", "query_token", "key_token", "weight"])
    for layer in range(L):
        for h in range(H):
            for q in range(T):
                w.writerows([layer + 1, h + 1, q, k, tok[q], tok[k], f"{a[layer, h, q, k]:.6f}"]
                            for k in range(T))
    return out.getvalue()
