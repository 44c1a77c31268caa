"""PyTorch peer of bench/matmul.mjs: float32 matmul GFLOP/s (2*n^3 per product). Prints {"ready": …}
once torch is imported (the node side checks its BLAS then), answers each stdin line {"n": n} with
{"gflops"}, and at the end of stdin prints {"info", "rss"} and exits."""
import argparse
import json
import sys

import torch

from peer_common import describe, emit, median, now, peak_rss_mib

p = argparse.ArgumentParser()
p.add_argument("--reps", type=int, default=5)
p.add_argument("--warmup", type=int, default=2)
args = p.parse_args()
reply = lambda obj: print(json.dumps(obj), flush=True)
reply({"ready": True})

torch.manual_seed(1)
for line in sys.stdin:
    n = json.loads(line)["n"]
    a = torch.randn(n, n)
    b = torch.randn(n, n)
    times = []
    for i in range(args.warmup + args.reps):
        t0 = now()
        a @ b
        if i >= args.warmup:
            times.append(now() - t0)
    reply({"gflops": 2 * n**3 / median(times) / 1e9})
emit({"info": describe(), "rss": peak_rss_mib()})
