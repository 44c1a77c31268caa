"""Shared by the Python tests: paths, the example's model, and a reader of the run folder written
from docs/RUN_FOLDER.md and the safetensors spec alone (struct + json), so that the tests do not
check the writer with its own reading code."""

import importlib.util
import json
import os
import shutil
import struct
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
PYTHON_DIR = os.path.dirname(HERE)  # python/: the package's source
REPO = os.path.dirname(PYTHON_DIR)
EXAMPLE = os.path.join(PYTHON_DIR, "examples", "train_reverse.py")
if PYTHON_DIR not in sys.path:
    sys.path.insert(0, PYTHON_DIR)

KINDS = ("encoder_self", "decoder_self", "cross")


def load_example():
    """python/examples/train_reverse.py as a module (its Seq2Seq, reverse_batch, train_step, noam)."""
    spec = importlib.util.spec_from_file_location("train_reverse", EXAMPLE)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def tiny_config(**overrides):
    """A small model of the reverse task's vocabulary, as the example builds it (nn.Transformer: final_norm)."""
    c = dict(d_model=16, heads=2, d_ff=32, encoder_layers=2, decoder_layers=1, src_vocab=11, tgt_vocab=11,
             dropout=0.1, norm_first=False, final_norm=True, positional="sinusoidal", max_len=32,
             share_embeddings=False, pad_id=0, bos_id=1, eos_id=2)
    c.update(overrides)
    return c


class TempDir:
    """A temporary folder, removed on exit."""

    def __enter__(self):
        self.path = tempfile.mkdtemp(prefix="attention-debugger-test-")
        return self.path

    def __exit__(self, *exc):
        shutil.rmtree(self.path, ignore_errors=True)


def python_env(**extra):
    """Environment for a child /usr/bin/python3 that imports the package from the source tree."""
    env = dict(os.environ, PYTHONPATH=PYTHON_DIR, OMP_NUM_THREADS="1", PYTHONUNBUFFERED="1")
    env.update(extra)
    return env


def run_example(out, *args, timeout=600):
    """Runs the example in one process; returns the CompletedProcess (check=True)."""
    return subprocess.run([sys.executable, EXAMPLE, "--out", out, *args], env=python_env(), capture_output=True,
                          text=True, timeout=timeout, check=True)


# ---- a reader from the format's definition ------------------------------------------------------

DTYPE = {"F32": ("f", 4), "F64": ("d", 8), "F16": ("e", 2), "I64": ("q", 8), "I32": ("i", 4)}


def read_safetensors(path):
    """(tensors {name: (dtype, shape, flat values)}, metadata) by the published layout; raises ValueError if torn."""
    with open(path, "rb") as f:
        buf = f.read()
    if len(buf) < 8:
        raise ValueError(f"{path}: {len(buf)} bytes")
    (n,) = struct.unpack("<Q", buf[:8])
    if 8 + n > len(buf):
        raise ValueError(f"{path}: header runs past the end")
    header = json.loads(buf[8 : 8 + n].decode("utf-8"))
    data = buf[8 + n :]
    metadata = header.pop("__metadata__", {})
    tensors, end = {}, 0
    for name, e in sorted(header.items(), key=lambda kv: kv[1]["data_offsets"][0]):
        begin, stop = e["data_offsets"]
        if begin != end:
            raise ValueError(f"{path}: {name} starts at {begin}, expected {end}")
        code, width = DTYPE[e["dtype"]]
        count = 1
        for s in e["shape"]:
            count *= s
        if stop - begin != count * width or stop > len(data):
            raise ValueError(f"{path}: {name} is torn")
        tensors[name] = (e["dtype"], e["shape"], struct.unpack(f"<{count}{code}", data[begin:stop]))
        end = stop
    if end != len(data):
        raise ValueError(f"{path}: {len(data) - end} bytes after the last tensor")
    return tensors, metadata


def read_jsonl(path):
    """The complete lines' objects; a last line without its newline is a write in progress and left out."""
    with open(path, "rb") as f:
        text = f.read().decode("utf-8")
    return [json.loads(line) for line in text.split("\n")[:-1]]


def nested(flat, shape):
    """Flat values -> nested lists of `shape`."""
    if not shape:
        return flat[0]
    step = len(flat) // shape[0]
    return [nested(flat[i * step : (i + 1) * step], shape[1:]) for i in range(shape[0])]
