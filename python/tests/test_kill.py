"""Killing the trainer: the example is SIGKILLed at a random moment of its training 10 times, each time
resumed with --resume. After every kill the folder is read as a reader reads it (complete lines,
whole safetensors files; also by the engine's `check-run` when dist/cli.js is built): no torn line,
no torn checkpoint. Each restart must resume from the newest complete checkpoint, and the run that
finally completes must end with the very weights of a run that was never killed."""

import json
import os
import random
import shutil
import subprocess
import sys
import time
import unittest

from helpers import EXAMPLE, REPO, TempDir, python_env, read_jsonl, read_safetensors, run_example

STEPS, CHECKPOINT_EVERY, SNAPSHOT_EVERY, KILLS = 400, 10, 5, 10
ARGS = ["--steps", str(STEPS), "--checkpoint-every", str(CHECKPOINT_EVERY), "--snapshot-every", str(SNAPSHOT_EVERY)]
TEMP = ".tmp-"


def complete_lines(path):
    if not os.path.exists(path):
        return 0
    with open(path, "rb") as f:
        return f.read().count(b"\n")


def newest_complete_checkpoint(run):
    """The newest step whose model and optimizer files both read whole (the reader's view), else 0."""
    folder = os.path.join(run, "checkpoints")
    steps = sorted((int(n[5:-12]) for n in os.listdir(folder) if n.startswith("step-") and n.endswith(".safetensors")
                    and TEMP not in n and ".optim" not in n), reverse=True) if os.path.isdir(folder) else []
    for step in steps:
        try:
            read_safetensors(os.path.join(folder, f"step-{step}.safetensors"))
            read_safetensors(os.path.join(folder, f"step-{step}.optim.safetensors"))
            return step
        except (ValueError, OSError):
            continue
    return 0


class KillTest(unittest.TestCase):
    def read_as_a_reader(self, run, seen):
        """Every file a reader would take must be whole. Counts the traces of interrupted writes in `seen`."""
        with open(os.path.join(run, "metrics.jsonl"), "rb") as f:
            text = f.read()
        if text and not text.endswith(b"\n"):
            seen["torn last line (ignored by readers)"] += 1
        for row in read_jsonl(os.path.join(run, "metrics.jsonl")):  # every complete line parses
            self.assertIsInstance(row["step"], int)
        for name in ("config.json", "status.json", "vocab.json"):
            with open(os.path.join(run, name)) as f:
                json.load(f)
        for sub in ("checkpoints", "snapshots"):
            for name in os.listdir(os.path.join(run, sub)):
                if TEMP in name:
                    seen["temp file (ignored by readers)"] += 1
                    continue
                read_safetensors(os.path.join(run, sub, name))  # raises if torn
        cli = os.path.join(REPO, "dist", "cli.js")
        node = shutil.which("node")
        if node and os.path.exists(cli):
            r = subprocess.run([node, cli, "check-run", run], capture_output=True, text=True, timeout=120)
            self.assertEqual(r.returncode, 0, f"the engine's check-run:\n{r.stdout}{r.stderr}")
            seen["engine check-run passes"] += 1

    def test_ten_kills_at_random_moments(self):
        seed = int(os.environ.get("KILL_SEED", time.time_ns() % 2**31))
        rng = random.Random(seed)
        seen = {"torn last line (ignored by readers)": 0, "temp file (ignored by readers)": 0, "engine check-run passes": 0}
        with TempDir() as work:
            run, reference = os.path.join(work, "run"), os.path.join(work, "reference")
            run_example(reference, *ARGS)
            for kill in range(KILLS):
                expected = newest_complete_checkpoint(run) if os.path.exists(run) else 0
                before = complete_lines(os.path.join(run, "metrics.jsonl"))
                p = subprocess.Popen([sys.executable, EXAMPLE, "--out", run, "--resume", *ARGS], env=python_env(),
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
                try:
                    first = p.stdout.readline().strip()
                    self.assertEqual(first, f"resuming from step {expected}", f"kill {kill} (KILL_SEED={seed})")
                    deadline = time.monotonic() + 120
                    while complete_lines(os.path.join(run, "metrics.jsonl")) <= before:  # wait until it trains
                        if p.poll() is not None:
                            self.fail(f"the trainer exited with {p.returncode}:\n{p.stderr.read()}")
                        self.assertLess(time.monotonic(), deadline, "the trainer made no step")
                        time.sleep(0.005)
                    time.sleep(rng.uniform(0.0, 0.5))
                    p.kill()  # SIGKILL
                    p.wait(timeout=60)
                finally:
                    p.stdout.close()
                    p.stderr.close()
                    if p.poll() is None:
                        p.kill()
                        p.wait()
                self.assertEqual(p.returncode, -9, f"kill {kill} came after the run ended (KILL_SEED={seed})")
                self.read_as_a_reader(run, seen)
            out = run_example(run, "--resume", *ARGS)
            self.assertIn("trained steps", out.stdout)
            self.read_as_a_reader(run, seen)
            steps = {row["step"] for row in read_jsonl(os.path.join(run, "metrics.jsonl"))}
            self.assertEqual(steps, set(range(1, STEPS + 1)))
            final = f"checkpoints/step-{STEPS}.safetensors"
            killed, _ = read_safetensors(os.path.join(run, final))
            whole, _ = read_safetensors(os.path.join(reference, final))
            self.assertEqual(killed, whole, "the killed and resumed run ends with other weights than an uninterrupted one")
        sys.stderr.write(f"\n  {KILLS} kills (KILL_SEED={seed}): {seen}\n")


if __name__ == "__main__":
    unittest.main()
