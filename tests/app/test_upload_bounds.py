"""An upload the app refuses is read once: the refusal is cached by the file's digest, so the
next rerun (any sidebar change) costs no parse."""

import mha_core.treebank as treebank
from headscope.ui import treebanks as tb


def test_a_refused_upload_is_parsed_once(monkeypatch):
    calls = []
    real = treebank.read_conllu

    def counting(*args, **kwargs):
        calls.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(treebank, "read_conllu", counting)
    tb.read_upload.clear()
    good = "1\ta\t_\t_\t_\t_\t0\troot\t_\t_\n\n"
    bad = (good * 50 + "1\tb\t_\t_\t_\t_\t1\troot\t_\t_\n").encode()  # its own HEAD, at the end
    for _ in range(3):  # three reruns
        sentences, why = tb.read_upload(tb.digest(bad), bad)
        assert sentences is None and why.startswith("line 101: word 1 is its own HEAD")
    assert len(calls) == 1
    sentences, why = tb.read_upload(tb.digest(good.encode()), good.encode())
    assert why is None and len(sentences) == 1 and len(calls) == 2
