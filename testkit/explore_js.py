"""The Explorer's browser math (headscope/ui/attention/js/explore.js) run by node on a payload, and
an independent numpy reference of the views it shows, for the tests that compare the two: words
from transformers' tokenizer (its word ids and offsets), Clark et al. 2019's merge, hidden
[CLS]/[SEP] dropped and rows renormalised, all computed here from the token-level maps that
Model.attend returns (or from transformers' own projections: testkit.models.hf_norm_maps)."""

import json
import shutil
import subprocess
import tempfile
from pathlib import Path

import numpy as np

from headscope.ui.attention.bundle import streamlit_js

JS = streamlit_js()  # the component's modules as one (bundle.py): every function in one scope

NODE = shutil.which("node")


def run_js(data: dict, script: str):
    """Run `script` after the component's modules, joined, with `d` the payload (JSON as the
    page sends it) and `src = exSource(d)`; the script calls out(value) once. Returns that
    value, parsed. Typed arrays become lists, NaN becomes None."""
    prelude = (
        "const d = JSON.parse(process.env.EXPLORE_DATA_FILE ? "
        "(await import('node:fs')).readFileSync(process.env.EXPLORE_DATA_FILE, 'utf8') : '{}');\n"
        "const src = exSource(d);\n"
        "const plain = (k, v) => (ArrayBuffer.isView(v) ? Array.from(v) : "
        "(typeof v === 'number' && Number.isNaN(v) ? null : v));\n"
        "const out = (v) => console.log(JSON.stringify(v, (k, x) => plain(k, x)));\n")
    with tempfile.TemporaryDirectory() as tmp:
        module, payload = Path(tmp) / "explore.mjs", Path(tmp) / "data.json"
        payload.write_text(json.dumps(data), encoding="utf-8")
        module.write_text(JS + "\n" + prelude + script + "\n", encoding="utf-8")
        done = subprocess.run([NODE, str(module)], capture_output=True, text=True,
                              env={"EXPLORE_DATA_FILE": str(payload)}, timeout=60)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


# --- the reference: the shown views in numpy ----------------------------------------------------

def word_groups(tokenizer, text: str, pair: str | None = None) -> tuple:
    """(groups, labels, special) of the words transformers' tokenizer makes of a text (and its
    pair): each word's token positions (one word id within one sequence), labelled by its
    characters in the text (its pieces' offsets); a special token is a group of its own,
    labelled by its token and flagged special."""
    enc = tokenizer(text, pair, return_offsets_mapping=True, return_special_tokens_mask=True)
    tokens = tokenizer.convert_ids_to_tokens(enc["input_ids"])
    sources = (text, pair)
    groups, spans, labels, special, seen = [], [], [], [], {}
    for t, (w, seq, (a, b), sp) in enumerate(zip(enc.word_ids(), enc.sequence_ids(),
                                                  enc["offset_mapping"],
                                                  enc["special_tokens_mask"])):
        if w is None or sp:
            groups.append([t])
            spans.append(None)
            labels.append(tokens[t])
            special.append(True)
        elif (seq, w) in seen:
            g = seen[seq, w]
            groups[g].append(t)
            spans[g] = (seq, spans[g][1], b)
        else:
            seen[seq, w] = len(groups)
            groups.append([t])
            spans.append((seq, a, b))
            labels.append(None)
            special.append(False)
    labels = [lab if span is None else sources[span[0]][span[1]:span[2]]
              for lab, span in zip(labels, spans)]
    return groups, labels, special


def merged(m, groups) -> np.ndarray:
    """Clark et al. 2019: attention to a word is summed over its pieces, attention from it
    averaged over them. m (..., T, T) -> (..., G, G)."""
    m = np.asarray(m, dtype=np.float64)
    return np.stack([np.stack([m[..., q, :][..., k].sum(-1) for k in groups], -1).mean(-2)
                     for q in groups], -2)


def rows_to_one(m) -> np.ndarray:
    """Each row divided by its sum; a row of zeros stays zero."""
    m = np.asarray(m, dtype=np.float64)
    total = m.sum(-1, keepdims=True)
    return np.where(total > 0, m / np.where(total > 0, total, 1.0), m)


def kept_groups(group_special, hide: bool) -> list:
    """The indices of the groups shown: all, or with [CLS]/[SEP] hidden the groups that are not
    all special (all of them if nothing else is left)."""
    keep = [i for i, s in enumerate(group_special) if not (hide and s)]
    return keep or list(range(len(group_special)))


def shown_maps(m, groups, group_special, hide: bool, renormalise: bool = True) -> np.ndarray:
    """Token-level maps (..., T, T) as the Explorer shows them: merged to the groups, the hidden
    groups' rows and columns dropped and (renormalise) each row divided by what is left of it."""
    keep = kept_groups(group_special, hide)
    out = merged(m, groups)[..., keep, :][..., keep]
    return rows_to_one(out) if renormalise and len(keep) < len(groups) else out
