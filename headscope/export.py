"""Standalone HTML and data files: `headscope export` and View.save_html.

    headscope export "The cat sat on the mat." -o cat.html   # the head view, one file
    headscope export TEXT --view model -o m.html            # or --view heads --layer 4
    headscope export TEXT -o cat.npz                        # L x H x T x T (.npz .csv .json)
    headscope export "The capital of France is" --model bundled-decoder -o p.json --target Paris
                        # a decoder's JSON also holds the next word at every position and what
                        # each head adds to the target's logit at the last position

The HTML holds the drawing core with the anywidget adapter (headscope.ui.attention.bundle) and a
stand-in model, the data as base64 inside JSON: it opens from file:// with no network at all."""

import argparse
import json
import sys
from pathlib import Path

import numpy as np

from headscope.ui import export as files
from mha_core.api import add_device_argument
from mha_core.loading import CheckpointError

from . import view_input

PAGE = """<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>headscope · {title}</title>
<style>body {{ font-family: sans-serif; margin: 16px; color: #31333f; }}
#hs-view {{ max-width: 1400px; }}</style></head>
<body><div id="hs-view"></div>
<script type="application/json" id="hs-data">{data}</script>
<script type="module">
// the anywidget module (drawing core + adapter) imported from a Blob, with a stand-in model
const {{ module, css, payload }} = JSON.parse(document.getElementById("hs-data").textContent);
const url = URL.createObjectURL(new Blob([module], {{ type: "text/javascript" }}));
const mod = await import(url);
const state = {{ payload, css, view: {{}} }};
const model = {{ get: (k) => state[k], set: (k, v) => {{ state[k] = v; }}, on() {{}}, off() {{}},
  save_changes() {{}}, send() {{}} }};
mod.default.render({{ model, el: document.getElementById("hs-view") }});
</script></body></html>
"""


def html(payload: dict) -> str:
    """One self-contained page for a payload (its arrays as base64). The JSON is written with
    "<", ">" and "&" escaped, so no token can close the script element."""
    from headscope.ui.attention import bundle

    data = json.dumps(dict(module=bundle.anywidget_js(), css=bundle.css(), payload=payload),
                      ensure_ascii=True)
    data = data.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")
    title = (payload.get("meta") or {}).get("title") or payload.get("view", "attention")
    return PAGE.format(title=_escape(str(title)), data=data)


def _escape(s: str) -> str:
    return s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def write_html(payload: dict, path) -> str:
    Path(path).write_text(html(payload), encoding="utf-8")
    return str(path)


def decoder_parts(model, text: str, target=None, top_k: int = 5) -> dict:
    """What a decoder adds to the JSON export: "causal", the next word after every token (top-k
    with probabilities) and the direct logit attribution of `target` (None: the top next token)
    at the last position (mha_core.logit_attribution)."""
    from mha_core.logit_attribution import logit_attribution

    return dict(causal=True,
                next_word=[[[tok, round(p, 6)] for tok, p in row]
                           for row in model.next_word(text, top_k)],
                logit_attribution=logit_attribution(model, text, -1, target).as_dict())


def save_tensor(a: "view_input.Attention", path, extra: dict | None = None) -> str:
    """The whole (L, H, T, T) tensor with its tokens, by the file's suffix: .npz, .json or .csv;
    extra (a decoder's parts) goes into the JSON."""
    path = Path(path)
    meta = dict(model=a.model, text=a.text, numbering="layer and head from 1 in CSV; "
                "arrays index from 0", **(extra if path.suffix == ".json" and extra else {}))
    if path.suffix == ".npz":
        path.write_bytes(files.tensor_npz(a.tokens, a.att, **meta))
    elif path.suffix == ".json":
        path.write_text(files.tensor_json(a.tokens, a.att, **meta), encoding="utf-8")
    elif path.suffix == ".csv":
        path.write_text(files.tensor_csv(a.tokens, a.att), encoding="utf-8")
    else:
        raise ValueError(f"{path.name}: write .html, .npz, .json or .csv")
    return str(path)


def load_tensor(path) -> tuple:
    """(attentions (L, H, T, T) float32, tokens list) from a file save_tensor wrote."""
    path = Path(path)
    if path.suffix == ".npz":
        with np.load(path) as f:
            return f["attentions"], [str(t) for t in f["tokens"]]
    if path.suffix == ".json":
        d = json.loads(path.read_text(encoding="utf-8"))
        return np.asarray(d["attentions"], dtype=np.float32), d["tokens"]
    if path.suffix == ".csv":
        import csv

        with path.open(encoding="utf-8", newline="") as f:
            rows = list(csv.DictReader(f))
        L, H = (max(int(r[c]) for r in rows) for c in ("layer", "head"))
        T = max(int(r["query"]) for r in rows) + 1
        att = np.zeros((L, H, T, T), dtype=np.float32)
        tokens = [""] * T
        for r in rows:
            q, k = int(r["query"]), int(r["key"])
            att[int(r["layer"]) - 1, int(r["head"]) - 1, q, k] = float(r["weight"])
            tokens[k] = r["key_token"]
        return att, tokens
    raise ValueError(f"{path.name}: read .npz, .json or .csv")


def main(argv=None) -> int:
    """`headscope export`: one text's view as standalone HTML, or its tensor as .npz/.json/.csv."""
    ap = argparse.ArgumentParser(prog="headscope export", description=main.__doc__)
    ap.add_argument("text", help="the sentence (a typed [SEP] starts sentence B)")
    ap.add_argument("-o", "--output", required=True,
                    help="file to write: .html (the view), .npz, .json or .csv (all weights)")
    ap.add_argument("--model", default=None,
                    help="a checkpoint directory, a .gguf file, or bundled-decoder (default: "
                         "the bundled encoder)")
    ap.add_argument("--target", default=None,
                    help="a decoder's JSON: the word whose logit is attributed to each head at "
                         "the last position (default: the model's top next word)")
    ap.add_argument("--view", choices=("head", "model", "heads"), default="head")
    ap.add_argument("--layer", type=int, default=1, help="layer, from 1 (head view, heads)")
    add_device_argument(ap)
    args = ap.parse_args(argv)
    out = Path(args.output)
    if out.suffix not in (".html", ".npz", ".json", ".csv"):
        print(f"headscope export: {out.name}: the output must end in .html, .npz, .json or .csv",
              file=sys.stderr)
        return 2
    if not args.text.strip():
        print("headscope export: the text is empty", file=sys.stderr)
        return 2
    try:
        model = view_input._bert(args.model, args.device)
        a = view_input.read(args.text, model=model)
        if out.suffix != ".html":
            extra = None
            if out.suffix == ".json" and model.is_decoder:
                extra = decoder_parts(model, args.text, args.target)
            save_tensor(a, out, extra)
        elif args.view == "heads":
            write_html(view_input.grid(a, args.layer - 1), out)
        else:
            write_html(view_input.lines(a, args.view, args.layer - 1 if args.view == "head" else 0),
                       out)
    except (ValueError, OSError, CheckpointError) as e:
        print(f"headscope export: {e}", file=sys.stderr)
        return 1
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
