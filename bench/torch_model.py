"""The engine's Transformer in PyTorch, for the benchmarks' peers.

nn.TransformerEncoder/Decoder with batch_first=True and post-LN (norm_first=False), ReLU, LayerNorm
eps 1e-5, state_dict names as the engine's checkpoints (encoder.layers.i.*, decoder.layers.i.*,
src_embed, tgt_embed, generator), shared source/target/generator matrix (section 3.4), embeddings
scaled by sqrt(d_model) plus the sinusoidal table (section 3.5).

Dropout as the engine (and the paper, section 5.4) applies it: on the embeddings and on every
sublayer's output before the residual add. nn.Transformer's layers also drop attention weights and
the FFN's hidden units with the same rate; the engine does not, so those two are switched off here
(same work and the same regularisation in both).
"""
import math

import torch
from torch import nn


def sinusoidal_table(max_len, d):
    pos = torch.arange(max_len, dtype=torch.float64).unsqueeze(1)
    angle = pos / torch.pow(10000.0, torch.arange(0, d, 2, dtype=torch.float64) / d)
    pe = torch.zeros(max_len, d, dtype=torch.float64)
    pe[:, 0::2] = torch.sin(angle)
    pe[:, 1::2] = torch.cos(angle)
    return pe.float()


class Transformer(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        d, p = cfg["d_model"], cfg["dropout"]
        self.cfg = cfg
        enc = nn.TransformerEncoderLayer(d, cfg["heads"], cfg["d_ff"], p, batch_first=True, norm_first=cfg["norm_first"])
        dec = nn.TransformerDecoderLayer(d, cfg["heads"], cfg["d_ff"], p, batch_first=True, norm_first=cfg["norm_first"])
        self.encoder = nn.TransformerEncoder(enc, cfg["encoder_layers"], enable_nested_tensor=False)
        self.decoder = nn.TransformerDecoder(dec, cfg["decoder_layers"])
        for layer in list(self.encoder.layers) + list(self.decoder.layers):
            layer.dropout = nn.Identity()  # the FFN's hidden dropout
            layer.self_attn.dropout = 0.0  # attention-weight dropout
            if hasattr(layer, "multihead_attn"):
                layer.multihead_attn.dropout = 0.0
        self.src_embed = nn.Embedding(cfg["src_vocab"], d)
        self.tgt_embed = nn.Embedding(cfg["tgt_vocab"], d)
        self.generator = nn.Linear(d, cfg["tgt_vocab"])
        if cfg["share_embeddings"]:
            self.tgt_embed.weight = self.src_embed.weight
            self.generator.weight = self.src_embed.weight
        self.register_buffer("pe", sinusoidal_table(cfg["max_len"], d), persistent=False)
        self.drop = nn.Dropout(p)
        self.scale = math.sqrt(d)
        for name, w in self.named_parameters():  # the engine's initialisation (tied weights listed once)
            if "embed" in name:
                nn.init.normal_(w, 0, d ** -0.5)
            elif name.endswith("in_proj_weight"):  # W^Q, W^K, W^V one [d, d] block at a time, as params.ts
                for block in w.split(d, dim=0):
                    nn.init.xavier_uniform_(block)
            elif w.dim() == 2:
                nn.init.xavier_uniform_(w)
            elif name.endswith("bias"):
                nn.init.zeros_(w)  # LayerNorm gains keep their 1

    def embed(self, emb, ids, offset=0):
        return emb(ids) * self.scale + self.pe[offset:offset + ids.shape[1]]

    def encode(self, src):
        src_pad = src == self.cfg["pad_id"]
        return self.encoder(self.drop(self.embed(self.src_embed, src)), src_key_padding_mask=src_pad), src_pad

    def forward(self, src, tgt):
        """Teacher-forced log-probabilities [B, T, V]."""
        memory, src_pad = self.encode(src)
        t = tgt.shape[1]
        causal = torch.triu(torch.full((t, t), float("-inf"), device=tgt.device), diagonal=1)
        y = self.decoder(self.drop(self.embed(self.tgt_embed, tgt)), memory, tgt_mask=causal,
                         tgt_key_padding_mask=tgt == self.cfg["pad_id"], memory_key_padding_mask=src_pad)
        return torch.log_softmax(self.generator(y), dim=-1)


class LabelSmoothing(nn.Module):
    """The Annotated Transformer's LabelSmoothing: 1 - eps on the target, eps / (V - 2) on every
    other class but padding, a zero padding column, zero rows where the target is padding;
    KL divergence summed. The caller divides by the number of non-pad tokens."""

    def __init__(self, size, padding_idx, smoothing):
        super().__init__()
        self.criterion = nn.KLDivLoss(reduction="sum")
        self.padding_idx = padding_idx
        self.confidence = 1.0 - smoothing
        self.smoothing = smoothing
        self.size = size

    def forward(self, x, target):
        assert x.size(1) == self.size
        true_dist = x.data.clone()
        true_dist.fill_(self.smoothing / (self.size - 2))
        true_dist.scatter_(1, target.data.unsqueeze(1), self.confidence)
        true_dist[:, self.padding_idx] = 0
        true_dist.masked_fill_((target.data == self.padding_idx).unsqueeze(1), 0.0)  # no sync on a GPU
        return self.criterion(x, true_dist.clone().detach())


def paper_adam(model, lr):
    """Section 5.3: beta1 0.9, beta2 0.98, eps 1e-9 (tied weights are one parameter)."""
    return torch.optim.Adam(model.parameters(), lr=lr, betas=(0.9, 0.98), eps=1e-9)


def train_step(model, optimizer, criterion, src, tgt_in, tgt_out, pad_id):
    """Forward, loss per non-pad token, backward, global gradient norm, Adam: what the engine's
    trainStep does; returns (loss, grad norm) read back as numbers, as the engine does."""
    optimizer.zero_grad(set_to_none=True)
    log_probs = model(src, tgt_in)
    tokens = (tgt_out != pad_id).sum().clamp(min=1)  # a tensor: no wait for a GPU mid-step
    loss = criterion(log_probs.reshape(-1, log_probs.shape[-1]), tgt_out.reshape(-1)) / tokens
    loss.backward()
    norm = torch.sqrt(sum((p.grad ** 2).sum() for p in model.parameters() if p.grad is not None))
    optimizer.step()
    return loss.item(), norm.item()
