"""Tiny random models of every family, built and saved by transformers itself, with their
weights redrawn from a wide normal (transformers' init zeroes biases and sets LayerNorms to 1,
which would hide a bias or a norm read wrongly). The family parity tests and the app tests
offer them; no download.

    path = save_tiny_family("roberta", tmp / "tiny-roberta")
"""

from pathlib import Path

VOCAB = 300  # room for byte-level BPE's 256-letter alphabet and a few merges
COMMON = dict(vocab_size=VOCAB, hidden_size=32, num_hidden_layers=2, num_attention_heads=4,
              intermediate_size=37, max_position_embeddings=64)


def specs() -> dict:
    """name -> (transformers config class name, masked-LM class name, config kwargs). Each one
    an edge variant of its family: ELECTRA E != D, ALBERT 4 layers in 2 groups of 2, DistilBERT
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
                            local_attention=4, pad_token_id=1, bos_token_id=0,
                            eos_token_id=2, cls_token_id=0, sep_token_id=2,
                            global_rope_theta=160000.0, local_rope_theta=10000.0)),
    }


DECODER = dict(vocab_size=VOCAB, hidden_size=32, num_hidden_layers=2, num_attention_heads=4,
               intermediate_size=37, max_position_embeddings=64, rms_norm_eps=1e-5,
               bos_token_id=0, eos_token_id=0)


def decoder_specs() -> dict:
    """The decoders, as specs(): grouped-query heads (2 KV heads for 4 query heads) and not, one
    KV head (multi-query), tied and separate next-word heads, a small RoPE base (so positions
    turn q and k far), Llama 3.1's RoPE schedule, Qwen2's q/k/v biases, GPT-2's Conv1D and
    learned positions."""
    return {
        "llama": ("LlamaConfig", "LlamaForCausalLM",
                  dict(DECODER, num_key_value_heads=2, rope_theta=50.0,
                       tie_word_embeddings=False)),
        "llama-mha-tied": ("LlamaConfig", "LlamaForCausalLM",  # and attention biases
                           dict(DECODER, num_hidden_layers=3, num_key_value_heads=4,
                                tie_word_embeddings=True, attention_bias=True)),
        "llama3-rope": ("LlamaConfig", "LlamaForCausalLM",  # a long, a middle and short waves
                        dict(DECODER, num_key_value_heads=1, tie_word_embeddings=True,
                             max_position_embeddings=128,  # above the original context
                             rope_parameters=dict(rope_type="llama3", rope_theta=10000.0,
                                                  factor=8.0, low_freq_factor=1.0,
                                                  high_freq_factor=4.0,
                                                  original_max_position_embeddings=100))),
        "qwen2": ("Qwen2Config", "Qwen2ForCausalLM",
                  dict(DECODER, num_key_value_heads=1, rope_theta=100.0,
                       tie_word_embeddings=True)),
        "gpt2": ("GPT2Config", "GPT2LMHeadModel",
                 dict(vocab_size=VOCAB, n_embd=32, n_layer=2, n_head=4, n_inner=37,
                      n_positions=64, bos_token_id=0, eos_token_id=0)),
        "gpt2-untied": ("GPT2Config", "GPT2LMHeadModel",
                        dict(vocab_size=VOCAB, n_embd=48, n_layer=3, n_head=3, n_positions=64,
                             activation_function="gelu", tie_word_embeddings=False,
                             bos_token_id=0, eos_token_id=0)),
    }


def build_tiny_family(name: str, seed: int = 0):
    """The transformers model (eager attention), every parameter redrawn from a wide normal."""
    import torch
    import transformers

    cfg_cls, model_cls, kwargs = {**specs(), **decoder_specs()}[name]
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


# the family's kind of tokenizer, built offline (tiny_tokenizer)
TOKENIZERS = {"bert": "wordpiece", "distilbert": "wordpiece", "electra": "wordpiece",
              "electra-discriminator": "wordpiece", "roberta": "bpe", "modernbert": "bpe",
              "albert": "unigram", "deberta": "unigram",
              **dict.fromkeys(decoder_specs(), "bpe-decoder")}
CORPUS = ["I saw the man with a telescope.", "The cat sat on the mat.",
          "Time flies like an arrow; fruit flies like a banana.",
          "The animal didn't cross the street because it was too tired.",
          "We went to the bank of the river, then to the bank to deposit money.",
          "Hello world! Students type their own sentences here."]


def tiny_tokenizer(kind: str):
    """A fast tokenizer made here: WordPiece from a written vocabulary, or a byte-level BPE
    (RoBERTa's <s> A </s></s> B </s>) or a Unigram with Metaspace (ALBERT's ▁) trained by the
    `tokenizers` library on a few sentences."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, processors, trainers
    from transformers import BertTokenizerFast, PreTrainedTokenizerFast

    from .models import tiny_vocab

    if kind == "wordpiece":
        vocab = tiny_vocab()
        return BertTokenizerFast(vocab={t: i for i, t in enumerate(vocab)}, do_lower_case=True)
    if kind == "bpe-decoder":  # GPT-2's and SmolLM2's kind: byte-level BPE, nothing added
        tok = Tokenizer(models.BPE())
        tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
        tok.decoder = decoders.ByteLevel()
        tok.train_from_iterator(CORPUS, trainers.BpeTrainer(
            vocab_size=VOCAB, special_tokens=["<|endoftext|>"],
            initial_alphabet=pre_tokenizers.ByteLevel.alphabet()))
        return PreTrainedTokenizerFast(tokenizer_object=tok, model_max_length=60,
                                       bos_token="<|endoftext|>", eos_token="<|endoftext|>",
                                       unk_token="<|endoftext|>")
    if kind == "bpe":
        special = ["<s>", "<pad>", "</s>", "<unk>", "<mask>"]
        tok = Tokenizer(models.BPE())
        tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
        tok.decoder = decoders.ByteLevel()
        tok.train_from_iterator(CORPUS, trainers.BpeTrainer(
            vocab_size=VOCAB, special_tokens=special,
            initial_alphabet=pre_tokenizers.ByteLevel.alphabet()))
        tok.post_processor = processors.TemplateProcessing(
            single="<s> $A </s>", pair="<s> $A </s> </s> $B </s>",
            special_tokens=[(t, tok.token_to_id(t)) for t in ("<s>", "</s>")])
        names = dict(bos_token="<s>", eos_token="</s>", cls_token="<s>", sep_token="</s>",
                     pad_token="<pad>", unk_token="<unk>", mask_token="<mask>")
    else:
        special = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
        tok = Tokenizer(models.Unigram())
        tok.pre_tokenizer = pre_tokenizers.Metaspace()
        tok.decoder = decoders.Metaspace()
        tok.train_from_iterator(CORPUS, trainers.UnigramTrainer(
            vocab_size=VOCAB, special_tokens=special, unk_token="[UNK]"))
        tok.post_processor = processors.TemplateProcessing(
            single="[CLS] $A [SEP]", pair="[CLS] $A [SEP] $B:1 [SEP]:1",
            special_tokens=[(t, tok.token_to_id(t)) for t in ("[CLS]", "[SEP]")])
        names = dict(cls_token="[CLS]", sep_token="[SEP]", pad_token="[PAD]",
                     unk_token="[UNK]", mask_token="[MASK]")
    return PreTrainedTokenizerFast(tokenizer_object=tok, model_max_length=60, **names)


def save_tiny_family(name: str, path: Path, seed: int = 0, tokenizer: bool = True) -> Path:
    """Saved with safetensors (tied decoders left out, as transformers 5 does), with the
    family's kind of tokenizer."""
    path = Path(path)
    path.mkdir(parents=True, exist_ok=True)
    build_tiny_family(name, seed).save_pretrained(str(path), safe_serialization=True)
    if tokenizer:
        tok = tiny_tokenizer(TOKENIZERS[name])
        assert len(tok) <= VOCAB
        tok.save_pretrained(str(path))
    return path


def save_every_family(tmp_path_factory, decoders: bool = False) -> dict:
    """name -> (transformers model, its saved directory), for every encoder family, and with
    decoders=True every decoder too (a module fixture's body)."""
    out = {}
    for name in [*specs(), *(decoder_specs() if decoders else ())]:
        d = tmp_path_factory.mktemp(name)
        hf = build_tiny_family(name)
        hf.save_pretrained(str(d), safe_serialization=True)
        out[name] = (hf, d)
    return out


def padded_batch(cfg, T=20):
    """Two rows of T random ids for a config (ours), the second padded after 14 tokens; a pair
    (types 1 from token 10) where the family has segment embeddings: (ids, mask, types or
    None)."""
    import torch

    g = torch.Generator().manual_seed(1)
    ids = torch.randint(3, cfg.vocab_size, (2, T), generator=g)  # (B, T)
    mask = torch.ones_like(ids)
    mask[1, 14:] = 0
    ids[1, 14:] = cfg.pad_token_id
    types = None
    if cfg.type_vocab_size >= 2:
        types = torch.zeros_like(ids)
        types[:, 10:] = 1
    return ids, mask, types


def hf_outputs(model, ids, mask=None, types=None):
    """transformers' eager forward: (hidden_states tuple, attentions tuple, logits)."""
    import torch

    kw = {} if types is None else {"token_type_ids": types}
    with torch.no_grad():
        out = model(input_ids=ids, attention_mask=mask, output_attentions=True,
                    output_hidden_states=True, **kw)
    return out.hidden_states, out.attentions, out.logits
