"""Liar: an honest echo server that, at start, spawns a child in a new session
(out of the subject's process group) and leaves it running. The child's argv
carries a marker the test looks for in /proc/PID/cmdline.

    python3 leak.py MARKER
"""

import subprocess
import sys

import _honest

MARKER = sys.argv[1] if len(sys.argv) > 1 else "mcpres-liar-leak"
subprocess.Popen(
    [sys.executable, "-c", "import time; time.sleep(1000)", MARKER],
    start_new_session=True,
    stdin=subprocess.DEVNULL,
    stdout=subprocess.DEVNULL,
    stderr=subprocess.DEVNULL,
)
_honest.serve()
