"""The whole L x H x T x T export round-trips: written by headscope.export (.npz, .json, .csv)
or the CLI, read back, compared with what the model's attend returns; bertviz's inputs (a tuple
of per-layer (1, H, T, T) tensors and tokens) read as the same tensor."""

import numpy as np
import pytest

from headscope import export, view_input

TEXT = "The keys to the cabinet are on the table."


@pytest.fixture(scope="module")
def res(bundled):
    return bundled.attend(TEXT)


# text files keep 6 decimals (5e-7) of float32 weights (6e-8 near 1)
@pytest.mark.parametrize("suffix, atol", [(".npz", 0.0), (".json", 6e-7), (".csv", 6e-7)])
def test_tensor_files_round_trip(bundled, res, tmp_path, suffix, atol):
    path = tmp_path / f"all{suffix}"
    export.save_tensor(view_input.read(res, model=bundled.name), path)
    att, tokens = export.load_tensor(path)
    assert tokens == res.tokens
    assert att.shape == tuple(res.attentions.shape)
    np.testing.assert_allclose(att, res.attentions.numpy(), rtol=0, atol=atol)


def test_cli_writes_the_tensor_and_says_what_is_wrong(bundled, res, tmp_path, capsys):
    out = tmp_path / "cli.npz"
    assert export.main([TEXT, "-o", str(out)]) == 0
    att, tokens = export.load_tensor(out)
    assert tokens == res.tokens
    np.testing.assert_allclose(att, res.attentions.numpy(), rtol=0, atol=1e-6)
    assert export.main([TEXT, "-o", str(tmp_path / "x.pdf")]) == 2
    assert export.main(["  ", "-o", str(tmp_path / "x.html")]) == 2
    assert export.main([TEXT, "-o", str(tmp_path / "y.html"), "--model", str(tmp_path)]) == 1
    err = capsys.readouterr().err
    assert "must end in .html" in err and "empty" in err
    assert err.count("headscope export:") == 3  # one line each, no traceback


def test_bertviz_inputs_read_as_the_tensor(res):
    per_layer = tuple(res.attentions[i][None] for i in range(res.attentions.shape[0]))  # (1,H,T,T)
    a = view_input.read(per_layer, res.tokens)
    np.testing.assert_array_equal(a.att, res.attentions.numpy())
    assert a.single is None and a.special[0] and a.special[-1] and not any(a.special[1:-1])
    with pytest.raises(ValueError, match="tokens"):
        view_input.read(per_layer)
    with pytest.raises(ValueError, match="covers"):
        view_input.read(per_layer, res.tokens[:-1])
    with pytest.raises(ValueError, match=r"\(L, H, T, T\)"):
        view_input.read(np.zeros((2, 3, 4)), ["a"] * 4)
