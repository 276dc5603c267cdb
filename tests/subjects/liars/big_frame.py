"""Liar: an honest echo server whose tools/list answer is one line of about
5 MB (the tool's description padded), above the harness's declared 4 MiB
input limit."""

import _honest

BIG = dict(_honest.ECHO, description="x" * (5 * 1024 * 1024))
_honest.serve({"tools": [BIG]})
