"""Each file of the run folder as docs/RUN_FOLDER.md defines it, read back with the tests' own reader."""

import json
import os
import unittest

import torch

import helpers
from attention_debugger import ConfigError, RunWriter
from helpers import KINDS, TempDir, read_jsonl, read_safetensors, tiny_config

tr = helpers.load_example()
PROBE = [{"src": [4, 5, 6, 2], "tgt": [1, 6, 5, 4]}, {"src": [7, 2], "tgt": [1, 7]}]
MODEL_FIELDS = {"d_model", "heads", "d_ff", "encoder_layers", "decoder_layers", "src_vocab", "tgt_vocab", "dropout",
                "norm_first", "final_norm", "positional", "max_len", "share_embeddings", "pad_id", "bos_id", "eos_id"}
# docs/RUN_FOLDER.md, checkpoints/: nn.Transformer's state_dict names plus src_embed, tgt_embed, generator;
# written out for tiny_config(encoder_layers=1, decoder_layers=1) (final_norm: encoder.norm, decoder.norm).
ATTN = ("in_proj_weight", "in_proj_bias", "out_proj.weight", "out_proj.bias")
FFN = ("linear1.weight", "linear1.bias", "linear2.weight", "linear2.bias")
CHECKPOINT_NAMES = (
    [f"encoder.layers.0.self_attn.{n}" for n in ATTN] + [f"encoder.layers.0.{n}" for n in FFN]
    + [f"encoder.layers.0.norm{i}.{p}" for i in (1, 2) for p in ("weight", "bias")]
    + ["encoder.norm.weight", "encoder.norm.bias"]
    + [f"decoder.layers.0.{a}.{n}" for a in ("self_attn", "multihead_attn") for n in ATTN]
    + [f"decoder.layers.0.{n}" for n in FFN]
    + [f"decoder.layers.0.norm{i}.{p}" for i in (1, 2, 3) for p in ("weight", "bias")]
    + ["decoder.norm.weight", "decoder.norm.bias", "src_embed.weight", "tgt_embed.weight", "generator.weight",
       "generator.bias"]
)


def one_step(model, opt):
    src, tgt_in, tgt_out = tr.reverse_batch(4, torch.Generator().manual_seed(0))
    logits = model(src, tgt_in)  # [B, T, V]
    loss = torch.nn.functional.cross_entropy(logits.reshape(-1, 11), tgt_out.reshape(-1), ignore_index=0)
    opt.zero_grad()
    loss.backward()
    opt.step()
    return loss


class FolderTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = TempDir()
        cls.dir = cls.tmp.__enter__()
        cls.config = tiny_config(encoder_layers=1, decoder_layers=1)
        torch.manual_seed(0)
        cls.model = tr.Seq2Seq(cls.config)
        opt = torch.optim.Adam(cls.model.parameters(), lr=1e-3)
        data = {"kind": "task", "task": "reverse"}
        with RunWriter(cls.dir, cls.config, probe=PROBE, training={"steps": 2}, data=data,
                       vocab={"kind": "task", "size": 11}) as w:
            with open(os.path.join(cls.dir, "status.json")) as f:
                cls.status_while_running = json.load(f)
            for step in (1, 2):
                loss = one_step(cls.model, opt)
                w.log(step, loss=loss, lr=1e-3, grad_norm=float("inf"), tokens_per_sec=100.0)
            w.snapshot(2, cls.model)
            w.checkpoint(2, cls.model, opt)
        cls.adam = opt.state

    @classmethod
    def tearDownClass(cls):
        cls.tmp.__exit__(None, None, None)

    def path(self, *parts):
        return os.path.join(self.dir, *parts)

    def test_only_the_formats_files_and_no_temp_files(self):
        found = sorted(os.path.relpath(os.path.join(r, f), self.dir) for r, _, fs in os.walk(self.dir) for f in fs)
        self.assertEqual(found, ["checkpoints/step-2.optim.safetensors", "checkpoints/step-2.safetensors", "config.json",
                                 "metrics.jsonl", "snapshots/step-2.safetensors", "status.json", "vocab.json"])

    def test_config_json(self):
        with open(self.path("config.json")) as f:
            c = json.load(f)
        self.assertEqual(set(c), MODEL_FIELDS | {"run_format", "run_format_version", "writer", "training", "data"})
        self.assertEqual({k: c[k] for k in MODEL_FIELDS}, self.config)
        self.assertEqual((c["run_format"], c["run_format_version"], c["writer"]), ("attention-debugger-run", 2, "pytorch"))
        self.assertEqual((c["training"], c["data"]), ({"steps": 2}, {"kind": "task", "task": "reverse"}))

    def test_vocab_json(self):
        with open(self.path("vocab.json")) as f:
            self.assertEqual(json.load(f), {"kind": "task", "size": 11})

    def test_metrics_jsonl(self):
        with open(self.path("metrics.jsonl"), "rb") as f:
            self.assertTrue(f.read().endswith(b"\n"))
        rows = read_jsonl(self.path("metrics.jsonl"))
        self.assertEqual([r["step"] for r in rows], [1, 2])
        for r in rows:
            self.assertEqual(set(r), {"step", "lr", "loss", "grad_norm", "tokens_per_sec", "time"})
            self.assertIsInstance(r["loss"], float)
            self.assertIsNone(r["grad_norm"], "infinity is written as null: JSON has no Infinity")
            self.assertIsInstance(r["time"], int)

    def test_status_json(self):
        self.assertEqual(self.status_while_running["state"], "running")
        with open(self.path("status.json")) as f:
            s = json.load(f)
        self.assertEqual((s["state"], s["step"], s["writer"]), ("completed", 2, "pytorch"))
        self.assertIsInstance(s["time"], int)

    def test_checkpoint_holds_the_engines_names_and_the_models_values(self):
        tensors, meta = read_safetensors(self.path("checkpoints", "step-2.safetensors"))
        self.assertEqual(sorted(tensors), sorted(CHECKPOINT_NAMES))
        self.assertEqual(meta["step"], "2")
        state = self.model.state_dict()
        for name, (dtype, shape, values) in tensors.items():
            mine = state[name if name in state else f"transformer.{name}"]
            self.assertEqual((dtype, shape), ("F32", list(mine.shape)), name)
            self.assertEqual(values, tuple(mine.flatten().tolist()), name)

    def test_optimizer_file_holds_adams_moments_under_the_same_names(self):
        tensors, meta = read_safetensors(self.path("checkpoints", "step-2.optim.safetensors"))
        self.assertEqual(meta["step"], "2")
        self.assertEqual(sorted(tensors), sorted(f"{n}.{m}" for n in CHECKPOINT_NAMES for m in ("exp_avg", "exp_avg_sq")))
        p = self.model.generator.bias
        self.assertEqual(tensors["generator.bias.exp_avg"][2], tuple(self.adam[p]["exp_avg"].tolist()))

    def test_snapshot_tensors_metadata_and_distributions(self):
        tensors, meta = read_safetensors(self.path("snapshots", "step-2.safetensors"))
        self.assertEqual((meta["step"], meta["run_format_version"]), ("2", "2"))
        labels = [{"src": ["4", "5", "6", "</s>"], "tgt": ["<s>", "6", "5", "4"]}, {"src": ["7", "</s>"], "tgt": ["<s>", "7"]}]
        self.assertEqual(json.loads(meta["pairs"]), labels)
        self.assertEqual(sorted(tensors), sorted(f"{k}.{b}" for k in KINDS for b in (0, 1)))
        for b, pair in enumerate(PROBE):
            S, T = len(pair["src"]), len(pair["tgt"])
            for kind, (q, k) in zip(KINDS, ((S, S), (T, T), (T, S))):
                dtype, shape, values = tensors[f"{kind}.{b}"]
                self.assertEqual((dtype, shape), ("F32", [1, 2, q, k]), f"{kind}.{b}: [layers, heads, queries, keys]")
                rows = [values[i : i + k] for i in range(0, len(values), k)]
                for r, row in enumerate(rows):
                    self.assertAlmostEqual(sum(row), 1.0, places=5)
                    if kind == "decoder_self":
                        self.assertTrue(all(v == 0.0 for v in row[r % q + 1 :]), "causal: zero above the diagonal")


class StatusTest(unittest.TestCase):
    def status(self, d):
        with open(os.path.join(d, "status.json")) as f:
            return json.load(f)

    def test_a_failure_and_an_interrupt_are_the_end_markers(self):
        with TempDir() as d:
            with self.assertRaises(ValueError):
                with RunWriter(d, tiny_config()) as w:
                    w.log(1, loss=1.0, lr=0.1)
                    raise ValueError("diverged")
            self.assertEqual(self.status(d)["state"], "failed")
            self.assertEqual(self.status(d)["message"], "ValueError: diverged")
            self.assertEqual(self.status(d)["step"], 1)
            with self.assertRaises(KeyboardInterrupt):
                with RunWriter(d, tiny_config(), step=1):
                    raise KeyboardInterrupt
            self.assertEqual(self.status(d)["state"], "stopped")

    def test_a_diverged_run_says_so(self):
        # "diverged" is a state of the run folder format (docs/RUN_FOLDER.md), as the engine writes it
        with TempDir() as d:
            with RunWriter(d, tiny_config()) as w:
                w.log(1, loss=300.0, lr=0.1)
                w.close("diverged", "the loss diverged")
            self.assertEqual((self.status(d)["state"], self.status(d)["message"]), ("diverged", "the loss diverged"))
            with self.assertRaisesRegex(ValueError, "one of running, paused, completed, stopped, failed, diverged"):
                RunWriter(d, tiny_config(), step=1).status("exploded")

    def test_bad_arguments_name_the_field(self):
        with TempDir() as d:
            with self.assertRaisesRegex(ConfigError, "heads: expected an integer"):
                RunWriter(d, tiny_config(heads="4"))
            with self.assertRaisesRegex(ValueError, "probe pair 0: src id 11 is outside the vocabulary"):
                RunWriter(d, tiny_config(), probe=[([11, 2], [1])])
            w = RunWriter(d, tiny_config())
            with self.assertRaisesRegex(TypeError, "unknown field\\(s\\) acc"):
                w.log(1, loss=1.0, lr=0.1, acc=0.5)
            with self.assertRaisesRegex(ValueError, "steps count from 1"):
                w.log(0, loss=1.0, lr=0.1)


class OtherRanksTest(unittest.TestCase):
    def test_a_rank_other_than_0_writes_nothing(self):
        saved = os.environ.get("RANK")
        os.environ["RANK"] = "1"  # as torchrun sets it before the process group is up
        try:
            with TempDir() as d:
                out = os.path.join(d, "run")
                model = tr.Seq2Seq(tiny_config())
                with RunWriter(out, tiny_config(), probe=PROBE, vocab={"kind": "task", "size": 11}) as w:
                    w.log(1, loss=1.0, lr=0.1)
                    w.snapshot(1, model)
                    w.checkpoint(1, model)
                self.assertFalse(os.path.exists(out))
        finally:
            if saved is None:
                del os.environ["RANK"]
            else:
                os.environ["RANK"] = saved


if __name__ == "__main__":
    unittest.main()
