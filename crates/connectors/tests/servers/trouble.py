"""An MCP server that misbehaves on request, built on the official Python SDK: error results, a crash in the
middle of a call, a hang, a huge result, names that need sanitising or collide, and a start that fails.

    trouble.py                 stdio server
    trouble.py --collide       two tools whose names sanitise to the same method
    trouble.py --fail-start    writes a diagnostic (with $TROUBLE_TOKEN) to stderr and exits before MCP starts
    trouble.py --leak-start    writes $TROUBLE_TOKEN to stderr every way a server may print it, and exits
    trouble.py --http PORT     the same tools over streamable HTTP
"""

import asyncio
import json
import os
import sys

if "--fail-start" in sys.argv:
    print(f"trouble: cannot authenticate with token {os.environ.get('TROUBLE_TOKEN', '')}", file=sys.stderr)
    sys.exit(3)


def leak_token():
    """$TROUBLE_TOKEN across the 400th character of a line (where the host cuts), then JSON-escaped: with
    non-ASCII as \\uXXXX, as is, and a JSON document logged as a string."""
    token = os.environ.get("TROUBLE_TOKEN", "")
    print("x" * 395 + token + " end", file=sys.stderr)
    print(json.dumps({"token": token}), file=sys.stderr)
    print(json.dumps({"token": token}, ensure_ascii=False), file=sys.stderr)
    print(json.dumps(json.dumps({"token": token}), ensure_ascii=False), file=sys.stderr, flush=True)


if "--leak-start" in sys.argv:
    leak_token()
    sys.exit(3)

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError

server = MCPServer("trouble", instructions="A server that fails on purpose.")


@server.tool(description="Returns its text.", structured_output=False)
def echo(text: str) -> str:
    return text


@server.tool(description="The process id, which changes when the server is restarted.")
def pid() -> dict:
    return {"pid": os.getpid()}


@server.tool(description="Always an error result.", structured_output=False)
def fail(message: str) -> str:
    raise ToolError(message)


@server.tool(description="Exits in the middle of the call.", structured_output=False)
def crash() -> str:
    print("trouble: crashing on purpose", file=sys.stderr, flush=True)
    os._exit(7)


@server.tool(description="Prints $TROUBLE_TOKEN to stderr and exits in the middle of the call.", structured_output=False)
def leak() -> str:
    leak_token()
    os._exit(7)


@server.tool(description="Never answers.", structured_output=False)
async def hang() -> str:
    await asyncio.sleep(3600)
    return "late"


@server.tool(description="A text result of the given size.", structured_output=False)
def huge(size: int) -> str:
    return "x" * size


@server.tool(name="get-item", description="A name with a dash.")
def get_item(id: str) -> dict:
    return {"id": id, "name": f"item {id}"}


@server.tool(description="Records an item; undone by forget.")
def remember(id: str) -> dict:
    return {"id": id, "stored": True}


@server.tool(description="Undoes remember.")
def forget(id: str) -> dict:
    return {"id": id, "forgotten": True}


if "--collide" in sys.argv:

    @server.tool(name="get_item", description="Collides with get-item once sanitised.")
    def get_item_again(id: str) -> str:
        return id


if "--http" in sys.argv:
    port = int(sys.argv[sys.argv.index("--http") + 1])
    server.run("streamable-http", host="127.0.0.1", port=port)
else:
    server.run()
