import json

import pytest

from mha_core.config import ConfigError, EncoderConfig, read_json
from mha_core.families import read_config


def test_defaults_are_bert_base():
    c = EncoderConfig()
    assert (c.hidden_size, c.num_hidden_layers, c.num_attention_heads, c.head_dim) == \
        (768, 12, 12, 64)


@pytest.mark.parametrize("d,msg", [
    ({"hidden_size": 100, "num_attention_heads": 12}, "hidden_size"),
    ({"model_type": "t5"}, "model_type"),
    ({"position_embedding_type": "relative_key_query"}, "position_embedding_type"),
    ({"hidden_act": "quick_gelu"}, "hidden_act"),
    ({"num_hidden_layers": 0}, "num_hidden_layers"),
])
def test_rejections_name_the_field(d, msg):
    with pytest.raises(ConfigError, match=msg):
        read_config(d)


def test_unknown_fields_are_ignored_and_file_errors_are_clear(tmp_path):
    c = read_config({"hidden_size": 64, "num_attention_heads": 4, "use_cache": True})
    assert c.head_dim == 16
    bad = tmp_path / "config.json"
    bad.write_text("{not json")
    with pytest.raises(ConfigError, match="cannot read"):
        read_config(read_json(bad))
    bad.write_text(json.dumps([1, 2]))
    with pytest.raises(ConfigError, match="JSON object"):
        read_config(read_json(bad))
