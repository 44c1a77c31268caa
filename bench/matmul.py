"""PyTorch peer of bench/matmul.mjs: float32 matmul GFLOP/s (2*n^3 per product)."""
import argparse

import torch

from peer_common import describe, emit, median, now, peak_rss_mib

p = argparse.ArgumentParser()
p.add_argument("--sizes", default="1024,2048")
p.add_argument("--reps", type=int, default=5)
p.add_argument("--warmup", type=int, default=2)
args = p.parse_args()

gflops = {}
torch.manual_seed(1)
for n in map(int, args.sizes.split(",")):
    a = torch.randn(n, n)
    b = torch.randn(n, n)
    times = []
    for i in range(args.warmup + args.reps):
        t0 = now()
        a @ b
        if i >= args.warmup:
            times.append(now() - t0)
    gflops[n] = 2 * n**3 / median(times) / 1e9
emit({"info": describe(), "gflops": gflops, "rss": peak_rss_mib()})
