"""Per-head attention weights of a model's nn.MultiheadAttention modules, for one probe forward.

PyTorch's Transformer layers call their attention with need_weights=False, so hooks alone see no
weights. While an AttentionCapture is active, each mapped nn.MultiheadAttention instance gets a
wrapper as its `forward` that calls the original with need_weights=True and
average_attn_weights=False and records the weights [B, H, T_q, T_k]; on exit the instances are
restored. The capture also puts the model in eval mode (no dropout, so no random numbers are
drawn) and restores every module's training flag after. It keeps autograd enabled: PyTorch's
encoder "fast path" (a fused kernel that never calls self_attn) is taken only in eval mode without
grad, so with grad on every layer goes through its MultiheadAttention. Nothing of this touches
parameters, gradients, optimizer state or the random generators: the training step after a probe
computes exactly what it would have computed without it.

Modules are found by name: `…encoder.layers.<i>.self_attn` (encoder_self),
`…decoder.layers.<i>.self_attn` (decoder_self) and `…decoder.layers.<i>.multihead_attn` (cross),
the names nn.Transformer gives them. Custom attention modules call `record(kind, layer, weights)`
(RunWriter.record_attention) from their forward instead.
"""

from __future__ import annotations

import contextlib
import inspect
import re

import torch
from torch import nn

from .layout import unwrap

KINDS = ("encoder_self", "decoder_self", "cross")
_PATTERNS = (
    (re.compile(r"(?:^|\.)encoder\.layers\.(\d+)\.self_attn$"), "encoder_self"),
    (re.compile(r"(?:^|\.)decoder\.layers\.(\d+)\.self_attn$"), "decoder_self"),
    (re.compile(r"(?:^|\.)decoder\.layers\.(\d+)\.multihead_attn$"), "cross"),
)


class CaptureError(RuntimeError):
    """The probe's attention could not be captured; the message names the kind and layer."""


def attention_modules(model: nn.Module, modules: dict | None = None) -> dict:
    """{qualified name: (kind, layer)} of the nn.MultiheadAttention modules to capture.

    `modules` maps further names (of any module class that takes need_weights) explicitly.
    """
    model = unwrap(model)
    found = {}
    for name, m in model.named_modules():
        if not isinstance(m, nn.MultiheadAttention):
            continue
        for pattern, kind in _PATTERNS:
            match = pattern.search(name)
            if match:
                found[name] = (kind, int(match.group(1)))
    for name, (kind, layer) in (modules or {}).items():
        if kind not in KINDS:
            raise CaptureError(f'attention module "{name}": kind "{kind}" is not one of {", ".join(KINDS)}')
        found[name] = (kind, int(layer))
    return found


class AttentionCapture:
    """`with AttentionCapture(model) as cap: model(src, tgt)`, then `cap.maps(layers, heads)`."""

    def __init__(self, model: nn.Module, modules: dict | None = None):
        self.model = unwrap(model)
        self.targets = attention_modules(self.model, modules)
        self.recorded: dict = {}
        self._saved: list = []
        self._stack: contextlib.ExitStack | None = None

    # ---- recording ----------------------------------------------------------------------------

    def record(self, kind: str, layer: int, weights: torch.Tensor) -> None:
        """Records one layer's weights of one pair: [H, T_q, T_k] or [1, H, T_q, T_k]."""
        if kind not in KINDS:
            raise CaptureError(f'record_attention: kind "{kind}" is not one of {", ".join(KINDS)}')
        if not isinstance(weights, torch.Tensor):
            raise CaptureError(f"record_attention({kind}, {layer}): weights must be a tensor, got {type(weights).__name__}")
        w = weights.detach()
        if w.dim() == 4 and w.shape[0] == 1:
            w = w[0]  # [H, T_q, T_k]
        if w.dim() != 3:
            raise CaptureError(
                f"record_attention({kind}, {layer}): expected per-head weights [H, T_q, T_k] (or [1, H, T_q, T_k]) "
                f"for one probe pair, got shape {list(weights.shape)}; pass average_attn_weights=False"
            )
        key = (kind, int(layer))
        if key in self.recorded:
            raise CaptureError(f"{kind} layer {layer}: attention recorded twice in one probe forward")
        self.recorded[key] = w.to(device="cpu", dtype=torch.float32)  # [H, T_q, T_k]

    def _wrap(self, module: nn.Module, kind: str, layer: int):
        original = module.forward
        signature = inspect.signature(original)
        takes_average = "average_attn_weights" in signature.parameters

        def forward(*args, **kwargs):
            bound = signature.bind(*args, **kwargs)
            bound.arguments["need_weights"] = True
            if takes_average:
                bound.arguments["average_attn_weights"] = False
            out, weights = original(*bound.args, **bound.kwargs)
            if weights is None:
                raise CaptureError(f"{kind} layer {layer}: the attention module returned no weights")
            self.record(kind, layer, weights)  # weights: [B, H, T_q, T_k]
            return out, weights

        return forward

    # ---- context ------------------------------------------------------------------------------

    def __enter__(self) -> "AttentionCapture":
        self.recorded = {}
        modules = dict(self.model.named_modules())
        for name, (kind, layer) in self.targets.items():
            if name not in modules:
                raise CaptureError(f'attention module "{name}" is not in the model')
            m = modules[name]
            self._saved.append((m, m.__dict__.get("forward")))
            m.forward = self._wrap(m, kind, layer)
        self._training = [(m, m.training) for m in self.model.modules()]
        self.model.eval()
        self._stack = contextlib.ExitStack()
        self._stack.enter_context(torch.enable_grad())
        # PyTorch >= 2.1 has a switch for the fused paths as well; 1.13 has none (grad keeps them off).
        mha_backend = getattr(torch.backends, "mha", None)
        if mha_backend is not None and hasattr(mha_backend, "set_fastpath_enabled"):
            was = mha_backend.get_fastpath_enabled()
            mha_backend.set_fastpath_enabled(False)
            self._stack.callback(mha_backend.set_fastpath_enabled, was)
        return self

    def __exit__(self, *exc) -> None:
        for m, forward in reversed(self._saved):
            if forward is None:
                del m.forward
            else:
                m.forward = forward
        self._saved = []
        for m, training in self._training:
            m.training = training
        if self._stack is not None:
            self._stack.close()
            self._stack = None

    # ---- results ------------------------------------------------------------------------------

    def maps(self, layers: dict, heads: int, lengths: dict) -> dict:
        """{kind: [L, H, T_q, T_k]} for the kinds in `layers` ({kind: L}); `lengths` {kind: (T_q, T_k)}."""
        out = {}
        for kind, count in layers.items():
            missing = [i for i in range(count) if (kind, i) not in self.recorded]
            if missing:
                raise CaptureError(
                    f"{kind}: no attention was captured for layer(s) {missing} of {count}. Name the modules "
                    "(RunWriter(..., attention_modules={name: (kind, layer)})) or call writer.record_attention "
                    "from a custom attention module; frozen models (no parameter requiring grad) take PyTorch's "
                    "fused encoder path, which computes no weights."
                )
            stacked = torch.stack([self.recorded[(kind, i)] for i in range(count)])  # [L, H, T_q, T_k]
            want = (count, heads) + tuple(lengths[kind])
            if tuple(stacked.shape) != want:
                raise CaptureError(f"{kind}: captured attention has shape {list(stacked.shape)}, expected {list(want)}")
            out[kind] = stacked
        extra = sorted({k for k, _ in self.recorded} - set(layers))
        if extra:
            raise CaptureError(f"attention recorded for kinds this config has no layers of: {', '.join(extra)}")
        return out
