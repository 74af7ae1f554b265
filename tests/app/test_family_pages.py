"""Every page opens on a tiny random model of each family offered through HEADSCOPE_MODELS,
with no exception (AppTest). Slow: 6 families x every page."""

import pytest

from testkit.apptest import PAGES, open_app, survives
from testkit.families import save_tiny_family

FAMILIES = ["roberta", "distilbert", "electra-discriminator", "albert", "deberta", "modernbert"]


@pytest.fixture(scope="module")
def offered(tmp_path_factory):
    return {f: save_tiny_family(f, tmp_path_factory.mktemp(f) / f) for f in FAMILIES}


@pytest.mark.slow
@pytest.mark.parametrize("family", FAMILIES)
def test_every_page_opens_on_the_family(offered, family, monkeypatch):
    name = f"tiny-{family}"
    monkeypatch.setenv("HEADSCOPE_MODELS", f"{name}={offered[family]}")
    for page in PAGES:
        at = open_app(page, model=name, text="The cat sat on the mat.", pair="I saw the man.")
        survives(at)


def test_family_specific_sections(offered, monkeypatch):
    """ELECTRA's discriminator shows each token's replaced probability (from the model's own
    head: a probability per non-special token); ALBERT's shared layers are said where heads are
    switched off; DeBERTa's neuron view says its logits hold position terms."""
    from testkit.apptest import messages

    monkeypatch.setenv("HEADSCOPE_MODELS", ";".join(f"tiny-{f}={offered[f]}" for f in FAMILIES))
    text = "The cat sat on the mat."
    at = open_app("explorer", model="tiny-electra-discriminator", text=text)
    [table] = [d.value for d in at.dataframe if "replaced (probability)" in d.value.columns]
    assert list(table["token"]) == ["the", "cat", "sat", "on", "the", "mat", "."]
    assert ((table["replaced (probability)"] > 0) & (table["replaced (probability)"] < 1)).all()
    # no masked-LM head: the notice names ELECTRA's own head keys, not BERT's cls.predictions.*
    said = messages(at)
    assert "`generator_predictions.*`, `generator_lm_head.*`" in said, said
    assert "cls.predictions" not in said
    at = open_app("explorer", model="tiny-modernbert", text=text)
    assert any("layer 2 is local" in c.value for c in at.caption)
    # what "the best-fit single head" means on the family, under the summed head
    assert any("without rotary positions" in c.value for c in at.caption)
    at = open_app("explorer", model="tiny-deberta", text=text)
    assert any("without the relative-position terms" in c.value for c in at.caption)
    at = open_app("head_lab", model="tiny-albert", text=text)
    assert "layers 1, 3; layers 2, 4; layers 5, 7; layers 6, 8" in messages(at)
    at = open_app("inside_mha", model="tiny-deberta", text=text)
    # the real-model tab draws on the first run (tabs are all drawn)
    assert any("position terms" in c.value for c in at.caption), [c.value for c in at.caption]
