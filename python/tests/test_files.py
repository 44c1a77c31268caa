"""The writing rules (docs/RUN_FOLDER.md): whole files by temp file and rename, whole .jsonl lines, and
what a writer killed in the middle of a write leaves behind."""

import os
import re
import signal
import subprocess
import sys
import unittest

import helpers
from attention_debugger import files
from helpers import TempDir, python_env, read_jsonl

TEMP_NAME = re.compile(r"^(.+)\.tmp-(\d+)-(\d+)$")  # the format's `<file>.tmp-<pid>-<ms>`


def child_killed_during(code, ready="READY"):
    """Runs `code` in a child python that prints `ready` when it is inside the write, then SIGKILLs it."""
    p = subprocess.Popen([sys.executable, "-c", code], env=python_env(), stdout=subprocess.PIPE, text=True)
    try:
        line = p.stdout.readline().strip()
        if line != ready:
            raise AssertionError(f"child said {line!r} before it was killed")
        p.send_signal(signal.SIGKILL)
        p.wait(timeout=30)
    finally:
        p.stdout.close()
        if p.poll() is None:
            p.kill()
    return p


class AtomicWriteTest(unittest.TestCase):
    def test_a_writer_killed_before_the_rename_leaves_the_old_file_and_a_temp_file(self):
        with TempDir() as d:
            target = os.path.join(d, "step-1.safetensors")
            with open(target, "wb") as f:
                f.write(b"old and whole")
            code = f"""
import os, sys, time
from attention_debugger import files
def stall(fd):
    print("READY", flush=True)
    time.sleep(60)
os.fsync = stall  # the data is written; the kill lands before fsync and rename
files.write_atomic({target!r}, b"new" * 100000)
"""
            p = child_killed_during(code)
            self.assertEqual(p.returncode, -signal.SIGKILL)
            with open(target, "rb") as f:
                self.assertEqual(f.read(), b"old and whole")
            temps = [n for n in os.listdir(d) if n != "step-1.safetensors"]
            self.assertEqual(len(temps), 1, temps)
            m = TEMP_NAME.match(temps[0])
            self.assertIsNotNone(m, temps[0])
            self.assertEqual((m.group(1), int(m.group(2))), ("step-1.safetensors", p.pid))
            self.assertEqual(files.remove_temp_files(d), temps)
            self.assertEqual(os.listdir(d), ["step-1.safetensors"])

    def test_a_failed_write_keeps_the_old_file_and_leaves_no_temp_file(self):
        with TempDir() as d:
            target = os.path.join(d, "config.json")
            files.write_atomic(target, b"{}\n")
            real = os.fsync

            def broken(fd):
                raise OSError(28, "No space left on device")

            os.fsync = broken
            try:
                with self.assertRaises(OSError):
                    files.write_atomic(target, b'{"a": 1}\n')
            finally:
                os.fsync = real
            self.assertEqual(os.listdir(d), ["config.json"])
            with open(target, "rb") as f:
                self.assertEqual(f.read(), b"{}\n")

    def test_killed_between_the_optimizer_file_and_the_model_file_the_checkpoint_does_not_count(self):
        with TempDir() as d:
            code = f"""
import os, sys, time, torch
sys.path.insert(0, {helpers.HERE!r})
import helpers
from attention_debugger import RunWriter, latest_checkpoint
tr = helpers.load_example()
config = helpers.tiny_config()
model = tr.Seq2Seq(config)
opt = torch.optim.Adam(model.parameters())
model(torch.tensor([[4, 2]]), torch.tensor([[1, 4]])).sum().backward()
opt.step()
w = RunWriter({d!r}, config)
w.checkpoint(1, model, opt)
real = os.replace
def stall(src, dst):
    if dst.endswith("step-2.safetensors"):
        print("READY", flush=True)
        time.sleep(60)
    real(src, dst)
os.replace = stall
w.checkpoint(2, model, opt)
"""
            child_killed_during(code)
            names = sorted(os.listdir(os.path.join(d, "checkpoints")))
            self.assertIn("step-2.optim.safetensors", names)
            self.assertNotIn("step-2.safetensors", names)
            from attention_debugger import latest_checkpoint

            self.assertEqual(latest_checkpoint(d)[0], 1)


class JsonLinesTest(unittest.TestCase):
    def test_lines_are_whole_and_strict_json(self):
        with TempDir() as d:
            path = os.path.join(d, "metrics.jsonl")
            files.append_line(path, {"step": 1, "loss": 2.5})
            files.append_line(path, {"step": 2, "loss": float("nan"), "grad_norm": float("inf")})
            with open(path, "rb") as f:
                text = f.read()
            self.assertEqual(text, b'{"step": 1, "loss": 2.5}\n{"step": 2, "loss": null, "grad_norm": null}\n')

    def test_a_torn_last_line_is_cut_before_the_next_append(self):
        with TempDir() as d:
            path = os.path.join(d, "metrics.jsonl")
            with open(path, "wb") as f:
                f.write(b'{"step": 1}\n{"step": 2}\n{"step": 3, "lo')
            self.assertEqual(files.repair_jsonl(path), len(b'{"step": 3, "lo'))
            files.append_line(path, {"step": 3})
            self.assertEqual(read_jsonl(path), [{"step": 1}, {"step": 2}, {"step": 3}])
            self.assertEqual(files.repair_jsonl(path), 0)

    def test_a_file_that_is_one_torn_line_becomes_empty(self):
        with TempDir() as d:
            path = os.path.join(d, "events.jsonl")
            with open(path, "wb") as f:
                f.write(b'{"step": 1, "che')
            files.repair_jsonl(path)
            self.assertEqual(os.path.getsize(path), 0)
            self.assertEqual(files.repair_jsonl(os.path.join(d, "absent.jsonl")), 0)


if __name__ == "__main__":
    unittest.main()
