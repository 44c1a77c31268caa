"""Checkpoints: resuming from one continues exactly as an uninterrupted run, damaged or incomplete
ones are passed over, and models named otherwise map onto the layout or fail naming the tensor."""

import os
import unittest

import torch
from torch import nn

import helpers
from attention_debugger import LayoutError, RunWriter, latest_checkpoint, resume
from helpers import TempDir, tiny_config

tr = helpers.load_example()


def fresh(config, seed):
    torch.manual_seed(seed)
    model = tr.Seq2Seq(config)
    return model, torch.optim.Adam(model.parameters(), lr=0.0, betas=(0.9, 0.98), eps=1e-9)


def steps(model, opt, first, last):
    crit = nn.CrossEntropyLoss(ignore_index=0, label_smoothing=0.1)
    for step in range(first, last + 1):
        tr.train_step(model, opt, crit, tr.noam(step, 16, 4, 1.0), step, 0, 1, 8, 3)


class ResumeTest(unittest.TestCase):
    def test_a_resumed_run_equals_an_uninterrupted_one(self):
        config = tiny_config()
        whole, whole_opt = fresh(config, 1)
        steps(whole, whole_opt, 1, 6)
        with TempDir() as d:
            first, first_opt = fresh(config, 1)
            steps(first, first_opt, 1, 3)
            RunWriter(d, config).checkpoint(3, first, first_opt)
            second, second_opt = fresh(config, 2)  # other weights: everything must come from the files
            self.assertEqual(resume(d, second, second_opt), 3)
            steps(second, second_opt, 4, 6)
        for (name, a), (_, b) in zip(whole.state_dict().items(), second.state_dict().items()):
            self.assertTrue(torch.equal(a, b), name)

    def test_resume_from_an_empty_folder_is_step_0(self):
        config = tiny_config()
        with TempDir() as d:
            model, opt = fresh(config, 1)
            RunWriter(d, config)
            self.assertEqual(resume(d, model, opt), 0)

    def test_a_damaged_newest_file_and_one_without_its_optimizer_file_are_passed_over(self):
        config = tiny_config()
        model, opt = fresh(config, 1)
        steps(model, opt, 1, 1)
        with TempDir() as d:
            w = RunWriter(d, config)
            for step in (1, 2, 3):
                w.checkpoint(step, model, opt)
            os.unlink(os.path.join(d, "checkpoints", "step-3.optim.safetensors"))
            path = os.path.join(d, "checkpoints", "step-2.safetensors")
            with open(path, "rb+") as f:
                f.truncate(os.path.getsize(path) // 2)
            self.assertEqual(latest_checkpoint(d)[0], 1)
            self.assertEqual(latest_checkpoint(d, with_optimizer=False)[0], 3)


class Renamed(nn.Module):
    """An encoder-decoder whose embeddings and output layer are not named as the format names them."""

    def __init__(self, config):
        super().__init__()
        self.core = tr.Seq2Seq(config).transformer
        self.tok_src = nn.Embedding(config["src_vocab"], config["d_model"])
        self.tok_tgt = nn.Embedding(config["tgt_vocab"], config["d_model"])
        self.out = nn.Linear(config["d_model"], config["tgt_vocab"])


class LayoutTest(unittest.TestCase):
    NAMES = {"src_embed.weight": "tok_src.weight", "tgt_embed.weight": "tok_tgt.weight",
             "generator.weight": "out.weight", "generator.bias": "out.bias"}

    def test_names_map_other_modules_and_the_values_round_trip(self):
        config = tiny_config()
        model = Renamed(config)
        with TempDir() as d:
            RunWriter(d, config, names=self.NAMES).checkpoint(1, model)
            other = Renamed(config)
            self.assertEqual(resume(d, other, names=self.NAMES), 1)
        self.assertTrue(torch.equal(other.tok_src.weight, model.tok_src.weight))
        self.assertTrue(torch.equal(other.core.decoder.layers[0].linear2.bias, model.core.decoder.layers[0].linear2.bias))

    def test_an_unmapped_model_fails_naming_what_is_missing(self):
        with TempDir() as d:
            with self.assertRaisesRegex(LayoutError, 'no state_dict key is or ends with "src_embed.weight"'):
                RunWriter(d, tiny_config()).checkpoint(1, Renamed(tiny_config()))

    def test_a_model_of_another_size_fails_naming_the_tensor(self):
        with TempDir() as d:
            with self.assertRaisesRegex(LayoutError, r'"src_embed.weight" .* has shape \[11, 16\], config expects \[11, 32\]'):
                RunWriter(d, tiny_config(d_model=32, d_ff=64)).checkpoint(1, tr.Seq2Seq(tiny_config()))


if __name__ == "__main__":
    unittest.main()
