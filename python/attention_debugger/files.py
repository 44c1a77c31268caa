"""The run folder's writing rules (docs/RUN_FOLDER.md, "Writing rules"), for every file RunWriter writes.

- Whole files: written to `<file>.tmp-<pid>-<ms>` in the same folder, flushed to disk, then renamed
  over the target. A reader sees the old file or the new one, never a part; a trainer killed
  mid-write leaves at most a temp file, which the next writer deletes.
- .jsonl files: one whole `\\n`-terminated line per append, in one write() on an O_APPEND
  descriptor. A writer that restarts first cuts a torn last line (one without its `\\n`) off, so
  its own next line cannot be glued onto it.
"""

from __future__ import annotations

import json
import math
import os
import re
import time

TEMP_SUFFIX = re.compile(r"\.tmp-\d+-\d+$")


def temp_path(path: str) -> str:
    """`<file>.tmp-<pid>-<ms>`: the temp name the format reserves for a file being written."""
    return f"{path}.tmp-{os.getpid()}-{int(time.time() * 1000)}"


def _fsync_dir(folder: str) -> None:
    """Makes a rename in `folder` durable (no-op where directories cannot be opened, e.g. Windows)."""
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def write_atomic(path: str, data: bytes) -> None:
    """Writes `data` to `path` whole or not at all: temp file in the same folder, fsync, rename."""
    tmp = temp_path(path)
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
    try:
        view = memoryview(data)
        while view:
            written = os.write(fd, view)
            view = view[written:]
        os.fsync(fd)
    except BaseException:
        os.close(fd)
        os.unlink(tmp)
        raise
    os.close(fd)
    os.replace(tmp, path)
    _fsync_dir(os.path.dirname(os.path.abspath(path)))


def _finite(value):
    """JSON has no NaN or Infinity: a non-finite number is written as null (a diverged loss stays visible)."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_finite(v) for v in value]
    return value


def json_bytes(obj, indent: int | None = None) -> bytes:
    """Strict JSON (non-finite numbers as null), UTF-8."""
    return json.dumps(_finite(obj), indent=indent, allow_nan=False, ensure_ascii=False).encode("utf-8")


def write_json_atomic(path: str, obj) -> None:
    write_atomic(path, json_bytes(obj, indent=2) + b"\n")


def append_line(path: str, obj) -> None:
    """Appends one JSON object as one whole line: a single write() of the line and its `\\n`."""
    line = json_bytes(obj) + b"\n"
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
    try:
        view = memoryview(line)
        while view:  # a regular file takes it in one write; the loop only matters on a full disk
            written = os.write(fd, view)
            view = view[written:]
    finally:
        os.close(fd)


def repair_jsonl(path: str) -> int:
    """Cuts a torn last line (no `\\n`) off `path`; returns the number of bytes removed."""
    try:
        size = os.path.getsize(path)
    except FileNotFoundError:
        return 0
    if size == 0:
        return 0
    with open(path, "rb+") as f:
        f.seek(size - 1)
        if f.read(1) == b"\n":
            return 0
        # Walk back to the last newline, a block at a time.
        end, keep = size, 0
        while end > 0:
            start = max(0, end - 65536)
            f.seek(start)
            i = f.read(end - start).rfind(b"\n")
            if i >= 0:
                keep = start + i + 1
                break
            end = start
        f.truncate(keep)
        f.flush()
        os.fsync(f.fileno())
    return size - keep


def remove_temp_files(folder: str) -> list:
    """Deletes the `*.tmp-<pid>-<ms>` files a killed writer left in `folder`; returns their names."""
    removed = []
    if not os.path.isdir(folder):
        return removed
    for name in sorted(os.listdir(folder)):
        if TEMP_SUFFIX.search(name):
            try:
                os.unlink(os.path.join(folder, name))
                removed.append(name)
            except FileNotFoundError:
                pass
    return removed
