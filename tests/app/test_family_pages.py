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
