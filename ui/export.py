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
