"""Checkpoints of a run folder: the model (`checkpoints/step-N.safetensors`, the engine's layout) and
the optimizer's per-parameter state beside it (`step-N.optim.safetensors`: `<name>.exp_avg`,
`<name>.exp_avg_sq` for Adam, under the same names), and resuming from the newest complete one.

The optimizer file is written first and the model file last: the model file's rename commits the
checkpoint, so a trainer killed in between leaves an optimizer file that nothing reads.
"""

from __future__ import annotations

import os
import re

import torch
from torch import nn

from .layout import load_engine_state, resolve_names, unwrap
from .safetensors_io import SafetensorsError, load_file

CHECKPOINT_FILE = re.compile(r"^step-(\d+)\.safetensors$")


def checkpoint_path(out_dir: str, step: int) -> str:
    return os.path.join(out_dir, "checkpoints", f"step-{step}.safetensors")


def optimizer_path(out_dir: str, step: int) -> str:
    return os.path.join(out_dir, "checkpoints", f"step-{step}.optim.safetensors")


def checkpoint_steps(out_dir: str) -> list:
    """Steps with a model file in `checkpoints/`, ascending (complete or not: see latest_checkpoint)."""
    folder = os.path.join(out_dir, "checkpoints")
    if not os.path.isdir(folder):
        return []
    steps = [CHECKPOINT_FILE.match(f) for f in os.listdir(folder)]
    return sorted(int(m.group(1)) for m in steps if m)


def _parameter(model: nn.Module, key: str):
    """The Parameter a state_dict key names, or None for a buffer."""
    prefix, _, leaf = key.rpartition(".")
    owner = model.get_submodule(prefix) if prefix else model
    return owner._parameters.get(leaf)


def _named_parameters(model: nn.Module, config: dict, names: dict | None) -> list:
    """[(engine name, Parameter)], each distinct parameter once, under its first engine name."""
    model = unwrap(model)
    seen, out = set(), []
    for name, key in resolve_names(model, config, names).items():
        p = _parameter(model, key)
        if p is not None and id(p) not in seen:
            seen.add(id(p))
            out.append((name, p))
    return out


def optimizer_tensors(model: nn.Module, optimizer: torch.optim.Optimizer, config: dict, names: dict | None = None) -> tuple:
    """({"<name>.<state key>": float32 tensor}, {"optimizer_step": …}) from the optimizer's per-parameter state."""
    tensors, steps = {}, set()
    for name, p in _named_parameters(model, config, names):
        for key, value in optimizer.state.get(p, {}).items():
            if key == "step":
                steps.add(int(value.item() if isinstance(value, torch.Tensor) else value))
            elif isinstance(value, torch.Tensor) and value.shape == p.shape:
                tensors[f"{name}.{key}"] = value.detach().to(device="cpu", dtype=torch.float32)
    metadata = {"optimizer_step": str(max(steps))} if steps else {}
    return tensors, metadata


def restore_optimizer(model, optimizer, tensors: dict, metadata: dict, config: dict, names: dict | None = None) -> None:
    """Puts the state that optimizer_tensors wrote back, through optimizer.load_state_dict (1.13 and 2.x)."""
    index = {}
    for group in optimizer.param_groups:
        for p in group["params"]:
            index[id(p)] = len(index)
    state = {}
    step = float(metadata.get("optimizer_step", metadata.get("step", "0")))
    for name, p in _named_parameters(model, config, names):
        entries = {k[len(name) + 1 :]: v for k, v in tensors.items() if k.startswith(name + ".") and k[len(name) + 1 :].isidentifier()}
        entries = {k: v.to(device=p.device, dtype=p.dtype) for k, v in entries.items() if v.shape == p.shape}
        if entries and id(p) in index:
            entries["step"] = torch.tensor(step)  # Adam keeps a float32 scalar tensor since 1.12
            state[index[id(p)]] = entries
    saved = optimizer.state_dict()
    optimizer.load_state_dict({"state": state, "param_groups": saved["param_groups"]})


def latest_checkpoint(out_dir: str, with_optimizer: bool = True):
    """(step, model tensors, optimizer tensors, optimizer metadata) of the newest complete checkpoint, or None.

    A model file that does not load (a foreign or damaged file; the writer never leaves a torn one)
    is passed over for the one before, as is one without its optimizer file when `with_optimizer`.
    """
    for step in reversed(checkpoint_steps(out_dir)):
        try:
            weights, _ = load_file(checkpoint_path(out_dir, step))
            optim, meta = ({}, {})
            if with_optimizer:
                if not os.path.exists(optimizer_path(out_dir, step)):
                    continue
                optim, meta = load_file(optimizer_path(out_dir, step))
            return step, weights, optim, meta
        except (SafetensorsError, OSError):
            continue
    return None


def resume(out_dir: str, model: nn.Module, optimizer=None, config: dict | None = None, names: dict | None = None) -> int:
    """Loads the newest complete checkpoint of `out_dir` into `model` (and `optimizer`); returns its step, 0 if none.

    Call it on every rank before wrapping the model in DistributedDataParallel; all ranks read the
    same files, so they start from the same step.
    """
    if config is None:
        import json

        with open(os.path.join(out_dir, "config.json"), encoding="utf-8") as f:
            config = json.load(f)
    found = latest_checkpoint(out_dir, with_optimizer=optimizer is not None)
    if found is None:
        return 0
    step, weights, optim, meta = found
    load_engine_state(model, weights, config, names, source=checkpoint_path(out_dir, step))
    if optimizer is not None:
        restore_optimizer(model, optimizer, optim, meta, config, names)
    return step
