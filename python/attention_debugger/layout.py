"""A PyTorch model's parameters under the engine's checkpoint names (docs/RUN_FOLDER.md, "checkpoints/").

Each name the format expects (`encoder.layers.0.self_attn.in_proj_weight`, `src_embed.weight`, …;
model_config.checkpoint_tensors) is found in the model's state_dict as the same name or as a name
that ends with `.<name>`: an nn.Transformer kept as `self.transformer` next to `self.src_embed`,
`self.tgt_embed` and `self.generator` maps with no help. Anything else is named explicitly with
`names={"src_embed.weight": "tok_emb.embedding.weight", …}`.
"""

from __future__ import annotations

import torch
from torch import nn

from .model_config import SHARED_NAMES, checkpoint_tensors, validate_config


def unwrap(model: nn.Module) -> nn.Module:
    """The module inside DistributedDataParallel / DataParallel (their forward would run collectives)."""
    while isinstance(model, (nn.parallel.DistributedDataParallel, nn.DataParallel)):
        model = model.module
    return model


class LayoutError(ValueError):
    """The model's parameters do not match the config; the message names every tensor at fault."""


def resolve_names(model: nn.Module, config: dict, names: dict | None = None) -> dict:
    """{engine name: state_dict key} for every tensor a checkpoint of `config` holds."""
    c = validate_config(config)
    keys = list(unwrap(model).state_dict().keys())
    known = set(keys)
    names = dict(names or {})
    found, problems = {}, []
    for name, _ in checkpoint_tensors(c):
        if name in names:
            if names[name] not in known:
                problems.append(f'names["{name}"] = "{names[name]}" is not in the model\'s state_dict')
            else:
                found[name] = names[name]
            continue
        matches = [k for k in keys if k == name] or [k for k in keys if k.endswith("." + name)]
        if len(matches) == 1:
            found[name] = matches[0]
        elif len(matches) > 1:
            problems.append(f'"{name}" matches several state_dict keys ({", ".join(matches)}); pass names={{...}}')
        elif not (c["share_embeddings"] and name in SHARED_NAMES):
            problems.append(f'no state_dict key is or ends with "{name}"')
    if problems:
        raise LayoutError(
            "the model does not map onto the checkpoint layout (docs/RUN_FOLDER.md, checkpoints/):\n  "
            + "\n  ".join(problems[:12])
            + ("\n  …" if len(problems) > 12 else "")
            + "\nPass RunWriter(..., names={engine_name: state_dict_key}) for modules named otherwise."
        )
    return found


def engine_state(model: nn.Module, config: dict, names: dict | None = None) -> dict:
    """{engine name: float32 CPU tensor}, shapes checked against the config."""
    mapping = resolve_names(model, config, names)
    state = unwrap(model).state_dict()
    shapes = dict(checkpoint_tensors(config))
    out, problems = {}, []
    for name, key in mapping.items():
        t = state[key]
        if tuple(t.shape) != shapes[name]:
            problems.append(f'"{key}" (checkpoint name "{name}") has shape {list(t.shape)}, config expects {list(shapes[name])}')
            continue
        out[name] = t.detach().to(device="cpu", dtype=torch.float32)
    if problems:
        raise LayoutError("the model does not match its config:\n  " + "\n  ".join(problems))
    return out


def load_engine_state(model: nn.Module, tensors: dict, config: dict, names: dict | None = None, source: str = "checkpoint") -> None:
    """Copies checkpoint tensors (engine names) into the model's parameters and buffers, in place."""
    mapping = resolve_names(model, config, names)
    state = unwrap(model).state_dict()
    missing = [n for n in mapping if n not in tensors]
    if missing:
        raise LayoutError(f"{source}: missing tensors {', '.join(missing[:8])}")
    with torch.no_grad():
        for name, key in mapping.items():
            target, value = state[key], tensors[name]
            if tuple(target.shape) != tuple(value.shape):
                raise LayoutError(f'{source}: tensor "{name}" has shape {list(value.shape)}, the model\'s "{key}" {list(target.shape)}')
            target.copy_(value.to(dtype=target.dtype, device=target.device))
