"""The attention component (Custom Components v2): the Explorer's maps, the head view and the
model view drawn in the browser from compact binary payloads. component.py mounts it;
payload.py builds what it is sent."""

from .component import attention, js_lines
from .payload import (
    grid_payload,
    lines_payload,
    pack,
    unpack,
    unpack_lines,
)

__all__ = ["attention", "js_lines", "grid_payload", "lines_payload", "pack", "unpack",
           "unpack_lines"]
