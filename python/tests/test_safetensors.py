"""safetensors written and read without the safetensors package, checked against the published layout."""

import json
import os
import struct
import unittest

import torch

import helpers  # noqa: F401  (puts the package on sys.path)
from attention_debugger import safetensors_io
from attention_debugger.safetensors_io import SafetensorsError, load_file, save_bytes
from helpers import TempDir, read_safetensors


class WriteTest(unittest.TestCase):
    """The fallback writer (the only one on Debian); where the safetensors package is installed it is set aside."""

    def setUp(self):
        self.saved, safetensors_io._reference_save = safetensors_io._reference_save, None

    def tearDown(self):
        safetensors_io._reference_save = self.saved

    def test_the_bytes_follow_the_published_layout(self):
        a = torch.tensor([[1.0, -2.5, 3.25], [0.0, 1e-3, -7.0]])  # [2, 3]
        b = torch.tensor([42.0], dtype=torch.float64)
        buf = save_bytes({"a": a, "b": b}, {"step": "7"})
        (n,) = struct.unpack("<Q", buf[:8])  # 8-byte little-endian header length
        self.assertEqual(n % 8, 0, "header padded to a multiple of 8 bytes")
        header = json.loads(buf[8 : 8 + n])
        self.assertEqual(header["__metadata__"], {"step": "7"})
        self.assertEqual(header["a"], {"dtype": "F32", "shape": [2, 3], "data_offsets": [0, 24]})
        self.assertEqual(header["b"], {"dtype": "F64", "shape": [1], "data_offsets": [24, 32]})
        data = buf[8 + n :]
        self.assertEqual(len(data), 32)
        self.assertEqual(struct.unpack("<6f", data[:24]), (1.0, -2.5, 3.25, 0.0, struct.unpack("<f", struct.pack("<f", 1e-3))[0], -7.0))
        self.assertEqual(struct.unpack("<d", data[24:]), (42.0,))

    def test_tied_and_non_contiguous_tensors_are_written_as_their_values(self):
        w = torch.arange(6, dtype=torch.float32).reshape(2, 3)
        tensors, _ = read_safetensors_bytes(save_bytes({"w": w, "tied": w, "t": w.t()}))
        self.assertEqual(tensors["w"][2], (0.0, 1.0, 2.0, 3.0, 4.0, 5.0))
        self.assertEqual(tensors["tied"][2], tensors["w"][2])
        self.assertEqual(tensors["t"][1], [3, 2])
        self.assertEqual(tensors["t"][2], (0.0, 3.0, 1.0, 4.0, 2.0, 5.0))  # row-major of the transpose

    def test_bad_input_is_refused_with_its_name(self):
        with self.assertRaisesRegex(TypeError, 'tensor "x": expected a torch.Tensor'):
            save_bytes({"x": [1, 2]})
        with self.assertRaisesRegex(TypeError, "metadata must map strings to strings"):
            save_bytes({}, {"step": 3})


def read_safetensors_bytes(buf):
    with TempDir() as d:
        path = os.path.join(d, "x.safetensors")
        with open(path, "wb") as f:
            f.write(buf)
        return read_safetensors(path)


def hand_file(entries, data, metadata=None):
    """A file assembled by hand: entries {name: (dtype, shape, [begin, end])}."""
    header = {name: {"dtype": d, "shape": s, "data_offsets": o} for name, (d, s, o) in entries.items()}
    if metadata:
        header["__metadata__"] = metadata
    text = json.dumps(header).encode()
    return struct.pack("<Q", len(text)) + text + data


class ReadTest(unittest.TestCase):
    def load(self, buf):
        with TempDir() as d:
            path = os.path.join(d, "f.safetensors")
            with open(path, "wb") as f:
                f.write(buf)
            return load_file(path)

    def test_reads_every_float_width_and_the_metadata(self):
        data = struct.pack("<2f", 1.5, -2.0) + struct.pack("<e", 0.5) + struct.pack("<d", 3.0) + struct.pack("<q", -9)
        data += struct.pack("<H", 0x3FC0)  # bfloat16 1.5: the high 16 bits of float32 1.5 (0x3FC00000)
        buf = hand_file({
            "f32": ("F32", [2], [0, 8]), "f16": ("F16", [1], [8, 10]), "f64": ("F64", [1], [10, 18]),
            "i64": ("I64", [1], [18, 26]), "bf16": ("BF16", [1], [26, 28]),
        }, data, {"step": "3"})
        tensors, metadata = self.load(buf)
        self.assertEqual(metadata, {"step": "3"})
        self.assertEqual(tensors["f32"].tolist(), [1.5, -2.0])
        self.assertEqual(tensors["f16"].tolist(), [0.5])
        self.assertEqual(tensors["f64"].tolist(), [3.0])
        self.assertEqual(tensors["i64"].tolist(), [-9])
        self.assertEqual(tensors["bf16"].float().tolist(), [1.5])

    def test_a_torn_file_is_an_error_naming_the_file(self):
        whole = save_bytes({"w": torch.ones(4, 4)})
        for cut in (4, 20, len(whole) - 1):
            with self.assertRaises(SafetensorsError) as ctx:
                self.load(whole[:cut])
            self.assertIn("f.safetensors", str(ctx.exception))
        with self.assertRaisesRegex(SafetensorsError, "cover 64 of the 68 data bytes"):
            self.load(whole + b"\0\0\0\0")

    def test_round_trip(self):
        t = {"a": torch.randn(3, 5), "b": torch.randn(0, 4), "c": torch.randn(7).half()}
        with TempDir() as d:
            path = os.path.join(d, "r.safetensors")
            with open(path, "wb") as f:
                f.write(save_bytes(t, {"k": "v"}))
            back, meta = load_file(path)
        self.assertEqual(meta, {"k": "v"})
        for name, value in t.items():
            self.assertTrue(torch.equal(back[name], value), name)


if __name__ == "__main__":
    unittest.main()
