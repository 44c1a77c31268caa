#!/usr/bin/env python3
"""Trains PyTorch's nn.Transformer on the reverse task and writes an Attention Debugger run folder.

The task is the engine's (src/engine/data/tasks.ts): symbols are the ids 4–10 (vocabulary 11 with
<pad> 0, <s> 1, </s> 2, <unk> 3), a source is 1–10 random symbols followed by </s>, its target the
symbols reversed; the decoder reads <s> + target and predicts target + </s>.

    torchrun --nproc_per_node 2 python/examples/train_reverse.py --out runs/torch-reverse   # DDP, gloo, CPU
    python3 python/examples/train_reverse.py --out runs/torch-reverse                       # one process
    ... --resume        continues from the folder's newest checkpoint

Every step's batch and dropout are seeded from (seed, step, rank), so a resumed run computes what
an uninterrupted one would have.
"""

import argparse
import math
import os
import time

import torch
import torch.distributed as dist
from torch import nn

from attention_debugger import RunWriter, resume

PAD, BOS, EOS, UNK, FIRST_SYMBOL, VOCAB = 0, 1, 2, 3, 4, 11
PROBE = [[4, 5, 6, 7, 8, 9, 10], [7, 4, 9, 5]]  # probe sources (symbols); pair 0 is the one the inspector shows


def sinusoidal(max_len, d):
    """§3.5: PE(pos, 2i) = sin(pos / 10000^(2i/d)), PE(pos, 2i+1) = cos(pos / 10000^(2i/d))."""
    pos = torch.arange(max_len, dtype=torch.float64).unsqueeze(1)  # [max_len, 1]
    angle = pos / torch.pow(10000.0, torch.arange(0, d, 2, dtype=torch.float64) / d)  # [max_len, d/2]
    pe = torch.zeros(max_len, d, dtype=torch.float64)
    pe[:, 0::2], pe[:, 1::2] = torch.sin(angle), torch.cos(angle)
    return pe.float()  # [max_len, d]


class Seq2Seq(nn.Module):
    """nn.Transformer with embeddings and a generator, named as the run folder's checkpoints name them."""

    def __init__(self, c):
        super().__init__()
        self.d_model, self.pad = c["d_model"], c["pad_id"]
        self.transformer = nn.Transformer(
            c["d_model"], c["heads"], c["encoder_layers"], c["decoder_layers"], c["d_ff"], c["dropout"],
            batch_first=True, norm_first=c["norm_first"])  # final LayerNorms on both stacks: final_norm
        self.src_embed = nn.Embedding(c["src_vocab"], c["d_model"])
        self.tgt_embed = nn.Embedding(c["tgt_vocab"], c["d_model"])
        self.generator = nn.Linear(c["d_model"], c["tgt_vocab"])
        self.register_buffer("pe", sinusoidal(c["max_len"], c["d_model"]), persistent=False)

    def forward(self, src, tgt):  # src [B, S], tgt [B, T] -> logits [B, T, V]
        scale = math.sqrt(self.d_model)  # §3.4
        x = self.src_embed(src) * scale + self.pe[: src.shape[1]]  # [B, S, d]
        y = self.tgt_embed(tgt) * scale + self.pe[: tgt.shape[1]]  # [B, T, d]
        T = tgt.shape[1]
        causal = torch.triu(torch.ones(T, T, dtype=torch.bool, device=tgt.device), diagonal=1)  # [T, T], True: masked
        out = self.transformer(x, y, tgt_mask=causal, src_key_padding_mask=src == self.pad,
                               tgt_key_padding_mask=tgt == self.pad, memory_key_padding_mask=src == self.pad)  # [B, T, d]
        return self.generator(out)  # [B, T, V]


def reverse_batch(size, generator):
    """`size` pairs as padded id matrices: src [B, S] (ends with </s>), tgt_in [B, T] (<s> first), tgt_out [B, T]."""
    lengths = torch.randint(1, 11, (size,), generator=generator).tolist()
    rows = [torch.randint(FIRST_SYMBOL, VOCAB, (n,), generator=generator).tolist() for n in lengths]
    pad = lambda seqs: torch.tensor([s + [PAD] * (max(map(len, seqs)) - len(s)) for s in seqs])  # noqa: E731
    return pad([r + [EOS] for r in rows]), pad([[BOS] + r[::-1] for r in rows]), pad([r[::-1] + [EOS] for r in rows])


def noam(step, d_model, warmup, factor):
    """§5.3: lrate = factor · d_model^-0.5 · min(step^-0.5, step · warmup^-1.5)."""
    return factor * d_model**-0.5 * min(step**-0.5, step * warmup**-1.5)


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--out", required=True)
    p.add_argument("--steps", type=int, default=300)
    p.add_argument("--batch", type=int, default=32, help="pairs per process and step")
    p.add_argument("--checkpoint-every", type=int, default=50)
    p.add_argument("--snapshot-every", type=int, default=25)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--resume", action="store_true")
    args = p.parse_args()

    distributed = "WORLD_SIZE" in os.environ  # set by torchrun
    if distributed:
        dist.init_process_group("gloo")
    rank, world = (dist.get_rank(), dist.get_world_size()) if distributed else (0, 1)
    torch.set_num_threads(1)  # a tiny model: more threads per process only add overhead
    torch.manual_seed(args.seed)
    config = dict(d_model=32, heads=4, d_ff=64, encoder_layers=2, decoder_layers=2, src_vocab=VOCAB, tgt_vocab=VOCAB,
                  dropout=0.1, norm_first=False, final_norm=True, positional="sinusoidal", max_len=32,
                  share_embeddings=False, pad_id=PAD, bos_id=BOS, eos_id=EOS)
    training = dict(steps=args.steps, warmup=100, lr_factor=1.0, batch_pairs=args.batch * world, label_smoothing=0.1,
                    seed=args.seed, checkpoint_every=args.checkpoint_every, snapshot_every=args.snapshot_every)
    model = Seq2Seq(config)
    optimizer = torch.optim.Adam(model.parameters(), lr=0.0, betas=(0.9, 0.98), eps=1e-9)
    criterion = nn.CrossEntropyLoss(ignore_index=PAD, label_smoothing=training["label_smoothing"])

    # --- Attention Debugger: resume from the newest checkpoint, then one writer (it writes on rank 0 only) ---
    start = resume(args.out, model, optimizer, config) if args.resume else 0
    if rank == 0 and args.resume:
        print(f"resuming from step {start}", flush=True)
    ddp = nn.parallel.DistributedDataParallel(model) if distributed else model
    probe = [{"src": s + [EOS], "tgt": [BOS] + s[::-1]} for s in PROBE]  # tgt: the decoder's input, <s> first
    data = {"kind": "task", "task": "reverse", "vocabSize": VOCAB, "minLength": 1, "maxLength": 10}
    with RunWriter(args.out, config, probe=probe, training=training, data=data, vocab={"kind": "task", "size": VOCAB},
                   step=start) as writer:
        for step in range(start + 1, args.steps + 1):
            started = time.perf_counter()
            lr = noam(step, config["d_model"], training["warmup"], training["lr_factor"])
            loss, grad_norm, tokens = train_step(ddp, optimizer, criterion, lr, step, rank, world, args.batch, args.seed)
            seconds = time.perf_counter() - started
            writer.log(step, loss=loss, lr=lr, grad_norm=grad_norm, tokens_per_sec=tokens / seconds)
            if step % args.checkpoint_every == 0 or step == args.steps:
                writer.snapshot(step, model)  # PyTorch's attention for the probe, beside the checkpoint
                writer.checkpoint(step, model, optimizer)
            elif step % args.snapshot_every == 0:
                writer.snapshot(step, model)
    # --- end of the Attention Debugger part ---
    if rank == 0:
        print(f"trained steps {start + 1}..{args.steps} on {world} process(es); resumed from step {start}", flush=True)
    if distributed:
        # Leave together: a rank that tore down its group while the other was still in it was seen
        # to leave rank 0 spinning in destroy_process_group (gloo, PyTorch 1.13), the run complete.
        dist.barrier()
        dist.destroy_process_group()


def train_step(ddp, optimizer, criterion, lr, step, rank, world, batch, seed):
    """One update at rate `lr` on this rank's batch; DDP averages the gradients. Returns the mean loss over
    the ranks, the gradient's norm before the update and the target tokens of all ranks."""
    torch.manual_seed(seed * 1_000_003 + step * 1000 + rank)  # dropout
    src, tgt_in, tgt_out = reverse_batch(batch, torch.Generator().manual_seed(seed * 7919 + step * 131 + rank))
    ddp.train()
    logits = ddp(src, tgt_in)  # [B, T, V]
    loss = criterion(logits.reshape(-1, logits.shape[-1]), tgt_out.reshape(-1))
    optimizer.zero_grad(set_to_none=True)
    loss.backward()
    grad_norm = torch.nn.utils.clip_grad_norm_(ddp.parameters(), float("inf"))
    for group in optimizer.param_groups:
        group["lr"] = lr
    optimizer.step()
    stats = torch.tensor([loss.item(), float((tgt_out != PAD).sum())])
    if world > 1:
        dist.all_reduce(stats)  # mean loss and total target tokens over the ranks
    return stats[0].item() / world, grad_norm.item(), stats[1].item()


if __name__ == "__main__":
    main()
