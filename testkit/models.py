"""Tiny random BERTs saved by transformers itself (with a real fast tokenizer), and the
transformers model the parity tests compare against."""

import string
from pathlib import Path

TINY_WORDS = ("the a i saw man with telescope cat sat on mat bank river money went to "
              "deposit we of time flies like an arrow fruit banana animal didn ' t cross "
              "street because it was too tired . , ; ! ? hello world").split()


def tiny_vocab() -> list:
    special = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
    letters = list(string.ascii_lowercase + string.digits)
    words = [w for w in dict.fromkeys(TINY_WORDS) if w not in letters]
    return special + letters + ["##" + c for c in letters] + words


def save_tiny_bert(path: Path, layers=2, heads=4, hidden=32, seed=0, masked_lm=False,
                   lowercase=True, **overrides) -> Path:
    """A random BertModel saved by transformers itself (safetensors + a fast tokenizer; an
    uncased one unless lowercase=False); with masked_lm=True a BertForMaskedLM (bert.* encoder
    and the cls.predictions.* head, decoder tied to the word embeddings), as masked-LM
    checkpoints such as bert-base-uncased are."""
    import torch
    from transformers import BertConfig, BertForMaskedLM, BertModel, BertTokenizerFast

    path.mkdir(parents=True, exist_ok=True)
    vocab = tiny_vocab()
    (path / "vocab.txt").write_text("\n".join(vocab) + "\n")
    tok = BertTokenizerFast(vocab={t: i for i, t in enumerate(vocab)}, do_lower_case=lowercase)
    assert len(tok) == len(vocab)
    tok.save_pretrained(str(path))
    cfg = BertConfig(vocab_size=len(vocab), hidden_size=hidden, num_hidden_layers=layers,
                     num_attention_heads=heads, intermediate_size=4 * hidden,
                     max_position_embeddings=64, **overrides)
    torch.manual_seed(seed)
    model = BertForMaskedLM(cfg) if masked_lm else BertModel(cfg, add_pooling_layer=True)
    with torch.no_grad():  # larger than the default init, so heads attend sharply and differ
        for name, p in model.named_parameters():
            if p.dim() == 2 and "embeddings" not in name:
                p.normal_(0, 0.3)
            elif masked_lm and name.endswith("predictions.bias"):
                p.normal_(0, 0.5)  # the default is zeros: a random bias tests that it is read
    model.save_pretrained(str(path), safe_serialization=True)
    return path


def save_tiny_mlm_bert(path: Path, layers=2, heads=4, hidden=32, seed=0, **overrides) -> Path:
    """A random BertForMaskedLM with a real fast tokenizer (save_tiny_bert, masked_lm=True)."""
    return save_tiny_bert(path, layers, heads, hidden, seed, masked_lm=True, **overrides)


def hf_mlm_reference(path: Path):
    """transformers' own BertForMaskedLM on the same checkpoint, eager attention."""
    import torch
    from transformers import BertForMaskedLM

    return BertForMaskedLM.from_pretrained(str(path), attn_implementation="eager",
                                           dtype=torch.float32).eval()


def hf_reference(path: Path):
    """transformers' own BertModel on the same checkpoint, with eager attention (which returns
    the weights; sdpa does not)."""
    import torch
    from transformers import BertModel

    return BertModel.from_pretrained(str(path), attn_implementation="eager",
                                     dtype=torch.float32).eval()


def hf_norm_maps(hf, input_ids, token_type_ids=None):
    """Kobayashi et al. 2020's ||alpha_ij f_h(x_j)|| from transformers' own BertModel `hf`:
    f_h(x_j) = (x_j W_V,h + b_V,h) W_O,h with its value projection and its output projection's
    columns for head h (b_O excluded), alpha its eager attention weights, the norm taken vector
    by vector (not alpha times a norm). input_ids (T,) -> (L, H, T, T)."""
    import torch

    with torch.no_grad():
        out = hf(input_ids=input_ids[None], output_attentions=True, output_hidden_states=True,
                 token_type_ids=None if token_type_ids is None else token_type_ids[None])
        H = hf.config.num_attention_heads
        K = hf.config.hidden_size // H
        maps = []
        for layer, x, alpha in zip(hf.encoder.layer, out.hidden_states, out.attentions):
            v = layer.attention.self.value(x[0])  # (T, D) with b_V
            w_o = layer.attention.output.dense.weight  # (D_out, D_in)
            per_head = []
            for h in range(H):
                f = v[:, h * K:(h + 1) * K] @ w_o[:, h * K:(h + 1) * K].T  # (T, D), no b_O
                weighted = alpha[0, h][:, :, None] * f[None, :, :]  # (T, T, D)
                per_head.append(weighted.norm(dim=-1))  # (T, T)
            maps.append(torch.stack(per_head))
        return torch.stack(maps)  # (L, H, T, T)


def hf_mlm_run(model, ids, types):
    """transformers' masked-LM on one encoded text: (probabilities (T, V), maps (L, H, T, T))."""
    import torch

    with torch.no_grad():
        out = model(input_ids=ids[None], token_type_ids=types[None], output_attentions=True)
    return out.logits[0].softmax(-1), torch.stack(out.attentions)[:, 0].numpy()  # (L, H, T, T)
