"""headscope's core: a from-scratch BERT encoder whose every attention head can be inspected.

    import mha_core
    bert = mha_core.load_bert()            # the bundled all-MiniLM-L6-v2
    res = bert.attend("I saw the man with a telescope.")
    res.attentions                         # (L, H, T, T)
    mha_core.result_norm_maps(bert, res)   # (L, H, T, T) ||alpha f(x)|| (Kobayashi et al.)
    mha_core.score_treebank(bert, mha_core.read_treebank("x.conllu")).rows()   # Clark et al.

Names are imported lazily, so `import mha_core.figures` does not pay for torch.
"""

_EXPORTS = {
    "load_bert": "api", "Bert": "api", "AttentionResult": "api",
    "BertConfig": "config", "ConfigError": "config",
    "CheckpointError": "loading",
    "MultiHeadSelfAttention": "attention",
    "BertModel": "bert",
    "read_treebank": "treebank", "TreebankError": "treebank",
    "score_treebank": "syntax", "result_norm_maps": "norms",
}
__all__ = list(_EXPORTS)


def __getattr__(name):
    if name in _EXPORTS:
        import importlib

        return getattr(importlib.import_module(f".{_EXPORTS[name]}", __name__), name)
    raise AttributeError(f"module 'mha_core' has no attribute {name!r}")
