"""Capturing the probe's attention: the weights equal Eq. 1 worked by hand from the layer's own
projections, the training step computes exactly what it computes without the writer, and custom
attention modules report through record_attention."""

import math
import unittest

import torch
from torch import nn

import helpers
from attention_debugger import AttentionCapture, CaptureError, RunWriter
from helpers import TempDir, read_safetensors, tiny_config

tr = helpers.load_example()
SRC = [4, 9, 6, 2]  # [S] = 4: symbols and </s>
TGT = [1, 6, 9, 4]  # [T] = 4: <s> and the reversal


def heads_softmax(layer_attn, q_in, kv_in, heads, mask=None):
    """Eq. 1 per head from the module's stacked in_proj (W^Q, W^K, W^V): softmax(Q K^T / sqrt(d_k)) [H, T_q, T_k]."""
    d = q_in.shape[-1]
    w, b = layer_attn.in_proj_weight, layer_attn.in_proj_bias
    q = q_in @ w[:d].T + b[:d]  # [T_q, d]
    k = kv_in @ w[d : 2 * d].T + b[d : 2 * d]  # [T_k, d]
    d_k = d // heads
    out = []
    for h in range(heads):
        qh, kh = q[:, h * d_k : (h + 1) * d_k], k[:, h * d_k : (h + 1) * d_k]
        scores = qh @ kh.T / math.sqrt(d_k)  # [T_q, T_k]
        if mask is not None:
            scores = scores.masked_fill(mask, float("-inf"))
        out.append(torch.softmax(scores, dim=-1))
    return torch.stack(out)  # [H, T_q, T_k]


class HandWorkedTest(unittest.TestCase):
    def test_captured_weights_equal_equation_1_from_the_layers_projections(self):
        torch.manual_seed(3)
        config = tiny_config()
        model = tr.Seq2Seq(config).train()
        with TempDir() as d:
            maps = RunWriter(d, config, probe=[(SRC, TGT)]).probe_attention(model)[0]
        self.assertTrue(model.training, "the model is back in training mode")
        t = model.transformer
        model.eval()  # the hand-worked side calls sublayers too: no dropout
        with torch.no_grad():
            scale = math.sqrt(config["d_model"])
            x = model.src_embed(torch.tensor(SRC)) * scale + model.pe[: len(SRC)]  # [S, d]
            y = model.tgt_embed(torch.tensor(TGT)) * scale + model.pe[: len(TGT)]  # [T, d]
            enc0 = t.encoder.layers[0]
            want = heads_softmax(enc0.self_attn, x, x, config["heads"])
            self.assertLess((maps["encoder_self"][0] - want).abs().max().item(), 1e-5)
            # layer 1 reads layer 0's output: post-LN, x1 = LN2(h + FFN(h)), h = LN1(x + SelfAttn(x))
            h = enc0.norm1(x + enc0.self_attn(x, x, x, need_weights=False)[0])
            x1 = enc0.norm2(h + enc0.linear2(torch.relu(enc0.linear1(h))))
            want = heads_softmax(t.encoder.layers[1].self_attn, x1, x1, config["heads"])
            self.assertLess((maps["encoder_self"][1] - want).abs().max().item(), 1e-5)
            dec0 = t.decoder.layers[0]
            causal = torch.triu(torch.ones(len(TGT), len(TGT), dtype=torch.bool), diagonal=1)
            want = heads_softmax(dec0.self_attn, y, y, config["heads"], causal)
            self.assertLess((maps["decoder_self"][0] - want).abs().max().item(), 1e-5)
            self.assertEqual(maps["decoder_self"][0][:, 0, 1:].abs().max().item(), 0.0, "nothing above the diagonal")
            memory = t.encoder(x.unsqueeze(0))[0]  # [S, d], PyTorch's own encoder incl. its final norm
            y1 = dec0.norm1(y + dec0.self_attn(y, y, y, attn_mask=causal, need_weights=False)[0])
            want = heads_softmax(dec0.multihead_attn, y1, memory, config["heads"])
            self.assertLess((maps["cross"][0] - want).abs().max().item(), 1e-5)
        self.assertEqual(list(maps["cross"].shape), [1, 2, len(TGT), len(SRC)])  # [L, H, T, S]

    def test_the_wrappers_and_flags_are_restored(self):
        model = tr.Seq2Seq(tiny_config())
        model.train()
        model.transformer.encoder.layers[1].eval()  # a mixed state, to see it comes back as it was
        before = {name: m.training for name, m in model.named_modules()}
        with AttentionCapture(model) as capture:
            self.assertFalse(model.training)
            model(torch.tensor([SRC]), torch.tensor([TGT]))
        self.assertEqual({name: m.training for name, m in model.named_modules()}, before)
        self.assertFalse(any("forward" in vars(m) for m in model.modules()))
        self.assertEqual(len(capture.recorded), 2 + 1 + 1)


def train(model, steps, writer=None):
    """`steps` updates with dropout on, one seed for the whole loop (so a probe that drew random numbers
    or left the model in eval mode would change what follows); with a writer, a snapshot and a
    checkpoint after every step."""
    torch.manual_seed(5)
    model.train()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3, betas=(0.9, 0.98), eps=1e-9)
    crit = nn.CrossEntropyLoss(ignore_index=0, label_smoothing=0.1)
    losses = []
    for step in range(1, steps + 1):
        src, tgt_in, tgt_out = tr.reverse_batch(8, torch.Generator().manual_seed(step))
        logits = model(src, tgt_in)  # [B, T, V]
        loss = crit(logits.reshape(-1, logits.shape[-1]), tgt_out.reshape(-1))
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
        if writer:
            writer.log(step, loss=loss, lr=1e-3)
            writer.snapshot(step, model)
            writer.checkpoint(step, model, opt)
    return losses


class TrainingUntouchedTest(unittest.TestCase):
    def test_snapshots_and_checkpoints_do_not_change_the_training(self):
        config = tiny_config()
        torch.manual_seed(11)
        plain = tr.Seq2Seq(config)
        torch.manual_seed(11)
        watched = tr.Seq2Seq(config)
        with TempDir() as d:
            writer = RunWriter(d, config, probe=[(SRC, TGT), ([5, 5, 2], [1, 5, 5])])
            losses_watched = train(watched, 4, writer)
        losses_plain = train(plain, 4)
        self.assertEqual(losses_watched, losses_plain)
        for (name, a), (_, b) in zip(plain.state_dict().items(), watched.state_dict().items()):
            self.assertTrue(torch.equal(a, b), name)


class Custom(nn.Module):
    """A one-layer encoder-decoder with hand-written attention that reports through record_attention."""

    def __init__(self, writer, d=8, heads=2):
        super().__init__()
        self.writer, self.heads = writer, heads
        self.embed = nn.Embedding(11, d)
        self.q, self.k = nn.Linear(d, d), nn.Linear(d, d)

    def attend(self, kind, a, b, causal=False):
        B, Tq, d = a.shape
        Tk, dk = b.shape[1], d // self.heads
        q = self.q(a).view(B, Tq, self.heads, dk).transpose(1, 2)  # [B, H, Tq, dk]
        k = self.k(b).view(B, Tk, self.heads, dk).transpose(1, 2)  # [B, H, Tk, dk]
        scores = q @ k.transpose(-1, -2) / math.sqrt(dk)  # [B, H, Tq, Tk]
        if causal:
            scores = scores.masked_fill(torch.triu(torch.ones(Tq, Tk, dtype=torch.bool), 1), float("-inf"))
        w = scores.softmax(-1)  # [B, H, Tq, Tk]
        self.writer.record_attention(kind, 0, w)
        return w

    def forward(self, src, tgt):
        x, y = self.embed(src), self.embed(tgt)
        self.attend("encoder_self", x, x)
        self.attend("decoder_self", y, y, causal=True)
        return self.attend("cross", y, x)


class CustomModuleTest(unittest.TestCase):
    def test_record_attention_fills_the_snapshot_and_is_silent_during_training(self):
        config = tiny_config(d_model=8, heads=2, encoder_layers=1, decoder_layers=1)
        with TempDir() as d:
            writer = RunWriter(d, config, probe=[(SRC, TGT)])
            model = Custom(writer)
            out = model(torch.tensor([SRC, SRC]), torch.tensor([TGT, TGT]))  # a training batch: nothing recorded
            self.assertEqual(list(out.shape), [2, 2, 4, 4])
            writer.snapshot(1, model)
            tensors, meta = read_safetensors(f"{d}/snapshots/step-1.safetensors")
            with torch.no_grad():
                want = model.attend("cross", model.embed(torch.tensor([TGT])), model.embed(torch.tensor([SRC])))
            self.assertEqual(tensors["cross.0"][1], [1, 2, 4, 4])
            got = torch.tensor(tensors["cross.0"][2]).view(1, 2, 4, 4)
            self.assertLess((got - want).abs().max().item(), 1e-6)

    def test_a_model_without_known_attention_modules_is_a_clear_error(self):
        config = tiny_config(encoder_layers=1, decoder_layers=1)

        class Silent(nn.Module):
            def __init__(self):
                super().__init__()
                self.attn = nn.MultiheadAttention(16, 2, batch_first=True)

            def forward(self, src, tgt):
                return tgt

        with TempDir() as d:
            writer = RunWriter(d, config, probe=[(SRC, TGT)])
            with self.assertRaisesRegex(CaptureError, r"encoder_self: no attention was captured for layer\(s\) \[0\]"):
                writer.snapshot(1, Silent())


if __name__ == "__main__":
    unittest.main()
