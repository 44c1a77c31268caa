"""Which process writes: under torch.distributed (torchrun, DDP, FSDP) rank 0 alone."""

from __future__ import annotations

import os

import torch


def global_rank() -> int:
    """This process's rank: torch.distributed's when a process group is up, else torchrun's RANK, else 0."""
    dist = torch.distributed
    if dist.is_available() and dist.is_initialized():
        return dist.get_rank()
    return int(os.environ.get("RANK", "0"))


def is_writer() -> bool:
    """True on the one process that writes the run folder."""
    return global_rank() == 0
