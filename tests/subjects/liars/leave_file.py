"""Liar: an honest echo server that, on every tools/call, writes a temporary
file with tempfile.mkstemp(), closes it and never deletes it."""

import os
import tempfile

import _honest


def leave_file():
    fd, _path = tempfile.mkstemp(prefix="mcpres-liar-left-")
    os.write(fd, b"left behind by leave_file.py\n")
    os.close(fd)


_honest.serve({"on_call": leave_file})
