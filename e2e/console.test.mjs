// The console in its real window, driven through WebDriver (tauri-driver → WebKitWebDriver), as a person uses
// it. Run by scripts/e2e inside Xvfb and a private D-Bus session with a notification daemon.
//
//   node console.test.mjs            (needs: tauri-driver on :4444, E2E_HOME (the app's default data directory), E2E_OUT, NOTIFY_LOG)

import { remote } from "webdriverio";
import { execFileSync, spawn, spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { request as httpsRequest } from "node:https";
import { scenarios } from "./scenarios.mjs";

const ROOT = resolve(import.meta.dirname, "..");
// E2E_PROFILE=release measures the release build (scripts/e2e builds what it names; debug by default).
const PROFILE = process.env.E2E_PROFILE || "debug";
const BIN = join(ROOT, "target", PROFILE);
const HOME = process.env.E2E_HOME;
const OUT = process.env.E2E_OUT || join(ROOT, "target", "e2e");
const NOTIFY_LOG = process.env.NOTIFY_LOG;
// Where the app writes "window ready in N ms" each time its window opens (CODEMODE_TIMINGS, set by scripts/e2e).
const TIMINGS = process.env.CODEMODE_TIMINGS;
mkdirSync(OUT, { recursive: true });

let browser;
/** The app's own figures (issue 8): printed and written to target/e2e/figures.json. */
const figures = {};

function figure(name, value, unit) {
  figures[name] = { value, unit };
  console.log(`     ${name}: ${value} ${unit}`);
}

/** Resident memory of the app's main process, in MiB. */
function residentMiB() {
  const pid = execFileSync("pgrep", ["-n", "-f", `target/${PROFILE}/codemode-console`], { encoding: "utf8" }).trim();
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  const kb = Number(/VmRSS:\s+(\d+)/.exec(status)[1]);
  return Math.round(kb / 102.4) / 10;
}

/** Starts the app through the driver; returns the time from the request to the first interactive paint. */
async function session(args = []) {
  const started = Date.now();
  browser = await remote({
    hostname: "127.0.0.1",
    port: 4444,
    logLevel: "warn",
    capabilities: {
      "tauri:options": { application: join(BIN, "codemode-console"), args },
      "wdio:enforceWebDriverClassic": true,
    },
  });
  await browser.waitUntil(async () => (await browser.execute(() => document.body.dataset.ready)) === "true", { timeout: 20000, interval: 20, timeoutMsg: "the window never became ready" });
  return Date.now() - started;
}

async function closeSession() {
  if (browser) await browser.deleteSession();
  browser = null;
}

const { test, finish } = scenarios(async (slug) => {
  if (browser) await windowShot(join(OUT, `failed-${slug}.png`));
});

const $ = (selector) => browser.$(selector);
const text = (selector) => browser.execute((s) => { const el = document.querySelector(s); return el ? el.innerText : ""; }, selector);
async function waitText(selector, predicate, message, timeout = 15000) {
  let last = "";
  await browser.waitUntil(async () => {
    // Read in the page: views re-render on live updates, and a WebDriver element reference may go stale.
    // Section headings are upper-cased by CSS, and innerText is the rendered text.
    const seen = await browser.execute((s) => { const el = document.querySelector(s); return el ? el.innerText : null; }, selector);
    if (seen === null) return false;
    last = seen;
    return predicate(last) || predicate(last.toLowerCase());
  }, { timeout, timeoutMsg: `${message} (last text: ${JSON.stringify(last).slice(0, 300)})` });
  return last;
}
async function click(selector) {
  const el = await $(selector);
  await el.waitForClickable({ timeout: 15000 });
  await el.click();
}
async function nav(view) {
  await click(`#nav-${view}`);
}
function assert(condition, message) {
  if (!condition) throw new Error(message);
}
function cli(...args) {
  return JSON.parse(execFileSync(join(BIN, "codemode"), ["--home", HOME, "--json", ...args], { encoding: "utf8" }));
}
async function playground(code) {
  await nav("playground");
  const editor = await $("#playground-code");
  await editor.waitForExist();
  await browser.execute((value) => {
    const area = document.getElementById("playground-code");
    area.value = value;
    area.dispatchEvent(new Event("input"));
  }, code);
  await click("#run");
}
/** An agent as MCP clients are: `codemode mcp` over stdio, newline-delimited JSON-RPC (on `home`). */
async function mcpAgent(home = HOME) {
  const child = spawn(join(BIN, "codemode"), ["--home", home, "mcp"], { stdio: ["pipe", "pipe", "inherit"] });
  let buffer = "";
  const waiting = new Map();
  child.stdout.on("data", (chunk) => {
    buffer += chunk;
    let at;
    while ((at = buffer.indexOf("\n")) >= 0) {
      const line = buffer.slice(0, at);
      buffer = buffer.slice(at + 1);
      if (!line.trim()) continue;
      const message = JSON.parse(line);
      if (message.id !== undefined && waiting.has(message.id)) { waiting.get(message.id)(message); waiting.delete(message.id); }
    }
  });
  let next = 1;
  const request = (method, params) => new Promise((resolve) => {
    const id = next++;
    waiting.set(id, resolve);
    child.stdin.write(JSON.stringify({ jsonrpc: "2.0", id, method, params }) + "\n");
  });
  await request("initialize", { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "e2e-agent", version: "1" } });
  child.stdin.write(JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" }) + "\n");
  const tool = async (name, args) => {
    const answer = await request("tools/call", { name, arguments: args });
    const result = answer.result;
    return { isError: !!result.isError, value: JSON.parse(result.content[0].text) };
  };
  return { tool, close: () => child.kill() };
}
/** Sets a form control's value as typing would, in the page. */
async function setField(selector, value, event = "input") {
  await browser.execute((s, v, e) => { const el = document.querySelector(s); el.value = v; el.dispatchEvent(new Event(e)); }, selector, value, event);
}
async function clickInPage(selector) {
  await browser.waitUntil(() => browser.execute((s) => {
    const el = document.querySelector(s);
    if (!el || el.disabled) return false;
    el.click();
    return true;
  }, selector), { timeout: 15000, interval: 100, timeoutMsg: `${selector} never became clickable` });
}

async function shot(name) {
  // Toasts of earlier steps would stand in front of what the picture is for.
  await browser.execute(() => { const toasts = document.getElementById("toasts"); if (toasts) toasts.replaceChildren(); });
  await windowShot(join(OUT, `${name}.png`));
}

/** The window as the X server shows it. Not WebDriver's screenshot: WebKit's snapshot, which that uses, never
 * answers while GTK's GL is off (docs/desktop.md, "The window, closed to the tray"). Without a window manager
 * the window sits at the screen's origin. */
async function windowShot(file) {
  // Let the last paint reach the screen.
  await new Promise((r) => setTimeout(r, 150));
  const size = await browser.execute(() => [window.outerWidth, window.outerHeight]);
  execFileSync("import", ["-window", "root", "-crop", `${size[0]}x${size[1]}+0+0`, "+repage", file]);
}

const WRITE = (path, content) => `async () => {
  const before = await files.list_dir({});
  const written = await files.write_file({ path: ${JSON.stringify(path)}, content: ${JSON.stringify(content)} });
  return { before: before.entries.length, written };
}`;

// A read-only rule in connectors.json, as a team would ship one: the rules view lists it beside the app's.
execFileSync(join(BIN, "codemode"), ["--home", HOME, "--json", "rules"]);
{
  const config = JSON.parse(readFileSync(join(HOME, "connectors.json"), "utf8"));
  config.rules = [{ id: "keep-is-kept", effect: "deny", call: "files.delete_file", when: { path: { glob: "keep/**" } }, reason: "keep/ is never deleted" }];
  writeFileSync(join(HOME, "connectors.json"), JSON.stringify(config, null, 2));
}

figure(`start to interactive window, empty database (${PROFILE} build, incl. WebDriver session)`, await session(), "ms");

await test("first run: the empty queue explains how to connect an agent", async () => {
  await waitText("#approvals-empty", (t) => t.includes("Nothing is waiting for you."), "empty state");
  const snippet = await text("#connect-agent");
  assert(snippet.includes("mcpServers") && snippet.includes("codemode") && snippet.includes("claude mcp add"), `MCP snippet: ${snippet}`);
  await shot("approvals-empty");
});

await test("playground → paused card with connector.method and arguments → approve → completed in Executions", async () => {
  await playground(WRITE("notes/plan.md", "# Plan\nship it"));
  await waitText("#playground-pending", (t) => t.includes("files.write_file awaits approval"), "the playground shows the pause");
  await nav("approvals");
  const title = await waitText("#pending-title", (t) => t.includes("files.write_file"), "the paused card");
  assert(title.includes("awaits approval"), title);
  const args = await text("#arguments");
  assert(args.includes("notes/plan.md") && args.includes("ship it"), `arguments: ${args}`);
  const program = (await text("#program")).toLowerCase();
  assert(program.includes("line 3 makes the pending call"), `program: ${program}`);
  await shot("approvals-pending");
  await click("#approve");
  await waitText("#approvals-empty", (t) => t.includes("Nothing is waiting"), "the queue empties after approval");
  assert(readFileSync(join(HOME, "workspace", "notes", "plan.md"), "utf8") === "# Plan\nship it", "the file was written");
  await nav("executions");
  await waitText("#executions-list", (t) => t.includes("completed"), "completed in the list");
  await click("#executions-list .row");
  await waitText("#timeline", (t) => t.includes("files.write_file") && /approved by \S+ via console/.test(t), "the timeline says who decided, and how");
  await click('.tab[data-tab="result"]');
  const result = await waitText("#execution-result", (t) => t.includes("notes/plan.md"), "the result");
  assert(result.includes("created"), result);
  await click('.tab[data-tab="timeline"]');
  await shot("executions-completed");
});

await test("a write to an existing file is previewed as a diff, and a delete as what will be lost", async () => {
  await playground(`async () => files.write_file({ path: "notes/plan.md", content: "# Plan\\nship it on Monday\\n" })`);
  await waitText("#playground-pending", (t) => t.includes("files.write_file"), "paused");
  await nav("approvals");
  await waitText("#preview", (t) => t.includes("Changes notes/plan.md"), "the preview heading");
  const rows = await browser.execute(() => [...document.querySelectorAll("#diff tr")].map((r) => [r.className, r.innerText.replace(/\s+/g, " ").trim(), [...r.querySelectorAll("mark")].map((m) => m.innerText).join("")]));
  const removed = rows.find(([kind]) => kind === "delete");
  const added = rows.find(([kind]) => kind === "insert");
  assert(removed && removed[1].includes("2") && removed[1].includes("ship it"), `the old line with its number: ${JSON.stringify(rows)}`);
  assert(added && added[1].includes("ship it on Monday") && added[2].includes("Monday"), `the new line, the change marked: ${JSON.stringify(rows)}`);
  await shot("approvals-diff");
  const [write] = cli("pending");
  cli("reject", write.executionId, String(write.seq));
  await playground(`async () => files.delete_file({ path: "notes/plan.md" })`);
  await waitText("#playground-pending", (t) => t.includes("files.delete_file"), "paused");
  await nav("approvals");
  await waitText("#preview", (t) => t.includes("Deletes notes/plan.md") && t.includes("ship it"), "the delete preview shows what will be lost");
  const [gone] = cli("pending");
  cli("reject", gone.executionId, String(gone.seq));
  // What the person was shown stays with the decision.
  const shown = cli("show", gone.executionId).log[0].decision.shown;
  assert(shown && shown.preview.kind === "delete" && shown.digest.length === 64, JSON.stringify(shown));
  await waitText("#approvals-empty", (t) => t.includes("Nothing is waiting"), "both decided");
  // The audit log shows it too.
  await nav("executions");
  await click('#status-chips [data-status="rejected"]');
  await waitText("#executions-list", (t) => t.includes(gone.executionId.slice(-4)), "the rejected delete is listed");
  await browser.execute((id) => { const row = [...document.querySelectorAll("#executions-list .row")].find((r) => r.innerText.includes(id.slice(-4))); if (row) row.click(); }, gone.executionId);
  await clickInPage('#timeline .entry[data-seq="0"] .entry-head');
  await waitText("#timeline", (t) => t.toLowerCase().includes("what the person was shown before deciding") && t.includes("Deletes notes/plan.md") && t.includes("ship it"), "the kept preview in the audit log");
});

await test("reject with a reason ends the run as rejected, and Executions says who rejected it and why", async () => {
  await playground(WRITE("rejected.txt", "no"));
  await waitText("#playground-pending", (t) => t.includes("files.write_file"), "paused");
  await nav("approvals");
  await waitText("#pending-title", (t) => t.includes("files.write_file"), "the card");
  await (await $("#reject-reason")).setValue("write under drafts/ instead");
  // A live update may re-render the card (the typed reason survives it): click the Reject that is there now,
  // in the page, rather than through an element reference that the re-render may have made stale.
  await browser.waitUntil(() => browser.execute(() => {
    const button = document.querySelector("#reject");
    if (!button || button.disabled) return false;
    button.click();
    return true;
  }), { timeout: 15000, interval: 100, timeoutMsg: "the Reject button never became clickable" });
  await waitText("#approvals-empty", (t) => t.includes("Nothing is waiting"), "the queue empties after reject");
  assert(!existsSync(join(HOME, "workspace", "rejected.txt")), "nothing was written");
  await nav("executions");
  await click('#status-chips [data-status="rejected"]');
  await waitText("#executions-list", (t) => t.includes("rejected"), "listed as rejected");
  await click("#executions-list .row");
  await waitText("#execution-error", (t) => t.includes("Action files.write_file rejected by user: write under drafts/ instead"), "the error the agent reads");
  await waitText("#timeline", (t) => /rejected by \S+ via console/.test(t) && !t.includes("approved by"), "the timeline says rejected, not approved");
  await click('#timeline .entry[data-seq="1"] .entry-head');
  await waitText("#timeline", (t) => t.includes("Reason given: write under drafts/ instead"), "the reason");
  await shot("executions-rejected");
});

await test("roll back of a files write restores the file", async () => {
  const path = join(HOME, "workspace", "notes", "plan.md");
  await nav("executions");
  await click('#status-chips [data-status="completed"]');
  await waitText("#executions-list", (t) => t.includes("completed"), "the completed run");
  await click("#executions-list .row");
  await click("#rollback");
  await waitText(".modal", (t) => t.includes("files.write_file"), "the confirmation lists the calls");
  await click("#confirm-rollback");
  await waitText("#rollback-report", (t) => t.includes("reverted #1 files.write_file"), "the rollback report");
  assert(!existsSync(path), "the written file is gone again");
  await shot("executions-rolled-back");
});

await test("an approval edited from the command line shows both argument sets", async () => {
  await playground(WRITE("draft.txt", "first"));
  await waitText("#playground-pending", (t) => t.includes("files.write_file"), "paused");
  const [pending] = cli("pending");
  const edited = JSON.stringify({ path: "edited.txt", content: "second" });
  const outcome = cli("approve", pending.executionId, "--args", edited);
  assert(outcome.status === "completed", JSON.stringify(outcome));
  assert(readFileSync(join(HOME, "workspace", "edited.txt"), "utf8") === "second", "the edited call ran");
  assert(!existsSync(join(HOME, "workspace", "draft.txt")), "the original did not");
  await nav("executions");
  await click('#status-chips [data-status="completed"]');
  await waitText("#executions-list", (t) => t.includes(pending.executionId.slice(-4)), "the edited run is listed");
  await browser.execute((id) => { const row = [...document.querySelectorAll("#executions-list .row")].find((r) => r.innerText.includes(id.slice(-4))); if (row) row.click(); }, pending.executionId);
  await waitText("#timeline", (t) => /approved with edits by \S+ via cli/.test(t), "the edited decision");
  await click('#timeline .entry[data-seq="1"] .entry-head');
  const timeline = await waitText("#timeline", (t) => t.toLowerCase().includes("arguments that ran (edited)"), "both argument sets");
  assert(timeline.includes("draft.txt") && timeline.includes("edited.txt"), timeline);
});

await test("edit, then approve: the edit is checked against the schema and is what runs", async () => {
  await playground(WRITE("draft2.txt", "first"));
  await waitText("#playground-pending", (t) => t.includes("files.write_file"), "paused");
  await nav("approvals");
  await waitText("#pending-title", (t) => t.includes("files.write_file"), "the card");
  await clickInPage("#edit-approve");
  await waitText("#edit-check", (t) => t.includes("Fits the tool's input schema"), "the unchanged arguments fit");
  await setField("#edit-args", JSON.stringify({ path: 5, content: "x" }));
  await waitText("#edit-check", (t) => t.includes("do not match its input schema"), "a bad edit is refused before it is sent");
  assert(await browser.execute(() => document.querySelector("#confirm-edit").disabled), "Approve stays off for a bad edit");
  await setField("#edit-args", JSON.stringify({ path: "edited2.txt", content: "second" }));
  await waitText("#edit-check", (t) => t.includes("Fits"), "the good edit fits");
  await shot("approvals-edit");
  await clickInPage("#confirm-edit");
  await waitText("#approvals-empty", (t) => t.includes("Nothing is waiting"), "approved");
  assert(readFileSync(join(HOME, "workspace", "edited2.txt"), "utf8") === "second", "the edited call ran");
  assert(!existsSync(join(HOME, "workspace", "draft2.txt")), "the original did not");
});

await test("approve and allow adds a rule that lets the next matching call through without a pause", async () => {
  await playground(`async () => files.write_file({ path: "scratch/one.txt", content: "1" })`);
  await waitText("#playground-pending", (t) => t.includes("files.write_file"), "paused");
  await nav("approvals");
  await waitText("#pending-title", (t) => t.includes("files.write_file"), "the card");
  await clickInPage("#approve-allow");
  await waitText("#allow-reach", (t) => t.includes("Matches"), "how far the exact rule reaches");
  await setField('#allow-args select[data-arg="path"]', "glob", "change");
  await setField('#allow-args input[data-arg="path"]', "scratch/**");
  await setField('#allow-args select[data-arg="content"]', "any", "change");
  await waitText("#allow-reach", (t) => t.includes("Matches"), "the reach of the glob rule");
  await shot("approvals-allow");
  await clickInPage("#confirm-allow");
  await waitText("#approvals-empty", (t) => t.includes("Nothing is waiting"), "approved");
  assert(readFileSync(join(HOME, "workspace", "scratch", "one.txt"), "utf8") === "1", "the approved call ran");
  const added = cli("rules").find((r) => r.origin === "database" && r.call === "files.write_file");
  assert(added && added.createdBy === "console" && added.when.path.glob === "scratch/**" && added.source === "Playground", JSON.stringify(added));
  await playground(`async () => (await files.write_file({ path: "scratch/two.txt", content: "2" })).created`);
  await waitText("#playground-result", (t) => t.includes("true"), "the next matching call ran without a pause");
  assert(readFileSync(join(HOME, "workspace", "scratch", "two.txt"), "utf8") === "2", "written by the allowed call");
});

await test("approve and allow keeps a multi-line value exactly: edited in a textarea, saved as shown", async () => {
  const content = "first line\r\nsecond line\n\tthird";
  await playground(`async () => files.write_file({ path: "multi.txt", content: ${JSON.stringify(content)} })`);
  await waitText("#playground-pending", (t) => t.includes("files.write_file"), "paused");
  await nav("approvals");
  await waitText("#pending-title", (t) => t.includes("files.write_file"), "the card");
  await clickInPage("#approve-allow");
  await waitText("#allow-reach", (t) => t.includes("Matches"), "how far the exact rule reaches");
  const field = await browser.execute(() => {
    const el = document.querySelector('#allow-args [data-arg="content"]:not(select)');
    return el && { tag: el.tagName, lines: el.value.split("\n").length };
  });
  assert(field && field.tag === "TEXTAREA" && field.lines === 3, `a textarea with the three lines: ${JSON.stringify(field)}`);
  await clickInPage("#confirm-allow");
  await waitText("#approvals-empty", (t) => t.includes("Nothing is waiting"), "approved");
  const added = cli("rules").find((r) => r.origin === "database" && JSON.stringify(r.when.path || "").includes("multi.txt"));
  const literal = (v) => (v && typeof v === "object" && "exact" in v ? v.exact : v);
  assert(added && literal(added.when.content) === content, `the rule holds the value shown, line breaks and all: ${JSON.stringify(added)}`);
  cli("rules", "remove", added.id);
});

await test("the rules view lists the connectors.json rule and the app's, and says which would decide a call", async () => {
  await nav("rules");
  const list = await waitText("#rules-list", (t) => t.includes("keep-is-kept") && t.includes("scratch/**"), "both rules");
  const rows = await browser.execute(() => [...document.querySelectorAll("#rules-list tbody tr")].map((r) => r.innerText));
  assert(rows.some((r) => r.includes("keep-is-kept") && r.includes("connectors.json") && r.includes("read-only")), `the file's rule: ${JSON.stringify(rows)}`);
  assert(rows.some((r) => r.includes("scratch/**") && r.includes("app")), `the app's rule: ${JSON.stringify(rows)}`);
  await setField("#test-call", "files.delete_file");
  await setField("#test-args", JSON.stringify({ path: "keep/notes.md" }));
  await waitText("#test-verdict", (t) => t.includes("deny") && t.includes("keep-is-kept"), "the deciding rule");
  await shot("rules");
  assert(list.length > 0, list);
});

await test("three waiting calls approved together, with one report", async () => {
  await nav("approvals");
  const ids = [];
  for (const n of [1, 2, 3]) {
    const program = join(HOME, `batch-${n}.js`);
    writeFileSync(program, WRITE(`batch/${n}.txt`, `batch ${n}`));
    ids.push(cli("run", program).executionId);
  }
  await waitText("#approvals-list", (t) => t.includes("batch/3.txt"), "three cards");
  for (const id of ids) await clickInPage(`#approvals-list .card[data-id="${id}"] input.pick`);
  await waitText("#batch-bar", (t) => t.includes("3 picked"), "three picked");
  await clickInPage("#approve-picked");
  const report = await waitText(".modal", (t) => t.includes("Approved 3 of 3"), "one report for the three");
  assert(report.split("the run completed").length === 4, `each of the three completed: ${report}`);
  await clickInPage("#close-report");
  for (const n of [1, 2, 3]) assert(readFileSync(join(HOME, "workspace", "batch", `${n}.txt`), "utf8") === `batch ${n}`, `batch ${n} written`);
});

await test("four eyes: a quorum rule counts the first approval, says 1 of 2, refuses the same person again, and a reject ends it", async () => {
  cli("rules", "add", JSON.stringify({ id: "four-eyes-e2e", effect: "ask", call: "files.write_file", when: { path: { glob: "four-eyes/**" } }, quorum: 2 }));
  try {
    const id = cli("run", writeProgram("four-eyes.js", 'async () => files.write_file({ path: "four-eyes/a.txt", content: "x" })')).executionId;
    await nav("approvals");
    await waitText("#approvals-list", (t) => t.includes("four-eyes/a.txt"), "the card");
    await browser.execute((run) => { const card = document.querySelector(`#approvals-list .card[data-id="${run}"]`); if (card) card.click(); }, id);
    await waitText("#quorum", (t) => t.includes("0 of 2 approvals"), "the card says two people must approve");
    await clickInPage("#approve");
    await waitText("#quorum", (t) => /1 of 2 — approved by \S+ via console/.test(t), "the first approval is counted, by whom");
    assert(!existsSync(join(HOME, "workspace", "four-eyes", "a.txt")), "nothing ran after one approval");
    await shot("four-eyes-card");
    await clickInPage("#approve");
    await waitText("#decision-error", (t) => t.includes("already approved the call") && t.includes("2 different people"), "the same person again is refused");
    await clickInPage("#reject");
    await browser.waitUntil(() => cli("show", id).status === "rejected", { timeout: 15000, timeoutMsg: "a reject by anyone ends it" });
    assert(!existsSync(join(HOME, "workspace", "four-eyes", "a.txt")), "nothing ran");
  } finally {
    cli("rules", "remove", "four-eyes-e2e");
  }
});

await test("a reason typed in the console is what the agent's codemode_wait returns", async () => {
  const agent = await mcpAgent();
  try {
    const paused = await agent.tool("codemode", { code: WRITE("agent.txt", "from the agent") });
    assert(paused.value.status === "paused", JSON.stringify(paused));
    await nav("approvals");
    await waitText("#approvals-list", (t) => t.includes("agent.txt"), "the agent's card");
    await browser.execute((id) => { const card = document.querySelector(`#approvals-list .card[data-id="${id}"]`); if (card) card.click(); }, paused.value.executionId);
    await waitText("#pending-title", (t) => t.includes("files.write_file"), "selected");
    await (await $("#reject-reason")).setValue("Wrong file or target");
    await clickInPage("#reject");
    const waited = await agent.tool("codemode_wait", { executionId: paused.value.executionId, timeoutSeconds: 10 });
    assert(waited.value.status === "error" && waited.value.error === "Action files.write_file rejected by user: Wrong file or target", JSON.stringify(waited));
  } finally {
    agent.close();
  }
});

await test("a pause from a separate codemode process appears, with a desktop notification", async () => {
  await nav("approvals");
  const program = join(HOME, "from-cli.js");
  writeFileSync(program, WRITE("from-cli.txt", "written by another process"));
  // From the moment the other process committed the pause to the moment the card is drawn (timed in the page,
  // so WebDriver's own polling is left out): the median of five pauses, each from a new process.
  const samples = [];
  let outcome;
  for (let round = 0; round < 5; round++) {
    await waitText("#approvals-empty", (t) => t.includes("Nothing is waiting"), "an empty queue first");
    await browser.execute(() => {
      window.cardShownAt = null;
      const list = document.getElementById("approvals-list");
      const observer = new MutationObserver(() => {
        if (list.innerText.includes("from-cli.txt")) { window.cardShownAt = performance.timeOrigin + performance.now(); observer.disconnect(); }
      });
      observer.observe(list, { childList: true, subtree: true, characterData: true });
    });
    outcome = cli("run", program);
    assert(outcome.status === "paused", JSON.stringify(outcome));
    // When the pause was committed, by the other process's clock (the same machine's).
    const pausedAt = cli("show", outcome.executionId).updatedAt;
    await waitText("#approvals-list", (t) => t.includes("files.write_file"), "the CLI's pause shows without a refresh");
    samples.push((await browser.execute(() => window.cardShownAt)) - pausedAt);
    if (round < 4) cli("reject", outcome.executionId, String(outcome.pending[0].seq));
  }
  samples.sort((a, b) => a - b);
  figure("pause committed by another process → card drawn, median of 5", Math.round(samples[2]), "ms");
  await browser.waitUntil(() => NOTIFY_LOG && readFileSync(NOTIFY_LOG, "utf8").includes("files.write_file awaits approval"),
    { timeout: 10000, timeoutMsg: "no org.freedesktop.Notifications.Notify with the summary" });
  const badge = await text("#approvals-count");
  assert(badge === "1", `badge: ${badge}`);
  // Resolved elsewhere: approving from the CLI updates the window too.
  cli("approve", outcome.executionId);
  await waitText("#approvals-empty", (t) => t.includes("Nothing is waiting"), "resolved by the CLI");
});

await test("a call with decideWithin counts down on its card, and says it is asked in the agent's client too", async () => {
  await nav("approvals");
  cli("rules", "add", JSON.stringify({ id: "timed-e2e", effect: "ask", call: "files.write_file",
    when: { path: { glob: "timed/**" } }, decideWithin: "30m", askInClient: true }));
  const program = join(HOME, "timed.js");
  writeFileSync(program, WRITE("timed/report.md", "due soon"));
  const outcome = cli("run", program);
  assert(outcome.status === "paused" && outcome.pending[0].decideBy, JSON.stringify(outcome));
  await waitText("#approvals-list", (t) => t.includes("timed/report.md") && /decide within (29|30) min/.test(t),
    "the queue says how long is left");
  await clickInPage(`#approvals-list .card[data-id="${outcome.executionId}"]`);
  await waitText("#decide-by", (t) => /decide within (29|30) min/.test(t), "the card says how long is left");
  await waitText("#ask-in-client", (t) => t.includes("asked in the client too"), "and that the client is asked too");
  await shot("decide-within-card");
  cli("reject", outcome.executionId, String(outcome.pending[0].seq));
  cli("rules", "remove", "timed-e2e");
  await waitText("#approvals-empty", (t) => t.includes("Nothing is waiting"), "decided from the CLI");
});

await test("the arguments as the API renders them and a half-typed reason survive a pause arriving from another process", async () => {
  await playground(`async () => files.write_file({ content: "x", meta: { a: { b: { c: 1 } } }, path: "deep.txt" })`);
  await waitText("#playground-pending", (t) => t.includes("files.write_file"), "paused");
  await nav("approvals");
  // The card's rows (crates/api/src/display/mod.rs): the path first whatever order the program used, nested values
  // opened out.
  const shown = await waitText("#arguments", (t) => t.includes("meta") && t.includes("c: 1"), "the nested value opened out");
  assert(shown.indexOf("deep.txt") < shown.indexOf("content"), `the path first: ${shown}`);
  await browser.execute(() => { document.querySelector("#argument-rows").dataset.kept = "yes"; });
  await (await $("#reject-reason")).setValue("half-typ");
  const program = join(HOME, "another.js");
  writeFileSync(program, WRITE("another.txt", "from another process"));
  const other = cli("run", program);
  await waitText("#approvals-list", (t) => t.includes("another.txt"), "the other process's pause is listed");
  const kept = await browser.execute(() => document.querySelector("#argument-rows")?.dataset.kept);
  assert(kept === "yes", "the arguments were not drawn again");
  const reason = await browser.execute(() => document.querySelector("#reject-reason").value);
  assert(reason === "half-typ", `the reason being typed: ${reason}`);
  for (const pending of cli("pending")) cli("reject", pending.executionId, String(pending.seq));
  assert(other.status === "paused", JSON.stringify(other));
  await waitText("#approvals-empty", (t) => t.includes("Nothing is waiting"), "cleared");
});

await test("the playground editor completes connector methods and their argument names", async () => {
  await nav("playground");
  await (await $("#playground-code .cm-content")).waitForExist();
  const typeAfter = async (code, key) => {
    await browser.execute((text) => { const editor = document.getElementById("playground-code"); editor.value = text; editor.querySelector(".cm-content").focus(); }, code);
    await browser.keys([key]);
  };
  await typeAfter("async () => files.", "w");
  await waitText(".cm-tooltip-autocomplete", (t) => t.includes("write_file"), "the methods of files");
  await shot("playground-completion");
  await browser.keys(["Escape"]);
  await typeAfter("async () => files.write_file({ ", "p");
  await waitText(".cm-tooltip-autocomplete", (t) => t.includes("path"), "the arguments of write_file");
  await browser.keys(["Escape"]);
});

await test("save as snippet → listed in Snippets", async () => {
  await playground("async () => (await files.list_dir({})).entries.map((e) => e.name)");
  await waitText("#playground-result", (t) => t.length > 0, "completed");
  await nav("executions");
  await click('#status-chips [data-status="completed"]');
  await waitText("#executions-list", (t) => t.includes("completed"), "the run");
  await click("#executions-list .row");
  await click("#save-snippet");
  await (await $("#snippet-name")).setValue("list-workspace");
  await (await $("#snippet-description")).setValue("Names of the files in the workspace");
  await click("#confirm-snippet");
  await nav("snippets");
  await waitText("#snippets-list", (t) => t.includes("list-workspace") && t.includes("Names of the files"), "listed");
  const detail = await text("#snippet-detail");
  assert(detail.includes("files.list_dir"), detail);
  await shot("snippets");
});

await test("history: filters select runs, a filter is saved by name, CSV exports, insights offer a rule, the timeline shows times", async () => {
  // Runs of the scenarios before: a write approved in the console, one rejected with a reason.
  await playground(WRITE("history.txt", "h"));
  await waitText("#playground-pending", (t) => t.includes("files.write_file"), "paused");
  await nav("approvals");
  await waitText("#pending-title", (t) => t.includes("files.write_file"), "the card");
  const approved = cli("pending").find((p) => p.method === "write_file").executionId;
  await clickInPage("#approve");
  await waitText("#approvals-empty", (t) => t.includes("Nothing is waiting"), "approved");
  // And one rejected from the command line.
  const paused = cli("run", writeProgram("history-reject.js", 'async () => files.write_file({ path: "no.txt", content: "no" })'));
  cli("reject", paused.executionId, "0");
  await nav("executions");
  await click('#status-chips [data-status="all"]');
  // Earlier scenarios left runs too: the list is judged by which of these two it holds.
  const listed = async (want, message) => {
    let ids = [];
    await browser.waitUntil(async () => {
      ids = await browser.execute(() => [...document.querySelectorAll("#executions-list .row")].map((row) => row.dataset.id));
      return want(ids);
    }, { timeout: 15000, timeoutMsg: `${message} (listed: ${ids.join(" ")})` });
  };
  const rejected = paused.executionId;
  await setField("#filter-call", "files.write_*");
  await listed((ids) => ids.includes(approved) && ids.includes(rejected), "the writes, both kinds");
  await setField("#filter-decidedBy", "cli");
  await listed((ids) => ids.includes(rejected) && !ids.includes(approved), "the write decided from the command line");
  await setField("#filter-decidedBy", "console");
  await listed((ids) => ids.includes(approved) && !ids.includes(rejected), "the write decided in the console");
  await setField("#filter-source", "nobody-at-all*");
  await listed((ids) => ids.length === 0, "a source nobody has");
  await waitText("#executions-list .empty", (t) => t.includes("No execution matches"), "says the filter matches nothing");
  await setField("#filter-source", "");
  await setField("#filter-since", "last tuesday");
  await waitText("#filter-error", (t) => t.includes("is neither a moment"), "a moment that does not parse says why");
  await setField("#filter-since", "1d");
  await listed((ids) => ids.includes(approved), "the list is back");
  await clickInPage("#save-filter");
  await setField("#filter-name", "console writes");
  await clickInPage("#confirm-save-filter");
  await browser.waitUntil(() => browser.execute(() => [...document.querySelector("#saved-filters").options].some((o) => o.value === "console writes")),
    { timeout: 15000, timeoutMsg: "the saved filter is listed" });
  // Chosen again after the fields changed, it brings them back.
  await setField("#filter-call", "");
  await setField("#saved-filters", "console writes", "change");
  await browser.waitUntil(() => browser.execute(() => document.querySelector("#filter-call").value === "files.write_*"),
    { timeout: 15000, timeoutMsg: "the saved filter restores its fields" });
  await clickInPage("#export-csv");
  const toastText = await waitText("#toasts", (t) => t.includes("Exported"), "the export says where it went");
  const path = toastText.match(/ to (\S+\.csv)/)[1];
  const csv = readFileSync(path, "utf8").split("\r\n").filter(Boolean);
  assert(csv[0].startsWith("execution_id,run_status,run_source"), `the header: ${csv[0]}`);
  // One row a call: the writes, and the other calls of the same runs.
  assert(csv.some((row) => row.includes(",files,write_file,applied,true,approved,console,")), `the approved write: ${csv.join("\n")}`);
  assert(!csv.some((row) => row.startsWith(paused.executionId)), `not the one rejected from the command line: ${csv.join("\n")}`);
  await clickInPage("#open-insights");
  await waitText("#insights-rate", (t) => t.includes("approval rate"), "insights");
  await waitText("#insights", (t) => t.includes("files.write_file"), "the shape approved most often");
  await shot("insights");
  await clickInPage("#insights .make-rule");
  await waitText("#suggested-rule", () => true, "the suggested rule");
  const rule = await browser.execute(() => document.querySelector("#suggested-rule").value);
  assert(JSON.parse(rule).effect === "allow", rule);
  await browser.keys("Escape");
  await browser.keys("Escape");
  await click(`#executions-list .row[data-id="${approved}"]`);
  await waitText("#timeline", (t) => /decided in [\d.]+ (ms|s)/.test(t) && t.includes("ran "), "the timeline shows the time a person took and the call's");
  await shot("executions-history");
  // Later scenarios read the whole list.
  for (const field of ["since", "until", "call", "decidedBy", "source"]) await setField(`#filter-${field}`, "");
});

await test("rerun from here: a new run served the old calls before the step, linked both ways", async () => {
  const old = cli("run", writeProgram("rerun.js", 'async () => { await files.list_dir({ path: "." }); return files.write_file({ path: "rerun.txt", content: "r" }); }'));
  cli("approve", old.executionId);
  await nav("executions");
  await click(`#executions-list .row[data-id="${old.executionId}"]`);
  await waitText("#timeline", (t) => t.includes("files.write_file"), "the old run's timeline");
  await click('#timeline .entry[data-seq="1"] .entry-head');
  await clickInPage('#timeline .entry[data-seq="1"] .rerun-from');
  await waitText(".modal", (t) => t.includes("Rerun from #1?") && t.includes("none of them runs again"), "the rerun dialog says what it does");
  await clickInPage("#confirm-rerun");
  await waitText("#toasts", (t) => t.includes("Rerun paused"), "the rerun waits for the write's approval");
  const rerun = cli("pending").find((p) => p.method === "write_file" && p.executionId !== old.executionId).executionId;
  await waitText("#forked-from", (t) => t.includes("Rerun of") && t.includes("from #1"), "the rerun names where it came from");
  await waitText('#timeline .entry[data-seq="0"]', (t) => t.includes("served"), "the list_dir was served, not run");
  await shot("rerun");
  cli("approve", rerun);
  // The approval redraws the pane: follow the link once the rerun shows it completed.
  await waitText("#execution-detail .detail-head", (t) => t.includes("completed"), "the rerun completed");
  await clickInPage("#forked-from .link");
  await waitText("#reruns", (t) => t.includes("Rerun as"), "the old run lists its rerun");
  const shown = cli("show", old.executionId);
  assert(JSON.stringify(shown.reruns) === JSON.stringify([rerun]), `the old run's reruns: ${JSON.stringify(shown.reruns)}`);
});

await test("connectors and settings views", async () => {
  await nav("connectors");
  await waitText("#connectors-page", (t) => t.includes("write_file") && t.includes("files"), "the files connector and its methods");
  await shot("connectors");
  await nav("settings");
  await (await $("#setting-max-executions")).waitForExist();
  await (await $("#setting-max-executions")).setValue("77");
  await click("#save-runtime");
  await browser.waitUntil(() => readFileSync(join(HOME, "connectors.json"), "utf8").includes('"maxExecutions": 77'), { timeout: 5000, timeoutMsg: "connectors.json was not written" });
  await (await $("#setting-theme")).selectByAttribute("value", "dark");
  await browser.waitUntil(() => existsSync(join(HOME, "settings.json")) && readFileSync(join(HOME, "settings.json"), "utf8").includes("dark"), { timeout: 5000, timeoutMsg: "settings.json was not written" });
  await shot("settings-dark");
});

await test("a pasted Claude Desktop server is tested, added and gated from the app; the next call to the gated tool pauses", async () => {
  const memoryServer = join(ROOT, ".test-deps", "node_modules", "@modelcontextprotocol", "server-memory", "dist", "index.js");
  assert(existsSync(memoryServer), `${memoryServer} is installed by scripts/test`);
  const configFile = join(HOME, "connectors.json");
  await nav("connectors");
  await click("#add-server");
  await click("#server-mode-paste");
  const pasted = { mcpServers: { memory: { command: process.execPath, args: [memoryServer], env: { MEMORY_FILE_PATH: join(OUT, "memory.jsonl") } } } };
  await setField("#server-paste", JSON.stringify(pasted, null, 2));
  await click("#test-server");
  await waitText("#server-test-result", (t) => t.includes("create_entities") && t.includes("memory"), "the test lists the server's tools");
  assert(!readFileSync(configFile, "utf8").includes("server-memory"), "a test saves nothing");
  await shot("connectors-add");
  await click("#save-server");
  await waitText('[data-connector="memory"]', (t) => t.includes("create_entities") && t.includes("ready"), "the added server, started, with its tools");
  const written = JSON.parse(readFileSync(configFile, "utf8"));
  assert(written.mcpServers.memory.command === process.execPath && written.connectors.files && written.runtime.maxExecutions === 77,
    `the entry is added and the rest of the file kept: ${JSON.stringify(written)}`);
  // Gate one tool; the CLI (another process) and the app both use the new list from their next call.
  await clickInPage('[data-connector="memory"] tr[data-method="create_entities"] input[data-flag="approval"]');
  await waitFor(() => (JSON.parse(readFileSync(configFile, "utf8")).mcpServers.memory.approval || []).includes("create_entities"), "the approval is written");
  const paused = cli("run", writeProgram("remember.js", 'async () => memory.create_entities({ entities: [{ name: "e2e", entityType: "test", observations: ["gated"] }] })'));
  assert(paused.status === "paused" && JSON.stringify(paused.pending).includes("create_entities"), JSON.stringify(paused));
  const read = cli("run", writeProgram("read-graph.js", "async () => memory.read_graph({})"));
  assert(read.status === "completed", `an ungated tool still runs: ${JSON.stringify(read)}`);
  cli("reject", paused.executionId, String(paused.pending[0].seq));
  await waitText('[data-connector="memory"]', (t) => t.includes("create_entities"), "listed again");
  await shot("connectors-managed");
  // Removed from the app: gone from the file, the rest kept.
  await clickInPage('[data-connector="memory"] .remove-connector');
  await click("#confirm-remove");
  await waitFor(() => !JSON.parse(readFileSync(configFile, "utf8")).mcpServers.memory, "the server is removed from connectors.json");
  await waitFor(async () => !(await browser.execute(() => !!document.querySelector('[data-connector="memory"]'))), "the view lists it no more");
});

await test("a remote server added by URL asks for a sign-in; Sign in goes through the browser and the next call runs", async () => {
  const servers = join(ROOT, "crates", "connectors", "tests", "servers");
  const certs = join(OUT, "certs");
  execFileSync("bash", [join(servers, "make_certs.sh"), certs]);
  const server = spawn(join(ROOT, ".test-deps", "venv", "bin", "python"), [join(servers, "remote_mcp.py"), "--oauth",
    "--certfile", join(certs, "server.pem"), "--keyfile", join(certs, "server.key")], { stdio: ["ignore", "pipe", "ignore"] });
  try {
    const url = await new Promise((resolvePromise, reject) => {
      let text = "";
      server.stdout.on("data", (chunk) => { text += chunk; const m = /ready (\S+)/.exec(text); if (m) resolvePromise(m[1]); });
      server.on("exit", () => reject(new Error("remote_mcp.py ended")));
    });
    await nav("connectors");
    await click("#add-server");
    await click("#server-mode-url");
    await setField("#server-name", "tracker");
    await setField("#server-url", url);
    await setField("#server-ca-file", join(certs, "ca.pem"));
    await click("#save-server");
    const section = '[data-connector="tracker"]';
    await waitText(section, (t) => t.includes("needs a sign-in") && t.includes("codemode login tracker"), "the server asks for a sign-in, naming the command and the button");
    // An error outcome exits 1; its JSON is on stdout all the same.
    const ran = spawnSync(join(BIN, "codemode"), ["--home", HOME, "--json", "run", writeProgram("whoami.js", "async () => tracker.whoami({})")], { encoding: "utf8" });
    const before = JSON.parse(ran.stdout);
    assert(before.status === "error" && before.error.includes("Sign in"), JSON.stringify(before));
    await shot("connectors-sign-in");
    await clickInPage(`${section} .sign-in`);
    await waitText(section, (t) => t.includes("Signed in") && t.includes("whoami"), "signed in, and the server lists its tools", 30000);
    assert(readFileSync(join(OUT, "browser.log"), "utf8").includes("/authorize -> Signed in"), "the browser went through the authorization");
    const after = cli("run", writeProgram("whoami.js", "async () => tracker.whoami({})"));
    assert(after.status === "completed" && typeof after.result === "string", JSON.stringify(after));
    await clickInPage(`${section} .sign-out`);
    await waitText(section, (t) => t.includes("Sign in") && !t.includes("Signed in"), "signed out");
    assert(!existsSync(join(HOME, "sign-in", "tracker.json")), "the tokens are gone");
    await clickInPage(`${section} .remove-connector`);
    await click("#confirm-remove");
    await waitFor(() => !JSON.parse(readFileSync(join(HOME, "connectors.json"), "utf8")).mcpServers.tracker, "removed");
  } finally {
    server.kill();
  }
});

await test("on a shared PostgreSQL store, another host's pause shows that host, and approving it in the app runs it there", async () => {
  const server = process.env.CODEMODE_TEST_POSTGRES;
  if (!server) {
    assert(process.env.CODEMODE_REQUIRE_POSTGRES !== "1", "CODEMODE_TEST_POSTGRES names no server");
    console.log("     skipped: CODEMODE_TEST_POSTGRES names no PostgreSQL server (scripts/test starts one)");
    return;
  }
  const database = `cm_e2e_${process.pid}_${Date.now()}`;
  execFileSync("psql", [server, "-qc", `CREATE DATABASE ${database}`]);
  const url = server.replace(/\/[^/]*$/, `/${database}`);
  // Machine B: its own data directory and connectors (a `notes` folder), the same store; its agent's
  // `codemode mcp` serves as B's host.
  const other = join(OUT, `machine-b-${process.pid}`);
  mkdirSync(other, { recursive: true });
  writeFileSync(join(other, "connectors.json"), JSON.stringify({ runtime: { store: url }, connectors: { notes: { type: "files", root: join(other, "notes") } } }));
  // Machine A is the app: it follows its connectors.json onto the same store.
  const config = join(HOME, "connectors.json");
  const before = readFileSync(config, "utf8");
  const mine = JSON.parse(before);
  mine.runtime = { ...(mine.runtime || {}), store: url };
  writeFileSync(config, JSON.stringify(mine, null, 2));
  const agent = await mcpAgent(other);
  try {
    const paused = await agent.tool("codemode", { code: 'async () => notes.write_file({ path: "from-b.txt", content: "approved in the app on A" })' });
    assert(paused.value.status === "paused", JSON.stringify(paused.value));
    await nav("approvals");
    await waitText("#approvals-list", (t) => t.includes("notes.write_file"), "B's pause is in the app's queue", 20000);
    await waitText("#run-host", (t) => t.includes("machine-b"), "the card names the host the run belongs to");
    await shot("shared-store-approvals");
    await click("#approve");
    await waitFor(() => existsSync(join(other, "notes", "from-b.txt")), "written on B, by B's connector");
    assert(readFileSync(join(other, "notes", "from-b.txt"), "utf8") === "approved in the app on A", "what was approved");
    const waited = await agent.tool("codemode_wait", { executionId: paused.value.executionId, timeoutSeconds: 10 });
    assert(waited.value.status === "completed", JSON.stringify(waited.value));
    await waitText("#approvals-empty", (t) => t.includes("Nothing is waiting"), "decided");
    await nav("executions");
    await click(`[data-id="${paused.value.executionId}"]`);
    await waitText("#run-host", (t) => t.includes("machine-b"), "the run's view names its host too");
  } finally {
    agent.close();
    writeFileSync(config, before);
  }
});

await test("settings survive an app restart", async () => {
  await closeSession();
  await session();
  const theme = await browser.execute(() => document.documentElement.dataset.theme);
  assert(theme === "dark", `theme after restart: ${theme}`);
  await nav("settings");
  const value = await (await $("#setting-max-executions")).getValue();
  assert(value === "77", `maxExecutions after restart: ${value}`);
  await (await $("#setting-theme")).selectByAttribute("value", "light");
});

/** A request to the phone page as a phone makes it: trusting only the data directory's authority. */
function phoneRequest(url, { method = "GET", cookie, body, type, origin } = {}) {
  const ca = readFileSync(join(HOME, "phone", "ca.pem"));
  return new Promise((resolve, reject) => {
    const headers = {};
    if (cookie) headers.cookie = cookie;
    if (type) headers["content-type"] = type;
    if (origin) headers.origin = origin;
    const req = httpsRequest(url, { method, ca, headers }, (res) => {
      let text = "";
      res.on("data", (chunk) => { text += chunk; });
      res.on("end", () => resolve({ status: res.statusCode, headers: res.headers, text }));
    });
    req.on("error", reject);
    if (body) req.write(body);
    req.end();
  });
}

await test("approve from a phone: Settings serves the page, a phone pairs by the QR link and decides; Revoke ends it", async () => {
  await nav("settings");
  await clickInPage("#setting-phone");
  const url = (await waitText("#phone-url", (t) => t.startsWith("https://"), "the page's address")).trim();
  await setField("#phone-name", "e2e phone");
  await clickInPage("#pair-phone");
  await (await $("#pair-qr svg")).waitForExist({ timeout: 15000 });
  const link = (await text("#pair-link")).trim();
  assert(link.startsWith(`${url}/pair?code=`), `pairing link: ${link}`);
  await browser.execute(() => document.getElementById("phone-settings").scrollIntoView());
  await shot("settings-phone");
  // The phone opens the link (a form holding the code) and pairs.
  const form = await phoneRequest(link);
  assert(form.status === 200 && form.text.includes(await text("#phone-fingerprint")), "the pairing page shows the fingerprint");
  const code = new URL(link).searchParams.get("code");
  const paired = await phoneRequest(`${url}/pair`, { method: "POST", type: "application/x-www-form-urlencoded", body: `code=${code}`, origin: url });
  assert(paired.status === 303, `pairing answered ${paired.status}: ${paired.text}`);
  const cookie = String(paired.headers["set-cookie"]).split(";")[0];
  // An agent's call waits; the phone sees it and approves it, bound to what it was shown.
  const program = writeProgram("phone.js", `async () => files.write_file({ path: "from-phone.txt", content: "yes" })`);
  const paused = cli("run", program);
  const queue = JSON.parse((await phoneRequest(`${url}/api/queue`, { cookie })).text);
  const waiting = queue.queue.find((q) => q.action.executionId === paused.executionId);
  assert(waiting, `the phone's queue: ${JSON.stringify(queue).slice(0, 300)}`);
  const decided = await phoneRequest(`${url}/api/decide`, {
    method: "POST", cookie, origin: url, type: "application/json",
    body: JSON.stringify({ executionId: paused.executionId, seq: waiting.action.seq, digest: waiting.action.digest, decision: "approve" }),
  });
  assert(decided.status === 200, `decide answered ${decided.status}: ${decided.text}`);
  const shown = cli("show", paused.executionId);
  assert(shown.status === "completed" && shown.log[0].decision.device === "e2e phone", `decision: ${JSON.stringify(shown.log[0].decision)}`);
  // The devices list shows it, with its last use; Revoke ends it at once.
  // The list updates on its own: the store changed.
  await waitText("#phone-devices", (t) => t.includes("e2e phone"), "the paired phone is listed");
  await clickInPage('#phone-devices tr[data-device="e2e phone"] button');
  await waitText("#phone-devices", (t) => t.includes("revoked"), "the phone is revoked");
  const refused = await phoneRequest(`${url}/api/queue`, { cookie });
  assert(refused.status === 401, `a revoked phone's request answered ${refused.status}`);
  await clickInPage("#setting-phone");
  await waitText("#phone-settings", (t) => !t.includes("https://"), "the page is no longer served");
});

// ---- On the desktop (docs/desktop.md): notifications answered through e2e/desktop_bus.py, the tray item read
// and clicked over D-Bus as a panel would, one instance, and the window closed to the tray.

const NOTIFY_RECORD = process.env.NOTIFY_RECORD;
const TRAY_RECORD = process.env.TRAY_RECORD;
function gdbus(...args) {
  return execFileSync("gdbus", ["call", "--session", ...args], { encoding: "utf8" });
}
function notifications() {
  return readFileSync(NOTIFY_RECORD, "utf8").split("\n").filter(Boolean).map((line) => JSON.parse(line));
}
async function waitFor(probe, message, timeout = 15000) {
  let value;
  await browser.waitUntil(async () => { value = await probe(); return !!value; }, { timeout, interval: 50, timeoutMsg: message });
  return value;
}
/** The notification about a waiting call, told apart from earlier ones by a text of its arguments. */
function notificationAbout(summary, needle) {
  return waitFor(() => notifications().find((n) => n.summary === summary && n.body.includes(needle)), `no notification "${summary}" about ${needle}`);
}
function writeProgram(name, code) {
  const path = join(HOME, name);
  writeFileSync(path, code);
  return path;
}
function invoke(nid, key) {
  gdbus("-d", "org.freedesktop.Notifications", "-o", "/org/freedesktop/Notifications", "-m", "dev.codemode.TestDesktop.Invoke", String(nid), key);
}
/** Emits ActionInvoked for notification `nid` from a connection other than the notification server's, as any
 * program on the session bus could (e2e/desktop_bus.py ForgeInvoke); returns that connection's unique name. */
function forgeInvoke(nid, key) {
  return /'([^']*)'/.exec(gdbus("-d", "org.freedesktop.Notifications", "-o", "/org/freedesktop/Notifications", "-m", "dev.codemode.TestDesktop.ForgeInvoke", String(nid), key))[1];
}
function clearQueue() {
  for (const p of cli("pending")) {
    try { cli("reject", p.executionId, String(p.seq)); } catch { /* decided meanwhile */ }
  }
}
function tray() {
  const lines = readFileSync(TRAY_RECORD, "utf8").split("\n").filter(Boolean);
  return lines.length ? JSON.parse(lines[lines.length - 1]) : null;
}
function trayLabel() {
  const item = tray();
  const out = gdbus("-d", item.service, "-o", item.path, "-m", "org.freedesktop.DBus.Properties.Get", "org.kde.StatusNotifierItem", "XAyatanaLabel");
  return /<'([^']*)'>/.exec(out)[1];
}
/** The tray menu as a panel reads it (com.canonical.dbusmenu): [{id, label, enabled}]. */
function trayMenu() {
  const item = tray();
  const out = gdbus("-d", item.service, "-o", `${item.path}/Menu`, "-m", "com.canonical.dbusmenu.GetLayout", "--", "0", "-1", "@as []");
  const entries = [];
  for (const m of out.matchAll(/<\((\d+), \{([^}]*)\}/g)) {
    const label = /'label': <'([^']*)'>/.exec(m[2]);
    // Labels carry GTK mnemonics: "__" is a literal "_", as a panel shows it.
    if (label) entries.push({ id: Number(m[1]), label: label[1].replace(/__/g, "_"), enabled: !/'enabled': <false>/.test(m[2]) });
  }
  return entries;
}
function trayClick(label) {
  const entry = trayMenu().find((e) => e.label.startsWith(label));
  assert(entry, `no tray menu item "${label}" in ${JSON.stringify(trayMenu())}`);
  const item = tray();
  gdbus("-d", item.service, "-o", `${item.path}/Menu`, "-m", "com.canonical.dbusmenu.Event", "--", String(entry.id), "clicked", "<int32 0>", "0");
}
/** The app's processes: its main process and every descendant (WebKit's web and network processes, the worker). */
function appProcesses() {
  const main = execFileSync("pgrep", ["-n", "-f", `target/${PROFILE}/codemode-console`], { encoding: "utf8" }).trim();
  const all = [main];
  for (let i = 0; i < all.length; i++) {
    try { all.push(...execFileSync("pgrep", ["-P", all[i]], { encoding: "utf8" }).trim().split("\n").filter(Boolean)); } catch { /* none */ }
  }
  return all;
}
/** Proportional set size of all the app's processes, MiB, with each process's share. */
function appPss() {
  let kb = 0;
  const parts = [];
  for (const pid of appProcesses()) {
    try {
      const own = Number(/^Pss:\s+(\d+)/m.exec(readFileSync(`/proc/${pid}/smaps_rollup`, "utf8"))[1]);
      const name = readFileSync(`/proc/${pid}/comm`, "utf8").trim();
      kb += own;
      parts.push(`${name} ${Math.round(own / 1024)}`);
    } catch { /* gone */ }
  }
  return { mib: Math.round(kb / 102.4) / 10, processes: parts.length, parts: parts.join(", ") };
}

await test("a notification's Approve decides the call, by notification; answering it again says it is stale", async () => {
  await closeSession();
  await session();
  clearQueue();
  const outcome = cli("run", writeProgram("notified.js", WRITE("notified.txt", "approved from a notification")));
  assert(outcome.status === "paused", JSON.stringify(outcome));
  const note = await notificationAbout("files.write_file awaits approval", "notified.txt");
  assert(note.actions.approve === "Approve" && note.actions.reject === "Reject" && note.actions.default === "Open", JSON.stringify(note));
  assert(note.body.includes("notified.txt") && note.body.includes("from cli"), note.body);
  invoke(note.id, "approve");
  const run = await waitFor(() => { const r = cli("show", outcome.executionId); return r.status === "completed" && r; }, "approved from the notification");
  const decided = run.log.find((e) => e.method === "write_file");
  assert(decided.decision.kind === "approved" && decided.decision.by === "notification", JSON.stringify(decided.decision));
  assert(readFileSync(join(HOME, "workspace", "notified.txt"), "utf8") === "approved from a notification", "the file was written");
  // Decided in the CLI first, then answered from its notification: the answer says it came too late.
  const late = cli("run", writeProgram("notified-late.js", WRITE("notified-late.txt", "approved in the CLI")));
  const lateNote = await notificationAbout("files.write_file awaits approval", "notified-late.txt");
  cli("approve", late.executionId);
  invoke(lateNote.id, "reject");
  const stale = await waitFor(() => notifications().find((n) => n.summary.includes("was not decided from here")), "a notification saying the decision came too late");
  assert(stale.body.includes("completed"), stale.body);
  assert(cli("show", late.executionId).status === "completed", "still completed");
});

await test("a notification's Reject rejects; a server without actions gets none; a confirmInApp rule offers Open only", async () => {
  const rejected = cli("run", writeProgram("notified-reject.js", WRITE("notified-reject.txt", "never")));
  const note = await notificationAbout("files.write_file awaits approval", "notified-reject.txt");
  invoke(note.id, "reject");
  const run = await waitFor(() => { const r = cli("show", rejected.executionId); return r.status === "rejected" && r; }, "rejected from the notification");
  assert(run.log.find((e) => e.method === "write_file").decision.by === "notification", "decided by notification");

  gdbus("-d", "org.freedesktop.Notifications", "-o", "/org/freedesktop/Notifications", "-m", "dev.codemode.TestDesktop.SetActions", "false");
  try {
    const plain = cli("run", writeProgram("notified-plain.js", WRITE("notified-plain.txt", "x")));
    const bare = await notificationAbout("files.write_file awaits approval", "notified-plain.txt");
    assert(Object.keys(bare.actions).length === 0 && bare.advertised === false, JSON.stringify(bare));
    cli("reject", plain.executionId, String(plain.pending[0].seq));
  } finally {
    gdbus("-d", "org.freedesktop.Notifications", "-o", "/org/freedesktop/Notifications", "-m", "dev.codemode.TestDesktop.SetActions", "true");
  }

  cli("rules", "add", JSON.stringify({ id: "deletes-in-the-app", effect: "ask", call: "files.delete_file", confirmInApp: true, reason: "deleting is decided in the window" }));
  try {
    // A process picks up rules another one added within a second (docs/design.md, "Rules").
    await new Promise((r) => setTimeout(r, 1100));
    writeFileSync(join(HOME, "workspace", "keep-me.txt"), "still here");
    const gated = cli("run", writeProgram("notified-delete.js", "async () => files.delete_file({ path: \"keep-me.txt\" })"));
    const open = await notificationAbout("files.delete_file awaits approval", "keep-me.txt");
    assert(JSON.stringify(Object.keys(open.actions)) === JSON.stringify(["default"]), JSON.stringify(open.actions));
    // An Approve that a stale or forged notification sends anyway is refused: the call still waits.
    invoke(open.id, "approve");
    await waitFor(() => notifications().find((n) => n.summary.includes("could not decide")), "a refusal");
    assert(cli("show", gated.executionId).status === "paused", "still paused");
    // Open (the default action) shows that run in the window.
    invoke(open.id, "default");
    await waitText("#approval-detail", (t) => t.includes("files.delete_file") && t.includes(gated.executionId), "the window opened on the run");
    cli("reject", gated.executionId, String(gated.pending[0].seq));
  } finally {
    cli("rules", "remove", "deletes-in-the-app");
  }
});

await test("a notification's body starts with the path and is escaped for markup; a forged ActionInvoked decides nothing", async () => {
  clearQueue();
  // As reported on dunst: a comment opened in one value and closed in another, and a key that looks like
  // `path`, made the notification read as a write of scratch/notes.txt.
  const code = `async () => files.write_file({ a: "<!--", n: "", "pa\\u200bth": "scratch/notes.txt", b: "-->", content: "x".repeat(300), path: "keep-markup.txt" })`;
  const outcome = cli("run", writeProgram("notified-markup.js", code));
  assert(outcome.status === "paused", JSON.stringify(outcome));
  const note = await notificationAbout("files.write_file awaits approval", "keep-markup.txt");
  assert(note.markup === true, "the test server advertises body-markup");
  assert(note.body.startsWith('path: "keep-markup.txt"\n'), note.body);
  assert(!note.body.includes("<") && !note.body.includes(">"), note.body);
  assert(note.body.includes('a: "&lt;!--"') && note.body.includes('b: "--&gt;"'), note.body);
  assert(note.body.includes('"pa\\u{200b}th": "scratch/notes.txt"'), note.body);
  assert(note.body.includes("… (260 more characters)") && note.body.endsWith("from cli"), note.body);

  // Another connection on the bus emits the server's signal for this notification: nothing is decided.
  const forger = forgeInvoke(note.id, "approve");
  const server = /'([^']*)'/.exec(gdbus("-d", "org.freedesktop.DBus", "-o", "/org/freedesktop/DBus", "-m", "org.freedesktop.DBus.GetNameOwner", "org.freedesktop.Notifications"))[1];
  assert(forger !== server, `${forger} is not the server ${server}`);
  forgeInvoke(note.id, "reject");
  await new Promise((r) => setTimeout(r, 1500));
  const still = cli("show", outcome.executionId);
  assert(still.status === "paused", `a forged ActionInvoked decided the call: ${still.status}`);
  assert(!existsSync(join(HOME, "workspace", "keep-markup.txt")), "nothing was written");
  // The server's own answer still counts: the app is still listening to it.
  invoke(note.id, "reject");
  const run = await waitFor(() => { const r = cli("show", outcome.executionId); return r.status === "rejected" && r; }, "rejected from the notification");
  assert(run.log.find((e) => e.method === "write_file").decision.by === "notification", "decided by notification");
});

await test("the tray shows the waiting count and the newest waiting calls; a click opens that run", async () => {
  clearQueue();
  await waitFor(() => tray(), "the tray item registered with the StatusNotifierWatcher");
  await waitFor(() => trayLabel() === "", `an empty label with nothing waiting (label: ${JSON.stringify(trayLabel())})`);
  assert(trayMenu().some((e) => e.label === "Nothing waits for you" && !e.enabled), JSON.stringify(trayMenu()));
  const first = cli("run", writeProgram("tray-1.js", WRITE("tray-1.txt", "1")));
  const second = cli("run", writeProgram("tray-2.js", "async () => files.delete_file({ path: \"tray-1.txt\" })"));
  await waitFor(() => trayLabel() === "2", `the label counts two (label: ${JSON.stringify(trayLabel())})`);
  const labels = trayMenu().map((e) => e.label);
  assert(labels[0] === "files.delete_file — waiting" && labels[1] === "files.write_file — waiting", JSON.stringify(labels));
  for (const item of ["Pause notifications for 1 hour", "Open Codemode Console", "Quit"]) assert(labels.includes(item), `${item} in ${JSON.stringify(labels)}`);
  await nav("executions");
  trayClick("files.write_file");
  await waitText("#approval-detail", (t) => t.includes(first.executionId), "the window on the clicked run");
  // Paused notifications: a new pause raises none, and the menu says until when.
  trayClick("Pause notifications");
  await waitFor(() => trayMenu().some((e) => e.label.startsWith("Resume notifications (paused until")), "the menu says notifications are paused");
  const before = notifications().length;
  const quiet = cli("run", writeProgram("tray-3.js", WRITE("tray-3.txt", "3")));
  await waitFor(() => trayLabel() === "3", "three waiting");
  await new Promise((r) => setTimeout(r, 500));
  assert(notifications().length === before, "no notification while paused");
  trayClick("Resume notifications");
  await waitFor(() => trayMenu().some((e) => e.label === "Pause notifications for 1 hour"), "resumed");
  for (const run of [first, second, quiet]) cli("reject", run.executionId, String(run.pending[0].seq));
  await waitFor(() => trayLabel() === "", "the label clears when nothing waits");
});

await test("a second start hands its codemode://run link to the first window and exits", async () => {
  clearQueue();
  const waiting = cli("run", writeProgram("linked.js", WRITE("linked.txt", "via a link")));
  await nav("settings");
  const started = Date.now();
  const second = spawnSync(join(BIN, "codemode-console"), [`codemode://run/${waiting.executionId}`], { encoding: "utf8", timeout: 20000 });
  assert(second.status === 0, `the second start exited ${second.status}: ${second.stderr}`);
  figure("second start → exit, handing over its link", Date.now() - started, "ms");
  await waitText("#approval-detail", (t) => t.includes(waiting.executionId), "the first window shows the linked run");
  assert(appProcesses().length > 0, "the first app still runs");
  cli("reject", waiting.executionId, String(waiting.pending[0].seq));
});

await test("start at login writes an XDG autostart entry that starts in the tray, and removes it", async () => {
  const entry = join(process.env.HOME, ".config", "autostart", "codemode-console.desktop");
  await nav("settings");
  const box = await $("#setting-start-at-login");
  await box.waitForExist();
  assert(!(await box.isSelected()) && !existsSync(entry), "off by default");
  await click("#setting-start-at-login");
  await waitFor(() => existsSync(entry), "the autostart entry is written");
  const text = readFileSync(entry, "utf8");
  assert(/^Exec=\S*codemode-console --hidden$/m.test(text) && text.includes("Type=Application"), text);
  await click("#setting-start-at-login");
  await waitFor(() => !existsSync(entry), "the autostart entry is removed");
});

await test("closing the window keeps the app in the tray without a web view; the tray opens it again", async () => {
  await nav("approvals");
  await new Promise((r) => setTimeout(r, 1500));
  const open = appPss();
  figure(`PSS of all the app's processes, window open (${PROFILE} build; MiB each: ${open.parts})`, open.mib, "MiB");
  const timings = readFileSync(TIMINGS, "utf8").split("\n").filter(Boolean).length;
  // As a person closes it (a close request, not a kill); after the script returns, as the window goes with it.
  await browser.execute(() => { setTimeout(() => window.__TAURI__.window.getCurrentWindow().close(), 100); return true; });
  await waitFor(() => !appProcesses().some((pid) => { try { return readFileSync(`/proc/${pid}/cmdline`, "utf8").includes("WebKitWebProcess"); } catch { return false; } }),
    "the web process ended with the window", 20000);
  assert(appProcesses().length > 0, "the app keeps running in the tray");
  await new Promise((r) => setTimeout(r, 2000));
  const hidden = appPss();
  figure(`PSS of all the app's processes, closed to the tray (${PROFILE} build; MiB each: ${hidden.parts})`, hidden.mib, "MiB");
  // Still on duty: a pause notifies, and the tray counts it.
  const waiting = cli("run", writeProgram("hidden.js", WRITE("hidden.txt", "while hidden")));
  await notificationAbout("files.write_file awaits approval", "hidden.txt");
  await waitFor(() => trayLabel() === "1", "the tray counts the pause while the window is closed");
  trayClick("Open Codemode Console");
  const ready = await waitFor(() => {
    const lines = readFileSync(TIMINGS, "utf8").split("\n").filter(Boolean);
    return lines.length > timings && lines[lines.length - 1];
  }, "the window came back", 20000);
  figure(`tray → window open again and ready (${PROFILE} build)`, Number(/ready in (\d+) ms/.exec(ready)[1]), "ms");
  cli("reject", waiting.executionId, String(waiting.pending[0].seq));
  // The session's window is gone; the driver ends the app with the session.
  await browser.deleteSession().catch(() => {});
  browser = null;
  try { execFileSync("pkill", ["-f", `target/${PROFILE}/codemode-console`]); } catch { /* ended with the session */ }
});

await test("ten thousand executions: the list scrolls, virtualised", async () => {
  await closeSession();
  execFileSync(join(BIN, "codemode"), ["--home", HOME, "--json", "prune", "--keep", "0"]);
  const seeded = join(BIN, "examples", "seed");
  assert(existsSync(seeded), `${seeded} is built by scripts/e2e`);
  execFileSync(seeded, [HOME, "10000"]);
  figure(`start to interactive window, 10,000 executions (${PROFILE} build, incl. WebDriver session)`, await session(), "ms");
  await nav("executions");
  await waitText("#status-chips", (t) => /All\s*1\d{4}/.test(t.replace(/\n/g, " ")), "the counts", 30000);
  const rendered = await browser.execute(() => document.querySelectorAll("#executions-list .row").length);
  assert(rendered < 100, `only the visible rows are in the DOM (${rendered})`);
  await browser.execute(() => { const list = document.getElementById("executions-list"); list.scrollTop = 34 * 5000; list.dispatchEvent(new Event("scroll")); });
  await browser.waitUntil(async () => (await browser.execute(() => document.querySelectorAll("#executions-list .row").length)) > 0, { timeout: 10000 });
  await shot("executions-10k");
  await new Promise((r) => setTimeout(r, 1500));
  figure(`resident memory of the app's main process, idle with 10,000 executions (${PROFILE} build)`, residentMiB(), "MiB");
});

await test("a broken connectors.json opens a window that says what is wrong, with its line", async () => {
  await closeSession();
  const broken = join(OUT, "broken-home");
  mkdirSync(broken, { recursive: true });
  writeFileSync(join(broken, "connectors.json"), '{\n  "connectors": {\n    "files": { "type": "files", "root": 5 }\n  }\n}\n');
  await session(["--home", broken]);
  const banner = await waitText("#banners", (t) => t.includes("connectors.json is invalid"), "the banner");
  assert(banner.includes("connectors.json:3:"), banner);
  await shot("broken-config");
});

await test("a database from a newer version opens a window that says so, and is left untouched", async () => {
  await closeSession();
  const newer = join(OUT, "newer-home");
  mkdirSync(newer, { recursive: true });
  execFileSync("python3", ["-c", "import sqlite3,sys; c=sqlite3.connect(sys.argv[1]); c.execute('PRAGMA user_version=99'); c.commit()", join(newer, "codemode.db")]);
  const before = readFileSync(join(newer, "codemode.db"));
  await session(["--home", newer]);
  await waitText("#view", (t) => t.includes("cannot be opened"), "the full-page message");
  assert(Buffer.compare(before, readFileSync(join(newer, "codemode.db"))) === 0, "the database is unchanged");
  await shot("newer-database");
});

await closeSession();
writeFileSync(join(OUT, "figures.json"), JSON.stringify(figures, null, 2));
finish();
