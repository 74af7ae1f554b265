"""Torch's threads in the app: one per process unless HEADSCOPE_TORCH_THREADS says otherwise.

A server's cores are shared by its sessions (each script run is a thread) and by the other
workers behind the proxy, so an operation split over two intra-op threads gains nothing and,
on a busy machine, loses a lot: OpenMP's threads spin waiting for a core another process holds.
Measured on this 2-core machine at load average 20-30 (docs/capacity.md): one forward pass of
a 14-token sentence took 72-116 ms with 1 thread and 732-2684 ms with torch's default of 2.
The setting is process-wide (every script-run thread sees it) and set once."""

import os

import torch

ENV = "HEADSCOPE_TORCH_THREADS"


def limit() -> int:
    """Set torch's intra-op threads from $HEADSCOPE_TORCH_THREADS (default 1); returns it."""
    raw = os.environ.get(ENV, "1").strip()
    n = int(raw) if raw.isdigit() and int(raw) > 0 else 1
    if torch.get_num_threads() != n:
        torch.set_num_threads(n)
    return n
