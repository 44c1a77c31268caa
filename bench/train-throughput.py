"""PyTorch peer of bench/train-throughput.mjs: the same model, batch, loss and optimizer;
median target tokens/s of a training step. Arguments: case files written by the node side."""
import argparse
import json

import torch

from peer_common import describe, emit, median, now, peak_rss_mib
from torch_model import LabelSmoothing, Transformer, paper_adam, train_step

p = argparse.ArgumentParser()
p.add_argument("--steps", type=int, default=10)
p.add_argument("--warmup", type=int, default=3)
p.add_argument("--lr", type=float, default=1e-4)
p.add_argument("cases", nargs="+")
args = p.parse_args()

tps, ms = {}, {}
for path in args.cases:
    with open(path) as f:
        case = json.load(f)
    cfg, batch = case["config"], case["batch"]
    torch.manual_seed(1)
    model = Transformer(cfg).train()
    optimizer = paper_adam(model, args.lr)
    criterion = LabelSmoothing(cfg["tgt_vocab"], cfg["pad_id"], 0.1)
    src, tgt_in, tgt_out = (torch.tensor(batch[k], dtype=torch.long) for k in ("src", "tgtIn", "tgtOut"))
    tokens = int((tgt_out != cfg["pad_id"]).sum())
    times = []
    for i in range(args.warmup + args.steps):
        t0 = now()
        loss, norm = train_step(model, optimizer, criterion, src, tgt_in, tgt_out, cfg["pad_id"])
        if i >= args.warmup:
            times.append(now() - t0)
    tps[case["name"]] = tokens / median(times)
    ms[case["name"]] = median(times) * 1e3
    print(f"{case['name']}: {ms[case['name']]:.0f} ms/step, loss {loss:.3f}, grad norm {norm:.3f}")
emit({"info": describe(), "tps": tps, "ms": ms, "rss": peak_rss_mib()})
