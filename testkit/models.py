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


def save_tiny_bert(path: Path, layers=2, heads=4, hidden=32, seed=0, lowercase=True,
                   **overrides) -> Path:
    """A random BertModel saved by transformers itself (safetensors + a fast tokenizer; an
    uncased one unless lowercase=False)."""
    import torch
    from transformers import BertConfig, BertModel, BertTokenizerFast

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
    model = BertModel(cfg, add_pooling_layer=True)
    with torch.no_grad():  # larger than the default init, so heads attend sharply and differ
        for name, p in model.named_parameters():
            if p.dim() == 2 and "embeddings" not in name:
                p.normal_(0, 0.3)
    model.save_pretrained(str(path), safe_serialization=True)
    return path


def hf_reference(path: Path):
    """transformers' own BertModel on the same checkpoint, with eager attention (which returns
    the weights; sdpa does not)."""
    import torch
    from transformers import BertModel

    return BertModel.from_pretrained(str(path), attn_implementation="eager",
                                     dtype=torch.float32).eval()
