"""A tiny MCP server on the Python `mcp` SDK (pinned in .ci/run), used as a
third-party subject of the mcpres harness.

    python py_echo_server.py              # stdio
    python py_echo_server.py --http PORT  # Streamable HTTP on 127.0.0.1:PORT/mcp
"""

import asyncio
import sys

from mcp.server.mcpserver import Context, MCPServer

server = MCPServer("mcpres-py-echo", version="0.1.0")


@server.tool()
def echo(text: str) -> str:
    """Return the text unchanged."""
    return text


@server.tool()
def add(a: int, b: int) -> int:
    """Return a + b."""
    return a + b


@server.tool()
async def progress(ctx: Context, steps: int = 3, stepDelayMs: int = 50) -> str:
    """Report `steps` progress notifications, `stepDelayMs` apart, then finish."""
    for step in range(1, steps + 1):
        await asyncio.sleep(stepDelayMs / 1000)
        await ctx.report_progress(step, steps, f"step {step}/{steps}")
    return f"completed {steps} steps"


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--http":
        server.run(transport="streamable-http", host="127.0.0.1", port=int(sys.argv[2]))
    else:
        server.run(transport="stdio")
