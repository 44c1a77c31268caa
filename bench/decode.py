"""PyTorch peer of bench/decode.mjs: the same weights (the engine's safetensors), the same
sentences, batches (sorted by length, 32 at a time), searches and limits as the engine's
decode/translate.ts, greedy.ts and beam.ts: incremental decoding with per-layer self-attention
key/value caches and the memory's cross-attention keys/values projected once; BOS and PAD never
generated; GNMT length penalty ((5 + |Y|) / 6)^alpha with |Y| counting EOS; maximum output length
source length + 50, capped so that BOS and the output fit max_len positions.
Argument: the case file written by the node side. The peer stays alive for the whole benchmark so
that its rounds interleave with the engine's under the same conditions: it prints {"started": …} once
torch is imported (the node side checks its BLAS then: bench/lib/peer.mjs); after loading the model and
one warm-up batch it prints {"ready": …}, then answers each stdin line {"run": name} with one stdout
line {"name", "seconds", "sps", "tokens", "out"} (the outputs, for the node side's identical check);
at the end of stdin it prints {"info", "rss"} and exits."""
import json
import math
import struct
import sys

import torch
import torch.nn.functional as F

from peer_common import describe, emit, now, peak_rss_mib
from torch_model import Transformer


def read_safetensors(path):
    with open(path, "rb") as f:
        raw = f.read()
    n = struct.unpack("<Q", raw[:8])[0]
    head = json.loads(raw[8:8 + n])
    out = {}
    for name, meta in head.items():
        if name == "__metadata__":
            continue
        assert meta["dtype"] == "F32", meta
        a, b = meta["data_offsets"]
        out[name] = torch.frombuffer(bytearray(raw[8 + n + a:8 + n + b]), dtype=torch.float32).reshape(meta["shape"])
    return out


class Incremental:
    """State: memory cross K/V per layer [B, h, S, dk], the source padding mask [B, 1, 1, S] as
    additive -inf, self K/V caches per layer [B, h, t, dk], position t."""

    def __init__(self, model):
        self.m = model
        self.h = model.cfg["heads"]
        self.d = model.cfg["d_model"]

    def split(self, x):  # [B, T, d] -> [B, h, T, dk]
        b, t, _ = x.shape
        return x.view(b, t, self.h, self.d // self.h).transpose(1, 2)

    def initial(self, src_rows):
        pad = self.m.cfg["pad_id"]
        s = max(len(r) for r in src_rows)
        src = torch.tensor([r + [pad] * (s - len(r)) for r in src_rows], dtype=torch.long)
        memory, src_pad = self.m.encode(src)
        mask = torch.zeros(src_pad.shape, dtype=torch.float32).masked_fill(src_pad, float("-inf"))[:, None, None, :]
        cross = []
        for layer in self.m.decoder.layers:
            w, b = layer.multihead_attn.in_proj_weight, layer.multihead_attn.in_proj_bias
            k = F.linear(memory, w[self.d:2 * self.d], b[self.d:2 * self.d])
            v = F.linear(memory, w[2 * self.d:], b[2 * self.d:])
            cross.append((self.split(k), self.split(v)))
        return {"cross": cross, "mask": mask, "self": [None] * len(cross), "pos": 0}

    def attend(self, q, k, v, mask, out_proj):
        scores = q @ k.transpose(-1, -2) / math.sqrt(q.shape[-1])
        if mask is not None:
            scores = scores + mask
        y = torch.softmax(scores, -1) @ v  # [B, h, 1, dk]
        return out_proj(y.transpose(1, 2).reshape(y.shape[0], 1, self.d))

    def step(self, state, last):
        x = self.m.embed(self.m.tgt_embed, last[:, None], state["pos"])  # [B, 1, d]
        new_self = []
        for i, layer in enumerate(self.m.decoder.layers):
            sa = layer.self_attn
            q, k, v = F.linear(x, sa.in_proj_weight, sa.in_proj_bias).chunk(3, dim=-1)
            k, v = self.split(k), self.split(v)
            if state["self"][i] is not None:
                k = torch.cat([state["self"][i][0], k], 2)
                v = torch.cat([state["self"][i][1], v], 2)
            new_self.append((k, v))
            x = layer.norm1(x + self.attend(self.split(q), k, v, None, sa.out_proj))
            ca = layer.multihead_attn
            qc = F.linear(x, ca.in_proj_weight[:self.d], ca.in_proj_bias[:self.d])
            x = layer.norm2(x + self.attend(self.split(qc), *state["cross"][i], state["mask"], ca.out_proj))
            x = layer.norm3(x + layer.linear2(F.relu(layer.linear1(x))))
        lp = torch.log_softmax(self.m.generator(x[:, 0]), -1)
        lp[:, self.m.cfg["bos_id"]] = float("-inf")
        lp[:, self.m.cfg["pad_id"]] = float("-inf")
        return lp, {**state, "self": new_self, "pos": state["pos"] + 1}

    def select(self, state, rows):
        if rows == list(range(state["mask"].shape[0])):
            return state
        idx = torch.tensor(rows, dtype=torch.long)
        take = lambda kv: None if kv is None else (kv[0].index_select(0, idx), kv[1].index_select(0, idx))
        return {"cross": [take(kv) for kv in state["cross"]], "mask": state["mask"].index_select(0, idx),
                "self": [take(kv) for kv in state["self"]], "pos": state["pos"]}


def penalty(length, alpha):
    return ((5 + length) / 6) ** alpha


def greedy(inc, state, max_len, bos, eos, alpha):
    n = len(max_len)
    tokens = [[] for _ in range(n)]
    logp = [0.0] * n
    active = list(range(n))
    while active:
        last = torch.tensor([tokens[s][-1] if tokens[s] else bos for s in active], dtype=torch.long)
        lp, state = inc.step(state, last)
        best = lp.argmax(-1).tolist()
        keep, nxt = [], []
        for row, s in enumerate(active):
            tok = best[row] if len(tokens[s]) < max_len[s] else eos
            tokens[s].append(tok)
            logp[s] += float(lp[row, tok])
            if tok != eos:
                keep.append(row)
                nxt.append(s)
        active = nxt
        if active:
            state = inc.select(state, keep)
    return tokens


def beam(inc, state, max_len, bos, eos, alpha, k, stop):
    """The engine's beam search (src/engine/decode/beam.ts), written again for PyTorch.

    stop "exact": a sentence stops only when no live hypothesis can beat the k-th best finished one
    (the best live log-prob p <= 0 over lp(max_len + 1)); the k best finished are kept.
    stop "first-k": it stops once k have finished, keeping the first k."""
    exact = stop == "exact"
    n = len(max_len)
    finished = [[] for _ in range(n)]  # (score, logProb, tokens), best first under "exact"
    live = [[([], 0.0, s)] for s in range(n)]  # (tokens, logProb, row)
    active = list(range(n))
    rows = n

    def end(done, lg, toks):
        if not exact and len(done) >= k:
            return
        done.append((lg / penalty(len(toks), alpha), lg, toks))
        if exact:
            done.sort(key=lambda d: -d[0])  # stable: of equal scores the earlier stays first
            del done[k:]

    while active:
        last = [0] * rows
        for s in active:
            for toks, _, row in live[s]:
                last[row] = toks[-1] if toks else bos
        lp, state = inc.step(state, torch.tensor(last, dtype=torch.long))
        V = lp.shape[1]
        next_live = [[] for _ in range(n)]
        keep, still = [], []
        for s in active:
            lives, done = live[s], finished[s]
            if len(lives[0][0]) >= max_len[s]:
                ended = [(lg + float(lp[row, eos]), i, toks + [eos]) for i, (toks, lg, row) in enumerate(lives)]
                for lg, _, toks in sorted(ended, key=lambda e: (-e[0], e[1])):
                    end(done, lg, toks)
                continue
            rows_of = torch.tensor([row for _, _, row in lives], dtype=torch.long)
            cand = (lp.index_select(0, rows_of) + torch.tensor([lg for _, lg, _ in lives])[:, None]).reshape(-1)
            vals, idx = cand.topk(min(2 * k, cand.numel()))
            nxt = []
            for rank, (val, i) in enumerate(zip(vals.tolist(), idx.tolist())):
                if val == float("-inf"):
                    break
                h, tok = divmod(i, V)
                toks, _, row = lives[h]
                if tok == eos:
                    if rank < k:
                        end(done, val, toks + [tok])
                elif len(nxt) < k:
                    nxt.append((toks + [tok], val, row))
            if not nxt:
                continue
            if len(done) >= k:
                p = nxt[0][1]
                bound = p if p > 0 else p / penalty(max_len[s] + 1, alpha)
                if not exact or bound <= done[k - 1][0]:
                    continue
            for j, (toks, lg, row) in enumerate(nxt):
                keep.append(row)
                nxt[j] = (toks, lg, len(keep) - 1)
            next_live[s] = nxt
            still.append(s)
        live, active, rows = next_live, still, len(keep)
        if rows:
            state = inc.select(state, keep)
    return [max(done, key=lambda d: d[0])[2] if done else [] for done in finished]


def translate(inc, src, k, batch, alpha, offset, stop="exact"):
    cfg = inc.m.cfg
    cap = cfg["max_len"] - 1
    off = min(offset, cap)
    order = sorted(range(len(src)), key=lambda i: (len(src[i]), i))
    out = [None] * len(src)
    for start in range(0, len(order), batch):
        ids = order[start:start + batch]
        rows = [src[i] for i in ids]
        max_len = [min(len(r), cap - off) + off for r in rows]
        state = inc.initial(rows)
        search = greedy(inc, state, max_len, cfg["bos_id"], cfg["eos_id"], alpha) if k == 1 else \
            beam(inc, state, max_len, cfg["bos_id"], cfg["eos_id"], alpha, k, stop)
        for i, toks in zip(ids, search):
            out[i] = toks[:-1] if toks and toks[-1] == cfg["eos_id"] else toks
    return out


def main():
    reply = lambda obj: print(json.dumps(obj), flush=True)
    reply({"started": True})  # torch is imported: the node side checks this process's BLAS now
    with open(sys.argv[1]) as f:
        case = json.load(f)
    cfg = case["config"]
    model = Transformer(cfg)
    weights = read_safetensors(case["weights"])
    missing = set(model.state_dict()) - set(weights)
    assert not missing, missing
    model.load_state_dict({name: weights[name] for name in model.state_dict()})
    model.eval()
    inc = Incremental(model)
    src = case["src"]
    runs = {run["name"]: run for run in case["runs"]}
    with torch.inference_mode():
        # warm-up, as the engine's: one full batch, so that buffers of the timed batches' size exist
        translate(inc, src[: case["batch"]], 1, case["batch"], case["alpha"], case["maxLenOffset"])
        reply({"ready": True})
        for line in sys.stdin:
            run = runs[json.loads(line)["run"]]
            t0 = now()
            out = translate(inc, src, run["k"], case["batch"], case["alpha"], case["maxLenOffset"], run["stop"])
            dt = now() - t0
            reply({"name": run["name"], "seconds": dt, "sps": len(src) / dt, "tokens": sum(len(t) for t in out),
                   "out": out})
    emit({"info": describe(), "rss": peak_rss_mib()})


if __name__ == "__main__":
    main()
