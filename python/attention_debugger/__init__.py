"""Attention Debugger's writer for PyTorch trainers: a run folder (docs/RUN_FOLDER.md) that the VS Code
extension and the engine follow, inspect and check, written by rank 0 of any torch.distributed job."""

from .capture import KINDS, AttentionCapture, CaptureError, attention_modules
from .checkpoint import latest_checkpoint, resume
from .distributed import global_rank, is_writer
from .layout import LayoutError, engine_state, load_engine_state
from .model_config import ConfigError, checkpoint_tensors, validate_config
from .safetensors_io import SafetensorsError, load_file, save_bytes
from .writer import RUN_FORMAT, RUN_FORMAT_VERSION, RunWriter, task_labels

__version__ = "0.1.0"
__all__ = [
    "KINDS", "AttentionCapture", "CaptureError", "attention_modules", "latest_checkpoint", "resume",
    "global_rank", "is_writer", "LayoutError", "engine_state", "load_engine_state", "ConfigError",
    "checkpoint_tensors", "validate_config", "SafetensorsError", "load_file", "save_bytes",
    "RUN_FORMAT", "RUN_FORMAT_VERSION", "RunWriter", "task_labels",
]
