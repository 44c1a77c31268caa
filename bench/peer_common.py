"""Shared by the PyTorch peers: which BLAS and how many threads they run with (or which GPU), peak RSS,
timing."""
import ctypes
import json
import os
import platform
import resource
import subprocess
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


# fp32 lanes per multiprocessor by compute capability (CUDA C Programming Guide, "Arithmetic Instructions").
FP32_LANES = {(7, 0): 64, (8, 0): 64, (8, 6): 128, (8, 9): 128, (9, 0): 128, (10, 0): 128, (12, 0): 128}


def use_tf32(on):
    """Float32 products on tensor cores in TF32 ("high") or in full fp32 ("highest", PyTorch's default)."""
    torch.set_float32_matmul_precision("high" if on else "highest")


def cuda_info():
    """The GPU the peer runs on, and its fp32 peak: multiprocessors x fp32 lanes x 2 (an FMA) x max SM clock."""
    props = torch.cuda.get_device_properties(0)
    lanes = FP32_LANES.get((props.major, props.minor))
    try:
        smi = subprocess.run(["nvidia-smi", "--query-gpu=clocks.max.sm,driver_version", "--format=csv,noheader,nounits"],
                             capture_output=True, text=True, timeout=30).stdout.strip().split("\n")[0]
        mhz, driver = [x.strip() for x in smi.split(",")]
        mhz = float(mhz)
    except (OSError, ValueError, subprocess.SubprocessError):
        mhz, driver = None, None
    peak = props.multi_processor_count * lanes * 2 * mhz / 1e6 if lanes and mhz else None
    return {"gpu": props.name, "capability": f"{props.major}.{props.minor}", "sms": props.multi_processor_count,
            "max_sm_mhz": mhz, "driver": driver, "cuda": torch.version.cuda, "fp32_peak_tflops": peak,
            "matmul_precision": torch.get_float32_matmul_precision()}


def describe(device="cpu"):
    info = {"torch": torch.__version__, "python": platform.python_version(), "threads": torch.get_num_threads(),
            "device": device}
    if device.startswith("cuda"):
        return {**info, "blas": "cuBLAS", **cuda_info()}
    return {**info, "blas": blas_info()}


def sync(device):
    """Waits for the device's queued work: CUDA runs asynchronously, so a timer stops only after this."""
    if device.startswith("cuda"):
        torch.cuda.synchronize()


def peak_device_mib(device):
    return torch.cuda.max_memory_allocated() / 2**20 if device.startswith("cuda") else None


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
