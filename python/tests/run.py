"""Runs the Python tests: with pytest when this interpreter has it, else with unittest. The last line
is `python tests: N passed, M failed, K skipped`; the exit status is non-zero when anything failed or was
skipped without leave: a test that cannot run here fails the run unless ATTENTION_DEBUGGER_ALLOW_SKIP names the key
its skip message starts with (`python` allows every Python skip), as for the node tests (test/README.md).

    /usr/bin/python3 python/tests/run.py [-k PATTERN]     (scripts/test-python.mjs runs it for npm test)
"""

import os
import sys
import time
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import helpers  # noqa: E402,F401  (puts the package's source first on sys.path)


def with_pytest(pattern):
    import pytest

    counts = {"passed": 0, "failed": 0, "skipped": 0}

    class Count:
        def pytest_runtest_logreport(self, report):
            if report.when == "call" or report.outcome != "passed":
                key = "failed" if report.outcome == "failed" else report.outcome
                counts[key if key in counts else "failed"] += 1

    args = ["-v", "-p", "no:cacheprovider", HERE] + (["-k", pattern] if pattern else [])
    status = pytest.main(args, plugins=[Count()])
    return counts, status not in (0, 5)  # 5: nothing collected


def with_unittest(pattern):
    loader = unittest.TestLoader()
    if pattern:
        loader.testNamePatterns = [f"*{pattern}*"]
    suite = loader.discover(HERE, pattern="test_*.py", top_level_dir=HERE)
    result = unittest.TextTestRunner(verbosity=2, stream=sys.stdout).run(suite)
    failed = len(result.failures) + len(result.errors) + len(result.unexpectedSuccesses)
    skipped = len(result.skipped)
    passed = result.testsRun - failed - skipped - len(result.expectedFailures)
    return {"passed": passed, "failed": failed, "skipped": skipped}, failed > 0


def main():
    pattern = sys.argv[2] if len(sys.argv) > 2 and sys.argv[1] == "-k" else None
    try:
        import pytest  # noqa: F401

        runner = with_pytest
    except ImportError:
        runner = with_unittest
    started = time.monotonic()
    counts, failed = runner(pattern)
    sys.stdout.flush()
    print(f"python tests ({runner.__name__[5:]}, {time.monotonic() - started:.0f} s): "
          f"{counts['passed']} passed, {counts['failed']} failed, {counts['skipped']} skipped", flush=True)
    allowed = {k.strip() for k in os.environ.get("ATTENTION_DEBUGGER_ALLOW_SKIP", "").split(",") if k.strip()}
    if counts["skipped"] and "python" not in allowed:
        print(f"python tests: {counts['skipped']} skipped without leave (ATTENTION_DEBUGGER_ALLOW_SKIP=python allows them)",
              flush=True)
        return 1
    return 1 if failed or counts["passed"] == 0 else 0


if __name__ == "__main__":
    sys.exit(main())
