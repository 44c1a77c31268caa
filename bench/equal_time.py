"""PyTorch peer of bench/equal-time.mjs: the engine's whole training recipe in PyTorch, on the engine's own
batches (`attention-debugger batches`, read by batch_file.py) in the engine's order, for a wall-time budget.

The recipe, read from the engine run's config.json so that both sides train the same thing:
  - the model of bench/torch_model.py (post-LN nn.TransformerEncoder/Decoder, shared embeddings, dropout on
    the embeddings and every sublayer's output), initialised as src/engine/model/params.ts draws it:
    embeddings N(0, d^-0.5), weights Xavier-uniform with W^Q, W^K, W^V each its own [d, d] matrix, biases 0;
  - eq. 3's learning rate (warmup, lr_factor) set before each step, Adam (0.9, 0.98, 1e-9);
  - label smoothing (torch_model.LabelSmoothing's, per non-pad token; see smoothed_loss), clipping by global norm when
    clip_norm > 0, no update when the loss or the gradient is not finite (as the engine's step);
  - validation loss (eval mode, the same label-smoothed loss per token) over the file's validation batches
    every eval_every steps.
It writes a run folder with python/attention_debugger's RunWriter: config.json (the engine run's model,
training and data sections, writer "pytorch"), the engine run's vocab.json, metrics.jsonl and, at the end,
checkpoints/step-N.safetensors in nn.Transformer's names, so `attention-debugger evaluate --run OUT` scores it
with the engine's decoder and BLEU on the same test split.

Protocol (bench/lib/peer.mjs): prints {"ready"} once torch is imported; each stdin line
{"engine_run", "batches", "out", "minutes", optional "init" (a checkpoint to start from instead of a fresh
initialisation) and "threads" (torch.set_num_threads; default PyTorch's own)} trains once and answers with the figures; at the end of stdin
prints {"info", "rss"}.
"""
import json
import math
import os
import sys
import time

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "python"))

from attention_debugger import RunWriter, load_engine_state, load_file  # noqa: E402
from batch_file import BatchFile  # noqa: E402
from peer_common import describe, emit, peak_rss_mib  # noqa: E402
from torch_model import Transformer, paper_adam  # noqa: E402


def transformer_lr(step, d_model, warmup, factor):
    """Eq. 3: factor * d_model^-0.5 * min(step^-0.5, step * warmup^-1.5); steps count from 1."""
    return factor * d_model ** -0.5 * min(step ** -0.5, step * warmup ** -1.5)


def tensors(batch):
    """A batch_file.Batch as int64 tensors [B, S], [B, T], [B, T]."""
    as_matrix = lambda flat, width: torch.frombuffer(flat, dtype=torch.int32).view(batch.rows, width).long()
    return (as_matrix(batch.src, batch.src_width), as_matrix(batch.tgt_in, batch.tgt_width),
            as_matrix(batch.tgt_out, batch.tgt_width))


def smoothed_loss(model, smoothing, src, tgt_in, tgt_out, pad_id):
    """(label-smoothed KL per non-pad token, NLL per non-pad token, non-pad tokens): the engine's loss and nll.

    torch_model.LabelSmoothing's value (the Annotated Transformer's: 1 - eps on the target, eps / (V - 2) on
    every other class but padding, pad rows left out, KL summed) without building q: per row,
    KL = -H(q) - (1 - eps) log p_target - eps / (V - 2) (sum_c log p_c - log p_pad - log p_target),
    three reductions of [N, V] instead of LabelSmoothing's clone, fill, scatter and KLDivLoss (a fifth of
    a step and a third of a validation pass here), as the engine's own kernel computes it."""
    log_probs = model(src, tgt_in)
    v = log_probs.shape[-1]
    flat, targets = log_probs.reshape(-1, v), tgt_out.reshape(-1)
    keep = (targets != pad_id).to(flat.dtype)
    tokens = int(keep.sum())
    confidence, spread = 1.0 - smoothing, smoothing / (v - 2)
    entropy = -(confidence * math.log(confidence) if confidence > 0 else 0.0) - (
        smoothing * math.log(spread) if spread > 0 else 0.0)
    on_target = flat.gather(1, targets.unsqueeze(1)).squeeze(1)
    on_others = flat.sum(1) - flat[:, pad_id] - on_target
    rows = -(confidence * on_target + spread * on_others) - entropy
    loss = (rows * keep).sum() / max(tokens, 1)
    nll = -(on_target * keep).sum() / max(tokens, 1)
    return loss, nll, tokens


def train_step(model, optimizer, smoothing, batch, lr, clip_norm, pad_id):
    """What the engine's trainStep does: forward with dropout, loss, backward, global gradient norm,
    clipping when asked, Adam at `lr`; nothing applied when the loss or the norm is not finite."""
    optimizer.zero_grad(set_to_none=True)
    loss, nll, tokens = smoothed_loss(model, smoothing, *batch, pad_id)
    loss.backward()
    params = [p for p in model.parameters() if p.grad is not None]
    norm = torch.sqrt(sum((p.grad ** 2).sum() for p in params))
    applied = bool(torch.isfinite(loss)) and bool(torch.isfinite(norm))
    if applied:
        if clip_norm > 0:
            scale = min(1.0, clip_norm / (float(norm) + 1e-6))
            for p in params:
                p.grad.mul_(scale)
        for group in optimizer.param_groups:
            group["lr"] = lr
        optimizer.step()
    return float(loss), float(nll), float(norm), tokens, applied


def validation_loss(model, smoothing, batches, pad_id):
    """Label-smoothed loss per token over all validation batches, in eval mode (no dropout)."""
    model.eval()
    total, count = 0.0, 0
    with torch.no_grad():
        for batch in batches:
            loss, _, tokens = smoothed_loss(model, smoothing, *batch, pad_id)
            total += float(loss) * tokens
            count += tokens
    model.train()
    return total / max(count, 1)


def train(cmd):
    with open(os.path.join(cmd["engine_run"], "config.json"), encoding="utf-8") as f:
        engine = json.load(f)
    with open(os.path.join(cmd["engine_run"], "vocab.json"), encoding="utf-8") as f:
        vocab = json.load(f)
    s, pad = engine["training"], engine["pad_id"]
    if cmd.get("threads"):
        torch.set_num_threads(cmd["threads"])
    torch.manual_seed(s["seed"])
    model = Transformer(engine).train()
    if cmd.get("init"):  # the engine's own initial weights (test/bench/equal-time-peer.test.ts)
        load_engine_state(model, load_file(cmd["init"])[0], engine, source=cmd["init"])
    optimizer = paper_adam(model, 0.0)
    data = BatchFile(cmd["batches"])
    validation = [tensors(b) for b in data.validation]
    writer = RunWriter(cmd["out"], engine, training=s, data=engine["data"], vocab=vocab)
    budget = cmd["minutes"] * 60
    step, exhausted = 0, False
    start_ms = time.time() * 1000
    t0 = time.perf_counter()
    while time.perf_counter() - t0 < budget and step < s["steps"]:
        batch = data.next_training()
        if batch is None:
            exhausted = True
            break
        step += 1
        lr = transformer_lr(step, engine["d_model"], s["warmup"], s["lr_factor"])
        started = time.perf_counter()
        loss, nll, norm, tokens, applied = train_step(model, optimizer, s["label_smoothing"], tensors(batch), lr,
                                                      s["clip_norm"], pad)
        # time: when the step ended, before validation (as the engine stamps its rows)
        fields = {"nll": nll, "grad_norm": norm, "tokens_per_sec": tokens / (time.perf_counter() - started),
                  "time": int(time.time() * 1000)}
        if applied and s["eval_every"] and step % s["eval_every"] == 0:
            fields["val_loss"] = validation_loss(model, s["label_smoothing"], validation, pad)
            print(f"[peer] step {step} loss {loss:.3f} val {fields['val_loss']:.3f} lr {lr:.2e} "
                  f"{time.perf_counter() - t0:.0f} s", file=sys.stderr, flush=True)
        writer.log(step, loss=loss, lr=lr, **fields)  # a non-finite loss is written as null
    seconds = time.perf_counter() - t0
    writer.checkpoint(step, model)  # step 0 (no time to train): the initialisation
    writer.close("completed" if step >= s["steps"] else "stopped",
                 "the batch file ran out" if exhausted else f"{cmd['minutes']} minutes of wall time")
    data.close()
    return {"steps": step, "seconds": seconds, "start_ms": start_ms, "exhausted": exhausted,
            "batches": data.training_batches}


if __name__ == "__main__":
    print(json.dumps({"ready": True, "pid": os.getpid()}), flush=True)
    for line in sys.stdin:
        print(json.dumps(train(json.loads(line))), flush=True)
    emit({"info": describe(), "rss": peak_rss_mib()})
