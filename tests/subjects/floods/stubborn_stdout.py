"""Flood: endless short lines on stdout that survives its reader going away
(SIGPIPE ignored, write errors swallowed), so only a kill ends it."""

import os
import signal

signal.signal(signal.SIGPIPE, signal.SIG_IGN)
line = b"stubborn\n" * 1024
while True:
    try:
        os.write(1, line)
    except OSError:
        pass
