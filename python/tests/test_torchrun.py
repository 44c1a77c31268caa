"""The example under `torchrun --nproc_per_node 2` (gloo, CPU, DDP), 300 steps: only rank 0 writes, as
the interpreter's audit events of each process show, and the folder holds what the format says."""

import json
import os
import subprocess
import sys
import unittest

from helpers import EXAMPLE, HERE, TempDir, python_env, read_jsonl, read_safetensors

# torchrun of this interpreter's torch (/usr/bin/torchrun is this entry point of Debian's). Debian's
# (PyTorch 1.13 on Python 3.11) cannot parse the default "0" of --redirects/--tee (python/README.md);
# any other value works on every version.
TORCHRUN = [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc_per_node", "2", "--redirects", "2", "--tee", "2"]


class TorchrunTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = TempDir()
        work = cls.tmp.__enter__()
        cls.run_dir, cls.logs = os.path.join(work, "run"), os.path.join(work, "audit")
        os.makedirs(cls.logs)
        cmd = TORCHRUN + ["--log_dir", os.path.join(work, "torchrun-logs"), os.path.join(HERE, "audit_launch.py"),
                          cls.run_dir, cls.logs, EXAMPLE, "--out", cls.run_dir]
        cls.result = subprocess.run(cmd, env=python_env(), capture_output=True, text=True, timeout=600)

    @classmethod
    def tearDownClass(cls):
        cls.tmp.__exit__(None, None, None)

    def setUp(self):
        self.assertEqual(self.result.returncode, 0, self.result.stdout + self.result.stderr)

    def audit(self, rank):
        with open(os.path.join(self.logs, f"rank-{rank}.log")) as f:
            return f.read().splitlines()

    def test_only_rank_0_writes(self):
        self.assertIn("trained steps 1..300 on 2 process(es)", self.result.stdout)
        rank0, rank1 = self.audit(0), self.audit(1)  # both exist: the launcher ran in both processes
        self.assertEqual(rank1, [], "rank 1 changed files in the run folder")
        touched = {os.path.relpath(line.split(" ", 1)[1], self.run_dir).split(".tmp-")[0] for line in rank0}
        for name in ("config.json", "vocab.json", "status.json", "metrics.jsonl", "checkpoints/step-300.safetensors",
                     "checkpoints/step-300.optim.safetensors", "snapshots/step-25.safetensors"):
            self.assertIn(name, touched)

    def test_the_folder_holds_every_step_once_and_the_checkpoints(self):
        rows = read_jsonl(os.path.join(self.run_dir, "metrics.jsonl"))
        self.assertEqual([r["step"] for r in rows], list(range(1, 301)))
        first, last = sum(r["loss"] for r in rows[:20]) / 20, sum(r["loss"] for r in rows[-20:]) / 20
        self.assertLess(last, first, "the loss falls")
        ckpts = sorted(os.listdir(os.path.join(self.run_dir, "checkpoints")))
        self.assertEqual(ckpts, sorted(f"step-{s}{x}.safetensors" for s in range(50, 301, 50) for x in ("", ".optim")))
        snaps = sorted(os.listdir(os.path.join(self.run_dir, "snapshots")))
        self.assertEqual(snaps, sorted(f"step-{s}.safetensors" for s in range(25, 301, 25)))
        tensors, meta = read_safetensors(os.path.join(self.run_dir, "snapshots", "step-300.safetensors"))
        self.assertEqual(tensors["cross.0"][1], [2, 4, 8, 8])  # [layers, heads, <s> + 7 symbols, 7 symbols + </s>]
        with open(os.path.join(self.run_dir, "status.json")) as f:
            self.assertEqual(json.load(f)["state"], "completed")
        with open(os.path.join(self.run_dir, "config.json")) as f:
            config = json.load(f)
        self.assertEqual(config["training"]["batch_pairs"], 64, "32 pairs on each of the 2 processes")


if __name__ == "__main__":
    unittest.main()
