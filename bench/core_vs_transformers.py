"""How fast is our forward (with every attention map) against transformers' eager forward, same
weights, on the CPU? (On a GPU: bench/gpu.py.)

Interleaved in one process: for each T, the two models alternate call by call, so both see the
same machine load. Prints the median time of each and the median ratio ours/theirs.

    .venv/bin/python bench/core_vs_transformers.py [--reps 30]
    .venv/bin/python bench/core_vs_transformers.py --family roberta   # any of testkit.families
        (a random model of the family at MiniLM's shape, 6 layers x 12 heads, d 384, built
        and saved here: no download)
    .venv/bin/python bench/core_vs_transformers.py --decoder   # the bundled SmolLM2-135M
        (ours: the forward with every map and the next-word logits; transformers: its eager
        LlamaForCausalLM on the same dequantised weights, output_attentions=True)
"""

import statistics
import sys
import time
from functools import partial
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # mha_core and testkit

from bench import harness as h  # noqa: E402


def timed(fn):
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


def main():
    ap = h.parser(__doc__)
    ap.add_argument("--reps", type=int, default=30)
    ap.add_argument("--lengths", type=int, nargs="+", default=[16, 128, 512])
    ap.add_argument("--family", default=None, help="a name of testkit.families.specs()")
    ap.add_argument("--decoder", action="store_true", help="the bundled decoder (SmolLM2-135M)")
    args = ap.parse_args()
    import torch

    import mha_core

    print(h.machine())

    if args.family:
        bert, hf = family_models(args.family)
    elif args.decoder:
        from transformers import LlamaForCausalLM

        bert = mha_core.load_model("bundled-decoder", device="cpu")
        hf = LlamaForCausalLM.from_pretrained(str(bert.path), attn_implementation="eager").eval()
    else:
        from transformers import BertModel

        bert = mha_core.load_model()
        hf = BertModel.from_pretrained(str(bert.path), attn_implementation="eager").eval()
    print(f"model: {getattr(bert, 'label', bert)}; torch {torch.__version__}, "
          f"{torch.get_num_threads()} threads")
    print(f"{'T':>5} {'ours ms':>9} {'transformers ms':>16} {'ratio ours/theirs':>18}")
    g = torch.Generator().manual_seed(0)
    for T in args.lengths:
        ids = torch.randint(1000, bert.config.vocab_size, (1, T), generator=g)  # (B, T)
        if not args.family and not args.decoder:
            ids[0, 0], ids[0, -1] = bert.tokenizer.cls_token_id, bert.tokenizer.sep_token_id
        kw = {"token_type_ids": torch.zeros_like(ids)} if bert.config.type_vocab_size else {}

        ours = partial(bert.model, ids, **kw)
        if args.decoder:  # transformers' causal LM computes the logits too: so do we
            def ours(ids=ids):
                return bert.model.lm_logits(bert.model(ids).last_hidden_state)
        theirs = partial(hf, ids, output_attentions=True, output_hidden_states=True, **kw)

        with torch.inference_mode():
            for _ in range(3):  # warm-up
                ours(), theirs()
            t_ours, t_theirs, ratios = [], [], []
            for i in range(args.reps):
                if i % 2:  # alternate which goes first
                    a, b = timed(ours), timed(theirs)
                else:
                    b, a = timed(theirs), timed(ours)
                t_ours.append(a)
                t_theirs.append(b)
                ratios.append(a / b)
        print(f"{T:>5} {1e3 * statistics.median(t_ours):>9.2f} "
              f"{1e3 * statistics.median(t_theirs):>16.2f} {statistics.median(ratios):>18.3f}")
    print(f"after: {h.load()}")


def family_models(name: str):
    """(ours wrapped like a Bert, transformers' base model) for a random model of the family at
    MiniLM's shape, saved to a temporary directory and loaded by both."""
    import tempfile
    from types import SimpleNamespace

    import testkit.families as fam
    from mha_core.loading import load_checkpoint

    shape = dict(vocab_size=30522, hidden_size=384, num_hidden_layers=6, num_attention_heads=12,
                 intermediate_size=1536, max_position_embeddings=514)
    if name == "distilbert":
        shape = dict(vocab_size=30522, dim=384, n_layers=6, n_heads=12, hidden_dim=1536,
                     max_position_embeddings=514)
    cfg_cls, model_cls, kwargs = fam.specs()[name]
    kwargs = {**kwargs, **shape}
    if name == "albert":
        kwargs.update(num_hidden_groups=1, inner_group_num=1, embedding_size=128)
    if name == "modernbert":
        kwargs.update(local_attention=128, global_attn_every_n_layers=3)
    if name == "deberta":
        kwargs.update(position_buckets=256)
    fam.specs = lambda: {name: (cfg_cls, model_cls, kwargs)}
    d = Path(tempfile.mkdtemp()) / name
    hf = fam.build_tiny_family(name)
    hf.save_pretrained(str(d))
    cfg, model = load_checkpoint(d)
    ours = SimpleNamespace(model=model, config=cfg)
    ours.label = (f"random {name}: {cfg.num_hidden_layers} layers x {cfg.num_attention_heads} "
                  f"heads, d_model {cfg.hidden_size}")
    return ours, hf.base_model.eval()


if __name__ == "__main__":
    main()
