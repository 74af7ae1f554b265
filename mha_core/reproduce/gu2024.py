"""Gu et al. 2024, "When Attention Sink Emerges in Language Models: An Empirical View": the share
of heads that park most attention on the first token (the sink rate, threshold eps = 0.3).

Per sentence, mha_core.sinks gives each head's share: the mean over query rows i >= 1 of the
weight on the sink's positions (the first token; an encoder's [CLS], which is its first token,
and its [SEP]), by weight and by norm (Kobayashi et al.'s ||a f(x)||, rows normalised). A head
is a sink head in that sentence when its share exceeds EPS; the sink rate is the share of sink
heads, per layer and over the model, averaged over sentences (Gu et al.'s code thresholds each
sample too, then averages).
"""

from ..sinks import EPS, sinks
from .common import Paper, Published, pct, rounded
from .corpus import MAX_TOKENS, encode_corpus

PAPER = Paper("gu2024", "Gu et al. 2024, When Attention Sink Emerges in Language Models",
              "arXiv:2410.10781, ICLR 2025", "~30 open LMs (GPT-2, Llama 2/3, Mistral, Pythia, "
              "OPT)", "64-token natural-text samples", default_model="bundled-decoder")
PANELS = 1  # the figure's panels side by side
PUBLISHED = (
    Published("sink rate on the first token (ε = 0.3)",
              "attention sinks “exist universally in auto-regressive LMs … even in small "
              "models” (abstract; per-model rates in their figures)"),
    Published("sink by norm", "the sink acts like a key bias: “non-informative and not "
                              "contribute to the value computation” (abstract)"),
)


def run(model, corpus, progress=None) -> dict:
    kept, skipped = encode_corpus(model, corpus.texts, MAX_TOKENS)
    L = model.config.num_hidden_layers
    acc = {}  # kind -> by -> {"share": (L, H) sum, "rate": (L,) sum, "n": count}
    for k, (_, enc) in enumerate(kept):
        res = model.attend_encoded(enc)
        for kind, d in sinks(model, res, EPS).items():
            for by in ("weight", "norm"):
                a = acc.setdefault(kind, {}).setdefault(by, {"share": 0, "rate": 0, "n": 0})
                a["share"] = a["share"] + d[by].double().numpy()
                a["rate"] = a["rate"] + d[f"rate_{by}"]["per_layer"].double().numpy()
                a["n"] += 1
        if progress:
            progress(k + 1, len(kept))
    if not kept:
        raise ValueError("no sentence of the corpus fits (all too long or empty)")
    out = {"sentences": len(kept), "skipped": skipped, "eps": EPS, "kinds": {}}
    for kind, bys in acc.items():
        out["kinds"][kind] = {by: {"sentences": a["n"], "share": rounded(a["share"] / a["n"]),
                                   "rate_per_layer": rounded(a["rate"] / a["n"]),
                                   "rate": rounded((a["rate"] / a["n"]).mean())}
                              for by, a in bys.items()}
    out["layers"] = L
    return out


NAMES = {"first": "the first token", "cls": "[CLS]", "sep": "[SEP]"}


def rows(res: dict, model) -> list:
    out = []
    for kind, d in res["kinds"].items():
        if kind == "cls":  # an encoder's [CLS] is its first token: the same numbers
            continue
        w, n = d["weight"], d["norm"]
        per_layer = w["rate_per_layer"]
        low = int(min(range(len(per_layer)), key=per_layer.__getitem__))
        most = sum(x >= 0.9 for x in per_layer)
        out.append((f"sink rate on {NAMES[kind]} (ε = {res['eps']}), by weight",
                    f"{pct(w['rate'])} of heads ({most} of {len(per_layer)} layers ≥ 90 %; "
                    f"lowest: layer {low + 1}, {pct(per_layer[low])})",
                    PUBLISHED[0].value if kind == "first" else "(an encoder's; not in the "
                                                               "paper)"))
        out.append((f"sink rate on {NAMES[kind]}, by norm", f"{pct(n['rate'])} of heads",
                    PUBLISHED[1].value if kind == "first" else "–"))
    return out


def differs(res: dict, model) -> str:
    first = "its first word, as no BOS token is added" if model.is_decoder else "[CLS]"
    return (f"The paper measured ~30 open LMs on 64-token samples and counts the sink's own "
            f"row; ours reads {model.name} on {res['sentences']} short sentences (a few tokens "
            f"each; the first token is {first}) and leaves row 0 out, as mha_core.sinks does.")


def figure(res: dict, fig) -> None:
    """Sink rate per layer, by weight (solid) and by norm (dashed), for each sink kind."""
    ax = fig.subplots(1, 1)
    for k, (kind, d) in enumerate(res["kinds"].items()):
        if kind == "cls":
            continue
        for by, style in (("weight", "-"), ("norm", "--")):
            v = d[by]["rate_per_layer"]
            ax.plot(range(1, len(v) + 1), v, linestyle=style, marker="o", color=f"C{k}",
                    label=f"{NAMES[kind]}, by {by}")
    ax.axhline(0, color="grey", linewidth=0.5)
    ax.set(xlabel="layer", ylabel=f"share of heads over ε = {res['eps']}", ylim=(-0.02, 1.02),
           title="Sink rate per layer")
    ax.legend(fontsize="small")
