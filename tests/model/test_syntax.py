"""Clark et al.'s head scoring on a tiny treebank built here, with every expected value worked out
by hand: a tiny BERT whose query and key projections are zero attends uniformly, so each head's
word-level map and its argmax ties are known exactly. Plus the merge and argmax on hand-made
maps, the piece limit, and the command line's JSON."""

import json

import numpy as np
import pytest
import torch

from mha_core import syntax as sx
from mha_core.treebank import read_conllu
from testkit.models import save_tiny_bert


def row(i, form, head, rel):
    return f"{i}\t{form}\t_\t_\t_\t_\t{head}\t{rel}\t_\t_"


# Words of the tiny vocabulary are one piece each; "xyz" is not in it: x ##y ##z, three pieces
TINY_TREEBANK = "\n".join([
    "# sent_id = s1",
    row(1, "the", 2, "det"), row(2, "cat", 3, "nsubj"), row(3, "sat", 0, "root"),
    row(4, "on", 6, "case"), row(5, "the", 6, "det"), row(6, "mat", 3, "obl"),
    row(7, ".", 3, "punct"),
    "",
    "# sent_id = s2",
    "1-2\tisaw\t_\t_\t_\t_\t_\t_\t_\t_",  # a multiword range and an empty node: not words
    row(1, "i", 2, "nsubj"), row(2, "saw", 0, "root"), row(3, "xyz", 2, "obj"),
    "3.1\tgone\t_\t_\t_\t_\t_\t_\t2:conj\t_",
    row(4, ".", 2, "punct"),
    "",
    "# sent_id = s3",
    row(1, "man", 2, "nmod:poss"), row(2, "cat", 3, "nsubj"), row(3, "sat", 0, "root"),
]) + "\n"


@pytest.fixture(scope="module")
def uniform(tmp_path_factory):
    """A 2-layer, 4-head tiny BERT with W_Q = W_K = 0 and b_Q = b_K = 0: every score is 0, so
    every head gives each of the sentence's T pieces exactly 1/T."""
    from transformers import BertModel

    import mha_core

    path = save_tiny_bert(tmp_path_factory.mktemp("uniform") / "bert")
    hf = BertModel.from_pretrained(str(path))
    with torch.no_grad():
        for layer in hf.encoder.layer:
            for lin in (layer.attention.self.query, layer.attention.self.key):
                lin.weight.zero_()
                lin.bias.zero_()
    hf.save_pretrained(str(path), safe_serialization=True)
    return mha_core.load_model(str(path))


@pytest.fixture(scope="module")
def scores(uniform):
    return sx.score_treebank(uniform, read_conllu(TINY_TREEBANK))


# By hand. Uniform rows: word-level attention from any word to word j is n_j / T (n_j pieces of
# j, T pieces in the sentence), the same in every row.
#  - "dependent->head": the argmax over j != i of n_j: the word with the most pieces; among
#    equals the first. s1 and s3 (one piece each): word 0 for every word but word 0, which gets
#    word 1. s2: pieces (1, 1, 3, 1): "xyz" for every word but "xyz", which gets word 0.
#  - "head<-dependent": column i holds n_i / T in every row but its own (zeroed): the first row
#    j != i, i.e. word 0, and word 1 for word 0.
# Scored arcs (punct and root are not): s1 the->cat det, cat->sat nsubj, on->mat case,
# the->mat det, mat->sat obl; s2 i->saw nsubj, xyz->saw obj; s3 man->cat nmod (nmod:poss),
# cat->sat nsubj. Right predictions:
#   dependent->head: s1 the->cat; s3 man->cat                    = det 1, nmod 1
#   head<-dependent: s1 the->cat; s2 i->saw; s3 man->cat         = det 1, nsubj 1, nmod 1
# Offsets: s1 +1, +1, +2, +1, -3; s2 +1, -1; s3 +1, +1.
EXPECTED = {  # rel: (n, acc dependent->head, acc head<-dependent, baseline, its offset)
    "all": (9, 2 / 9, 3 / 9, 6 / 9, +1),
    "nsubj": (3, 0, 1 / 3, 1.0, +1),
    "det": (2, 1 / 2, 1 / 2, 1.0, +1),
    "case": (1, 0, 0, 1.0, +2),
    "nmod": (1, 1.0, 1.0, 1.0, +1),
    "obj": (1, 0, 0, 1.0, -1),
    "obl": (1, 0, 0, 1.0, -3),
}


def test_counts_and_accuracies_by_hand(scores):
    assert scores.used == 3 and scores.skipped_long == 0 and scores.skipped_empty == 0
    assert scores.relations == ("all", "nsubj", "det", "case", "nmod", "obj", "obl")
    acc = scores.accuracy()  # (R, L, H, 2)
    assert acc.shape == (7, 2, 4, 2)
    for r, rel in enumerate(scores.relations):
        n, dep, head, _, _ = EXPECTED[rel]
        assert scores.counts[r] == n, rel
        assert acc[r, ..., 0] == pytest.approx(np.full((2, 4), dep)), rel  # every head alike
        assert acc[r, ..., 1] == pytest.approx(np.full((2, 4), head)), rel


def test_rows_by_hand(scores):
    rows = scores.rows(min_arcs=1)
    assert [r["rel"] for r in rows] == list(scores.relations)
    for r in rows:
        n, dep, head, base, offset = EXPECTED[r["rel"]]
        best = max(dep, head)
        direction = sx.DIRECTIONS[0] if dep >= head else sx.DIRECTIONS[1]  # ties: the first
        assert (r["n"], r["layer"], r["head"], r["direction"]) == (n, 1, 1, direction), r
        assert r["acc"] == pytest.approx(best) and r["baseline"] == pytest.approx(base), r
        assert r["offset"] == offset, r


def test_relations_under_the_minimum_are_not_reported(scores):
    assert [r["rel"] for r in scores.rows(min_arcs=2)] == ["all", "nsubj", "det"]
    assert scores.rows() == []  # the protocol's 100 arcs: nothing here


def test_sentences_over_the_piece_limit_are_skipped(uniform):
    # s1: 7 words + [CLS] + [SEP] = 9 pieces; s2: 6 pieces; s3: 5 pieces
    s = sx.score_treebank(uniform, read_conllu(TINY_TREEBANK), max_pieces=8)
    assert (s.used, s.skipped_long) == (2, 1)
    assert dict(zip(s.relations, s.counts.tolist())) == {"all": 4, "nsubj": 2, "nmod": 1,
                                                         "obj": 1}


def test_a_word_without_pieces_skips_its_sentence(uniform):
    text = "\n".join([row(1, "cat", 2, "nsubj"), row(2, "sat", 0, "root"),
                      row(3, "\u200b", 2, "dep")]) + "\n"
    s = sx.score_treebank(uniform, read_conllu(TINY_TREEBANK + "\n" + text))
    assert (s.used, s.skipped_empty) == (3, 1)


def test_word_maps_sum_to_and_average_from():
    """Pieces [CLS] a ##b c [SEP] (word of each piece: -1 0 0 1 -1), one head, by hand."""
    att = torch.tensor([[0.2, 0.2, 0.2, 0.2, 0.2],
                        [0.1, 0.3, 0.2, 0.4, 0.0],
                        [0.0, 0.1, 0.1, 0.6, 0.2],
                        [0.5, 0.1, 0.3, 0.0, 0.1],
                        [0.2, 0.2, 0.2, 0.2, 0.2]])[None, None]  # (1, 1, 5, 5)
    piece_word = torch.tensor([[-1, 0, 0, 1, -1]])
    got = sx.word_maps(att, piece_word, 2)[0, 0]
    # from word 0 = mean of rows 1 and 2; to word 0 = sum of columns 1 and 2
    want = torch.tensor([[(0.5 + 0.2) / 2, (0.4 + 0.6) / 2],
                         [0.1 + 0.3, 0.0]])
    torch.testing.assert_close(got, want)


def test_predict_zeroes_the_diagonal_and_ignores_padding():
    m = torch.tensor([[0.9, 0.05, 0.05, 0.0],
                      [0.3, 0.6, 0.1, 0.0],
                      [0.2, 0.7, 0.1, 0.0],
                      [0.0, 0.0, 0.0, 0.0]])[None, None]  # (1, 1, 4, 4): word 3 is padding
    pred = sx.predict(m, torch.tensor([3]))[0, 0]  # (2, W)
    # rows without the diagonal: word 0 -> 1 (0.05 ties 0.05: the first), 1 -> 0, 2 -> 1
    assert pred[0, :3].tolist() == [1, 0, 1]
    # columns without the diagonal: word 0 <- 1 (0.3), word 1 <- 2 (0.7), word 2 <- 1 (0.1)
    assert pred[1, :3].tolist() == [1, 2, 1]


def test_sentence_predictions_match_the_batch(uniform):
    pred = sx.sentence_predictions(uniform, ["i", "saw", "xyz", "."])  # (L, H, 2, W)
    assert pred.shape == (2, 4, 2, 4)
    assert pred[0, 0, 0].tolist() == [2, 2, 0, 2] and pred[0, 0, 1].tolist() == [1, 0, 0, 0]
    assert sx.sentence_predictions(uniform, ["cat"] * 100) is None  # over 64 positions


def test_command_line_json(uniform, tmp_path, capsys):
    tb = tmp_path / "tiny.conllu"
    tb.write_text(TINY_TREEBANK)
    out = tmp_path / "out.json"
    sx.main([str(tb), "--model", str(uniform.path), "--json", str(out), "--min-arcs", "2"])
    data = json.loads(out.read_text())
    assert data["used"] == 3
    assert [r["rel"] for r in data["rows"]] == ["all", "nsubj", "det"]
    first = data["rows"][0]
    assert set(first) == {"rel", "n", "layer", "head", "direction", "acc", "baseline", "offset"}
    assert (first["n"], first["layer"], first["head"]) == (9, 1, 1)
    assert first["acc"] == pytest.approx(3 / 9) and first["direction"] == "head<-dependent"
    assert np.array(data["heads"]["det"]).shape == (2, 4, 2)
    assert "3 of 3 sentences scored" in capsys.readouterr().out


def test_maps_only_skips_the_last_feed_forward_and_keeps_every_map(bundled):
    enc = bundled.encode("I saw the man with a telescope.")
    with torch.no_grad():
        full = bundled.model(enc.input_ids[None])
        short = bundled.model(enc.input_ids[None], maps_only=True)
    for a, b in zip(full.attentions, short.attentions):
        torch.testing.assert_close(a, b, rtol=0, atol=0)
    for a, b in zip(full.hidden_states[:-1], short.hidden_states[:-1]):
        torch.testing.assert_close(a, b, rtol=0, atol=0)
    assert not torch.allclose(full.hidden_states[-1], short.hidden_states[-1])


def test_word_maps_of_every_layer_at_once_equal_one_layer_at_a_time(bundled):
    att = torch.rand(3, 2, 4, 6, 6)  # (B, L, H, T, T)
    piece_word = torch.tensor([[-1, 0, 0, 1, -1, -1], [-1, 0, 1, 2, 3, -1],
                               [-1, 0, 1, -1, -1, -1]])
    lengths = torch.tensor([2, 4, 2])
    every = sx.predict(sx.word_maps(att, piece_word, 4), lengths)  # (B, L, H, 2, W)
    for layer in range(2):
        one = sx.predict(sx.word_maps(att[:, layer], piece_word, 4), lengths)  # (B, H, 2, W)
        torch.testing.assert_close(every[:, layer], one)

