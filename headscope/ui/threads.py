"""Torch's threads in the app: one per process unless HEADSCOPE_TORCH_THREADS says otherwise.

A server's cores are shared by its sessions (each script run is a thread) and by the other
workers behind the proxy, so an operation split over two intra-op threads gains nothing and, on
a busy machine, loses a lot: OpenMP's threads spin waiting for a core another process holds
(docs/capacity.md measures it). This pins one thread, whatever OMP_NUM_THREADS or a torch
build's default says. The setting is process-wide (every script-run thread sees it)."""

import torch

from headscope.settings import settings


def limit() -> int:
    """Set torch's intra-op threads from $HEADSCOPE_TORCH_THREADS (default 1); returns it."""
    n = settings().torch_threads
    if torch.get_num_threads() != n:
        torch.set_num_threads(n)
    return n
