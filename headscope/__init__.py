"""headscope: what every attention head of a real BERT looks at, from Python and in a notebook.

    import headscope
    bert = headscope.load_model()                  # the bundled all-MiniLM-L6-v2
    res = bert.attend("The cat sat on the mat.")  # AttentionResult: attentions (L, H, T, T)
    headscope.head_view(res)     # the notebook views: pip install "headscope[notebook]"
    headscope.model_view(res); headscope.heads(res)

The app is the `headscope run` command (headscope/cli.py). Everything here is imported on first
use (PEP 562), so `import headscope` and `headscope --help` load neither torch nor the widgets.
"""

import importlib

__version__ = "0.1.0"

# name -> the module that defines it
_LAZY = {
    "load_model": "mha_core",
    "load_bert": "mha_core",  # load_model's BERT name
    "AttentionResult": "mha_core",
    "Model": "mha_core",
    "Bert": "mha_core",  # Model's BERT name
    "head_view": "headscope.widgets",
    "model_view": "headscope.widgets",
    "heads": "headscope.widgets",
}

__all__ = ["__version__", *_LAZY]


def __getattr__(name: str):
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'headscope' has no attribute {name!r}")
    try:
        value = getattr(importlib.import_module(module), name)
    except ImportError as e:
        if module == "headscope.widgets":
            raise ImportError(f"headscope.{name} needs the notebook extra ({e}): "
                              "pip install 'headscope[notebook]'") from e
        raise
    globals()[name] = value  # later look-ups skip __getattr__
    return value


def __dir__():
    return sorted([*globals(), *_LAZY])
