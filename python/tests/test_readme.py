"""python/README.md shows the example's use of the package as it is: every line of its Python block
is a line of python/examples/train_reverse.py, in the same order."""

import os
import re
import unittest

from helpers import EXAMPLE, PYTHON_DIR


class ReadmeTest(unittest.TestCase):
    def test_the_readmes_example_is_the_scripts_code(self):
        with open(os.path.join(PYTHON_DIR, "README.md"), encoding="utf-8") as f:
            blocks = re.findall(r"```python\n(.*?)```", f.read(), re.S)
        self.assertEqual(len(blocks), 1)
        shown = [line.strip() for line in blocks[0].splitlines() if line.strip()]
        self.assertGreaterEqual(len(shown), 15)
        with open(EXAMPLE, encoding="utf-8") as f:
            script = [line.strip() for line in f]
        at = 0
        for line in shown:
            self.assertIn(line, script[at:], "README line not in the script (after the previous one)")
            at = script.index(line, at) + 1


if __name__ == "__main__":
    unittest.main()
