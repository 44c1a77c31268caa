"""Against the reference safetensors package, where it is installed (it is not in Debian, so `npm test` does
not run this; a test that cannot run must not pass quietly):

    python -m pip install safetensors && python python/tests/extra_reference_safetensors.py
"""

import unittest

import torch

import helpers  # noqa: F401  (puts the package on sys.path)
from attention_debugger.safetensors_io import save_bytes


class ReferenceTest(unittest.TestCase):
    def test_the_reference_package_reads_what_the_fallback_writes(self):
        from safetensors.torch import load  # ImportError here: install the package first

        t = {"a": torch.randn(3, 4), "b": torch.randn(2).double()}
        back = load(save_bytes(t, {"step": "1"}))
        for name, value in t.items():
            self.assertTrue(torch.equal(back[name], value), name)


if __name__ == "__main__":
    unittest.main()
