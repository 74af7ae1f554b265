"""Sentences that say what the map on the screen does, computed from that map (never fixed
text that a sentence or a layer could contradict)."""

from .guards import md_text
from .labels import visible

KINDS = {"prev_share": "the previous token", "self_share": "itself", "next_share": "the next token"}


def single_head(summary: dict, labels, layer: int, heads: int, width: int) -> str:
    """The summed head's caption (markdown): what it is, what it does here (collapses onto a
    token, is a sharp diagonal, or spreads, with the numbers), and what it is not.
    summary: mha_core.metrics.map_summary of the map shown; layer from 0."""
    s = summary
    what = (f"The **summed head** reads layer {layer + 1}'s weights as one head of width "
            f"{width}: the {heads} heads' scores summed and put through one softmax.")
    shares = {"top_share": s["top_share"], **{k: s[k] for k in KINDS}}
    kind = max(shares, key=shares.get)
    top = f"“{md_text(visible(labels[s['top']]))}”"
    if kind == "top_share" and shares[kind] >= 0.5:
        does = (f"Here it **collapses onto {top}**: the rows put {s['top_share']:.2f} of their "
                f"weight on it on average (entropy {s['entropy']:.2f} nats).")
    elif shares[kind] >= 0.5:
        does = (f"Here it **does not collapse**: it is a sharp diagonal, each token looking at "
                f"{KINDS[kind]} ({shares[kind]:.2f} on average; entropy "
                f"{s['entropy']:.2f} nats).")
    else:
        does = (f"Here it **spreads its attention**: no token gets half of the weight (the most, "
                f"{top}, {s['top_share']:.2f} on average; entropy {s['entropy']:.2f} nats).")
    return (f"{what} {does} It is not a **trained one-head model** (the Training lab trains "
            "one): the same weights, read as one head.")
