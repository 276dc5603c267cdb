"""Liar: an honest server with no tools at all (tools/list returns [])."""

import _honest

_honest.serve({"tools": []})
