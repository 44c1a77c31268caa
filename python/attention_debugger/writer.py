"""RunWriter: a PyTorch trainer's side of the run folder (docs/RUN_FOLDER.md, format 2).

    writer = RunWriter("runs/reverse", config, probe=[{"src": [4, 5, 6, 2], "tgt": [1, 6, 5, 4]}])
    for step in range(1, steps + 1):
        ...                                   # the training step, untouched
        writer.log(step, loss=loss.item(), lr=lr)
        if step % 25 == 0:
            writer.snapshot(step, model)      # attention of the probe pair(s), eval mode
        if step % 100 == 0:
            writer.checkpoint(step, model, optimizer)
    writer.close()

Under torch.distributed only rank 0 writes; on every other rank each method returns at once, so
the same script runs unchanged under torchrun. Every file is written whole (temp file, fsync,
rename) and metrics lines are appended whole, so a trainer killed at any moment leaves a folder a
reader takes as it was before the write.
"""

from __future__ import annotations

import json
import os
import time

import torch
from torch import nn

from . import files
from .capture import KINDS, AttentionCapture, CaptureError
from .checkpoint import checkpoint_path, optimizer_path, optimizer_tensors
from .distributed import is_writer
from .layout import engine_state, unwrap
from .model_config import validate_config
from .safetensors_io import save_bytes

RUN_FORMAT = "attention-debugger-run"
RUN_FORMAT_VERSION = 2
METRIC_FIELDS = ("nll", "tokens_per_sec", "grad_norm", "val_loss", "val_bleu", "time")
STATES = ("running", "paused", "completed", "stopped", "failed", "diverged")
SPECIAL_LABELS = ("<pad>", "<s>", "</s>", "<unk>")


def task_labels(ids) -> list:
    """The labels of a task vocabulary (vocab.json {"kind": "task"}): <pad> <s> </s> <unk>, then the ids as numbers."""
    return [SPECIAL_LABELS[i] if 0 <= i < len(SPECIAL_LABELS) else str(i) for i in ids]


def _number(value, field: str):
    if isinstance(value, torch.Tensor):
        if value.numel() != 1:
            raise TypeError(f"metrics: {field}: expected a number, got a tensor of shape {list(value.shape)}")
        value = value.item()
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TypeError(f"metrics: {field}: expected a number, got {value!r}")
    return value


class RunWriter:
    """Writes one run folder. See the module docstring and python/README.md."""

    def __init__(
        self,
        out_dir: str,
        config: dict,
        probe=None,
        *,
        training: dict | None = None,
        data: dict | None = None,
        vocab: dict | None = None,
        step: int = 0,
        names: dict | None = None,
        attention_modules: dict | None = None,
        forward=None,
        labels=task_labels,
    ):
        """
        out_dir: the run folder (created). config: the model fields of docs/RUN_FOLDER.md
        (d_model, heads, …); extra keys are ignored. probe: the probe pair(s), each
        {"src": ids, "tgt": ids} or (src, tgt), target = the decoder's input, <s> first.
        training, data: config.json's sections. vocab: vocab.json's object, e.g. {"kind": "task", "size": 11}.
        step: the step the run starts from (a resumed run's checkpoint). names: checkpoint name ->
        state_dict key for modules not named as nn.Transformer names them (layout.py).
        attention_modules: {module name: (kind, layer)} beyond nn.Transformer's names.
        forward: forward(model, src [1, S], tgt [1, T]) runs the model on one probe pair (default model(src, tgt)).
        labels: ids -> token strings for the snapshots (default: the task vocabulary's).
        """
        self.out_dir = out_dir
        self.config = validate_config(config, "RunWriter config")
        self.names = names
        self.attention_modules = attention_modules
        self.forward = forward or (lambda model, src, tgt: model(src, tgt))
        self.labels = labels
        self.probe = [self._check_pair(i, p) for i, p in enumerate(probe or [])]
        self.step = step
        self.is_writer = is_writer()
        self._capture: AttentionCapture | None = None
        self._closed = False
        if not self.is_writer:
            return
        for sub in ("", "checkpoints", "snapshots"):
            os.makedirs(os.path.join(out_dir, sub), exist_ok=True)
            files.remove_temp_files(os.path.join(out_dir, sub))
        for name in ("metrics.jsonl", "telemetry.jsonl", "events.jsonl"):
            files.repair_jsonl(os.path.join(out_dir, name))
        header = dict(self.config, run_format=RUN_FORMAT, run_format_version=RUN_FORMAT_VERSION, writer="pytorch")
        if training is not None:
            header["training"] = training
        if data is not None:
            header["data"] = data
        files.write_json_atomic(os.path.join(out_dir, "config.json"), header)
        if vocab is not None:
            files.write_atomic(os.path.join(out_dir, "vocab.json"), files.json_bytes(vocab) + b"\n")
        self.status("running")

    def _check_pair(self, index: int, pair) -> dict:
        src, tgt = (pair["src"], pair["tgt"]) if isinstance(pair, dict) else pair
        src, tgt = [int(i) for i in src], [int(i) for i in tgt]
        for what, ids, vocab in (("src", src, self.config["src_vocab"]), ("tgt", tgt, self.config["tgt_vocab"])):
            if not ids:
                raise ValueError(f"probe pair {index}: {what} is empty")
            if len(ids) > self.config["max_len"]:
                raise ValueError(f"probe pair {index}: {what} has {len(ids)} tokens, more than max_len {self.config['max_len']}")
            bad = [i for i in ids if not 0 <= i < vocab]
            if bad:
                raise ValueError(f"probe pair {index}: {what} id {bad[0]} is outside the vocabulary [0, {vocab})")
        return {"src": src, "tgt": tgt}

    # ---- status.json and metrics.jsonl ------------------------------------------------------------

    def status(self, state: str, message: str | None = None) -> None:
        """Rewrites status.json: running, paused, completed, stopped, failed or diverged (docs/RUN_FOLDER.md)."""
        if state not in STATES:
            raise ValueError(f"status: state {state!r} is not one of {', '.join(STATES)}")
        if not self.is_writer:
            return
        body = {"state": state, "step": self.step, "time": int(time.time() * 1000), "writer": "pytorch"}
        if message:
            body["message"] = message
        files.write_json_atomic(os.path.join(self.out_dir, "status.json"), body)

    def log(self, step: int, loss, lr, **fields) -> None:
        """Appends one metrics line: the update `step` just made, its loss and learning rate, and any of
        nll, tokens_per_sec, grad_norm, val_loss, val_bleu (time defaults to now, in ms)."""
        unknown = sorted(set(fields) - set(METRIC_FIELDS))
        if unknown:
            raise TypeError(f"metrics: unknown field(s) {', '.join(unknown)} (known: {', '.join(METRIC_FIELDS)})")
        if not isinstance(step, int) or isinstance(step, bool) or step < 1:
            raise ValueError(f"metrics: step must be an integer >= 1 (steps count from 1), got {step!r}")
        if not self.is_writer:
            return
        row = {"step": step, "lr": _number(lr, "lr"), "loss": _number(loss, "loss")}
        for key in METRIC_FIELDS:
            if fields.get(key) is not None:
                row[key] = _number(fields[key], key)
        row.setdefault("time", int(time.time() * 1000))
        files.append_line(os.path.join(self.out_dir, "metrics.jsonl"), row)
        self.step = step

    # ---- attention ----------------------------------------------------------------------------------

    def record_attention(self, kind: str, layer: int, weights: torch.Tensor) -> None:
        """For custom attention modules: call from forward with the per-head weights [B=1, H, T_q, T_k].

        It records only while snapshot() runs the probe; at any other time (the training steps) and on
        ranks other than 0 it does nothing, so it can stay in the module's forward.
        """
        if self._capture is not None:
            self._capture.record(kind, layer, weights)

    def probe_attention(self, model: nn.Module) -> list:
        """[{kind: [L, H, T_q, T_k]}] for each probe pair, computed in eval mode; the model is left as it was."""
        module = unwrap(model)
        try:
            device = next(module.parameters()).device
        except StopIteration:
            device = torch.device("cpu")
        layers = {"encoder_self": self.config["encoder_layers"], "decoder_self": self.config["decoder_layers"],
                  "cross": self.config["decoder_layers"]}
        heads, out = self.config["heads"], []
        for pair in self.probe:
            src = torch.tensor([pair["src"]], dtype=torch.long, device=device)  # [1, S]
            tgt = torch.tensor([pair["tgt"]], dtype=torch.long, device=device)  # [1, T]
            S, T = src.shape[1], tgt.shape[1]
            capture = AttentionCapture(module, self.attention_modules)
            self._capture = capture
            try:
                with capture:
                    self.forward(module, src, tgt)
            finally:
                self._capture = None
            out.append(capture.maps(layers, heads, {"encoder_self": (S, S), "decoder_self": (T, T), "cross": (T, S)}))
        return out

    def snapshot(self, step: int, model: nn.Module) -> None:
        """Writes snapshots/step-N.safetensors: `<kind>.<pair>` [layers, heads, queries, keys] for each probe pair."""
        if not self.is_writer:
            return
        if not self.probe:
            raise CaptureError("snapshot: RunWriter was given no probe pair")
        tensors, pairs = {}, []
        for b, maps in enumerate(self.probe_attention(model)):
            for kind in KINDS:
                tensors[f"{kind}.{b}"] = maps[kind]  # [L, H, T_q, T_k]
            pairs.append({"src": self.labels(self.probe[b]["src"]), "tgt": self.labels(self.probe[b]["tgt"])})
        metadata = {"step": str(step), "run_format_version": str(RUN_FORMAT_VERSION), "pairs": json.dumps(pairs)}
        path = os.path.join(self.out_dir, "snapshots", f"step-{step}.safetensors")
        files.write_atomic(path, save_bytes(tensors, metadata))

    # ---- checkpoints --------------------------------------------------------------------------------

    def checkpoint(self, step: int, model: nn.Module, optimizer=None, metadata: dict | None = None) -> None:
        """Writes checkpoints/step-N.safetensors in the engine's layout and, with an optimizer, its state
        beside it first (step-N.optim.safetensors); metadata: extra strings for the optimizer file
        (e.g. the data position)."""
        if not self.is_writer:
            return
        weights = engine_state(model, self.config, self.names)
        if optimizer is not None:
            tensors, meta = optimizer_tensors(model, optimizer, self.config, self.names)
            meta = dict(meta, step=str(step), **{k: str(v) for k, v in (metadata or {}).items()})
            files.write_atomic(optimizer_path(self.out_dir, step), save_bytes(tensors, meta))
        files.write_atomic(checkpoint_path(self.out_dir, step), save_bytes(weights, {"step": str(step)}))
        self.step = max(self.step, step)
        self.status("running")

    # ---- end ----------------------------------------------------------------------------------------

    def close(self, state: str = "completed", message: str | None = None) -> None:
        """Writes the end marker (status.json's state); later calls do nothing."""
        if self._closed:
            return
        self._closed = True
        self.status(state, message)

    def __enter__(self) -> "RunWriter":
        return self

    def __exit__(self, kind, error, _tb) -> None:
        if kind is None:
            self.close("completed")
        elif issubclass(kind, KeyboardInterrupt):
            self.close("stopped", "interrupted")
        else:
            self.close("failed", f"{kind.__name__}: {error}")
