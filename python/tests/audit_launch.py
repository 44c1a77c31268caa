"""Runs a script under an audit hook that logs every change this process makes under a folder.

    audit_launch.py WATCHED LOG_DIR SCRIPT [ARGS...]

The witness is the interpreter's own audit events (PEP 578: "open" with a writing mode or flags,
"os.rename", "os.remove", "os.truncate", "os.mkdir", …), not the code under test: each process
appends what it did to LOG_DIR/rank-<RANK>.log, one line per event.
"""

import os
import runpy
import sys

watched = os.path.realpath(sys.argv[1])
log_dir, script = sys.argv[2], sys.argv[3]
log = open(os.path.join(log_dir, f"rank-{os.environ.get('RANK', '0')}.log"), "a", buffering=1)
WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_APPEND | os.O_CREAT | os.O_TRUNC
CHANGES = {"os.rename", "os.remove", "os.rmdir", "os.mkdir", "os.truncate", "os.chmod", "os.utime", "shutil.rmtree"}


def under(path):
    if isinstance(path, int):  # a descriptor (ftruncate): where it points
        try:
            path = os.readlink(f"/proc/self/fd/{path}")
        except OSError:
            return False
    if isinstance(path, bytes):
        path = os.fsdecode(path)
    if not isinstance(path, str):
        return False
    full = os.path.realpath(path)
    return full == watched or full.startswith(watched + os.sep)


def hook(event, args):
    if event == "open":
        path, mode, flags = args
        writes = (isinstance(mode, str) and any(c in mode for c in "wax+")) or bool((flags or 0) & WRITE_FLAGS)
        if writes and under(path):
            log.write(f"open {path}\n")
    elif event in CHANGES and any(under(a) for a in (args[:2] if event == "os.rename" else args[:1])):
        log.write(f"{event} {args[0]}\n")


sys.addaudithook(hook)
sys.argv = [script, *sys.argv[4:]]
runpy.run_path(script, run_name="__main__")
