"""Asking in the agent's own client (docs/design.md, "Asking in the client"), driven by the official Python MCP SDK
2.3 in both protocol eras: `mode="legacy"` (the initialize handshake, 2025-11-25: the server sends
`elicitation/create`) and `mode="2026-07-28"` (stateless: the server answers `input_required` and the SDK retries
with the answer). In each: approve in the client, reject with a reason, decline, cancel, the console answering first, a
`confirmInApp` call (never asked), and a client without elicitation (never asked). Prints a transcript of each
exchange; exits non-zero on the first broken expectation.

    python mcp_ask_in_client.py CODEMODE_BINARY HOME
"""

import asyncio
import json
import re
import subprocess
import sys
from pathlib import Path

import mcp.types as types
from mcp import Client, StdioServerParameters

BINARY, HOME = sys.argv[1:3]
WORKSPACE = Path(HOME) / "workspace"
CLIENT = types.Implementation(name="ask-test", version="1.0")


def write(path, content):
    return f"""async () => {{
  const written = await files.write_file({{ path: "{path}", content: "{content}" }});
  return {{ written: written.path }};
}}"""


def show(label, value):
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    print(f"{label}: {text}", flush=True)


def check(condition, message):
    if not condition:
        print(f"FAILED: {message}", flush=True)
        sys.exit(1)


def cli(*args):
    """The same data directory from a second process: the person at the console."""
    done = subprocess.run([BINARY, "--home", HOME, "--json", *args], capture_output=True, text=True)
    show(f"  $ codemode {' '.join(args)}", json.loads(done.stdout) if done.stdout.strip() else done.stderr)
    return done


def run_of(message):
    found = re.search(r"run (exec_\S+) call (\d+)", message)
    check(found is not None, "the question names the run and the call")
    return found.group(1), int(found.group(2))


def decision_of(run_id, seq):
    shown = subprocess.run([BINARY, "--home", HOME, "--json", "show", run_id], capture_output=True, text=True)
    entry = next(e for e in json.loads(shown.stdout)["log"] if e["seq"] == seq)
    return entry.get("decision", {})


class Person:
    """The elicitation callback: what the person in the client answers, recording what they were asked."""

    def __init__(self, answer, before=None):
        self.answer, self.before, self.asked = answer, before, []

    async def __call__(self, context, params):
        self.asked.append(params.message)
        show("  the client is asked", params.message.replace("\n", "\n    | "))
        show("  with the form", params.requested_schema)
        if self.before:
            self.before(params.message)
        show("  the person answers", self.answer)
        action = self.answer.get("action", "accept")
        content = {k: v for k, v in self.answer.items() if k != "action"}
        return types.ElicitResult(action=action, content=content or None)


async def call(mode, person, code, client_info=CLIENT):
    params = StdioServerParameters(command=BINARY, args=["--home", HOME, "mcp"])
    kwargs = {"mode": mode, "client_info": client_info}
    if person is not None:
        kwargs["elicitation_callback"] = person
    async with Client(params, **kwargs) as client:
        show("  request", {"tool": "codemode", "code": code.splitlines()[1].strip()})
        result = await client.call_tool("codemode", {"code": code})
        out = result.structured_content
        show("  outcome", out)
        return out


async def era(mode):
    print(f"\n=== {mode} ===", flush=True)
    tag = "legacy" if mode == "legacy" else "modern"

    print("-- approve in the client", flush=True)
    person = Person({"decision": "approve"})
    out = await call(mode, person, write(f"notes/{tag}-approved.txt", "from the client"))
    check(len(person.asked) == 1, "asked once")
    question = person.asked[0]
    check("files.write_file awaits your approval" in question, "the question names the call")
    check(f"notes/{tag}-approved.txt" in question and "from the client" in question, "every argument")
    check("It would create notes/" in question, "the preview summary")
    check('asked by rule "notes-in-client"' in question, "the rule that asked")
    check(out["status"] == "completed", "approved in the client: the run completes")
    check((WORKSPACE / f"notes/{tag}-approved.txt").read_text() == "from the client", "one effect")
    run_id, seq = run_of(question)
    decision = decision_of(run_id, seq)
    show("  recorded", decision)
    check(decision.get("by") == "client" and decision.get("client") == "ask-test", "recorded by the client, named")
    check(decision.get("kind") == "approved", "an approval")

    print("-- reject with a reason", flush=True)
    person = Person({"decision": "reject", "reason": "write under drafts/ instead"})
    out = await call(mode, person, write(f"notes/{tag}-rejected.txt", "no"))
    check(out["status"] == "error", "rejected in the client: the run ends")
    check(out["error"] == "Action files.write_file rejected by user: write under drafts/ instead", "the reason reaches the agent")
    check(not (WORKSPACE / f"notes/{tag}-rejected.txt").exists(), "nothing written")
    run_id, seq = run_of(person.asked[0])
    check(decision_of(run_id, seq).get("by") == "client", "rejected by the client")

    print("-- decline: the call waits for the console", flush=True)
    person = Person({"action": "decline"})
    out = await call(mode, person, write(f"notes/{tag}-declined.txt", "later"))
    check(out["status"] == "paused", "declined: still paused")
    check(out["pending"][0]["args"]["path"] == f"notes/{tag}-declined.txt", "pending stays whole")
    check(cli("approve", out["executionId"]).returncode == 0, "the console approves afterwards")
    check((WORKSPACE / f"notes/{tag}-declined.txt").read_text() == "later", "then it runs")

    print("-- cancel: the call waits for the console too", flush=True)
    person = Person({"action": "cancel"})
    out = await call(mode, person, write(f"notes/{tag}-cancelled.txt", "not now"))
    check(len(person.asked) == 1 and out["status"] == "paused", "cancelled: asked once, still paused")
    check(cli("reject", f"{out['executionId']}:{out['pending'][0]['seq']}").returncode == 0, "the console rejects")
    check(not (WORKSPACE / f"notes/{tag}-cancelled.txt").exists(), "nothing written")

    print("-- the console answers first; the client's late answer is stale", flush=True)

    def console_first(message):
        run_id, _ = run_of(message)
        check(cli("approve", run_id).returncode == 0, "the console approves while the client is asked")

    person = Person({"decision": "reject", "reason": "too late"}, before=console_first)
    out = await call(mode, person, write(f"notes/{tag}-raced.txt", "console won"))
    check(out["status"] == "completed", "the client gets the real outcome: completed")
    check((WORKSPACE / f"notes/{tag}-raced.txt").read_text() == "console won", "run once, as the console decided")
    run_id, seq = run_of(person.asked[0])
    check(decision_of(run_id, seq).get("by") == "cli", "the first answer counts: the console's")

    print("-- a confirmInApp call is never asked in the client", flush=True)
    person = Person({"decision": "approve"})
    out = await call(mode, person, """async () => {
  await files.delete_file({ path: "notes/keep.txt" });
}""")
    check(person.asked == [], "not asked")
    check(out["status"] == "paused", "waits for the window")
    cli("reject", f"{out['executionId']}:{out['pending'][0]['seq']}")

    print("-- a client that cannot be asked gets the paused outcome", flush=True)
    out = await call(mode, None, write(f"notes/{tag}-unasked.txt", "x"))
    check(out["status"] == "paused", "paused, as before asking in the client existed")
    cli("reject", f"{out['executionId']}:{out['pending'][0]['seq']}")


async def main():
    (WORKSPACE / "notes").mkdir(parents=True, exist_ok=True)
    (WORKSPACE / "notes/keep.txt").write_text("keep me")
    await era("legacy")
    await era("2026-07-28")
    print("\nALL GOOD", flush=True)


asyncio.run(main())
