"""headscope's core: a from-scratch BERT encoder whose every attention head can be inspected,
and the analyses built on it (one concept per module: metrics, patterns, rollout, ablation,
views, heads, neuron; the lab models in mha_core.toy). torch only: no Streamlit, no plotting.

    import mha_core
    bert = mha_core.load_model()            # the bundled all-MiniLM-L6-v2
    res = bert.attend("I saw the man with a telescope.")
    res.attentions                         # (L, H, T, T)

    from mha_core.norms import result_norm_maps      # ||alpha f(x)|| (Kobayashi et al. 2020)
    from mha_core.syntax import score_treebank       # heads against a treebank (Clark et al.)
    from mha_core.treebank import read_treebank

(The analyses are not imported here: `python -m mha_core.syntax` must run that module once.)
"""

from .api import AttentionResult, Bert, Model, load_bert, load_model
from .attention import MultiHeadSelfAttention
from .config import BertConfig, ConfigError, EncoderConfig
from .encoder import BertModel, Encoder
from .loading import CheckpointError

__all__ = ["load_model", "Model", "AttentionResult", "EncoderConfig", "ConfigError",
           "CheckpointError", "MultiHeadSelfAttention", "Encoder",
           # the same objects under their BERT names, for code written against them
           "load_bert", "Bert", "BertConfig", "BertModel"]
