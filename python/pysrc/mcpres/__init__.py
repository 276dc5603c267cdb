"""Validate, verify, canonicalize and digest MCP-RES v0.2 evidence.

The functions are the mcpres validator itself (Rust, through PyO3), not a
second implementation: a dictionary returned by :func:`validate` is the object
``mcpres validate --format json`` prints for the same input.

Inputs follow one convention: ``bytes`` are the bytes of one JSON document;
``str`` and ``os.PathLike`` name a file or directory. Validation runs without
the GIL, so threads help; :func:`validate_batch` spreads a list over Rust
threads itself. Nothing here reaches the network.

>>> import mcpres
>>> mcpres.canonicalize(b'{"b": [1, 2], "a": "x"}')
b'{"a":"x","b":[1,2]}'
>>> mcpres.explain("WRONG_STOP_REASON")["rule"]
'MCPRES-NEG-002'
>>> mcpres.explain("FRAMING_NEWLINE_DELIMITED")["kind"]
'holds'
"""

from ._mcpres import (
    McpresError,
    __version__,
    canonicalize,
    codes,
    digest,
    explain,
    reasons,
    validate,
    validate_batch,
    verify,
)

__all__ = [
    "McpresError",
    "__version__",
    "canonicalize",
    "codes",
    "digest",
    "exit_code",
    "explain",
    "reasons",
    "validate",
    "validate_batch",
    "verify",
]

INPUT_INVALID = "MCP_RES_INPUT_INVALID"


def exit_code(result):
    """The exit code ``mcpres validate`` would give for this one result.

    0 valid; 2 unreadable or unusable input (a finding with the
    ``MCP_RES_INPUT_INVALID`` code); 1 any other failing diagnostic.
    """
    if result.get("valid"):
        return 0
    codes_found = [f.get("code") for f in result.get("findings") or []]
    codes_found += result.get("diagnostics") or []
    return 2 if INPUT_INVALID in codes_found else 1
