// Snippets (completed runs promoted to recipes) and the Playground, where a person runs a program down the same
// path an agent's takes and can approve or reject its pauses inline.

import { app, call, refresh, explain } from "./core.js";

/** @typedef {import('./types/Snippet').Snippet} Snippet */
/** @typedef {import('./types/Outcome').Outcome} Outcome */
import { EditorView, EditorState, Prec, keymap, basicSetup, javascript, javascriptLanguage, autocompletion, indentWithTab } from "./vendor/codemirror.js";
import { h, clear, clock, jsonTree, codeView, statusBadge, toast, dialog, splitPane } from "./widgets.js";

export function snippetsView(root) {
  /** @type {Snippet[]} */
  let snippets = [];
  let selected = null;
  const listBody = h("div.list-body#snippets-list");
  const count = h("span", "");
  const detail = h("div.detail-pane#snippet-detail");
  clear(root, splitPane(h("section.list-pane", h("div.list-head", h("span", "Snippets"), count), listBody), detail));

  async function load() {
    snippets = await call("snippets");
    if (!snippets.some((s) => s.name === selected)) selected = snippets.length ? snippets[0].name : null;
    render();
  }

  function render() {
    count.textContent = String(snippets.length);
    clear(listBody, snippets.length === 0 ? h("div.empty", "No snippets yet. Save a completed run as a snippet from Executions.") : snippets.map((s) =>
      h(`div.card${s.name === selected ? ".selected" : ""}`, { dataset: { name: s.name }, onclick: () => { selected = s.name; render(); } },
        h("div.call", s.name),
        h("div.preview", { style: "font-family:var(--font)" }, s.description || "no description"),
        h("div.chips", (s.connectors || []).map((c) => h("span.tag", c))))));
    const s = snippets.find((x) => x.name === selected);
    if (!s) { clear(detail, h("div.empty", "Select a snippet.")); return; }
    clear(detail, h("div",
      h("div.detail-head",
        h("div", h("h1", h("b", s.name)), h("div.sub", h("span", `saved ${clock(s.savedAt)}`), s.connectors && s.connectors.length ? h("span", `uses ${s.connectors.join(", ")}`) : null)),
        h("div.actions",
          h("button.btn.primary#open-in-playground", { onclick: () => app.open("playground", { code: s.code }) }, "Open in Playground"),
          h("button.btn.danger#delete-snippet", { onclick: () => remove(s) }, "Delete"))),
      h("p", s.description || h("span.dim", "No description.")),
      h("div.dim", { style: "margin-bottom:12px" }, "Agents call it as ", h("span.mono", `codemode.run(${JSON.stringify(s.name)}, input)`), " and find it with codemode.search."),
      h("div.section", h("div.section-head", "Code"), h("div.section-body.flush", codeView(s.code))),
      s.inputSchema ? h("div.section", h("div.section-head", "Input schema"), h("div.section-body", jsonTree(s.inputSchema, 3))) : null));
  }

  async function remove(s) {
    const ok = await dialog(`Delete snippet "${s.name}"?`, h("p", "Agents will no longer find or run it."),
      [{ label: "Cancel", value: () => false }, { label: "Delete", className: "danger", primary: true, id: "confirm-delete-snippet", value: () => true }]);
    if (!ok) return;
    try {
      await call("delete_snippet", { name: s.name });
      toast(`Deleted snippet "${s.name}"`);
    } catch (error) {
      toast(error.message);
    }
    refresh();
  }

  app.refreshers.add(load);
  load().catch((error) => clear(detail, h("div.inline-error", error.message)));
  return {
    key(key) {
      const index = snippets.findIndex((s) => s.name === selected);
      if (key === "j" && index < snippets.length - 1) selected = snippets[index + 1].name;
      else if (key === "k" && index > 0) selected = snippets[index - 1].name;
      else return false;
      render();
      return true;
    },
  };
}

const EXAMPLE = `async () => {
  const listing = await files.list_dir({});
  await files.write_file({ path: "hello.txt", content: "Hello from the playground" });
  return { before: listing.entries.length };
}
`;

let draft = null;

/** Connector → method → argument names, from the connector listing; loaded once, for completion. */
let vocabulary = null;
async function loadVocabulary() {
  if (vocabulary) return vocabulary;
  const listing = await call("connectors");
  vocabulary = new Map(listing.map((c) => [c.name, new Map(c.methods.filter((m) => !m.hidden).map((m) => [m.name, m]))]));
  return vocabulary;
}

/** Completes what a program can call: connector names, `connector.` → its methods (with their descriptions),
 * and inside `connector.method({ … })` the method's argument names. */
async function completeCalls(context) {
  const words = await loadVocabulary().catch(() => new Map());
  const member = context.matchBefore(/[A-Za-z_$][\w$]*\.[\w$]*$/);
  if (member) {
    const [connector, partial] = member.text.split(".");
    const methods = words.get(connector);
    if (!methods) return null;
    return { from: member.to - partial.length, options: [...methods.values()].map((m) => ({
      label: m.name, type: "method", detail: m.requiresApproval ? "needs approval" : undefined, info: m.description || undefined,
      apply: `${m.name}({})`,
    })) };
  }
  // Inside the object argument of a call: its argument names.
  const before = context.state.doc.sliceString(Math.max(0, context.pos - 2000), context.pos);
  const open = /([A-Za-z_$][\w$]*)\.([A-Za-z_$][\w$]*)\(\s*\{[^{}]*$/.exec(before);
  const word = context.matchBefore(/[\w$]*/);
  if (open) {
    const method = words.get(open[1])?.get(open[2]);
    if (method && method.arguments.length) {
      return { from: word.from, options: method.arguments.map((name) => ({ label: name, type: "property", apply: `${name}: ` })) };
    }
  }
  if (!word || (word.from === word.to && !context.explicit)) return null;
  return { from: word.from, options: [...words.keys()].map((name) => ({ label: name, type: "namespace", detail: "connector" })) };
}

/** The program editor: JavaScript highlighting, completion of connectors, methods and argument names,
 * Ctrl+Enter to run. Its element answers `.value` as a textarea does. */
function codeEditor(initial, changed, runIt) {
  const host = h("div.editor#playground-code", { "aria-label": "Program" });
  const view = new EditorView({
    parent: host,
    state: EditorState.create({
      doc: initial,
      extensions: [
        basicSetup,
        javascript(),
        javascriptLanguage.data.of({ autocomplete: completeCalls }),
        autocompletion({ activateOnTyping: true }),
        Prec.highest(keymap.of([{ key: "Mod-Enter", run: () => { runIt(); return true; } }, indentWithTab])),
        EditorView.updateListener.of((update) => { if (update.docChanged) changed(update.state.doc.toString()); }),
      ],
    }),
  });
  Object.defineProperty(host, "value", {
    get: () => view.state.doc.toString(),
    set: (text) => view.dispatch({ changes: { from: 0, to: view.state.doc.length, insert: text }, selection: { anchor: text.length } }),
  });
  return host;
}

export function playgroundView(root, options = {}) {
  if (options.code) draft = options.code;
  const run = h("button.btn.primary#run", { onclick: () => execute() }, "Run", h("kbd", "Ctrl+Enter"));
  const output = h("div#playground-outcome");
  let outcome = null;
  let busy = false;
  const editor = codeEditor(draft ?? EXAMPLE, (code) => { draft = code; }, () => execute());

  const connectors = h("span.dim", "");
  clear(root, h("div.playground",
    h("div.detail-head", h("div", h("h1", "Playground"), h("div.sub", "Runs exactly as an agent's program does: approval gates, the audit log and rollback included. ", connectors)), h("div.actions", run)),
    editor,
    output));

  function render() {
    if (!outcome) { clear(output); return; }
    if (outcome.failure) { clear(output, h("div.inline-error", outcome.failure)); return; }
    const o = outcome;
    const parts = [h("div.detail-head", h("div", h("h1", statusBadge(o.status), " ", h("span.mono", o.executionId || "")), null),
      o.executionId ? h("div.actions", h("button.btn", { onclick: () => app.open("executions", { id: o.executionId }) }, "Open in Executions")) : null)];
    if (o.status === "paused") {
      for (const p of o.pending) {
        parts.push(h("div.section#playground-pending",
          h("div.section-head", h("span", { style: "text-transform:none;letter-spacing:0;font-size:13px;color:var(--text)" }, h("b.mono", `${p.connector}.${p.method}`), " awaits approval"),
            h("span.actions", h("button.btn.small.reject#playground-reject", { disabled: busy, onclick: () => decide("reject", p) }, "Reject"),
              h("button.btn.small.approve#playground-approve", { disabled: busy, onclick: () => decide("approve", p) }, "Approve"))),
          h("div.section-body", p.args === undefined ? h("span.dim", "no arguments") : jsonTree(p.args, 2))));
      }
    }
    if (o.status === "error" || o.status === "rejected") parts.push(h("div.inline-error#playground-error", o.error));
    if (o.status === "completed") parts.push(h("div.section", h("div.section-head", "Result"), h("div.section-body#playground-result", o.result === undefined ? h("span.dim", "undefined") : jsonTree(o.result, 3))));
    if (o.logs && o.logs.length) parts.push(h("div.section", h("div.section-head", "Console"), h("div.section-body", h("pre.mono", { style: "margin:0" }, o.logs.join("\n")))));
    clear(output, parts);
  }

  async function execute() {
    if (busy) return;
    busy = true;
    run.disabled = true;
    clear(output, h("div.dim", "Running…"));
    try {
      outcome = await call("run_program", { code: editor.value });
    } catch (error) {
      outcome = { failure: error.message };
    }
    busy = false;
    run.disabled = false;
    render();
    refresh();
  }

  async function decide(kind, p) {
    busy = true;
    render();
    try {
      if (kind === "approve") outcome = await call("approve", { id: p.executionId });
      else {
        await call("reject", { id: p.executionId, seq: p.seq });
        const stored = await call("execution", { id: p.executionId });
        outcome = { status: stored.status, executionId: stored.id, error: stored.error };
      }
    } catch (error) {
      toast(explain(error));
    }
    busy = false;
    render();
    refresh();
  }

  return {};
}
