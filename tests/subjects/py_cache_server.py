"""A small MCP server on the Python `mcp` SDK (pinned in .ci/run) that serves the
2026-07-28 cache hints through the SDK's own `cache_hints` (SEP-2549): a third-party
subject of `mcpres profile run cache-behavior`.

    python py_cache_server.py    # stdio

Its tools and resources lists are hinted public for a minute, and the reads of its two
fixed resources public for a minute too; everything else gets the SDK's default
(`ttlMs` 0, `private`).
"""

from mcp.server.caching import CacheHint
from mcp.server.mcpserver import MCPServer

minute = CacheHint(ttl_ms=60_000, scope="public")
server = MCPServer(
    "mcpres-py-cache",
    version="0.1.0",
    cache_hints={"tools/list": minute, "resources/list": minute, "resources/read": minute},
)


@server.tool()
def echo(text: str) -> str:
    """Return the text unchanged."""
    return text


@server.resource("memo://one", mime_type="text/plain")
def one() -> str:
    """The first memo."""
    return "the first memo"


@server.resource("memo://two", mime_type="text/plain")
def two() -> str:
    """The second memo."""
    return "the second memo"


if __name__ == "__main__":
    server.run(transport="stdio")
