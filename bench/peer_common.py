"""Shared by the PyTorch peers: which BLAS and how many threads they run with, peak RSS, timing."""
import ctypes
import json
import os
import platform
import resource
import sys
import time

import torch


def blas_info():
    """The BLAS libraries mapped into this process (after a matmul loaded them) and their threads."""
    a = torch.ones(64, 64)
    a @ a
    libs = []
    with open("/proc/self/maps") as maps:
        for line in maps:
            path = line.split()[-1]
            if ("blas" in path or "mkl" in path) and path not in libs:
                libs.append(path)
    threads = None
    for path in libs:
        try:
            threads = ctypes.CDLL(path).openblas_get_num_threads()
            break
        except (OSError, AttributeError):
            pass
    name = ", ".join(os.path.basename(p) for p in libs) or "none found"
    if threads is not None:
        name += f" ({threads} OpenBLAS threads)"
    return name


def describe():
    return {"torch": torch.__version__, "python": platform.python_version(), "blas": blas_info(), "threads": torch.get_num_threads()}


def peak_rss_mib():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # Linux: KiB


def now():
    return time.perf_counter()


def median(xs):
    s = sorted(xs)
    m = len(s) // 2
    return s[m] if len(s) % 2 else (s[m - 1] + s[m]) / 2


def emit(result):
    """The last stdout line: what the node side reads."""
    print(json.dumps(result))
    sys.stdout.flush()
