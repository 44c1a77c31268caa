"""`pip install ./python` offline, as on Debian 12: into a virtual environment that sees Debian's torch,
built by Debian's setuptools (--no-build-isolation: there is no index to fetch setuptools from)."""

import os
import shutil
import subprocess
import sys
import unittest

from helpers import PYTHON_DIR, TempDir


class InstallTest(unittest.TestCase):
    def test_pip_installs_the_package_offline_with_torch_as_its_only_dependency(self):
        with TempDir() as work:
            source = os.path.join(work, "python")  # a copy: the build leaves build/ and *.egg-info in the source
            shutil.copytree(PYTHON_DIR, source, ignore=shutil.ignore_patterns("__pycache__", "build", "*.egg-info"))
            venv = os.path.join(work, "venv")
            subprocess.run([sys.executable, "-m", "venv", "--system-site-packages", venv], check=True, timeout=300)
            python = os.path.join(venv, "bin", "python")
            env = dict(os.environ, PIP_NO_INDEX="1", PIP_DISABLE_PIP_VERSION_CHECK="1")
            env.pop("PYTHONPATH", None)
            r = subprocess.run([python, "-m", "pip", "install", "--no-build-isolation", "--no-index", source], env=env,
                               capture_output=True, text=True, timeout=600)
            self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
            code = ("import attention_debugger, importlib.metadata as m; print(attention_debugger.__file__); "
                    "print(m.requires('attention-debugger'))")
            r = subprocess.run([python, "-c", code], env=env, cwd=work, capture_output=True, text=True, timeout=300)
            self.assertEqual(r.returncode, 0, r.stderr)
            where, requires = r.stdout.splitlines()
            self.assertTrue(where.startswith(os.path.join(venv, "lib")), where)
            self.assertEqual(requires, "['torch']")


if __name__ == "__main__":
    unittest.main()
