// Approvals: the queue of paused runs and, for the selected one, everything a person needs to decide — the
// pending call and its arguments, the program with that call located, and what already happened in the run.

import { app, call, refresh, explain } from "./core.js";

/** @typedef {import('./types/ApprovalCard').ApprovalCard} ApprovalCard */
/** @typedef {import('./types/QueuedCall').QueuedCall} QueuedCall */
/** @typedef {import('./types/Outcome').Outcome} Outcome */
import { h, clear, ago, clock, shortId, argumentLine, argumentTable, previewPane, codeView, callLine, stateDot, statusBadge, hostLabel, hostNote, resultSummary, toast, copy, splitPane, modal, debounce, dialog, PRESET_REASONS, timeLeft } from "./widgets.js";

const keyOf = (card) => `${card.action.executionId}:${card.action.seq}`;

export function approvalsView(root, options = {}) {
  /** The queue's rows: each call with its run's source and times, no code or log (docs/performance.md,
   * "Lean reads"). @type {QueuedCall[]} */
  let cards = [];
  /** Whole cards (the run's code and log) by key, each with the run's `updatedAt` it was read at: a run's card
   * is read when it is first shown and again only when the run changed. */
  const wholeCards = new Map();
  let selected = options.id || null;
  let busy = false;
  let message = null;
  /** Half-typed rejection reasons, by card, so a live re-render does not lose them. */
  const reasons = new Map();
  /** Cards picked for a decision together (`x`, shift-click, "all from this source"), by key. */
  const picked = new Set();
  let lastPicked = null;
  /** Previews by card: a PreviewView, null (nothing to show), "loading", or {error}. Computed once per card. */
  const previews = new Map();

  async function loadPreview(card) {
    const key = keyOf(card);
    if (previews.has(key)) return;
    previews.set(key, "loading");
    try {
      previews.set(key, await call("preview", { id: card.action.executionId, seq: card.action.seq }));
    } catch (error) {
      previews.set(key, { error: explain(error) });
    }
    // Only the preview's own slot changes: the rest of the pane (an opened JSON node, a typed reason) stays.
    const slot = detail.querySelector(".preview-slot");
    if (key === selected && slot) clear(slot, previewSection(previews.get(key)));
  }

  const count = h("span", "");
  const listBody = h("div.list-body#approvals-list");
  const detail = h("div.detail-pane#approval-detail");
  clear(root, splitPane(h("section.list-pane", h("div.list-head", h("span", "Waiting for you"), count), listBody), detail));

  async function load() {
    cards = await call("pending");
    for (const key of previews.keys()) if (!cards.some((c) => keyOf(c) === key)) previews.delete(key);
    for (const key of wholeCards.keys()) if (!cards.some((c) => keyOf(c) === key)) wholeCards.delete(key);
    for (const key of picked) if (!cards.some((c) => keyOf(c) === key)) picked.delete(key);
    if (!cards.some((c) => keyOf(c) === selected || c.action.executionId === selected)) {
      selected = cards.length ? keyOf(cards[0]) : null;
    } else if (!cards.some((c) => keyOf(c) === selected)) {
      selected = keyOf(cards.find((c) => c.action.executionId === selected));
    }
    const entry = current();
    if (entry) await loadWhole(entry);
    render();
  }

  /** The whole card of a queued call, read unless the one held was read at the run's current `updatedAt`. */
  async function loadWhole(entry) {
    const key = keyOf(entry);
    const held = wholeCards.get(key);
    if (held && held.updatedAt === entry.updatedAt) return;
    try {
      wholeCards.set(key, { updatedAt: entry.updatedAt, card: await call("approval_card", { id: entry.action.executionId, seq: entry.action.seq }) });
    } catch (error) {
      wholeCards.set(key, { updatedAt: entry.updatedAt, error: explain(error) });
    }
  }

  function current() {
    return cards.find((c) => keyOf(c) === selected) || null;
  }

  function select(key) {
    if (key === selected) return;
    selected = key;
    message = null;
    render();
  }

  /** What the list and the detail show now, as JSON: a live update that changes neither leaves them alone, so
   * open JSON nodes, the scroll position, a selection and the caret in the reason stay where they are. */
  let listShown = null;
  let detailShown = null;

  function render() {
    count.textContent = String(cards.length);
    const list = JSON.stringify([cards.map((c) => [keyOf(c), c.action, c.source, c.expiresAt]), selected, [...picked], busy, Math.floor(Date.now() / 60000)]);
    if (list !== listShown) {
      listShown = list;
      renderList();
    }
    const entry = current();
    if (!entry) {
      detailShown = null;
      clear(detail, emptyState());
      return;
    }
    loadPreview(entry);
    const held = wholeCards.get(keyOf(entry));
    if (!held || held.updatedAt !== entry.updatedAt) {
      // Selected a moment ago: its card is read, then shown.
      loadWhole(entry).then(() => { if (current() === entry) render(); });
      if (!held) return;
    }
    const shown = JSON.stringify([held, message, busy, Math.floor(Date.now() / 60000)]);
    if (shown === detailShown && detail.firstChild) return;
    detailShown = shown;
    clear(detail, held.card ? decision(entry, held.card) : h("div.inline-error", held.error));
  }

  /** "within 23 min" / "within 2 h 5 min" / "now": the time left before a `decideWithin` deadline. */

  function renderList() {
    const items = cards.map((card) => {
      const { action, source, createdAt, expiresAt } = card;
      const key = keyOf(card);
      const left = expiresAt - Date.now();
      const when = action.decideBy ? `decide ${timeLeft(action.decideBy)}`
        : left < 3600_000 ? `expires in ${Math.max(1, Math.round(left / 60000))} min` : ago(createdAt);
      const box = h("input.pick", { type: "checkbox", checked: picked.has(key), title: "Pick for a decision together (x)",
        onclick: (event) => { event.stopPropagation(); pick(key, event.shiftKey); } });
      return h(`div.card${key === selected ? ".selected" : ""}${picked.has(key) ? ".picked" : ""}`,
        { onclick: (event) => (event.shiftKey ? pick(key, true) : select(key)), dataset: { id: action.executionId, key } },
        box,
        h("div.call", `${action.connector}.${action.method}`),
        // The API's rendering of the arguments (crates/api/src/display.rs): the target first, whole.
        h("div.preview", argumentLine(card.arguments) || "no arguments"),
        h("div.meta", h("span", `${shortId(action.executionId)}${source ? " · " + source : ""}`), h("span", when)));
    });
    clear(listBody, picked.size ? batchBar() : null, items);
  }

  /** Picks or unpicks a card; with shift, every card between the last one picked and this one. */
  function pick(key, range = false) {
    const keys = cards.map(keyOf);
    if (range && lastPicked && keys.includes(lastPicked)) {
      const [a, b] = [keys.indexOf(lastPicked), keys.indexOf(key)].sort((x, y) => x - y);
      for (const k of keys.slice(a, b + 1)) picked.add(k);
    } else if (picked.has(key)) {
      picked.delete(key);
    } else {
      picked.add(key);
    }
    lastPicked = key;
    render();
  }

  function batchBar() {
    const reason = h("input.text#batch-reason", { type: "text", placeholder: "Reason for the agents (optional)", list: "reason-presets", maxLength: 4000 });
    return h("div.batch-bar#batch-bar",
      h("b", `${picked.size} picked`),
      h("button.btn.small.approve#approve-picked", { disabled: busy, onclick: () => decideMany("approve", "") }, "Approve all"),
      reason,
      h("button.btn.small.reject#reject-picked", { disabled: busy, onclick: () => decideMany("reject", reason.value) }, "Reject all"),
      h("span.link", { onclick: () => { picked.clear(); render(); } }, "clear"));
  }

  /** Approves or rejects every picked call, each its own decision, and reports what happened to each. */
  async function decideMany(kind, reasonText) {
    const chosen = cards.filter((c) => picked.has(keyOf(c)));
    if (!chosen.length || busy) return;
    busy = true;
    render();
    let results = [];
    try {
      if (kind === "approve") {
        // One decision per run (a run waits on one call at a time), each bound to the call shown.
        const seen = new Set();
        const calls = chosen.filter((c) => !seen.has(c.action.executionId) && seen.add(c.action.executionId))
          .map((c) => ({ executionId: c.action.executionId, seq: c.action.seq, digest: c.action.digest }));
        results = await call("approve_many", { calls });
      } else {
        const reason = reasonText.trim();
        results = await call("reject_many", { calls: chosen.map((c) => ({ executionId: c.action.executionId, seq: c.action.seq, digest: c.action.digest })), reason: reason || null });
      }
    } catch (error) {
      toast(explain(error));
    }
    busy = false;
    picked.clear();
    await refresh();
    render();
    if (results.length) report(kind, results);
  }

  function report(kind, results) {
    const failed = results.filter((r) => r.error);
    const rows = results.map((r) => {
      const what = r.error ? `not decided: ${r.error.message}`
        : kind === "reject" ? "rejected"
        : r.outcome.status === "completed" ? "approved — the run completed"
        : r.outcome.status === "paused" ? `approved — paused again at ${r.outcome.pending.map((p) => `${p.connector}.${p.method}`).join(", ")}`
        : `approved — the run ended in error: ${r.outcome.error}`;
      return h(`tr${r.error ? ".failed" : ""}`, h("td.mono", shortId(r.executionId)), h("td", what));
    });
    dialog(`${kind === "approve" ? "Approved" : "Rejected"} ${results.length - failed.length} of ${results.length}`,
      h("table.report#batch-report", rows), [{ label: "Close", primary: true, id: "close-report", value: () => true }]);
  }

  function emptyState() {
    const overview = app.overview || {};
    const binary = overview.codemodePath || "codemode";
    return h("div", { style: "max-width: 720px" },
      h("div.empty#approvals-empty", h("div", { style: "font-size:16px;color:var(--text);margin-bottom:6px" }, "Nothing is waiting for you."),
        "When an agent's program reaches a call that needs your approval, it appears here."),
      h("div.section#connect-agent",
        h("div.section-head", "Connect an agent", h("button.btn.small", { onclick: () => copy(overview.mcpConfig || "", "MCP config copied") }, "Copy")),
        h("div.section-body",
          h("div.dim", "Claude Desktop (claude_desktop_config.json) or Cursor (~/.cursor/mcp.json):"),
          h("pre.snippet.mono", overview.mcpConfig || ""),
          h("div.dim", "Claude Code:"),
          h("pre.snippet.mono", `claude mcp add codemode -- ${binary}${overview.mcpConfig && overview.mcpConfig.includes("--home") ? ` --home ${overview.dataDir}` : ""} mcp`),
          h("div.dim", "Or try the whole loop without an agent in the ", h("span.link", { onclick: () => app.open("playground") }, "Playground"), "."))));
  }

  /** The detail of a queued call (`entry`) from its whole card. */
  function decision(entry, card) {
    const { action, execution } = card;
    const earlier = execution.log.filter((e) => e.seq < action.seq);
    const nth = earlier.filter((e) => e.connector === action.connector && e.method === action.method).length;
    const line = callLine(execution.code, action.connector, action.method, nth);
    const approve = h("button.btn.approve#approve", { onclick: () => decide("approve"), disabled: busy }, "Approve", h("kbd", "a"));
    const reject = h("button.btn.reject#reject", { onclick: () => decide("reject"), disabled: busy }, "Reject", h("kbd", "r"));
    const edit = h("button.btn#edit-approve", { onclick: () => editThenApprove(entry), disabled: busy, title: "Edit the arguments, then approve" }, "Edit…", h("kbd", "e"));
    const allow = h("button.btn#approve-allow", { onclick: () => approveAndAllow(entry), disabled: busy, title: "Approve, and let calls like this one through from now on" }, "Approve and allow…", h("kbd", "A"));
    // The agent reads the reason in the run's error ("… rejected by user: <reason>"); kept across re-renders.
    const reason = h("input.text.reason#reject-reason", {
      type: "text", placeholder: "Reason for the agent (optional)", value: reasons.get(keyOf(card)) || "", maxLength: 4000, list: "reason-presets",
      oninput: (event) => reasons.set(keyOf(card), event.target.value),
      onkeydown: (event) => {
        if (event.key === "Enter") { event.preventDefault(); decide("reject"); }
        else if (event.key === "Escape") event.target.blur();
      },
    });
    const applied = earlier.filter((e) => e.state === "applied").length;
    return h("div",
      h("div.detail-head",
        h("div",
          h("h1#pending-title", h("b", `${action.connector}.${action.method}`), " awaits approval"),
          h("div.sub", statusBadge("paused"),
            h("span.mono.link", { title: "Copy the run id", onclick: () => copy(action.executionId, "Run id copied") }, action.executionId),
            h("span", `started ${clock(execution.createdAt)}`),
            execution.source ? h("span", `from ${execution.source}`) : null,
            execution.host ? hostLabel(execution.host) : null,
            action.askedBy ? h("span#asked-by", `asked by rule ${action.askedBy}`) : null,
            card.quorum ? h("span#quorum", { title: "This call runs once enough different people approved it; a rejection by anyone ends it" }, card.quorum) : null,
            action.decideBy ? h("span#decide-by", { title: "Nobody deciding by then rejects the call as expired, and the agent is told so" }, `decide ${timeLeft(action.decideBy)}`) : null,
            action.askInClient ? h("span#ask-in-client", { title: "Also asked in the agent's own client; the first answer counts" }, "asked in the client too") : null,
            execution.source && cards.filter((c) => c.source === execution.source).length > 1
              ? h("span.link#pick-source", { onclick: () => { for (const c of cards) if (c.source === execution.source) picked.add(keyOf(c)); render(); } }, `pick all from ${execution.source}`) : null)),
        h("div.actions.decide", reason, reject, edit, allow, approve),
        h("datalist#reason-presets", PRESET_REASONS.map((r) => h("option", { value: r })))),
      message ? h("div.inline-error#decision-error", message) : null,
      hostNote(execution),
      action.interrupted ? h("div.note", "This call may already have been applied: the process running it died mid-call. Approving runs it again.") : null,
      h("div.preview-slot", previewSection(previews.get(keyOf(card)))),
      h("div.section#arguments",
        h("div.section-head", "Arguments", h("button.btn.small", { onclick: () => copy(JSON.stringify(action.args ?? null, null, 2), "Arguments copied") }, "Copy")),
        h("div.section-body", argumentTable(card.arguments))),
      h("div.section#program",
        h("div.section-head", "Program", line ? h("span", `line ${line} makes the pending call`) : null),
        h("div.section-body.flush", codeView(execution.code, line))),
      h("div.section#earlier",
        h("div.section-head", "Earlier calls in this run — replayed on approval", h("span", `${applied} applied`)),
        h("div.section-body.flush.timeline",
          earlier.map((e) => h("div.entry", h("div.entry-head", stateDot(e),
            h("span.seq", `#${e.seq}`),
            h(`span.name${e.connector === "__step" ? ".italic" : ""}`, e.connector === "__step" ? e.method : `${e.connector}.${e.method}`),
            h("span.right", [resultSummary(e.result), e.state].filter(Boolean).join(" · "))))),
          h("div.entry", h("div.entry-head", h("span.dot.pending"), h("span.seq", `#${action.seq}`),
            h("b.name", `${action.connector}.${action.method}`), h("span.right", "pending your decision"))))));
  }

  function previewSection(view) {
    if (view === null) return null;
    const body = view === undefined || view === "loading" ? h("span.dim", "Working out what this call would change…")
      : view.error ? h("span.dim", `No preview: ${view.error}`) : previewPane(view);
    return h("div.section#preview", h("div.section-head", "What this call would change"), h("div.section-body", body));
  }

  /** Edit, then approve: the arguments as JSON, checked against the tool's input schema before Approve is
   * offered; what runs is the edit, and the run's log keeps what the program sent. */
  function editThenApprove(card) {
    if (busy) return;
    const { executionId, connector, method } = card.action;
    const area = h("textarea.text.json#edit-args", { spellcheck: false, value: JSON.stringify(card.action.args ?? {}, null, 2) });
    const check = h("div.check#edit-check", "");
    const send = h("button.btn.approve#confirm-edit", { disabled: true }, "Approve with these arguments");
    let args = null;
    const verify = debounce(async () => {
      send.disabled = true;
      try {
        args = JSON.parse(area.value);
      } catch (error) {
        check.className = "check bad";
        check.textContent = `Not JSON: ${error.message}`;
        return;
      }
      try {
        await call("check_edit", { id: executionId, args });
        check.className = "check ok";
        check.textContent = "Fits the tool's input schema.";
        send.disabled = false;
      } catch (error) {
        check.className = "check bad";
        check.textContent = explain(error);
      }
    }, 150);
    area.addEventListener("input", verify);
    verify();
    const cancel = h("button.btn", "Cancel");
    const m = modal(`Edit ${connector}.${method}, then approve`, h("div", h("div.dim", "The call runs with these arguments; the run's log keeps what the program sent, and both are shown in Executions."), area, check), [cancel, send], { wide: true, id: "edit-modal" });
    cancel.onclick = () => m.close(null);
    send.onclick = () => m.close(args);
    m.closed.then(async (edited) => {
      if (!edited) return;
      await decide("approve", edited);
    });
  }

  /** Approve and allow: approves, and adds an allow rule shaped here from the call — each argument exact, a
   * glob, a prefix or anything; the run's source or any; for a while or for good — showing how far it reaches. */
  function approveAndAllow(card) {
    if (busy) return;
    const { executionId, connector, method, seq, digest } = card.action;
    // The values as the connector reads them, which are what the rule will be matched against.
    const args = card.action.canonical ?? card.action.args;
    const source = card.source;
    const callInput = h("input.text.mono#allow-call", { value: `${connector}.${method}` });
    const fields = args && typeof args === "object" && !Array.isArray(args) ? Object.entries(args) : [];
    const rows = fields.map(([name, value]) => {
      const text = typeof value === "string" ? value : JSON.stringify(value);
      const mode = h("select", { dataset: { arg: name } },
        ["exact", "glob", "prefix", "any"].map((m) => h("option", { value: m, selected: m === (typeof value === "string" && value.length > 200 ? "any" : "exact") }, m)));
      // A value of several lines is edited in a textarea (a one-line field drops its line breaks); until the
      // person edits it, the rule takes the value itself, so the rule saved is the value shown, exactly.
      const input = /[\r\n]/.test(text)
        ? h("textarea.text.mono", { value: text, rows: Math.min(8, text.split(/\r\n|\r|\n/).length), dataset: { arg: name } })
        : h("input.text.mono", { value: text, dataset: { arg: name } });
      const row = { name, value, text, mode, input, edited: false };
      mode.addEventListener("change", () => { input.disabled = mode.value === "any"; update(); });
      input.disabled = mode.value === "any";
      input.addEventListener("input", () => { row.edited = true; update(); });
      return row;
    });
    const onlySource = h("input#allow-source", { type: "checkbox", checked: !!source, disabled: !source });
    const duration = h("select#allow-duration", [["for good", 0], ["for 1 hour", 3600e3], ["for 1 day", 86400e3], ["for 7 days", 7 * 86400e3]].map(([label, ms]) => h("option", { value: String(ms) }, label)));
    const reach = h("div.check#allow-reach", "");
    const alsoWaiting = h("input#allow-waiting", { type: "checkbox" });
    const alsoLabel = h("label", { style: "display:flex;gap:6px;align-items:center" }, alsoWaiting, h("span#allow-waiting-label", "Also approve the waiting calls it matches"));
    const send = h("button.btn.approve#confirm-allow", "Approve and allow");
    const cancel = h("button.btn", "Cancel");
    /** What the person chose; the host builds the rule from it against the call shown, on its own clock
     * (codemode::allowing, docs/design.md "Remembered decisions are literal"). */
    function intent() {
      const chosen = {};
      for (const row of rows) {
        const m = row.mode.value;
        if (m === "any") continue;
        if (m === "exact") {
          // Unedited: the value the connector reads, taken by the host. Edited: the text, as JSON for a value
          // that was not a string.
          let literal = row.input.value;
          if (typeof row.value !== "string") { try { literal = JSON.parse(literal); } catch { /* kept as text */ } }
          chosen[row.name] = row.edited ? { mode: "exact", value: literal } : { mode: "exact" };
        } else {
          const text = row.edited ? row.input.value : row.text;
          chosen[row.name] = m === "glob" ? { mode: "glob", pattern: text } : { mode: "prefix", prefix: text };
        }
      }
      const typed = callInput.value.trim();
      const ms = Number(duration.value);
      return { ...(typed !== `${connector}.${method}` ? { call: typed } : {}), args: chosen,
        onlySource: onlySource.checked && !!source, ...(ms ? { forMs: ms } : {}) };
    }
    const update = debounce(async () => {
      try {
        const { reach: r } = await call("allow_reach", { id: executionId, seq, digest, intent: intent() });
        const others = r.waiting.filter((id) => id !== executionId);
        reach.className = "check ok";
        reach.textContent = `Matches ${r.recent} of the last ${r.recentCalls} calls, and ${others.length} other waiting call${others.length === 1 ? "" : "s"}.`;
        alsoLabel.querySelector("span").textContent = `Also approve the ${others.length} other waiting call${others.length === 1 ? "" : "s"} it matches`;
        alsoWaiting.disabled = others.length === 0;
        send.disabled = false;
      } catch (error) {
        reach.className = "check bad";
        reach.textContent = explain(error);
        send.disabled = true;
      }
    }, 150);
    callInput.addEventListener("input", update);
    onlySource.addEventListener("change", update);
    duration.addEventListener("change", update);
    update();
    const body = h("div",
      h("label", { for: "allow-call" }, "Calls to (`*` matches any run of characters)"), callInput,
      rows.length ? h("div.allow-args#allow-args", rows.flatMap((r) => [h("span.mono", r.name), r.mode, r.input])) : h("div.dim", "Any arguments."),
      h("label", { style: "display:flex;gap:6px;align-items:center" }, onlySource, source ? `Only from ${source}` : "Any source (this run has none)"),
      h("label", "How long"), duration,
      reach, alsoLabel);
    const m = modal("Approve, and allow calls like this one", body, [cancel, send], { wide: true, id: "allow-modal" });
    cancel.onclick = () => m.close(null);
    send.onclick = () => m.close({ intent: intent(), approveWaiting: alsoWaiting.checked });
    m.closed.then(async (chosen) => {
      if (!chosen) return;
      busy = true;
      render();
      try {
        const result = await call("approve_allowing", { id: executionId, seq, digest, intent: chosen.intent, approveWaiting: chosen.approveWaiting });
        const also = result.alsoApproved.filter((r) => !r.error).length;
        toast(`Approved ${connector}.${method}; rule ${result.rule.id} added${also ? `, and ${also} waiting call${also === 1 ? "" : "s"} approved` : ""}`);
      } catch (error) {
        message = explain(error);
      }
      busy = false;
      await refresh();
      render();
    });
  }

  async function decide(kind, edited) {
    const card = current();
    if (!card || busy) return;
    busy = true;
    message = null;
    render();
    const { executionId, seq, digest, connector, method } = card.action;
    try {
      if (kind === "approve") {
        // Bound to the call shown: if the run moved on meanwhile the answer is `stale` and nothing runs.
        /** @type {Outcome} */
        const outcome = await call("approve", { id: executionId, seq, digest, args: edited ?? null });
        const counted = outcome.status === "paused" && outcome.pending.find((p) => p.executionId === executionId && p.seq === seq && p.quorum);
        if (outcome.status === "error") message = outcome.error;
        // Four eyes: the approval is counted and the same call waits for another person (docs/design.md).
        else if (counted) toast(`Approval counted: ${counted.approvals.length} of ${counted.quorum} — ${connector}.${method} waits for another person`);
        else if (outcome.status === "paused") toast(`Approved ${connector}.${method} — the run paused again at ${outcome.pending.map((p) => `${p.connector}.${p.method}`).join(", ")}`);
        else toast(`Approved ${connector}.${method} — the run completed`);
      } else {
        const reason = (reasons.get(keyOf(card)) || "").trim();
        await call("reject", { id: executionId, seq, digest, reason: reason || null });
        reasons.delete(keyOf(card));
        toast(`Rejected ${connector}.${method}${reason ? " — the agent will read your reason" : ""}`);
      }
    } catch (error) {
      message = explain(error);
    }
    busy = false;
    await refresh();
    if (message && !cards.some((c) => keyOf(c) === selected)) toast(message);
    render();
  }

  app.refreshers.add(load);
  load().catch((error) => clear(detail, h("div.inline-error", error.message)));
  return {
    key(key) {
      const index = cards.findIndex((c) => keyOf(c) === selected);
      if (key === "j" && index < cards.length - 1) select(keyOf(cards[index + 1]));
      else if (key === "k" && index > 0) select(keyOf(cards[index - 1]));
      else if (key === "a") decide("approve");
      else if (key === "r") {
        // Reject with a reason: the reason field first; Enter there rejects.
        const field = document.getElementById("reject-reason");
        if (field && !field.value) field.focus(); else decide("reject");
      }
      else if (key === "e" && current()) editThenApprove(current());
      else if (key === "A" && current()) approveAndAllow(current());
      else if (key === "x" && selected) pick(selected);
      else return false;
      return true;
    },
  };
}
