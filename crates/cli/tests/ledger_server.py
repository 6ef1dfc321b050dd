"""A stdio MCP server whose effects are lines appended to a ledger file, for the crash harness.

    ledger_server.py LEDGER_FILE

Tools: `note({token})` and `record({token})` append `apply <token>` (a repeated call shows as a second line);
`erase({token})` takes the token out of the ledger, appending `erase <token>` only when it is in — a revert
retried after a crash is a no-op, as reverts of real services are expected to be.
Every tools/call's name and arguments, exactly as received, are appended first to LEDGER_FILE.inputs (one JSON
object a line), so the harness can compare what the server was sent with what the log says was approved.
Each append is flushed and fsynced before the answer, then the answer waits a few milliseconds, so a host
killed at a random moment is often killed after the effect and before it recorded the result: the window
the harness is about. Written on the standard library alone (newline-delimited JSON-RPC, MCP 2025-06-18)
because the harness starts it hundreds of times and the SDK's import alone takes a second or two.
"""

import json
import os
import sys
import time

LEDGER = sys.argv[1]
TOKEN = {"type": "object", "properties": {"token": {"type": "string"}}, "required": ["token"]}
TOOLS = [
    {"name": "note", "description": "Append `apply <token>` (no approval needed).", "inputSchema": TOKEN},
    {"name": "record", "description": "Append `apply <token>` (approval-gated in the harness).", "inputSchema": TOKEN},
    {"name": "erase", "description": "Append `erase <token>`: the revert of note and record.", "inputSchema": TOKEN},
]


def append(line, path=LEDGER):
    with open(path, "a", encoding="utf-8") as ledger:
        ledger.write(line + "\n")
        ledger.flush()
        os.fsync(ledger.fileno())


def present(token):
    state = False
    try:
        with open(LEDGER, encoding="utf-8") as ledger:
            for line in ledger:
                kind, _, seen = line.rstrip("\n").partition(" ")
                if seen == token:
                    state = kind == "apply"
    except FileNotFoundError:
        pass
    return state


def answer(request):
    method = request.get("method")
    params = request.get("params") or {}
    if method == "initialize":
        if os.environ.get("LEDGER_SECRET"):
            # Proof for the secrets test that connectors.json's `env` reached the server.
            append("secret " + os.environ["LEDGER_SECRET"])
        return {
            "protocolVersion": params.get("protocolVersion", "2025-06-18"),
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "ledger", "version": "1"},
        }
    if method == "ping":
        return {}
    if method == "tools/list":
        return {"tools": TOOLS}
    if method == "tools/call":
        name = params.get("name")
        append(json.dumps({"tool": name, "arguments": params.get("arguments")}), LEDGER + ".inputs")
        token = (params.get("arguments") or {}).get("token")
        if name not in ("note", "record", "erase") or not isinstance(token, str):
            return {"content": [{"type": "text", "text": f"bad call {name} {token!r}"}], "isError": True}
        if name != "erase":
            append("apply " + token)
        elif present(token):
            append("erase " + token)
        time.sleep(0.005)
        return {"content": [{"type": "text", "text": json.dumps({"token": token})}],
                "structuredContent": {"token": token}}
    raise LookupError(method)


for line in sys.stdin:
    try:
        request = json.loads(line)
    except ValueError:
        continue
    if "id" not in request:
        continue
    try:
        reply = {"jsonrpc": "2.0", "id": request["id"], "result": answer(request)}
    except LookupError as missing:
        reply = {"jsonrpc": "2.0", "id": request["id"], "error": {"code": -32601, "message": f"no method {missing}"}}
    sys.stdout.write(json.dumps(reply) + "\n")
    sys.stdout.flush()
