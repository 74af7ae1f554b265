"""The shown attention as files: CSV (a labelled matrix) and JSON (tokens, layer, head, weights).
No Streamlit; the download buttons call these."""

import csv
import io
import json


def attention_csv(labels, weights) -> str:
    """A (G, G) map as CSV: a header row of keys, then one row per query, its label first."""
    out = io.StringIO()
    w = csv.writer(out)
    w.writerow(["query \\ key", *labels])
    for label, row in zip(labels, weights):
        w.writerow([label, *(f"{float(x):.6f}" for x in row)])
    return out.getvalue()


def attention_json(labels, weights, **meta) -> str:
    """{**meta, "tokens": [...], "weights": [[...]]}: meta holds model, text, layer, head, view."""
    rows = [[round(float(x), 6) for x in row] for row in weights]
    return json.dumps({**meta, "tokens": list(labels), "weights": rows}, ensure_ascii=False)


# --- the whole L x H x T x T tensor with its tokens (the app's downloads, headscope.export) ---
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
