// Connectors: what agents can call, whether each MCP server is up, and managing them — add a server (a command,
// a URL, or a pasted Claude Desktop `mcpServers` object), test it, gate or hide its tools, edit their revert and
// preview templates, sign in to remote ones, remove. Every change is written to connectors.json, which the CLI
// and every `codemode mcp` follow without a restart (docs/api.md, "Managing connectors").

import { app, call, abbreviate } from "./core.js";
import { h, clear, toast, dialog, modal } from "./widgets.js";

/** @typedef {import('./types/ConnectorInfo').ConnectorInfo} ConnectorInfo */
/** @typedef {import('./types/TestReport').TestReport} TestReport */
/** @typedef {import('./types/ServerDraft').ServerDraft} ServerDraft */

const FLAGS = [["approval", "Approval", (m) => m.requiresApproval], ["reexecute", "Reexecute", (m) => m.replay === "reexecute"], ["hidden", "Hidden", (m) => m.hidden]];

export function connectorsView(root) {
  const page = h("div.pagewide#connectors-page");
  clear(root, page);
  let adding = null;

  const head = () => {
    const overview = app.overview || {};
    const parts = [h("h2", { style: "display:flex;align-items:center;gap:12px" }, "Connectors",
      h("button.btn.small#add-server", { onclick: () => { adding = adding ? null : addPanel(); load(); } }, adding ? "Close" : "Add server"))];
    if (overview.configError) parts.push(h("div.inline-error#config-error", `connectors.json is invalid:\n${overview.configError}`));
    if (adding) parts.push(adding);
    return parts;
  };

  /** @param {ConnectorInfo[]} cards @param {boolean} starting */
  function render(cards, starting) {
    const overview = app.overview || {};
    const blocks = cards.map((c) => section(c, starting, load));
    clear(page, head(), blocks.length ? blocks : h("div.empty", "No connectors are configured. Add a server above."),
      h("div.dim", { style: "margin-top:8px" }, `Configured in ${abbreviate(overview.dataDir)}/connectors.json — shared with the codemode CLI and codemode mcp.`));
  }

  async function load() {
    // What is configured first, servers not started shown as starting; then the listing, which starts them.
    try {
      render(await call("configured_connectors"), true);
      render(await call("connectors"), false);
    } catch (error) {
      clear(page, head(), h("div.inline-error", error.message));
    }
  }

  function addPanel() {
    const field = (id, placeholder) => h(`input.text#${id}`, { placeholder, style: "width:100%" });
    const area = (id, placeholder, rows = 3) => h(`textarea.text.mono#${id}`, { placeholder, rows, style: "width:100%" });
    const name = field("server-name", "github");
    const command = field("server-command", "npx");
    const args = area("server-args", "one argument per line\n-y\n@modelcontextprotocol/server-github");
    const env = area("server-env", "KEY=value, one per line");
    const url = field("server-url", "https://mcp.example.com/mcp");
    const headers = area("server-headers", "Header: value, one per line");
    const caFile = field("server-ca-file", "optional: a private CA (PEM), for https");
    const paste = area("server-paste", '{"mcpServers": {"memory": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-memory"]}}}', 7);
    let mode = "command";
    const result = h("div#server-test-result");
    const lines = (el) => el.value.split("\n").map((l) => l.trim()).filter(Boolean);
    const pairs = (el, sep) => Object.fromEntries(lines(el).map((l) => { const i = l.indexOf(sep); return i < 0 ? [l, ""] : [l.slice(0, i).trim(), l.slice(i + 1).trim()]; }));
    /** @returns {ServerDraft} */
    const draft = () => mode === "url"
      ? { name: name.value.trim(), command: null, args: [], env: {}, cwd: null, url: url.value.trim(), headers: pairs(headers, ":"), caFile: caFile.value.trim() || null }
      : { name: name.value.trim(), command: command.value.trim(), args: lines(args), env: pairs(env, "="), cwd: null, url: null, headers: {}, caFile: null };
    const target = () => mode === "paste" ? { kind: "pasted", text: paste.value } : { kind: "draft", draft: draft() };
    const test = h("button.btn#test-server", { onclick: async () => {
      test.disabled = true;
      clear(result, h("div.dim", "Starting the server…"));
      try {
        clear(result, testReport(await call("test_server", { target: target() })));
      } catch (error) {
        clear(result, h("div.inline-error", error.message));
      }
      test.disabled = false;
    } }, "Test");
    const save = h("button.btn.primary#save-server", { onclick: async () => {
      try {
        if (mode === "paste") {
          const names = await call("add_pasted", { text: paste.value });
          toast(`Added ${names.join(", ")} to connectors.json`);
        } else {
          await call("add_server", { draft: draft() });
          toast(`Added ${name.value.trim()} to connectors.json`);
        }
        adding = null;
        load();
      } catch (error) {
        clear(result, h("div.inline-error#server-add-error", error.message));
      }
    } }, "Add");
    const body = h("div.section-body");
    const tabs = h("div.tabs", ["command", "url", "paste"].map((m) =>
      h(`button.btn.small#server-mode-${m}`, { onclick: () => { mode = m; show(); } }, { command: "Command", url: "URL", paste: "Paste Claude Desktop config" }[m])));
    const show = () => {
      for (const b of tabs.children) b.classList.toggle("primary", b.id === `server-mode-${mode}`);
      const rows = mode === "paste"
        ? [h("label", { for: "server-paste" }, "mcpServers"), paste, h("span.help", "The whole claude_desktop_config.json, or its mcpServers object.")]
        : mode === "url"
          ? [h("label", { for: "server-name" }, "Name"), name, h("span.help", "What programs call it by."),
            h("label", { for: "server-url" }, "URL"), url, h("span.help", "Streamable HTTP; https uses the system's trust store."),
            h("label", { for: "server-headers" }, "Headers"), headers, h("span.help", "Kept in connectors.json, never shown again."),
            h("label", { for: "server-ca-file" }, "CA file"), caFile, h("span.help", "")]
          : [h("label", { for: "server-name" }, "Name"), name, h("span.help", "What programs call it by."),
            h("label", { for: "server-command" }, "Command"), command, h("span.help", ""),
            h("label", { for: "server-args" }, "Arguments"), args, h("span.help", ""),
            h("label", { for: "server-env" }, "Environment"), env, h("span.help", "Kept in connectors.json, never shown again.")];
      clear(body, tabs, h("div.form", { style: "margin-top:10px" }, ...rows, h("span"), h("span", { style: "display:flex;gap:8px" }, test, save), h("span.help", "Test starts it and lists its tools; nothing is saved until Add.")), result);
    };
    show();
    return h("div.section#add-server-panel", h("div.section-head", "Add an MCP server"), body);
  }

  load();
  const unlisten = window.__TAURI__.event.listen("connectors-changed", () => { if (!adding) load(); });
  return { leave: () => unlisten.then((f) => f()) };
}

/** @param {TestReport} report */
function testReport(report) {
  if (!report.ok) return h("div.inline-error#server-test-error", report.error || "the server failed");
  return h("div#server-test-tools", h("div", { style: "margin:8px 0" }, h("b", `${report.name}: ${report.tools.length} tool${report.tools.length === 1 ? "" : "s"}`)),
    h("div.dim.mono", report.tools.map((t) => t.name).join("  ")));
}

/** @param {ConnectorInfo} c @param {boolean} starting */
function section(c, starting, reload) {
  const status = starting && c.status === "stopped" ? "starting" : c.status;
  const mcp = c.kind === "mcp";
  const buttons = [];
  const asked = (c.error || "").includes("sign-in");
  if (c.signedIn === false) buttons.push(h(`button.btn.small.sign-in${asked ? ".primary" : ""}`, { onclick: (e) => signIn(c.name, e.currentTarget, reload) }, "Sign in"));
  if (c.signedIn === true) buttons.push(h("span.dim", "Signed in"), h("button.btn.small.sign-out", { onclick: async () => { await act(() => call("sign_out", { connector: c.name }), `Signed out of ${c.name}`); reload(); } }, "Sign out"));
  if (mcp) buttons.push(h("button.btn.small.test-connector", { onclick: async (e) => {
    e.currentTarget.disabled = true;
    try {
      const report = await call("test_server", { target: { kind: "configured", name: c.name } });
      toast(report.ok ? `${c.name}: ${report.tools.length} tools` : report.error);
    } catch (error) { toast(error.message); }
    reload();
  } }, "Test"));
  buttons.push(h("button.btn.small.remove-connector", { onclick: async () => {
    const sure = await dialog(`Remove ${c.name}?`, h("p", "It is taken out of connectors.json; programs can no longer call it. Recorded runs keep their calls."),
      [{ label: "Cancel", value: () => false }, { label: "Remove", className: "reject", primary: true, id: "confirm-remove", value: () => true }]);
    if (sure && await act(() => call("remove_connector", { name: c.name }), `Removed ${c.name}`)) reload();
  } }, "Remove"));
  const flagCell = (m, [flag, label, has]) => {
    const editable = mcp || flag === "approval";
    const box = h("input", { type: "checkbox", checked: has(m), disabled: !editable, title: `${label} for ${c.name}.${m.name}`, dataset: { flag, method: m.name } });
    box.addEventListener("change", async () => {
      box.disabled = true;
      await act(() => call("set_method_flag", { connector: c.name, method: m.name, flag, on: box.checked }), `${c.name}.${m.name}: ${label.toLowerCase()} ${box.checked ? "on" : "off"}`);
      reload();
    });
    return h("td", box);
  };
  const templates = (m) => mcp
    ? h("td.templates", h("button.btn.small.link", { onclick: () => editTemplate(c, m, "revert", reload) }, m.revertible ? "Revert ✓" : "Revert…"),
      h("button.btn.small.link", { onclick: () => editTemplate(c, m, "preview", reload) }, c.previews[m.name] ? "Preview ✓" : "Preview…"))
    : h("td", m.revertible ? h("span.flag", "✓") : "");
  return h("div.section", { dataset: { connector: c.name, status } },
    h("div.section-head",
      h("span", { style: "display:flex;gap:8px;align-items:center;text-transform:none;letter-spacing:0;font-size:13px;color:var(--text)" },
        h(`span.dot.${status === "error" ? "error" : status === "ready" ? "applied" : "step"}`, { title: status }),
        h("b.mono", c.name), h("span.tag", c.kind), h("span.dim.connector-status", status === "starting" ? "starting…" : status)),
      h("span", { style: "display:flex;gap:8px;align-items:center;text-transform:none;letter-spacing:0;font-weight:400" },
        h("span.mono", abbreviate(c.endpoint)), ...buttons)),
    c.error ? h("div.section-body", h("div.inline-error", { style: "margin:0" }, c.error)) : null,
    c.hint ? h("div.section-body.dim", `Hint for the model: ${c.hint}`) : null,
    c.methods.length ? h("div.section-body.flush", h("table.methods",
      h("thead", h("tr", ["Method", "Approval", "Reexecute", "Hidden", "Revert / preview", "Description"].map((t) => h("th", t)))),
      h("tbody", c.methods.map((m) => h("tr", { dataset: { method: m.name } },
        h("td.mono", m.name, annotations(m)),
        ...FLAGS.map((f) => flagCell(m, f)),
        templates(m),
        h("td.dim", (m.description || "").split("\n")[0])))))) : null);
}

/** What the server declares of a method (MCP tool annotations) and, when the connector gates by them, the gate
 * that follows ("approval \"writes\": readOnlyHint: true"). */
function annotations(m) {
  const said = [];
  if (m.readOnlyHint === true) said.push("read-only");
  if (m.destructiveHint === true) said.push("destructive");
  if (m.readOnlyHint === false && m.destructiveHint === false) said.push("additive");
  const byHints = m.gate && /^approval "(writes|destructive)"/.test(m.gate);
  if (!said.length && !byHints) return null;
  const moved = m.gateChanged;
  return h("div.dim.annotations", { title: m.gate || "" },
    said.length ? said.join(", ") : "not annotated",
    byHints ? ` · ${m.requiresApproval ? "asks" : "runs"} (${m.gate.split(":")[0]})` : "",
    moved ? h("div.gate-moved", { title: `before: ${moved.gate}` },
      `⚠ the server declares this tool differently since ${new Date(moved.at).toLocaleDateString()}: it ${moved.asked ? "asked" : "ran"} before`) : null);
}

async function act(f, done) {
  try {
    await f();
    toast(done);
    return true;
  } catch (error) {
    toast(error.message);
    return false;
  }
}

async function signIn(name, button, reload) {
  button.disabled = true;
  toast(`Signing in to ${name} in your browser…`);
  await act(() => call("sign_in", { connector: name }), `Signed in to ${name}`);
  reload();
}

/** The revert or preview template of one tool, as JSON: {"method": …, "args": {…}}. */
function editTemplate(c, m, field, reload) {
  const example = field === "revert"
    ? '{"method": "delete_entities", "args": {"entityNames": ["{{args.entities.0.name}}"]}}'
    : '{"method": "open_nodes", "args": {"names": ["{{args.observations.0.entityName}}"]}}';
  const current = (field === "revert" ? c.reverts : c.previews)[m.name];
  const text = h("textarea.text.mono#template-text", { rows: 6, style: "width:100%", placeholder: example, value: current ? JSON.stringify(current, null, 2) : "" });
  const error = h("div");
  const help = field === "revert"
    ? "The call that undoes this one; {{args.x}} and {{result.y}} are filled from the recorded call."
    : "A read-only call shown to a person before they decide; only {{args.x}}.";
  const save = async (template) => {
    try {
      await call("set_template", { connector: c.name, method: m.name, field, template });
      box.close(true);
      toast(template ? `${c.name}.${m.name}: ${field} saved` : `${c.name}.${m.name}: ${field} removed`);
      reload();
    } catch (e) {
      clear(error, h("div.inline-error", e.message));
    }
  };
  const box = modal(`${field === "revert" ? "Revert" : "Preview"} for ${c.name}.${m.name}`, h("div", h("p.dim", help), text, error), [
    h("button.btn", { onclick: () => save(null) }, "Remove"),
    h("button.btn", { onclick: () => box.close(null) }, "Cancel"),
    h("button.btn.primary#template-save", { onclick: () => {
      let template;
      try { template = JSON.parse(text.value); } catch (e) { clear(error, h("div.inline-error", `Not JSON: ${e.message}`)); return; }
      save(template);
    } }, "Save")], { wide: true });
}
