"""Training runs of the lab model, and what they record about every head: loss, accuracy,
how far apart the heads' maps and weights are.

Shape letters: B batch, T tokens, H heads, M digits, S snapshots, P parameters.
"""

import time
from dataclasses import dataclass

import numpy as np
import torch
import torch.nn.functional as F

from .model import build_model, head_weights
from .task import IGNORE, LabConfig, make_batch


def pairwise_map_distance(probs: torch.Tensor) -> torch.Tensor:
    """probs (B, H, T, T) -> (H, H): mean total-variation distance between two heads' rows,
    0 (identical) .. 1 (disjoint)."""
    diff = probs[:, :, None] - probs[:, None, :]  # (B, H, H, T, T)
    return 0.5 * diff.abs().sum(-1).mean(dim=(0, 3))  # (H, H)


def cosine_matrix(vecs: torch.Tensor) -> torch.Tensor:
    """(H, P) -> (H, H) cosine similarity."""
    v = F.normalize(vecs.double(), dim=1)  # (H, P)
    return (v @ v.T).float()  # (H, H)


def diversity(dist: torch.Tensor) -> float:
    """Mean of the off-diagonal entries of an (H, H) distance matrix (0 for one head)."""
    H = dist.size(0)
    if H < 2:
        return 0.0
    return float(dist.sum() / (H * (H - 1)))


@dataclass(frozen=True)
class RunResult:
    config: LabConfig
    params: int  # parameters of the whole model
    attn_params: int  # parameters of its attention module
    seconds: float
    steps: np.ndarray  # (S,) step of each snapshot (0 = before training)
    loss: np.ndarray  # (S,) training loss, smoothed over the steps since the last snapshot
    accuracy: np.ndarray  # (S,) both answers right, on a fixed held-out set
    accuracy_prev: np.ndarray  # (S,) PREV right
    accuracy_marked: np.ndarray  # (S,) MARKED right
    map_distance: np.ndarray  # (S, H, H) mean TV distance between heads' attention maps
    weight_similarity: np.ndarray  # (S, H, H) cosine similarity of heads' own weights
    max_head_gap: np.ndarray  # (S,) largest |difference| between any two heads' weights
    example_digits: np.ndarray  # (T,) one held-out sequence
    example_marked: np.ndarray  # (T,) bool
    example_maps: np.ndarray  # (H, T, T) the trained heads' attention on it
    example_pred: np.ndarray  # (T, 2) predicted (PREV, MARKED)
    example_target: np.ndarray  # (T, 2) IGNORE at position 0

    @property
    def final_accuracy(self) -> float:
        return float(self.accuracy[-1])

    @property
    def diversity(self) -> np.ndarray:
        """(S,) mean pairwise distance between the heads' attention maps."""
        return np.array([diversity(torch.from_numpy(d)) for d in self.map_distance])


def loss_fn(logits, targets):
    """Cross-entropy over both answers of every position that has them."""
    return F.cross_entropy(logits.flatten(0, 2), targets.flatten(), ignore_index=IGNORE)


def accuracies(logits, targets):
    """(both right, PREV right, MARKED right) over the positions that have answers."""
    keep = targets[..., 0] != IGNORE  # (B, T)
    right = logits.argmax(-1)[keep] == targets[keep]  # (N, 2)
    return (float(right.all(-1).float().mean()), float(right[:, 0].float().mean()),
            float(right[:, 1].float().mean()))


def train(cfg: LabConfig, on_step=None) -> RunResult:
    """Train a fresh LabModel on the task. on_step(step, steps, snapshot_dict) is called at
    every snapshot (for a live loss curve); it must not change anything here."""
    model = build_model(cfg)
    data_gen = torch.Generator().manual_seed(10_000 + cfg.seed)
    drop_gen = torch.Generator().manual_seed(20_000 + cfg.seed)
    # the same held-out set for every seed and model, so accuracies are comparable
    ev_digits, ev_marked, ev_targets = make_batch(cfg, cfg.eval_size,
                                                  torch.Generator().manual_seed(12345))
    opt = torch.optim.Adam(model.parameters(), lr=cfg.lr)
    snaps = {k: [] for k in ("steps", "loss", "accuracy", "accuracy_prev", "accuracy_marked",
                             "map_distance", "weight_similarity", "max_head_gap")}
    running, n_running = 0.0, 0

    def snapshot(step):
        model.eval()
        with torch.no_grad():
            logits, probs = model(ev_digits, ev_marked)  # (B, T, 2, M), (B, H, T, T)
            loss = loss_fn(logits, ev_targets)
        model.train()
        both, prev, mark = accuracies(logits, ev_targets)
        w = head_weights(model.attn)  # (H, P)
        snaps["steps"].append(step)
        snaps["loss"].append(running / n_running if n_running else float(loss))
        snaps["accuracy"].append(both)
        snaps["accuracy_prev"].append(prev)
        snaps["accuracy_marked"].append(mark)
        snaps["map_distance"].append(pairwise_map_distance(probs).numpy())
        snaps["weight_similarity"].append(cosine_matrix(w).numpy())
        snaps["max_head_gap"].append(float((w[:, None] - w[None]).abs().max()))
        if on_step is not None:
            on_step(step, cfg.steps, {k: list(v) for k, v in snaps.items()})

    t0 = time.perf_counter()
    snapshot(0)
    model.train()
    for step in range(1, cfg.steps + 1):
        digits, marked, targets = make_batch(cfg, cfg.batch, data_gen)
        logits, _ = model(digits, marked, dropout_gen=drop_gen)  # (B, T, 2, M)
        loss = loss_fn(logits, targets)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        running, n_running = running + loss.item(), n_running + 1
        if step % cfg.eval_every == 0 or step == cfg.steps:
            snapshot(step)
            running, n_running = 0.0, 0
    seconds = time.perf_counter() - t0

    model.eval()
    with torch.no_grad():
        logits, probs = model(ev_digits[:1], ev_marked[:1])  # (1, T, 2, M), (1, H, T, T)
    return RunResult(
        config=cfg,
        params=sum(p.numel() for p in model.parameters()),
        attn_params=sum(p.numel() for p in model.attn.parameters()),
        seconds=seconds,
        steps=np.array(snaps["steps"]),
        loss=np.array(snaps["loss"]),
        accuracy=np.array(snaps["accuracy"]),
        accuracy_prev=np.array(snaps["accuracy_prev"]),
        accuracy_marked=np.array(snaps["accuracy_marked"]),
        map_distance=np.stack(snaps["map_distance"]),
        weight_similarity=np.stack(snaps["weight_similarity"]),
        max_head_gap=np.array(snaps["max_head_gap"]),
        example_digits=ev_digits[0].numpy(),
        example_marked=ev_marked[0].numpy(),
        example_maps=probs[0].numpy(),
        example_pred=logits[0].argmax(-1).numpy(),
        example_target=ev_targets[0].numpy(),
    )

