"""safetensors files, by the published format, with torch alone.

A file is: an 8-byte little-endian unsigned header length N, N bytes of UTF-8 JSON
    {name: {"dtype": "F32", "shape": [...], "data_offsets": [begin, end]}, ...,
     "__metadata__": {str: str}}
then the tensors' bytes, row-major and little-endian, offsets relative to the end of the header.
The header is padded with spaces to a multiple of 8 so that the data stays aligned.

When the `safetensors` package is installed its own serializer is used; otherwise (Debian has
none) these functions write the same bytes themselves. Reading is always done here: it is short,
and it lets a reader say exactly where a torn or foreign file goes wrong.
"""

from __future__ import annotations

import json
import struct
import sys

import torch

try:  # the reference implementation, when present
    from safetensors.torch import save as _reference_save
except ImportError:  # Debian 12 ships no safetensors
    _reference_save = None

# dtype names of the format <-> torch dtypes (those a run folder may hold)
DTYPES = {
    "F64": torch.float64,
    "F32": torch.float32,
    "F16": torch.float16,
    "BF16": torch.bfloat16,
    "I64": torch.int64,
    "I32": torch.int32,
    "U8": torch.uint8,
}
_NAMES = {v: k for k, v in DTYPES.items()}
_MAX_HEADER = 100 * 1024 * 1024


class SafetensorsError(ValueError):
    """A file that is not a complete safetensors file; the message names the file and the tensor."""


def _raw_bytes(t: torch.Tensor) -> bytes:
    """The tensor's elements as little-endian bytes, without numpy."""
    t = t.detach().cpu().contiguous()
    if t.numel() == 0:
        return b""
    if sys.byteorder != "little":  # pragma: no cover - every platform PyTorch ships for is little-endian
        raise SafetensorsError("writing safetensors on a big-endian machine is not supported")
    out = bytearray(t.numel() * t.element_size())
    torch.frombuffer(out, dtype=torch.uint8).copy_(t.view(-1).view(torch.uint8))
    return bytes(out)


def save_bytes(tensors: dict, metadata: dict | None = None) -> bytes:
    """The bytes of a safetensors file holding `tensors` (name -> tensor) in the given order.

    Every tensor must have one of the DTYPES; metadata values must be strings.
    """
    metadata = dict(metadata or {})
    for key, value in metadata.items():
        if not isinstance(key, str) or not isinstance(value, str):
            raise TypeError(f"safetensors metadata must map strings to strings; {key!r}: {value!r}")
    for name, t in tensors.items():
        if not isinstance(t, torch.Tensor):
            raise TypeError(f'tensor "{name}": expected a torch.Tensor, got {type(t).__name__}')
        if t.dtype not in _NAMES:
            raise TypeError(f'tensor "{name}": dtype {t.dtype} is not one of {", ".join(map(str, _NAMES))}')
    if _reference_save is not None:
        # The reference refuses tensors that share memory (tied embeddings): give it copies.
        owned = {name: t.detach().cpu().contiguous().clone() for name, t in tensors.items()}
        return _reference_save(owned, metadata=metadata or None)
    header: dict = {}
    if metadata:
        header["__metadata__"] = metadata
    blobs, offset = [], 0
    for name, t in tensors.items():
        data = _raw_bytes(t)
        header[name] = {"dtype": _NAMES[t.dtype], "shape": list(t.shape), "data_offsets": [offset, offset + len(data)]}
        blobs.append(data)
        offset += len(data)
    text = json.dumps(header, separators=(",", ":")).encode("utf-8")
    text += b" " * ((8 - len(text) % 8) % 8)
    return b"".join([struct.pack("<Q", len(text)), text, *blobs])


def load_bytes(buf: bytes, source: str = "safetensors") -> tuple[dict, dict]:
    """(tensors, metadata) from a file's bytes. Every inconsistency raises SafetensorsError naming `source`."""

    def fail(message: str):
        raise SafetensorsError(f"{source}: {message}")

    if len(buf) < 8:
        fail(f"{len(buf)} bytes: too short for a safetensors file (truncated?)")
    (n,) = struct.unpack("<Q", buf[:8])
    if n > _MAX_HEADER or 8 + n > len(buf):
        fail(f"header length {n} runs past the end of the file ({len(buf)} bytes): truncated or not safetensors")
    try:
        header = json.loads(buf[8 : 8 + n].decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as err:
        fail(f"header is not valid JSON ({err})")
    if not isinstance(header, dict):
        fail("header is not a JSON object")
    data = bytearray(buf[8 + n :])  # writable, so torch.frombuffer needs no copy warning
    metadata = header.pop("__metadata__", None) or {}
    tensors, covered = {}, 0
    for name, entry in header.items():
        where = f'tensor "{name}"'
        if not isinstance(entry, dict) or entry.get("dtype") not in DTYPES:
            fail(f"{where}: dtype {entry.get('dtype') if isinstance(entry, dict) else entry!r} is not supported")
        shape, offsets = entry.get("shape"), entry.get("data_offsets")
        if not isinstance(shape, list) or not all(isinstance(s, int) and s >= 0 for s in shape):
            fail(f"{where}: shape {shape!r} is not a list of sizes")
        if not isinstance(offsets, list) or len(offsets) != 2 or not all(isinstance(o, int) for o in offsets):
            fail(f"{where}: bad data_offsets {offsets!r}")
        dtype = DTYPES[entry["dtype"]]
        count = 1
        for s in shape:
            count *= s
        begin, end = offsets
        width = torch.tensor([], dtype=dtype).element_size()
        if end - begin != count * width:
            fail(f"{where}: shape {shape} of {entry['dtype']} needs {count * width} bytes, data_offsets span {end - begin}")
        if begin < 0 or end > len(data):
            fail(f"{where}: data [{begin}, {end}) runs past the end of the data ({len(data)} bytes): truncated file")
        covered = max(covered, end)
        if count == 0:
            tensors[name] = torch.zeros(shape, dtype=dtype)
        else:
            flat = torch.frombuffer(data, dtype=torch.uint8, count=end - begin, offset=begin)
            tensors[name] = flat.clone().view(dtype).reshape(shape)
    if covered != len(data):
        fail(f"the tensors cover {covered} of the {len(data)} data bytes: not a file this format allows")
    return tensors, metadata


def load_file(path: str) -> tuple[dict, dict]:
    """(tensors, metadata) of the safetensors file at `path`."""
    with open(path, "rb") as f:
        return load_bytes(f.read(), path)
