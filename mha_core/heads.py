"""One head's identity: (layer, head), 0-based in code, numbered from 1 wherever it is shown.

    HeadId(1, 9)              # layer 2, head 10 of the papers' numbering
    str(HeadId(1, 9))         # "L2 H10"
    HeadId.parse("L2 H10")    # HeadId(layer=1, head=9)
"""

import re
from dataclasses import dataclass

_NAME = re.compile(r"^\s*L(\d{1,4})\s*H(\d{1,4})\s*$", re.IGNORECASE)
_LAYER = re.compile(r"^\s*L(\d{1,4})\s*$", re.IGNORECASE)


@dataclass(frozen=True, order=True)
class HeadId:
    layer: int  # from 0
    head: int  # from 0

    def __str__(self) -> str:
        return f"L{self.layer + 1} H{self.head + 1}"

    @classmethod
    def parse(cls, name: str) -> "HeadId":
        """The inverse of str(): "L2 H10" (any case, spaces optional) -> HeadId(1, 9)."""
        m = _NAME.match(str(name))
        if not m or int(m[1]) < 1 or int(m[2]) < 1:
            raise ValueError(f"not a head name like 'L2 H10': {str(name)[:40]!r}")
        return cls(int(m[1]) - 1, int(m[2]) - 1)

    @classmethod
    def every(cls, n_layers: int, n_heads: int) -> list:
        """All L * H heads, layer by layer: the order of a flattened (L, H) array."""
        return [cls(layer, head) for layer in range(n_layers) for head in range(n_heads)]

    def index(self, n_heads: int) -> int:
        """This head's position in a flattened (L, H) array."""
        return self.layer * n_heads + self.head


def head_names(n_layers: int, n_heads: int) -> list:
    """ "L1 H1", "L1 H2", ...: every head's shown name, in flattened (L, H) order."""
    return [str(h) for h in HeadId.every(n_layers, n_heads)]


def layer_names(n_layers: int) -> list:
    """ "L1", "L2", ...: the layers' shown names (rows of a layers x heads grid)."""
    return [f"L{layer + 1}" for layer in range(n_layers)]


def parse_layer(name: str) -> int:
    """The inverse of layer_names for one name: "L3" (any case) -> 2."""
    m = _LAYER.match(str(name))
    if not m or int(m[1]) < 1:
        raise ValueError(f"not a layer name like 'L3': {str(name)[:40]!r}")
    return int(m[1]) - 1


def head_labels(n_heads: int) -> list:
    """ "H1", "H2", ...: the heads' shown names within one layer (columns of a grid)."""
    return [f"H{head + 1}" for head in range(n_heads)]
