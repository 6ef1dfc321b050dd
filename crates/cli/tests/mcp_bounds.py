"""What the model reads from `codemode mcp`, through the official MCP client (docs/api.md, "Bounded outcomes").

Each case is a program beside what must hold of the text the agent receives: within the budget, valid JSON,
cut by structure with `truncated: true` and where the whole is, and `codemode show` still holding what the audit
log keeps. Prints `bytes <case> <n>` for each, then ALL GOOD.

    python mcp_bounds.py <codemode binary> <data dir>
"""
import asyncio
import json
import subprocess
import sys

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

BINARY, HOME = sys.argv[1], sys.argv[2]
BUDGET = 24_000


def check(condition, message):
    if not condition:
        print(f"FAILED: {message}", flush=True)
        sys.exit(1)


def show(eid):
    done = subprocess.run([BINARY, "--home", HOME, "--json", "show", eid], capture_output=True, text=True)
    check(done.returncode == 0, f"codemode show {eid}: {done.stderr}")
    return json.loads(done.stdout)


CASES = [
    # name, program, arguments beside the code, what must hold of (outcome, audit)
    ("long string", 'async () => "x".repeat(5000000)', {},
     lambda out, audit: out["result"].endswith("more characters]")),
    ("long array", 'async () => Array.from({ length: 20000 }, (_, i) => ({ id: i, name: "item " + i }))', {},
     lambda out, audit: out["result"][0] == {"id": 0, "name": "item 0"} and "more items" in out["result"][-1]
     and len(audit["result"]) == 20000),
    ("deep object", 'async () => { let v = "bottom"; for (let i = 0; i < 100; i++) v = { ["level" + i]: v, pad: "y".repeat(400) }; return v; }', {},
     lambda out, audit: "[object with 2 keys]" in json.dumps(out["result"]) and "level99" in audit["result"]),
    ("binary", 'async () => ({ bytes: new Uint8Array(300000).fill(7) })', {},
     lambda out, audit: out["result"]["bytes"] == "[binary value: Uint8Array of 300000 bytes]"),
    ("a million log lines", 'async () => { for (let i = 0; i < 1000000; i++) console.log("line " + i); return "logged"; }', {},
     lambda out, audit: out["result"] == "logged" and out["logs"][0] == "line 0" and out["logs"][-1] == "line 999999"
     and any("lines left out" in line for line in out["logs"])),
    ("100,000 calls", 'async () => { for (let i = 0; i < 100000; i++) await codemode.step("s" + i, () => i); return "called"; }',
     {"includeCalls": True},
     lambda out, audit: out["result"] == "called" and out["calls"][0]["seq"] == 0
     and any(isinstance(c, str) and "calls left out" in c for c in out["calls"]) and len(audit["log"]) == 100000),
    ("an error of 1 MB", 'async () => { throw new Error("E".repeat(1000000) + "END"); }', {},
     lambda out, audit: out["status"] == "error" and out["error"].startswith("Code execution failed: E")
     and out["error"].endswith("END") and len(audit["error"]) >= 1000000),
]


async def main():
    server = StdioServerParameters(command=BINARY, args=["--home", HOME, "mcp"])
    async with stdio_client(server) as (read, write):
        async with ClientSession(read, write) as session:
            await session.initialize()
            tools = {t.name: t for t in (await session.list_tools()).tools}
            for name in ("codemode", "codemode_wait"):
                check(tools[name].output_schema is not None and tools[name].output_schema["required"] == ["status", "executionId"],
                      f"{name} declares its outputSchema")
            check(tools["codemode_wait"].annotations.read_only_hint is True and tools["codemode_wait"].annotations.idempotent_hint is True,
                  "codemode_wait is read-only and idempotent")
            check(tools["codemode"].annotations.open_world_hint is True, "codemode is open-world")
            check(f"bounded to {BUDGET} characters" in tools["codemode"].description, "the description says outputs are bounded")
            for name, code, extra, holds in CASES:
                result = await session.call_tool("codemode", {"code": code, **extra})
                text = result.content[0].text
                check(len(text) <= BUDGET, f"{name}: {len(text)} characters > {BUDGET}")
                out = json.loads(text)
                check(out == result.structured_content, f"{name}: the text and structuredContent agree")
                check(out.get("truncated") is True and f"codemode show {out['executionId']}" in out["whole"],
                      f"{name}: says it was cut and where the whole is: {text[:300]}")
                audit = show(out["executionId"])
                check(holds(out, audit), f"{name}: {text[:600]}")
                waited = await session.call_tool("codemode_wait", {"executionId": out["executionId"], **extra})
                check(len(waited.content[0].text) <= BUDGET, f"{name}: codemode_wait is bounded too")
                print(f"bytes {name}: {len(text.encode())}", flush=True)
    print("ALL GOOD", flush=True)


asyncio.run(main())
