"""Run code as if the model were on an accelerator, on a machine without one.

The model goes to PyTorch's `meta` device (shapes, no data) and every aten operation is checked
the way CUDA checks it: all tensor arguments on one device, except 0-dim CPU tensors (Python
scalars in tensor form, which CUDA kernels accept too). A tensor made on the CPU and then
mixed with the model's (token ids, a mask, a position table, a head mask, a fitted head's
weights, optimiser state) fails at once, naming the operation, as it would on a GPU.

Meta tensors hold no values, so reading one on the host (`.item()`, `int()`, `float()`, a copy
to the CPU) gives zeros here: the run checks where tensors live, not what they hold.

    with on_a_device():
        bert.attend("a text")      # bert loaded with device="meta"
"""

import contextlib

import torch
from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils._pytree import tree_leaves


class WrongDevice(AssertionError):
    """An operation mixed tensors of two devices (CUDA would raise here)."""


class DeviceCheck(TorchDispatchMode):
    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        leaves = [t for t in tree_leaves((args, kwargs)) if isinstance(t, torch.Tensor)]
        devices = {t.device for t in leaves if not (t.dim() == 0 and t.device.type == "cpu")}
        name = str(func.overloadpacket.__name__)
        if name == "_to_copy" and leaves and leaves[0].device.type == "meta" and (
                kwargs.get("device") is not None and torch.device(kwargs["device"]).type
                == "cpu"):
            src = leaves[0]  # a copy back to the host: zeros of the same shape and dtype
            return torch.zeros(src.shape, dtype=kwargs.get("dtype") or src.dtype)
        if len(devices) > 1:
            raise WrongDevice(f"aten.{name} mixes tensors on "
                              f"{', '.join(sorted(map(str, devices)))}: one of them was made "
                              f"without the model's device")
        if name in ("_local_scalar_dense", "item") and leaves[0].device.type == "meta":
            return False if leaves[0].dtype == torch.bool else 0
        if name == "nonzero" and leaves[0].device.type == "meta":
            src = leaves[0]  # every element "true": the shapes downstream stay valid
            return torch.empty(src.numel(), src.dim(), dtype=torch.long, device="meta")
        return func(*args, **kwargs)


@contextlib.contextmanager
def on_a_device():
    """Check every operation in the block as CUDA would (see the module's docstring)."""
    with DeviceCheck():
        yield
