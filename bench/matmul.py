"""PyTorch peer of bench/matmul.mjs: float32 matmul GFLOP/s (2*n^3 per product). Prints {"ready": …}
once torch is imported (the node side checks its BLAS then), answers each stdin line {"n": n, "tf32"?}
with {"gflops"}, and at the end of stdin prints {"info", "rss"} and exits. On --device cuda the reps run
back to back and the time is taken once the GPU has finished them (the engine's GPU side does the same),
in full fp32 unless the line asks for TF32."""
import argparse
import json
import sys

import torch

from peer_common import describe, emit, median, now, peak_rss_mib, sync, use_tf32

p = argparse.ArgumentParser()
p.add_argument("--reps", type=int, default=5)
p.add_argument("--warmup", type=int, default=2)
p.add_argument("--device", default="cpu")
args = p.parse_args()
reply = lambda obj: print(json.dumps(obj), flush=True)
reply({"ready": True, "cuda": torch.cuda.is_available()})

torch.manual_seed(1)
for line in sys.stdin:
    cmd = json.loads(line)
    n = cmd["n"]
    use_tf32(cmd.get("tf32", False))
    a = torch.randn(n, n, device=args.device)
    b = torch.randn(n, n, device=args.device)
    if args.device.startswith("cuda"):
        for _ in range(args.warmup):
            a @ b
        sync(args.device)
        t0 = now()
        for _ in range(args.reps):
            a @ b
        sync(args.device)
        seconds = (now() - t0) / args.reps
    else:
        times = []
        for i in range(args.warmup + args.reps):
            t0 = now()
            a @ b
            if i >= args.warmup:
                times.append(now() - t0)
        seconds = median(times)
    reply({"gflops": 2 * n**3 / seconds / 1e9})
use_tf32(False)
emit({"info": describe(args.device), "rss": peak_rss_mib()})
