"""Every tensor inside the forward, the cache, the analyses and the one-head fit is made on the
model's device. No GPU here: the model goes to PyTorch's meta device and testkit.device checks
every operation as CUDA does (one device per operation, 0-dim CPU scalars allowed), so a tensor
made on the CPU and mixed with the model's fails, naming the operation. This is the check that
catches `attend` building token ids on the CPU for a model on a GPU."""

import pytest
import torch

import mha_core
from mha_core import ablation, norms, qk_space
from mha_core.api import pick_device
from mha_core.one_head.fit import FitConfig
from mha_core.one_head.run import Settings, measure_seed
from testkit.device import WrongDevice, on_a_device
from testkit.families import CORPUS, save_tiny_family

FAMILIES = ["bert", "albert", "deberta", "modernbert", "distilbert", "llama", "gpt2"]


@pytest.fixture(scope="module")
def on_meta(tmp_path_factory):
    return {n: mha_core.load_model(str(save_tiny_family(n, tmp_path_factory.mktemp(n))),
                                  device="meta") for n in FAMILIES}


def test_the_check_catches_a_tensor_made_on_the_cpu(on_meta):
    bert = on_meta["bert"]
    enc = bert.encode("I saw the man.")
    with on_a_device(), pytest.raises(WrongDevice, match="embedding"):
        bert.model(enc.input_ids[None])  # ids left on the CPU: what attend did before


@pytest.mark.parametrize("name", FAMILIES)
def test_attend_and_the_cache_stay_on_the_models_device(on_meta, name):
    bert = on_meta[name]
    assert bert.device.type == "meta"
    L, H = bert.config.num_hidden_layers, bert.config.num_attention_heads
    hm = torch.ones(L, H)
    hm[0, 1] = 0
    with on_a_device():
        res = bert.attend(CORPUS[0], head_mask=hm)
        many = bert.attend(CORPUS[:3])
        _, cache = bert.run_with_cache(CORPUS[1], names=None)
        acts = bert.activations(res)
        maps = norms.result_norm_maps(bert, res)
        space = qk_space.qk_vectors(bert, CORPUS[:2], layer=L - 1, head=0)
        importance = ablation.head_importance(bert, CORPUS[2])
    assert res.attentions.device.type == "cpu" and len(many) == 3  # results come back
    assert cache["q"].device.type == "meta"  # the cache stays where the model runs
    assert acts.q.shape[0] == L and maps.shape == res.attentions.shape
    assert space.queries.shape[1] == bert.config.head_dim and importance.shape == (L, H)


@pytest.mark.parametrize("name", ["bert", "modernbert", "deberta", "llama"])
def test_the_one_head_fit_stays_on_the_models_device(on_meta, name):
    """Fitted heads, their Adam state, the masks, the hooks' replacements and the masked-LM
    scores: all on the model's device."""
    bert = on_meta[name]
    settings = Settings(seeds=(0,), heads=(1,), fresh_full=True,
                        fit=FitConfig(steps=2, eval_every=1))
    with on_a_device():
        out = measure_seed(bert, CORPUS, settings, seed=0)
    assert len(out["layers"]) == bert.config.num_hidden_layers and "whole_model" in out


def test_devices_are_named_and_refused_by_name():
    assert pick_device("cpu") == torch.device("cpu")
    assert pick_device("auto").type in ("cpu", "cuda", "mps")
    for bad in ("gpu", "", 3):
        with pytest.raises(ValueError, match="device must be one of"):
            pick_device(bad)
    if not torch.cuda.is_available():
        with pytest.raises(ValueError, match="sees no CUDA GPU"):
            pick_device("cuda")
