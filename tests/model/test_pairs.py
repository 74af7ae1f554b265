"""Sentence pairs as the model reads them: segment ids from the tokenizer, a typed [SEP] as the
pair separator everywhere, every [SEP] counted as special (metrics, Hide [CLS]/[SEP]), and a
long pair cut longest first, as transformers' tokenizer does."""

import numpy as np
import pytest
import torch

from mha_core.metrics import result_metrics, token_kinds
from mha_core.shown import explorer_view

A, B = "I saw the man with a telescope.", "He was holding it."


def test_segment_ids_are_the_tokenizers(bundled):
    enc = bundled.encode(A, B)
    ref = bundled.tokenizer(A, B)
    assert enc.input_ids.tolist() == ref["input_ids"]
    assert enc.token_type_ids.tolist() == ref["token_type_ids"]
    assert set(ref["token_type_ids"]) == {0, 1}


def test_a_typed_sep_reads_exactly_as_a_pair(bundled):
    typed = bundled.attend(f"{A} [SEP] {B}")
    two = bundled.attend(A, B)
    assert typed.tokens == two.tokens
    assert typed.encoded.token_type_ids.tolist() == two.encoded.token_type_ids.tolist()
    torch.testing.assert_close(typed.attentions, two.attentions, atol=1e-6, rtol=0)
    assert typed.words()[0] == two.words()[0]  # labels come from the right sentence
    assert typed.text_pair is not None and typed.text_pair.strip() == B


def test_every_sep_is_special_counted_and_hidden(bundled):
    """A [SEP] typed when both boxes are filled stays inside its sentence: it is still a [SEP]
    for the statistics and for Hide [CLS]/[SEP]."""
    res = bundled.attend("I saw [SEP] the man.", B)
    seps = [t for t, tok in enumerate(res.tokens) if tok == "[SEP]"]
    assert len(seps) == 3  # typed, and the two the tokenizer adds
    assert all(res.special[t] for t in seps)
    kinds = token_kinds(res.tokens, res.special)
    assert kinds["sep"].sum() == 3 and kinds["cls"].sum() == 1
    # the [SEP] share, recomputed in numpy over the three columns
    att = res.attentions.numpy()
    want = att[..., seps].sum(-1).mean(-1)  # (L, H)
    np.testing.assert_allclose(result_metrics(res)["sep"], want, atol=1e-6)
    maps, labels, special = explorer_view(res.attentions[0], res, hide_special=True)
    assert "[SEP]" not in labels and "[CLS]" not in labels
    assert maps.shape[-1] == len(res.tokens) - 4
    words, _, _ = explorer_view(res.attentions[0], res, word_level=True, hide_special=True)
    assert words.shape[-1] == len(res.words()[0]) - 4


@pytest.mark.parametrize("la,lb", [(600, 3), (300, 400), (5, 700)])
def test_a_long_pair_is_cut_longest_first_as_transformers_does(bundled, la, lb):
    a, b = "word " * la, "more " * lb
    enc = bundled.encode(a, b)
    ref = bundled.tokenizer(a, b, truncation="longest_first", max_length=512)
    assert enc.truncated and enc.input_ids.tolist() == ref["input_ids"]
    assert enc.segments_full == (la, lb)
    kept = enc.segment_lengths()
    assert sum(kept) == 509 and kept[0] <= la and kept[1] <= lb
    assert abs(kept[0] - kept[1]) <= 1 or min(kept) == min(la, lb)  # the longer is cut first


def test_a_blank_pair_is_read_alone(bundled):
    alone = bundled.attend(A)
    for blank in ("", "   ", "\n"):
        res = bundled.attend(A, blank)
        assert res.tokens == alone.tokens and res.text_pair is None
