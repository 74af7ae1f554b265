"""The activation functions a config.json names (hidden_act, hidden_activation, activation),
shared by the encoder's feed-forward and the heads (mha_core.encoder, mha_core.mlm)."""

import torch
import torch.nn.functional as F

ACT_FNS = {
    "gelu": F.gelu,  # exact erf GELU, as in the original BERT
    "gelu_new": lambda x: F.gelu(x, approximate="tanh"),
    "gelu_pytorch_tanh": lambda x: F.gelu(x, approximate="tanh"),
    "relu": F.relu,
    "silu": F.silu,
    "swish": F.silu,
    "tanh": torch.tanh,
}
