"""Qwen2 (Qwen2 and Qwen2.5): Llama's decoder with biases on the q, k and v projections (none on
the output projection or the feed-forward); the same key names."""

from ..config import EncoderConfig
from . import llama
from .base import Family


def read_config(d: dict) -> EncoderConfig:
    return llama.decoder_config(d, "qwen2", bias=False, qkv_bias=True, ffn_bias=False)


FAMILY = Family("Qwen2", ("qwen2",), "model.", read_config, llama.keys, tied=llama.tied,
                fuse=llama.fuse, summary="decoder: Llama's, with q/k/v biases")
