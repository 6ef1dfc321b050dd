"""`codemode mcp` driven by the official Python MCP SDK, as an agent would: pause → approve from another
process → wait; reject; an error outcome; misuse; a broken config. Prints a transcript; exits non-zero on the
first broken expectation.

    python mcp_client.py CODEMODE_BINARY HOME BROKEN_HOME
"""

import asyncio
import json
import subprocess
import sys

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

BINARY, HOME, BROKEN_HOME = sys.argv[1:4]

WRITE = """async () => {
  const written = await files.write_file({ path: "from-agent.txt", content: "approved by a person" });
  return { written, back: (await files.read_file({ path: "from-agent.txt" })).content };
}"""

# Reads back whatever path the write went to, so an edited approval shows its own effect.
EDITABLE = """async () => {
  const written = await files.write_file({ path: "draft.txt", content: "first draft" });
  return { written, back: (await files.read_file({ path: written.path })).content };
}"""


def show(label, value):
    print(f"{label}: {json.dumps(value, ensure_ascii=False)}", flush=True)


def check(condition, message):
    if not condition:
        print(f"FAILED: {message}", flush=True)
        sys.exit(1)


def cli(*args):
    """The same data directory from a second process, as a person at a terminal."""
    done = subprocess.run([BINARY, "--home", HOME, "--json", *args], capture_output=True, text=True)
    show(f"$ codemode {' '.join(args)}", json.loads(done.stdout) if done.stdout.strip() else done.stderr)
    return done


async def call(session, tool, arguments):
    result = await session.call_tool(tool, arguments)
    text = result.content[0].text if result.content else ""
    shown = result.structured_content if result.structured_content is not None else text
    show(f"{tool}{' (isError)' if result.is_error else ''}", shown)
    return result


async def main_flows():
    params = StdioServerParameters(command=BINARY, args=["--home", HOME, "mcp"])
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write) as session:
            init = await session.initialize()
            show("initialize", {"server": init.server_info.name})
            tools = await session.list_tools()
            names = [t.name for t in tools.tools]
            show("tools", names)
            check(names == ["codemode", "codemode_wait"], "the two tools")
            description = tools.tools[0].description or ""
            check("files" in description, "the description names the configured connectors")

            # Pause → approve from another process → wait.
            paused = await call(session, "codemode", {"code": WRITE})
            out = paused.structured_content
            check(not paused.is_error and out["status"] == "paused", "a gated write pauses")
            check(json.loads(paused.content[0].text) == out, "the same Outcome as JSON text")
            pending = out["pending"][0]
            check((pending["connector"], pending["method"]) == ("files", "write_file"), "pending call")
            waited = await call(session, "codemode_wait", {"executionId": out["executionId"], "timeoutSeconds": 0.3})
            check(waited.structured_content["status"] == "paused", "undecided: still paused at the timeout")
            approve = cli("approve", out["executionId"])
            check(approve.returncode == 0, "codemode approve succeeds")
            done = await call(session, "codemode_wait", {"executionId": out["executionId"]})
            result = done.structured_content
            check(result["status"] == "completed", "completed after approval")
            check(result["result"]["back"] == "approved by a person", "the approved write happened")
            check(result["result"]["written"]["created"] is True, "created")

            # Reject with a reason: the agent reads it in codemode_wait.
            paused = await call(session, "codemode", {"code": WRITE.replace("from-agent", "rejected")})
            rid = paused.structured_content["executionId"]
            reject = cli("reject", rid, "0", "--reason", "write under drafts/ instead")
            check(reject.returncode == 0, "codemode reject succeeds")
            rejected = await call(session, "codemode_wait", {"executionId": rid, "timeoutSeconds": 5})
            check(rejected.structured_content["status"] == "error", "a rejected run waits to an error outcome")
            check(not rejected.is_error, "an outcome, not misuse")
            check(rejected.structured_content["error"]
                  == "Action files.write_file rejected by user: write under drafts/ instead",
                  "the rejection text carries the reason")
            stale = cli("reject", rid, "0")
            check(stale.returncode == 1 and json.loads(stale.stdout)["code"] == "stale", "a second reject is stale")

            # Edit, then approve: the edited call is what runs, and the agent sees both argument sets.
            paused = await call(session, "codemode", {"code": EDITABLE})
            eid = paused.structured_content["executionId"]
            edited = {"path": "drafts/edited.txt", "content": "edited by a person"}
            approve = cli("approve", eid, "--args", json.dumps(edited))
            check(approve.returncode == 0, "codemode approve --args succeeds")
            done = await call(session, "codemode_wait", {"executionId": eid})
            out_edited = done.structured_content
            check(out_edited["status"] == "completed", "completed with the edit")
            check(out_edited["result"]["written"]["path"] == "drafts/edited.txt", "the edited write happened")
            check(out_edited["result"]["back"] == "edited by a person", "the file holds the edited content")
            # The model's outcome leaves the calls out (docs/api.md, "Bounded outcomes"); the audit log has them.
            check("calls" not in out_edited, "no calls in the model's outcome by default")
            call0 = json.loads(cli("show", eid).stdout)["log"][0]
            check(call0["args"]["path"] == "draft.txt" and call0["decision"]["kind"] == "edited"
                  and call0["decision"]["args"] == edited and call0["decision"]["by"] == "cli",
                  "the audit log shows what the program sent and what ran")
            summary = await call(session, "codemode_wait", {"executionId": eid, "includeCalls": True})
            check(summary.structured_content["calls"] == [
                {"seq": 0, "call": "files.write_file", "state": "applied"},
                {"seq": 1, "call": "files.read_file", "state": "applied"}], "includeCalls: a summary of the calls")

            # A rule added from the CLI while this server runs decides its next call, without a restart.
            ruled = WRITE.replace("from-agent", "ruled/by-rule")
            before = await call(session, "codemode", {"code": ruled})
            check(before.structured_content["status"] == "paused", "gated before the rule")
            add = cli("rules", "add", json.dumps({"id": "ruled", "effect": "allow", "call": "files.write_file",
                                                   "when": {"path": {"glob": "ruled/**"}}}))
            check(add.returncode == 0, "codemode rules add succeeds")
            for _ in range(20):
                after = await call(session, "codemode", {"code": ruled})
                if after.structured_content["status"] == "completed":
                    break
                await asyncio.sleep(0.1)
            check(after.structured_content["status"] == "completed", "the rule let the next call through")
            ruled_log = json.loads(cli("show", after.structured_content["executionId"]).stdout)["log"]
            check(ruled_log[0]["decision"]["rule"] == "ruled", "recorded as the rule's")
            check(ruled_log[0]["requiresApproval"] is False, "nobody had to decide")

            # Roll back, then wait reports it.
            rollback = cli("rollback", out["executionId"])
            check(rollback.returncode == 0, "rollback succeeds")
            rolled = await call(session, "codemode_wait", {"executionId": out["executionId"]})
            check(rolled.structured_content == {"status": "error", "executionId": out["executionId"],
                                                 "error": "Execution was rolled back"}, "rolled back")

            # An error outcome is an ordinary result.
            failed = await call(session, "codemode", {"code": "async () => { throw new Error('no luck'); }"})
            check(not failed.is_error and failed.structured_content["status"] == "error", "error outcome")
            check("no luck" in failed.structured_content["error"], "its message")

            # Misuse is isError, and the server keeps serving.
            missing = await call(session, "codemode", {})
            check(missing.is_error and "code" in missing.content[0].text, "missing code")
            wrong = await call(session, "codemode", {"code": 42})
            check(wrong.is_error, "code of the wrong type")
            unknown = await call(session, "codemode_wait", {"executionId": "exec_nope"})
            check(unknown.is_error and unknown.content[0].text == 'No execution "exec_nope"', "unknown id")
            bad_timeout = await call(session, "codemode_wait", {"executionId": rid, "timeoutSeconds": "soon"})
            check(bad_timeout.is_error, "timeoutSeconds of the wrong type")
            try:
                await session.call_tool("no_such_tool", {})
                unknown_tool = None
            except Exception as error:  # an MCP error, as the spec says for unknown tools
                unknown_tool = str(error)
            show("no_such_tool", unknown_tool)
            check(unknown_tool is not None and "Unknown tool" in unknown_tool, "unknown tool is an MCP error")
            still = await call(session, "codemode", {"code": "async () => 1 + 1"})
            check(still.structured_content["result"] == 2, "still serving")


async def broken_config():
    params = StdioServerParameters(command=BINARY, args=["--home", BROKEN_HOME, "mcp"])
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write) as session:
            await session.initialize()
            tools = await session.list_tools()
            check(len(tools.tools) == 2, "a broken config still serves")
            result = await call(session, "codemode", {"code": "async () => 1"})
            check(result.is_error and "connectors.json is invalid" in result.content[0].text, "config error")
            check(":3:" in result.content[0].text, "with its line")


asyncio.run(main_flows())
asyncio.run(broken_config())
print("ALL GOOD", flush=True)
