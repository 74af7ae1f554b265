"""The attention component (Custom Components v2): the Explorer's maps, the head view and the
model view drawn in the browser from compact binary payloads. component.py mounts it;
payload.py builds what it is sent."""

from .component import attention
from .payload import grid_payload, lines_payload, pack

__all__ = ["attention", "grid_payload", "lines_payload", "pack"]
