"""The honest control subject: a correct MCP echo server (see _honest.py)."""

import _honest

_honest.serve()
