"""Two "machines" sharing one PostgreSQL store (docs/shared-store.md): two data directories with different
connectors whose connectors.json name the same database. An agent on A (through `codemode mcp`, driven by the
official Python MCP SDK) writes a file; the call pauses. A person on B approves it with B's CLI: A's own
`files` workspace is written, by A, and A's `codemode_wait` returns the outcome. A person on B rejects A's next
call with a reason the agent on A reads. Prints a transcript; exits non-zero on the first broken expectation.

    python two_machines.py CODEMODE_BINARY HOME_A HOME_B
"""

import asyncio
import json
import os
import subprocess
import sys

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

BINARY, HOME_A, HOME_B = sys.argv[1:4]

WRITE = """async () => {
  const written = await files.write_file({ path: "from-agent.txt", content: "approved on machine B" });
  return { written, back: (await files.read_file({ path: "from-agent.txt" })).content };
}"""


def show(label, value):
    print(f"{label}: {json.dumps(value, ensure_ascii=False)}", flush=True)


def check(condition, message):
    if not condition:
        print(f"FAILED: {message}", flush=True)
        sys.exit(1)


def on_b(*args):
    """A person at a terminal of machine B."""
    done = subprocess.run([BINARY, "--home", HOME_B, "--json", *args], capture_output=True, text=True)
    value = json.loads(done.stdout) if done.stdout.strip() else done.stderr
    show(f"B$ codemode {' '.join(args)}", value)
    return done.returncode, value


async def call(session, tool, arguments):
    result = await session.call_tool(tool, arguments)
    shown = result.structured_content if result.structured_content is not None else result.content[0].text
    show(f"A: {tool}{' (isError)' if result.is_error else ''}", shown)
    return result


async def main():
    params = StdioServerParameters(command=BINARY, args=["--home", HOME_A, "mcp"], env=dict(os.environ))
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write) as session:
            await session.initialize()
            paused = await call(session, "codemode", {"code": WRITE})
            check(paused.structured_content["status"] == "paused", "the write waits for a person")
            run = paused.structured_content["executionId"]

            code, seen = on_b("show", run)
            check(code == 0, "B sees A's run")
            check(seen["host"]["alive"] and not seen["host"].get("here"), "owned by A, which is alive")
            check(HOME_A in seen["host"]["name"], "A's name says which data directory it is")
            code, queue = on_b("pending")
            check([p["executionId"] for p in queue] == [run], "one queue: B lists A's pending call")

            code, done = on_b("approve", run)
            check(code == 0 and done["status"] == "completed", "B's approval returns the outcome A produced")
            check(done["result"]["back"] == "approved on machine B", "the call ran")
            written = os.path.join(HOME_A, "workspace", "from-agent.txt")
            check(open(written).read() == "approved on machine B", "A's workspace has the file")
            check(not os.path.exists(os.path.join(HOME_B, "notes", "from-agent.txt")), "B's files are untouched")

            waited = await call(session, "codemode_wait", {"executionId": run, "timeoutSeconds": 10})
            check(waited.structured_content["status"] == "completed", "A's codemode_wait returns the outcome")
            check(waited.structured_content["result"]["back"] == "approved on machine B", "with its result")

            paused = await call(session, "codemode", {"code": WRITE.replace("from-agent", "second")})
            second = paused.structured_content["executionId"]
            code, _ = on_b("reject", second, "0", "--reason", "not on Fridays")
            check(code == 0, "B rejects A's next call")
            rejected = await call(session, "codemode_wait", {"executionId": second, "timeoutSeconds": 10})
            check("rejected by user: not on Fridays" in rejected.structured_content["error"],
                  "the agent on A reads B's reason")
            check(not os.path.exists(os.path.join(HOME_A, "workspace", "second.txt")), "nothing was written")
    print("ALL GOOD", flush=True)


asyncio.run(main())
