"""Tiny random models of every family, built and saved by transformers itself, with their
weights redrawn from a wide normal (transformers' init zeroes biases and sets LayerNorms to 1,
which would hide a bias or a norm read wrongly). The family parity tests and the app tests
offer them; no download.

    path = save_tiny_family("roberta", tmp / "tiny-roberta")
"""

from pathlib import Path

VOCAB = 99
COMMON = dict(vocab_size=VOCAB, hidden_size=32, num_hidden_layers=2, num_attention_heads=4,
              intermediate_size=37, max_position_embeddings=64)


def specs() -> dict:
    """name -> (transformers config class name, masked-LM class name, config kwargs). Each one
    an edge variant of the issue: ELECTRA E != D, ALBERT 4 layers in 2 groups of 2, DistilBERT
    sinusoidal, DeBERTa 8 buckets < T, ModernBERT a band of half-width 2 < T."""
    return {
        "bert": ("BertConfig", "BertForMaskedLM", dict(COMMON)),
        "roberta": ("RobertaConfig", "RobertaForMaskedLM",
                    dict(COMMON, max_position_embeddings=66, pad_token_id=1, bos_token_id=0,
                         eos_token_id=2, type_vocab_size=1, layer_norm_eps=1e-5)),
        "distilbert": ("DistilBertConfig", "DistilBertForMaskedLM",
                       dict(vocab_size=VOCAB, dim=32, n_layers=2, n_heads=4, hidden_dim=37,
                            max_position_embeddings=64, sinusoidal_pos_embds=True)),
        "electra": ("ElectraConfig", "ElectraForMaskedLM", dict(COMMON, embedding_size=16)),
        "electra-discriminator": ("ElectraConfig", "ElectraForPreTraining",
                                  dict(COMMON, embedding_size=16)),
        "albert": ("AlbertConfig", "AlbertForMaskedLM",
                   dict(COMMON, embedding_size=16, num_hidden_layers=4, num_hidden_groups=2,
                        inner_group_num=2, hidden_act="gelu_new")),
        "deberta": ("DebertaV2Config", "DebertaV2ForMaskedLM",
                    dict(COMMON, relative_attention=True, position_buckets=8,
                         max_relative_positions=-1, pos_att_type=["p2c", "c2p"],
                         share_att_key=True, norm_rel_ebd="layer_norm",
                         position_biased_input=False, type_vocab_size=0, layer_norm_eps=1e-7)),
        "modernbert": ("ModernBertConfig", "ModernBertForMaskedLM",
                       dict(COMMON, num_hidden_layers=3, global_attn_every_n_layers=2,
                            local_attention=4, pad_token_id=0, global_rope_theta=160000.0,
                            local_rope_theta=10000.0)),
    }


def build_tiny_family(name: str, seed: int = 0):
    """The transformers model (eager attention), every parameter redrawn from a wide normal."""
    import torch
    import transformers

    cfg_cls, model_cls, kwargs = specs()[name]
    cfg = getattr(transformers, cfg_cls)(**kwargs)
    cfg._attn_implementation = "eager"
    torch.manual_seed(seed)
    model = getattr(transformers, model_cls)(cfg).eval()
    with torch.no_grad():
        for pname, p in model.named_parameters():
            if "rel_embeddings" in pname or "embeddings" in pname and p.dim() == 2:
                p.normal_(0, 1.0)
            elif p.dim() >= 2:
                p.normal_(0, 0.3)
            else:  # biases and norms: far from transformers' zeros and ones
                p.normal_(0, 0.5)
    model.tie_weights()
    return model


def save_tiny_family(name: str, path: Path, seed: int = 0, tokenizer=None) -> Path:
    """Saved with safetensors (tied decoders left out, as transformers 5 does)."""
    path = Path(path)
    path.mkdir(parents=True, exist_ok=True)
    build_tiny_family(name, seed).save_pretrained(str(path), safe_serialization=True)
    if tokenizer is not None:
        tokenizer.save_pretrained(str(path))
    return path


def hf_outputs(model, ids, mask=None, types=None):
    """transformers' eager forward: (hidden_states tuple, attentions tuple, logits)."""
    import torch

    kw = {} if types is None else {"token_type_ids": types}
    with torch.no_grad():
        out = model(input_ids=ids, attention_mask=mask, output_attentions=True,
                    output_hidden_states=True, **kw)
    return out.hidden_states, out.attentions, out.logits
