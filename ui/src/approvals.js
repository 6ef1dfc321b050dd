// Approvals: the queue of paused runs and, for the selected one, everything a person needs to decide — the
// pending call and its arguments, the program with that call located, and what already happened in the run.

import { app, call, refresh, explain } from "./app.js";

/** @typedef {import('./types/ApprovalCard').ApprovalCard} ApprovalCard */
/** @typedef {import('./types/Outcome').Outcome} Outcome */
import { h, clear, ago, clock, shortId, preview, previewPane, jsonTree, codeView, callLine, stateDot, statusBadge, resultSummary, toast, copy, splitPane } from "./widgets.js";

const keyOf = (card) => `${card.action.executionId}:${card.action.seq}`;

export function approvalsView(root, options = {}) {
  /** @type {ApprovalCard[]} */
  let cards = [];
  let selected = options.id || null;
  let busy = false;
  let message = null;
  /** Half-typed rejection reasons, by card, so a live re-render does not lose them. */
  const reasons = new Map();
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
    if (key === selected) render();
  }

  const count = h("span", "");
  const listBody = h("div.list-body#approvals-list");
  const detail = h("div.detail-pane#approval-detail");
  clear(root, splitPane(h("section.list-pane", h("div.list-head", h("span", "Waiting for you"), count), listBody), detail));

  async function load() {
    cards = await call("pending");
    for (const key of previews.keys()) if (!cards.some((c) => keyOf(c) === key)) previews.delete(key);
    if (!cards.some((c) => keyOf(c) === selected || c.action.executionId === selected)) {
      selected = cards.length ? keyOf(cards[0]) : null;
    } else if (!cards.some((c) => keyOf(c) === selected)) {
      selected = keyOf(cards.find((c) => c.action.executionId === selected));
    }
    render();
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

  function render() {
    count.textContent = String(cards.length);
    clear(listBody, cards.map((card) => {
      const { action, execution, expiresAt } = card;
      const left = expiresAt - Date.now();
      const when = left < 3600_000 ? `expires in ${Math.max(1, Math.round(left / 60000))} min` : ago(execution.createdAt);
      return h(`div.card${keyOf(card) === selected ? ".selected" : ""}`, { onclick: () => select(keyOf(card)), dataset: { id: action.executionId } },
        h("div.call", `${action.connector}.${action.method}`),
        h("div.preview", preview(action.args, 200) || "no arguments"),
        h("div.meta", h("span", `${shortId(action.executionId)}${execution.source ? " · " + execution.source : ""}`), h("span", when)));
    }));
    const card = current();
    if (!card) {
      clear(detail, emptyState());
      return;
    }
    loadPreview(card);
    clear(detail, decision(card));
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

  function decision(card) {
    const { action, execution } = card;
    const earlier = execution.log.filter((e) => e.seq < action.seq);
    const nth = earlier.filter((e) => e.connector === action.connector && e.method === action.method).length;
    const line = callLine(execution.code, action.connector, action.method, nth);
    const approve = h("button.btn.approve#approve", { onclick: () => decide("approve"), disabled: busy }, "Approve", h("kbd", "a"));
    const reject = h("button.btn.reject#reject", { onclick: () => decide("reject"), disabled: busy }, "Reject", h("kbd", "r"));
    // The agent reads the reason in the run's error ("… rejected by user: <reason>"); kept across re-renders.
    const reason = h("input.text.reason#reject-reason", {
      type: "text", placeholder: "Reason for the agent (optional)", value: reasons.get(keyOf(card)) || "", maxLength: 4000,
      oninput: (event) => reasons.set(keyOf(card), event.target.value),
    });
    const applied = earlier.filter((e) => e.state === "applied").length;
    return h("div",
      h("div.detail-head",
        h("div",
          h("h1#pending-title", h("b", `${action.connector}.${action.method}`), " awaits approval"),
          h("div.sub", statusBadge("paused"),
            h("span.mono.link", { title: "Copy the run id", onclick: () => copy(action.executionId, "Run id copied") }, action.executionId),
            h("span", `started ${clock(execution.createdAt)}`),
            execution.source ? h("span", `from ${execution.source}`) : null)),
        h("div.actions", reason, reject, approve)),
      message ? h("div.inline-error#decision-error", message) : null,
      action.interrupted ? h("div.note", "This call may already have been applied: the process running it died mid-call. Approving runs it again.") : null,
      previewSection(previews.get(keyOf(card))),
      h("div.section#arguments",
        h("div.section-head", "Arguments", h("button.btn.small", { onclick: () => copy(JSON.stringify(action.args ?? null, null, 2), "Arguments copied") }, "Copy")),
        h("div.section-body", action.args === undefined ? h("span.dim", "no arguments") : jsonTree(action.args, 2))),
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

  async function decide(kind) {
    const card = current();
    if (!card || busy) return;
    busy = true;
    message = null;
    render();
    const { executionId, seq, connector, method } = card.action;
    try {
      if (kind === "approve") {
        /** @type {Outcome} */
        const outcome = await call("approve", { id: executionId });
        if (outcome.status === "error") message = outcome.error;
        else if (outcome.status === "paused") toast(`Approved ${connector}.${method} — the run paused again at ${outcome.pending.map((p) => `${p.connector}.${p.method}`).join(", ")}`);
        else toast(`Approved ${connector}.${method} — the run completed`);
      } else {
        const reason = (reasons.get(keyOf(card)) || "").trim();
        await call("reject", { id: executionId, seq, reason: reason || null });
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
      else if (key === "r") decide("reject");
      else return false;
      return true;
    },
  };
}
