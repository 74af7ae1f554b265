"""Does it hold on a GPU, and how fast is it there? The check for a machine with a CUDA GPU (under
5 minutes on one H100): parity, speed, the one-head fit and the API end to end, on the GPU.

    .venv/bin/python bench/gpu.py                 # CUDA if there is one, else a short CPU run
    .venv/bin/python bench/gpu.py --device cpu    # the same on the CPU (shapes cut to fit)

1. Parity: every family testkit.families builds, ours on the device against transformers'
   eager model on the same device (fp32, TF32 off): the largest difference of the maps and the
   hidden states on a padded batch, and of the forward cache's attn_out against transformers'
   attention output projection (forward hooks).
2. Speed: ours / transformers (median of interleaved calls, synchronised) with every map
   returned, at B = 1 and 32, T = 128 and 512, for MiniLM (6 x 12, d 384), bert-base (12 x 12,
   d 768) and bert-large (24 x 16, d 1024) shapes, random weights.
3. The one-head fit: ms per Adam step of a best-fit single head (D 384, 400 sentences x 32
   tokens) on the device and on the CPU.
4. End to end: Model.attend and Model.run_with_cache of a 32-token text on the bundled model.
5. The bundled decoder (SmolLM2-135M): parity of maps and logits with transformers' eager
   LlamaForCausalLM on the same weights, and ours / theirs at T = 128 and 512, logits included.

Prints one table per part; docs/performance.md keeps the figures with machine and date.
"""

import statistics
import sys
import tempfile
import time
from functools import partial
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # mha_core and testkit

from bench import harness as h  # noqa: E402

SHAPES = {"MiniLM": (6, 12, 384), "bert-base": (12, 12, 768), "bert-large": (24, 16, 1024)}


def sync(device):
    import torch

    if device.type == "cuda":
        torch.cuda.synchronize(device)


def timed(fn, device) -> float:
    sync(device)
    t0 = time.perf_counter()
    fn()
    sync(device)
    return time.perf_counter() - t0


def interleaved(mine, theirs, device, reps) -> tuple:
    """reps timings of each, alternating which goes first: (ours, theirs, ratios) in seconds."""
    a, b, r = [], [], []
    for i in range(reps):
        x, y = ((timed(mine, device), timed(theirs, device)) if i % 2 else
                reversed((timed(theirs, device), timed(mine, device))))
        a.append(x)
        b.append(y)
        r.append(x / y)
    return a, b, r


def keep_output(outs, module, inputs, output):
    outs.append(output)


def parity(device):
    """Largest |ours - transformers| per family on the device."""
    import torch

    import testkit.families as fam
    from mha_core.loading import load_checkpoint

    print(f"\n1. parity on {device} (padded batch of 2 x 20, fp32)")
    print(f"{'family':<22}{'maps':>10}{'hidden':>10}{'attn_out':>10}")
    for name in [*fam.specs(), *fam.decoder_specs()]:
        hf = fam.build_tiny_family(name)
        d = Path(tempfile.mkdtemp()) / name
        hf.save_pretrained(str(d))
        cfg, ours = load_checkpoint(d)
        ours, hf = ours.to(device), hf.to(device)
        g = torch.Generator().manual_seed(1)
        ids = torch.randint(3, cfg.vocab_size, (2, 20), generator=g)
        mask = torch.ones_like(ids)
        mask[1, 14:], ids[1, 14:] = 0, cfg.pad_token_id
        ids, mask = ids.to(device), mask.to(device)
        outs = []
        out_proj = [m for n, m in hf.named_modules() if n.endswith(
            ("attention.output.dense", "attention.out_lin", "attention.dense", "attn.Wo",
             "self_attn.o_proj", "attn.c_proj"))]
        hooks = [m.register_forward_hook(partial(keep_output, outs)) for m in out_proj]
        with torch.no_grad():
            theirs = hf(input_ids=ids, attention_mask=mask, output_attentions=True,
                        output_hidden_states=True)
            for h in hooks:
                h.remove()
            mine, cache = ours.run_with_cache(ids, mask, names=("attn_out",))
        maps = max(float((a - b).abs().max()) for a, b in zip(mine.attentions, theirs.attentions))
        hidden = max(float((a - b).abs().max()) for a, b in zip(mine.hidden_states,
                                                                  theirs.hidden_states))
        attn_out = max(float((cache["attn_out", i] - o).abs().max() / max(1, o.abs().max()))
                       for i, o in enumerate(outs))
        print(f"{name:<22}{maps:>10.1e}{hidden:>10.1e}{attn_out:>10.1e}")


def speed(device, shapes, batches, lengths, reps):
    """ours / transformers at each shape, B and T."""
    import torch
    from transformers import BertConfig, BertModel

    from mha_core.loading import load_checkpoint

    print(f"\n2. speed on {device}: median ms of interleaved calls, every map returned")
    print(f"{'shape':<12}{'B':>4}{'T':>6}{'ours ms':>10}{'theirs ms':>11}{'ratio':>8}")
    for label, (L, H, D) in shapes.items():
        cfg = BertConfig(num_hidden_layers=L, num_attention_heads=H, hidden_size=D,
                         intermediate_size=4 * D, attn_implementation="eager")
        torch.manual_seed(0)
        hf = BertModel(cfg, add_pooling_layer=False).eval()
        d = Path(tempfile.mkdtemp()) / label
        hf.save_pretrained(str(d))
        _, ours = load_checkpoint(d)
        ours, hf = ours.to(device), hf.to(device)
        for B in batches:
            for T in lengths:
                ids = torch.randint(1000, cfg.vocab_size, (B, T), device=device)
                mine = partial(ours, ids)
                theirs = partial(hf, input_ids=ids, output_attentions=True,
                                 output_hidden_states=True)
                with torch.inference_mode():
                    for _ in range(3):
                        mine(), theirs()
                    a, b, r = interleaved(mine, theirs, device, reps)
                print(f"{label:<12}{B:>4}{T:>6}{1e3 * statistics.median(a):>10.2f}"
                      f"{1e3 * statistics.median(b):>11.2f}{statistics.median(r):>8.3f}")
        ours = hf = mine = theirs = None  # free the shape's weights before the next
        if device.type == "cuda":
            torch.cuda.empty_cache()


def fit_step(device, sentences, steps) -> float:
    """ms per Adam step of a best-fit single head (D 384) on sentences x 32 tokens."""
    import torch

    from mha_core.attention import MultiHeadSelfAttention
    from mha_core.one_head.fit import FitConfig, fit_layer

    g = torch.Generator().manual_seed(0)
    x = torch.randn(sentences, 32, 384, generator=g).to(device)
    y = torch.randn(sentences, 32, 384, generator=g).to(device)
    keep = torch.ones(sentences, 32, device=device)
    fitted = MultiHeadSelfAttention(384, 1).to(device)
    part = (x, y, keep, None)
    t = timed(lambda: fit_layer(fitted, part, part, FitConfig(steps=steps,
                                                              eval_every=steps)), device)
    return 1e3 * t / steps


def end_to_end(device, reps):
    import mha_core

    bert = mha_core.load_model(device=device)
    text = " ".join(["The teacher showed the class what every attention head looks at."] * 3)
    enc = bert.encode(text, max_length=32)
    for _ in range(3):
        bert.attend_encoded(enc)
    a = [timed(lambda: bert.attend_encoded(enc), device) for _ in range(reps)]
    c = [timed(lambda: bert.run_with_cache(enc), device) for _ in range(reps)]
    print(f"\n4. bundled model on {device}, {len(enc.tokens)} tokens: attend "
          f"{1e3 * statistics.median(a):.2f} ms, run_with_cache (every name but head_out) "
          f"{1e3 * statistics.median(c):.2f} ms (median of {reps})")


def decoder(device, lengths, reps):
    """The bundled decoder against transformers' LlamaForCausalLM on the device."""
    import torch
    from transformers import LlamaForCausalLM

    import mha_core

    ours = mha_core.load_model("bundled-decoder", device=device)
    hf = LlamaForCausalLM.from_pretrained(str(ours.path), attn_implementation="eager")
    hf = hf.to(device).eval()
    print(f"\n5. bundled decoder on {device}: ours / transformers, logits included")
    print(f"{'T':>6}{'maps':>10}{'logits':>10}{'ours ms':>10}{'theirs ms':>11}{'ratio':>8}")
    for T in lengths:
        ids = torch.randint(100, ours.config.vocab_size, (1, T), device=device)

        def mine(ids=ids):
            out = ours.model(ids)
            return out, ours.model.lm_logits(out.last_hidden_state)

        theirs = partial(hf, input_ids=ids, output_attentions=True)
        with torch.inference_mode():
            (out, logits), ref = mine(), theirs()
            maps = max(float((a - b).abs().max()) for a, b in zip(out.attentions, ref.attentions))
            dl = float((logits - ref.logits).abs().max())
            a, b, r = interleaved(mine, theirs, device, reps)
        print(f"{T:>6}{maps:>10.1e}{dl:>10.1e}{1e3 * statistics.median(a):>10.2f}"
              f"{1e3 * statistics.median(b):>11.2f}{statistics.median(r):>8.3f}")


def main():
    ap = h.parser(__doc__, prog="bench/gpu.py")
    ap.add_argument("--device", default="auto")
    ap.add_argument("--reps", type=int, default=None)
    ap.add_argument("--all", action="store_true", help="every shape even on the CPU")
    args = ap.parse_args()
    import torch

    from mha_core.api import pick_device

    print(h.machine())
    device = pick_device(args.device)
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    gpu = device.type == "cuda"
    print(f"torch {torch.__version__}; device {device}"
          + (f" ({torch.cuda.get_device_name(device)})" if gpu else
             f", {torch.get_num_threads()} threads: a CPU run, shapes and batches cut to fit"))
    parity(device)
    if gpu or args.all:
        speed(device, SHAPES, (1, 32), (128, 512), args.reps or 20)
    else:
        speed(device, {"MiniLM": SHAPES["MiniLM"]}, (1,), (128,), args.reps or 5)
    print("\n3. one-head fit, ms per Adam step (D 384, 32 tokens a sentence)")
    if gpu:
        print(f"   {device}: {fit_step(device, 400, 100):.1f} ms (400 sentences, 100 steps)")
    cpu = torch.device("cpu")
    n = 400 if gpu or args.all else 40
    print(f"   cpu ({torch.get_num_threads()} threads): {fit_step(cpu, n, 5):.1f} ms "
          f"({n} sentences, 5 steps)")
    end_to_end(device, args.reps or 20)
    decoder(device, (128, 512) if gpu or args.all else (128,), args.reps or (20 if gpu else 5))


if __name__ == "__main__":
    main()
