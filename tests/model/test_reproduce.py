"""The papers' reproductions (mha_core.reproduce): each statistic against an independent
computation (loops in numpy and scipy over transformers' own attentions on a tiny model of the
same weights, or over Model.attend's maps on the bundled model; a linear program for the flow;
finite differences through the public API for Michel's gradients), each definition on hand-made
maps whose answer is known, the command's four files, and the one sentence a model without an
LM head gets."""

import json
import xml.etree.ElementTree as ET
from types import SimpleNamespace

import numpy as np
import pytest
import torch
from scipy.optimize import linprog
from scipy.stats import entropy as scipy_entropy
from scipy.stats import spearmanr

import mha_core
from mha_core.flow import attention_flow
from mha_core.reproduce import (
    PAPERS,
    CorpusError,
    abnar2020,
    clark2019,
    kovaleva2019,
    michel2019,
    read_corpus,
    reproduce,
    voita2019,
)
from mha_core.reproduce.__main__ import main
from mha_core.reproduce.corpus import Corpus
from mha_core.reproduce.report import to_json
from testkit.families import CORPUS, build_tiny_family, save_tiny_family
from testkit.models import hf_norm_maps

TEXTS = Corpus("tiny.txt", tuple(CORPUS))


@pytest.fixture(scope="module", autouse=True)
def one_thread():
    """One torch thread, as the command runs (--threads 1): tiny matrices on a busy 2-core
    machine run ~10x slower with two threads waiting on each other. Restored after."""
    n = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(n)


@pytest.fixture(scope="module")
def tiny_bert(tmp_path_factory):
    """A tiny BertForMaskedLM (wordpiece tokenizer) and transformers' model of its weights."""
    path = save_tiny_family("bert", tmp_path_factory.mktemp("repro-bert"))
    return mha_core.load_model(str(path), device="cpu"), build_tiny_family("bert")


@pytest.fixture(scope="module")
def tiny_llama(tmp_path_factory):
    path = save_tiny_family("llama", tmp_path_factory.mktemp("repro-llama"))
    return mha_core.load_model(str(path), device="cpu"), build_tiny_family("llama")


def hf_maps(hf, enc) -> np.ndarray:
    """transformers' eager attentions of one encoded text: (L, H, T, T) float64."""
    kw = {"token_type_ids": enc.token_type_ids[None]} if "bert" in type(hf).__name__.lower() \
        else {}
    with torch.no_grad():
        out = hf(input_ids=enc.input_ids[None], output_attentions=True, **kw)
    return torch.stack(out.attentions)[:, 0].double().numpy()


# --- Clark et al. 2019 ----------------------------------------------------------------------

def clark_by_hand(att, enc) -> dict:
    """Clark's per-head statistics with loops: (L, H) each."""
    L, H, T, _ = att.shape
    labels, special = list(enc.tokens), list(enc.special)
    cols = {"cls": [0] if special[0] else [],
            "sep": [j for j in range(1, T) if special[j]],
            "period": [j for j in range(T) if labels[j] == "." and not special[j]],
            "comma": [j for j in range(T) if labels[j] == "," and not special[j]]}
    out = {k: np.zeros((L, H)) for k in [*cols, "prev", "next", "entropy", "cls_entropy"]}
    for layer in range(L):
        for h in range(H):
            a = att[layer, h]
            for k, js in cols.items():
                out[k][layer, h] = np.mean([sum(a[i, j] for j in js) for i in range(T)])
            out["prev"][layer, h] = np.mean([a[i, i - 1] for i in range(1, T)])
            out["next"][layer, h] = np.mean([a[i, i + 1] for i in range(T - 1)])
            out["entropy"][layer, h] = np.mean([scipy_entropy(a[i]) for i in range(T)])
            out["cls_entropy"][layer, h] = scipy_entropy(a[0])
    return out


def test_clark_statistics_equal_transformers_attentions(tiny_bert):
    bert, hf = tiny_bert
    res = clark2019.run(bert, TEXTS)
    encs = [bert.encode(t) for t in TEXTS.texts]
    by_hand = [clark_by_hand(hf_maps(hf, e), e) for e in encs]
    assert res["sentences"] == len(TEXTS.texts)
    for k in ("cls", "sep", "period", "comma", "prev", "next", "entropy", "cls_entropy"):
        want = np.mean([d[k] for d in by_hand], axis=0)
        np.testing.assert_allclose(res["heads"][k], want, atol=2e-4, err_msg=k)
    assert np.array(res["heads"]["period"]).max() > 0 and np.array(res["heads"]["comma"]).max() > 0
    prev = np.mean([d["prev"] for d in by_hand], axis=0)
    assert len(res["prev_heads"]) == int((prev > 0.5).sum())


def test_clark_on_the_bundled_model_equals_numpy_over_attend(bundled, tmp_path):
    corpus = read_corpus().head(12)
    rec = reproduce("clark2019", bundled, corpus)
    res = rec["results"]
    by_hand = [clark_by_hand(r.attentions.double().numpy(), r.encoded)
               for r in (bundled.attend(t) for t in corpus.texts)]
    for k in ("sep", "prev", "entropy", "cls_entropy"):
        np.testing.assert_allclose(res["heads"][k], np.mean([d[k] for d in by_hand], 0),
                                   atol=2e-4, err_msg=k)
    sep_layer = np.mean([d["sep"] for d in by_hand], 0).mean(1)
    assert res["sep_layers"] == [i + 1 for i, v in enumerate(sep_layer) if v > 0.5]
    assert [r["rel"] for r in res["syntax"]["rows"]][0] == "all"  # CoNLL-U: the syntax part
    table = "\n".join(" | ".join(r) for r in rec["rows"])
    assert "3.89 nats" in table and "layers 6–10 of 12" in table
    assert "bert-base-uncased" in rec["paper_model"] and "Wikipedia" in rec["paper_data"]
    json.loads(to_json(rec))  # strict JSON: no NaN


def test_clark_definitions_on_hand_made_maps():
    T = 6
    enc = SimpleNamespace(tokens=["[CLS]", "a", ",", "b", ".", "[SEP]"],
                          special=[True, False, False, False, False, True])
    on_sep = np.zeros((T, T))
    on_sep[:, -1] = 1
    previous = np.eye(T, k=-1)
    previous[0, 0] = 1
    uniform = np.full((T, T), 1 / T)
    att = np.stack([on_sep, previous, uniform])[None]  # (1, 3, T, T)
    s = clark2019.sentence_stats(att, enc, decoder=False)
    np.testing.assert_allclose(s["sep"][0], [1, 0, 1 / T])
    np.testing.assert_allclose(s["prev"][0], [0, 1, 1 / T])
    np.testing.assert_allclose(s["comma"][0], [0, 1 / T, 1 / T])  # row 3 ("b") is on ","
    np.testing.assert_allclose(s["entropy"][0], [0, 0, np.log(T)], atol=1e-12)
    dec = clark2019.sentence_stats(att, enc, decoder=True)
    assert np.isnan(dec["cls"]).all() and np.isnan(dec["next"]).all()


# --- Kobayashi et al. 2020 ------------------------------------------------------------------

def test_kobayashi_shares_equal_transformers_norms(tiny_bert):
    bert, hf = tiny_bert
    res = PAPERS["kobayashi2020"].run(bert, TEXTS)
    w = {k: [] for k in ("sep", "period")}
    n = {k: [] for k in w}
    for text in TEXTS.texts:
        enc = bert.encode(text)
        att = hf_maps(hf, enc)
        norm = hf_norm_maps(hf.bert, enc.input_ids, enc.token_type_ids).double().numpy()
        share = norm / norm.sum(-1, keepdims=True)
        cols = {"sep": [len(enc.tokens) - 1],
                "period": [j for j, t in enumerate(enc.tokens) if t == "."]}
        for k, js in cols.items():
            w[k].append(att[..., js].sum(-1).mean(-1))
            n[k].append(share[..., js].sum(-1).mean(-1))
    for k in w:
        np.testing.assert_allclose(res["heads"]["weight"][k], np.mean(w[k], 0), atol=2e-4)
        np.testing.assert_allclose(res["heads"]["norm"][k], np.mean(n[k], 0), atol=2e-4)


# --- Kovaleva et al. 2019 -------------------------------------------------------------------

def test_kovaleva_classes_on_synthetic_maps():
    T = 20
    rng = np.random.default_rng(0)
    vertical = np.zeros((T, T))
    vertical[:, 0] = 1
    diagonal = np.eye(T, k=-1)
    diagonal[0, 0] = 1
    both = 0.5 * vertical + 0.5 * diagonal
    block = np.full((T, T), 1 / T)
    scattered = np.zeros((T, T))  # each row on one far key of its own: no column, no band
    scattered[np.arange(T), (np.arange(T) + 7) % T] = 1
    noisy = rng.dirichlet(np.full(T, 0.05), size=T)  # peaked, each row somewhere else
    maps = np.stack([vertical, diagonal, both, block, scattered])
    got = [kovaleva2019.CLASSES[i] for i in kovaleva2019.classify(kovaleva2019.map_scores(maps))]
    assert got == ["vertical", "diagonal", "vertical+diagonal", "block", "heterogeneous"]
    assert kovaleva2019.CLASSES[int(kovaleva2019.classify(
        kovaleva2019.map_scores(noisy)))] == "heterogeneous"
    # a decoder's causal diagonal (row 0 has no choice and is left out)
    causal = np.tril(np.ones((T, T)))
    causal /= causal.sum(-1, keepdims=True)
    s = kovaleva2019.map_scores(np.eye(T), decoder=True)
    assert kovaleva2019.CLASSES[int(kovaleva2019.classify(s))] == "diagonal"
    assert kovaleva2019.CLASSES[int(kovaleva2019.classify(
        kovaleva2019.map_scores(causal, decoder=True)))] == "block"


def test_kovaleva_counts_every_map_once(tiny_llama):
    model, _ = tiny_llama
    res = kovaleva2019.run(model, TEXTS)
    shares = np.array([res["by_layer"][c] for c in kovaleva2019.CLASSES])  # (C, L)
    np.testing.assert_allclose(shares.sum(0), 1, atol=1e-3)
    assert sum(res["overall"].values()) == pytest.approx(1, abs=1e-3)


# --- Voita et al. 2019 ----------------------------------------------------------------------

def test_voita_definitions_on_hand_made_maps():
    T = 8
    previous = np.eye(T, k=-1)
    previous[0, 0] = 1
    ids = [10, 11, 12, 13, 14, 15, 16, 17]
    special = [True] + [False] * 6 + [True]
    freq = {i: 5 for i in ids} | {13: 1}  # token 3 is the rarest
    on_rare = np.zeros((T, T))
    on_rare[:, 3] = 1
    att = np.stack([previous, on_rare])[None]  # (1, 2, T, T)
    c = voita2019.sentence_counts(att, ids, special, freq, decoder=False)
    prev = c["prev_top"][0] / c["prev_top"][1]
    rare = c["rare_top"][0] / c["rare_top"][1]
    np.testing.assert_allclose(prev[0], [1, 1 / 7])  # row 4 of on_rare points at 3 too
    np.testing.assert_allclose(rare[0], [1 / 8, 1])  # row 4 of previous points at 3
    np.testing.assert_allclose(c["confidence"][0] / c["confidence"][1], [[1, 1]])
    assert c["rare_chance"][0] / c["rare_chance"][1] == pytest.approx(1 / 8)


def test_voita_statistics_equal_numpy_on_a_tiny_decoder(tiny_llama):
    model, hf = tiny_llama
    res = voita2019.run(model, TEXTS)
    encs = [model.encode(t) for t in TEXTS.texts]
    freq = {}
    for e in encs:
        for t in e.input_ids.tolist():
            freq[t] = freq.get(t, 0) + 1
    conf, prev, rare = [], [], []
    for e in encs:
        att = hf_maps(hf, e)
        ids = e.input_ids.tolist()
        least = min(freq[t] for t in ids)
        for i in range(1, len(ids)):  # row 0 has one key: left out
            conf.append(att[:, :, i].max(-1))
            prev.append(att[:, :, i].argmax(-1) == i - 1)
            if any(freq[ids[j]] == least for j in range(i + 1)):
                rare.append(np.isin(att[:, :, i].argmax(-1),
                                    [j for j in range(i + 1) if freq[ids[j]] == least]))
    np.testing.assert_allclose(res["heads"]["confidence"], np.mean(conf, 0), atol=2e-4)
    np.testing.assert_allclose(res["heads"]["prev_top"], np.mean(prev, 0), atol=2e-4)
    np.testing.assert_allclose(res["heads"]["rare_top"], np.mean(rare, 0), atol=2e-4)
    assert all(v is None for row in res["heads"]["next_top"] for v in row)  # a decoder


# --- Gu et al. 2024 -------------------------------------------------------------------------

def test_gu_sink_rate_equals_numpy_on_a_tiny_decoder(tiny_llama):
    model, hf = tiny_llama
    rec = reproduce("gu2024", model, TEXTS)
    first = rec["results"]["kinds"]["first"]["weight"]
    shares = [hf_maps(hf, model.encode(t))[:, :, 1:, 0].mean(-1) for t in TEXTS.texts]
    np.testing.assert_allclose(first["share"], np.mean(shares, 0), atol=2e-4)
    rate = np.mean([(s > 0.3).mean(-1) for s in shares], 0)  # threshold each text, then mean
    np.testing.assert_allclose(first["rate_per_layer"], rate, atol=1e-4)
    assert list(rec["results"]["kinds"]) == ["first"]  # no [CLS]/[SEP] in a decoder
    clark = reproduce("clark2019", model, TEXTS)  # a decoder's nulls are JSON nulls
    assert json.loads(to_json(clark))["results"]["cls_entropy_last"] is None


# --- Abnar & Zuidema 2020 -------------------------------------------------------------------

def max_flow_lp(att, source, sink) -> float:
    """The maximum flow in the residual attention graph by a linear program (scipy's HiGHS)."""
    a = 0.5 * att.mean(1) + 0.5 * np.eye(att.shape[-1])
    a /= a.sum(-1, keepdims=True)
    L, T, _ = a.shape
    edges = [((layer + 1) * T + i, layer * T + j, a[layer, i, j])
             for layer in range(L) for i in range(T) for j in range(T)]
    n = (L + 1) * T
    out_of_source = np.array([1.0 if u == source else 0.0 for u, _, _ in edges])
    eq = np.zeros((n, len(edges)))  # conservation at every node but the source and the sink
    for k, (u, v, _) in enumerate(edges):
        eq[u, k] -= 1
        eq[v, k] += 1
    keep = [x for x in range(n) if x not in (source, sink)]
    into_source = [k for k, (_, v, _) in enumerate(edges) if v == source]
    bounds = [(0, 0) if k in into_source else (0, c) for k, (_, _, c) in enumerate(edges)]
    res = linprog(-out_of_source, A_eq=eq[keep], b_eq=np.zeros(len(keep)), bounds=bounds)
    return -res.fun


def test_flow_equals_a_linear_program_and_one_layer_is_rollout():
    rng = np.random.default_rng(1)
    att = rng.dirichlet(np.full(5, 0.5), size=(3, 2, 5))  # (L, H, T, T)
    got = attention_flow(att, source=4)  # (L, T)
    for layer in (1, 3):
        raw = np.array([max_flow_lp(att[:layer], layer * 5 + 4, j) for j in range(5)])
        np.testing.assert_allclose(got[layer - 1], raw / raw.sum(), atol=1e-5)
    a = 0.5 * att[0].mean(0) + 0.5 * np.eye(5)
    np.testing.assert_allclose(got[0], a[4] / a[4].sum(), atol=1e-6)
    with pytest.raises(ValueError, match="limited to"):
        attention_flow(np.ones((1, 1, 60, 60)) / 60, 0)


def test_abnar_importances_and_correlations_equal_transformers(tiny_llama):
    model, hf = tiny_llama
    enc = model.encode(CORPUS[1])  # "The cat sat on the mat."
    ids, types, q, target, cands = abnar2020.setup(model, enc, "next")
    assert q == len(ids) - 1 and target == int(enc.input_ids[len(ids)])  # the last word
    unk = model.tokenizer.unk_token_id
    with torch.no_grad():
        p = [hf(input_ids=x[None]).logits[0, q].softmax(-1)[target].item()
             for x in [ids] + [torch.where(torch.arange(len(ids)) == j, unk, ids) for j in cands]]
    blank = np.array(p[0]) - np.array(p[1:])
    np.testing.assert_allclose(abnar2020.blankout(model, ids, types, q, target, cands, "next",
                                                  unk), blank, atol=1e-6)
    emb = hf.model.embed_tokens(ids[None]).detach().requires_grad_(True)
    logp = hf(inputs_embeds=emb).logits[0, q].log_softmax(-1)[target]
    grad = torch.autograd.grad(logp, [emb])[0][0].norm(dim=-1).numpy()
    got_grad, maps, _ = abnar2020.gradient_and_maps(model, ids, types, q, target, "next")
    np.testing.assert_allclose(got_grad, grad, rtol=1e-4, atol=1e-6)
    scores, _ = abnar2020.sentence_scores(model, enc, "next", unk)
    att = hf_maps(hf, SimpleNamespace(input_ids=ids, token_type_ids=types))
    raw = [spearmanr(att[layer].mean(0)[q, cands], blank)[0] for layer in range(len(att))]
    np.testing.assert_allclose(scores["blankout"]["raw"], raw, atol=1e-6)
    a = 0.5 * att.mean(1) + 0.5 * np.eye(len(ids))
    a /= a.sum(-1, keepdims=True)
    roll = np.linalg.multi_dot([a[1], a[0]]) if len(a) == 2 else None
    np.testing.assert_allclose(scores["gradient"]["rollout"][-1],
                               spearmanr(roll[q, cands], grad[cands])[0], atol=1e-6)


def test_abnar_and_michel_on_a_masked_lm(tiny_bert):
    bert, _ = tiny_bert
    for name in ("abnar2020", "michel2019"):
        rec = reproduce(name, bert, TEXTS)
        assert "skipped" not in rec, rec.get("skipped")
    assert rec["results"]["loss"] == "masked-LM"
    res = reproduce("abnar2020", bert, TEXTS)["results"]
    assert res["prediction"] == "masked word" and len(res["blankout"]["flow"]["mean"]) == 2


# --- Michel et al. 2019 ---------------------------------------------------------------------

def api_loss(model, enc, mask) -> float:
    """Mean next-token cross-entropy through the public API's probabilities."""
    probs = model.next_word_probabilities(enc, torch.as_tensor(mask, dtype=torch.float32))
    ids = enc.input_ids
    return float(-probs[:-1].gather(1, ids[1:, None]).log().mean())


def test_michel_importance_equals_finite_differences(tiny_llama):
    model, _ = tiny_llama
    enc = model.encode(CORPUS[0])
    batch = michel2019.lm_batch(model, enc, "next", seed=0)
    got = michel2019.importance(model, [batch], "next")  # (L, H)
    L, H = got.shape
    eps = 1e-2
    fd = np.zeros((L, H))
    for layer in range(L):
        for h in range(H):
            up, down = np.ones((L, H)), np.ones((L, H))
            up[layer, h] += eps
            down[layer, h] -= eps
            fd[layer, h] = abs(api_loss(model, enc, up) - api_loss(model, enc, down)) / (2 * eps)
    np.testing.assert_allclose(got, fd, rtol=2e-2, atol=2e-3)


def test_michel_pruning_curve_equals_the_public_api(tiny_llama):
    model, _ = tiny_llama
    corpus = Corpus("two.txt", tuple(CORPUS[:4]))
    res = michel2019.run(model, corpus)
    L, H = model.config.num_hidden_layers, model.config.num_attention_heads
    held = [model.encode(t) for t in corpus.texts[1::2]]
    for s in (0, 3, 6):
        mask = np.ones((L, H))
        for layer, head in res["order"][:round(michel2019.STEPS[s] * L * H)]:
            mask[layer, head] = 0  # the least important heads off
        nll = sum(api_loss(model, e, mask) * (len(e.tokens) - 1) for e in held)
        assert res["loss_curve"][s] == pytest.approx(nll / sum(len(e.tokens) - 1 for e in held),
                                                     abs=2e-4)


def test_michel_masks_and_the_prunable_share():
    scores = np.arange(20, dtype=float).reshape(2, 10)[:, ::-1]  # layer 0's last head least
    masks = michel2019.pruning_masks(scores)
    assert [int((m == 0).sum()) for m in masks] == [0, 2, 4, 6, 8, 10, 12, 14, 16, 18]
    assert masks[1, 0, 9] == 0 and masks[1, 0, 8] == 0 and masks[1].sum() == 18
    np.testing.assert_allclose(michel2019.normalise(np.array([[3.0, 4.0]])), [[0.6, 0.8]])
    assert michel2019.prunable([1.0, 1.005, 1.009, 1.02, 1.0, 1, 1, 1, 1, 1]) == 0.2
    assert michel2019.prunable([1.0, 1.2] + [1] * 8) == 0.0
    assert michel2019.prunable_by_accuracy([0.5, 0.495, 0.48, 0.6] + [0.5] * 6) == 0.1


# --- the command, the corpus, a model that lacks what a paper needs ---------------------------

@pytest.mark.parametrize("kind", ["tiny_bert", "tiny_llama"])
def test_every_paper_makes_a_strict_record_and_a_figure(kind, request):
    from mha_core.reproduce.report import draw, markdown

    model, _ = request.getfixturevalue(kind)
    for name, module in PAPERS.items():
        rec = reproduce(name, model, TEXTS)
        assert "skipped" not in rec, (name, rec.get("skipped"))
        json.loads(to_json(rec))  # NaN is refused: None stands where a number does not apply
        assert rec["rows"] and all(len(r) == 3 for r in rec["rows"])
        assert module.PAPER.model in markdown(rec) and rec["differs"].endswith(".")
        draw(module, rec)


def test_a_model_without_an_lm_head_gets_one_sentence(bundled, tmp_path, capsys):
    for name in ("abnar2020", "michel2019"):
        rec = reproduce(name, bundled, read_corpus().head(3))
        assert "no language-model head" in rec["skipped"] and "results" not in rec
    assert main(["michel2019", "--model", "bundled", "--out", str(tmp_path)]) == 1
    err = capsys.readouterr().err
    assert "no language-model head" in err and "Traceback" not in err
    assert "no language-model head" in (tmp_path / "michel2019.md").read_text()


def test_the_command_writes_json_figures_and_markdown(tiny_bert, tmp_path, capsys):
    bert, _ = tiny_bert
    corpus = tmp_path / "lines.txt"
    corpus.write_text("\n".join(CORPUS) + "\n\n")
    from headscope import cli

    assert cli.main(["reproduce", "kovaleva2019", "--model", str(bert.path), "--corpus",
                     str(corpus), "--out", str(tmp_path / "out"), "--json",
                     str(tmp_path / "k.json")]) == 0
    out = tmp_path / "out"
    rec = json.loads((out / "kovaleva2019.json").read_text())
    assert rec == json.loads((tmp_path / "k.json").read_text())
    assert rec["results"]["sentences"] == len(CORPUS) and rec["corpus"]["format"] == "plain text"
    assert (out / "kovaleva2019.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert ET.parse(out / "kovaleva2019.svg").getroot().tag.endswith("svg")
    md = (out / "kovaleva2019.md").read_text()
    assert "32 % (MRPC) to 61 % (QQP)" in md and "fine-tuned per GLUE task" in md
    assert str(bert.path) in md and "| heterogeneous maps" in md
    assert "kovaleva2019" in capsys.readouterr().out


def test_corpus_files_and_their_errors(tmp_path):
    sample = read_corpus()
    assert len(sample.texts) == 153 and sample.treebank is not None
    assert sample.head(5).texts == sample.texts[:5] and len(sample.head(5).treebank) == 5
    conllu = tmp_path / "two.txt"  # CoNLL-U by its content, whatever the name
    conllu.write_text("# text = Dogs bark.\n1\tDogs\t_\tNOUN\t_\t_\t2\tnsubj\t_\t_\n"
                      "2\tbark\t_\tVERB\t_\t_\t0\troot\t_\t_\n3\t.\t_\tPUNCT\t_\t_\t2\tpunct\t_\t_\n")
    assert read_corpus(conllu).texts == ("Dogs bark.",)
    bad = {"latin1.txt": b"caf\xe9\n", "empty.txt": b"\n\n",
           "broken.conllu": b"1\tDogs\t_\tNOUN\t_\t_\t7\tnsubj\t_\t_\n"}
    for name, data in bad.items():
        (tmp_path / name).write_bytes(data)
        with pytest.raises(CorpusError) as e:
            read_corpus(tmp_path / name)
        assert name in str(e.value)
    with pytest.raises(CorpusError, match="no corpus file"):
        read_corpus(tmp_path / "missing.txt")


def test_sentences_a_model_cannot_read_are_counted_not_fatal(tiny_llama):
    from mha_core.reproduce.corpus import encode_corpus

    model, _ = tiny_llama
    long = " ".join(["the cat sat on the mat"] * 40)
    corpus = Corpus("odd.txt", ("The cat sat on the mat.", long, "."))
    res = clark2019.run(model, corpus)
    assert res["sentences"] == 1
    assert res["skipped"] == {"too_long": 1, "too_short": 1, "unreadable": 0}

    def encode(text, max_length=None):  # a model that refuses one text (a pair, say)
        if "refused" in text:
            raise ValueError("this model cannot take a sentence pair")
        return model.encode(text, max_length=max_length)

    kept, skipped = encode_corpus(SimpleNamespace(encode=encode),
                                  ["The cat sat.", "refused", "The mat."])
    assert [i for i, _ in kept] == [0, 2] and skipped["unreadable"] == 1
