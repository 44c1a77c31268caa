"""PyTorch peer of bench/train-throughput.mjs: the same model, batch, loss and optimizer, kept warm in one
process. Prints {"ready": …} once torch is imported (the node side then checks its BLAS), then answers each
stdin line {"case": path, "steps": n, "threads": t, "tf32"?} with the times of n training steps of that case's model
(built, with --warmup steps, when the case first comes) on t ATen threads (torch.set_num_threads; the node side tries 1
and 2 and keeps the faster); at the end of stdin it prints {"info", "rss"} and exits. --device cuda: the model and batch
live on the GPU, products in full fp32 unless a line asks for TF32; each step ends reading its loss, which waits for
the GPU."""
import argparse
import json
import os
import sys

import torch

from peer_common import describe, emit, now, peak_device_mib, peak_rss_mib, use_tf32
from torch_model import LabelSmoothing, Transformer, paper_adam, train_step

p = argparse.ArgumentParser()
p.add_argument("--warmup", type=int, default=3)
p.add_argument("--lr", type=float, default=1e-4)
p.add_argument("--device", default="cpu")
args = p.parse_args()
reply = lambda obj: print(json.dumps(obj), flush=True)
reply({"ready": True, "pid": os.getpid(), "cuda": torch.cuda.is_available()})

current = None
for line in sys.stdin:
    cmd = json.loads(line)
    if current is None or current["path"] != cmd["case"]:
        current = None  # the previous case's model and optimizer go before the next is built
        with open(cmd["case"]) as f:
            case = json.load(f)
        cfg, batch = case["config"], case["batch"]
        torch.manual_seed(1)
        model = Transformer(cfg).to(args.device).train()
        current = {
            "path": cmd["case"],
            "cfg": cfg,
            "model": model,
            "optimizer": paper_adam(model, args.lr),
            "criterion": LabelSmoothing(cfg["tgt_vocab"], cfg["pad_id"], 0.1),
            "tensors": [torch.tensor(batch[k], dtype=torch.long, device=args.device) for k in ("src", "tgtIn", "tgtOut")],
        }
        for _ in range(args.warmup):
            train_step(current["model"], current["optimizer"], current["criterion"], *current["tensors"], cfg["pad_id"])
    use_tf32(cmd.get("tf32", False))
    if "threads" in cmd:
        torch.set_num_threads(cmd["threads"])
    cfg = current["cfg"]
    tokens = int((current["tensors"][2] != cfg["pad_id"]).sum())
    times = []
    for _ in range(cmd["steps"]):
        t0 = now()
        loss, norm = train_step(current["model"], current["optimizer"], current["criterion"], *current["tensors"],
                                cfg["pad_id"])
        times.append(now() - t0)
    reply({"times": times, "tokens": tokens, "loss": float(loss), "norm": float(norm)})
use_tf32(False)
emit({"info": describe(args.device), "rss": peak_rss_mib(), "device_mib": peak_device_mib(args.device)})
