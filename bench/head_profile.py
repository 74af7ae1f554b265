"""Does the bundled model's attention look like the BERT that Clark et al. 2019 describe?

    .venv/bin/python bench/head_profile.py [--model PATH]

Prints, over the presets: the share of attention on [CLS], [SEP] and punctuation per layer, the
heads that put > 0.5 on the previous / next token, the entropy of [CLS]'s row in the last layer,
and where "with" looks in the telescope sentence. Layers and heads are 1-indexed, as in the paper.
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench import harness  # noqa: E402

SENTENCES = [
    "I saw the man with a telescope.",
    "The astronomer saw the man with a telescope.",
    "The animal didn't cross the street because it was too tired.",
    "I went to the bank to deposit money.",
    "We sat on the bank of the river.",
    "The cat sat on the mat.",
    "Time flies like an arrow; fruit flies like a banana.",
    "She said that the report, which was long, would be ready by Friday.",
    "After the storm, the village rebuilt its bridge and its school.",
    "Do you know where the nearest station is?",
]


def main():
    ap = harness.parser(__doc__)
    ap.add_argument("--model", default=None, help="a checkpoint directory (default: bundled)")
    args = ap.parse_args()
    import numpy as np

    import mha_core
    from mha_core import metrics as mt
    from mha_core import patterns as pt
    from mha_core import shown

    bert = mha_core.load_model(args.model)
    per = [mt.result_metrics(bert.attend(s)) for s in SENTENCES]
    m = mt.mean_metrics(per)
    L, H = m["cls"].shape
    print(f"{bert!r}, {len(SENTENCES)} sentences (one [SEP] each)\n")
    print("layer  [CLS]  [SEP]  punct   (mean share over heads and rows)")
    for layer in range(L):
        print(f"{layer + 1:5d}  {m['cls'][layer].mean():.2f}   {m['sep'][layer].mean():.2f}   "
              f"{m['punct'][layer].mean():.2f}")
    for key, name in (("prev", "previous"), ("next", "next")):
        heads = [f"{i + 1}-{h + 1} ({m[key][i, h]:.2f})" for i, h in np.argwhere(m[key] > 0.5)]
        print(f"\nheads with > 0.5 on the {name} token: {len(heads)}: {', '.join(heads)}")
    labels = pt.label_heads(m)
    print("\nlabels of the averaged profile:",
          ", ".join(f"{k} {v}" for k, v in zip(*np.unique(labels, return_counts=True))))
    ent = [float(mt.entropy(bert.attend(s).attentions[-1, :, :1, :]).mean()) for s in SENTENCES]
    print(f"entropy of [CLS]'s row, last layer, mean over heads: {np.mean(ent):.2f} nats "
          f"(log T ~ {np.mean([np.log(len(bert.encode(s).tokens)) for s in SENTENCES]):.2f})")

    res = bert.attend(SENTENCES[0])
    labels_w, _ = res.words()
    g = shown.find_word(labels_w, "with")
    rows = res.word_level(res.attentions)[:, :, g, :].numpy()  # (L, H, G)
    to = {w: rows[:, :, shown.find_word(labels_w, w)] for w in ("saw", "man", "telescope")}
    print(f"\n'with' in '{SENTENCES[0]}':")
    for w, share in to.items():
        i, h = np.unravel_index(np.argmax(share), share.shape)
        print(f"  most on '{w}': head {i + 1}-{h + 1} ({share[i, h]:.2f})")
    if L >= 9 and H >= 6:
        for (i, h) in ((7, 4), (9, 6)):  # Clark et al.: prep 7-4, pobj 9-6
            r = rows[i - 1, h - 1]
            print(f"  head {i}-{h}: " + ", ".join(f"{w} {r[j]:.2f}" for j, w in
                                                 enumerate(labels_w)))


if __name__ == "__main__":
    main()
