// Executions: the audit log — status chips with counts, text search, a virtualised newest-first list paged from
// the runtime, and a detail with the timeline of calls, the program, the result and the logs, plus the actions
// that apply to the run (roll back, recover, save as snippet, delete).

import { app, call, refresh, explain } from "./core.js";

/** @typedef {import('./types/ExecutionQuery').ExecutionQuery} ExecutionQuery */
/** @typedef {import('./types/ExecutionPage').ExecutionPage} ExecutionPage */
/** @typedef {import('./types/ExecutionState').ExecutionState} ExecutionState */
/** @typedef {import('./types/ToolLogEntry').ToolLogEntry} ToolLogEntry */
/** @typedef {import('./types/RollbackReport').RollbackReport} RollbackReport */
/** @typedef {import('./types/Outcome').Outcome} Outcome */
import { h, clear, ago, clock, duration, shortId, preview, previewPane, jsonTree, codeView, stateDot, statusBadge, hostLabel, hostNote, decisionText, resultSummary, toast, copy, dialog, splitPane } from "./widgets.js";

const ROW = 34;
const PAGE = 200;
const STATUSES = ["paused", "running", "completed", "error", "rejected", "rolled_back"];

export function executionsView(root, options = {}) {
  let status = options.status || null;
  let text = "";
  let rows = [];
  let next = null;
  let exhausted = false;
  let loading = false;
  let selected = options.id || null;
  let tab = "timeline";
  /** @type {RollbackReport | null} */
  let report = null;
  let generation = 0;

  const chips = h("div.chips#status-chips");
  const search = h("input.search#execution-search", { type: "search", placeholder: "Search ids, code, connector.method, errors" });
  // The history's filters, the same as `codemode executions` / `export` take (docs/history.md, "Filters").
  /** @type {Record<string, string>} */
  let filter = {};
  const FIELDS = [["since", "since 7d / 2026-12-01"], ["until", "until"], ["call", "call github.*"], ["decidedBy", "decided by"], ["source", "source Claude*"]];
  const inputs = Object.fromEntries(FIELDS.map(([name, placeholder]) => [name, h(`input.text.filter#filter-${name}`, {
    type: "text", placeholder, title: placeholder, spellcheck: false,
    oninput: () => { clearTimeout(searchTimer); searchTimer = setTimeout(applyFilter, 300); },
  })]));
  const saved = h("select.filter#saved-filters", { title: "Saved filters", onchange: () => useSaved(saved.value) });
  const filterError = h("div.inline-error#filter-error", { hidden: true });
  const filterRow = h("div.filters#history-filters",
    FIELDS.map(([name]) => inputs[name]),
    saved,
    h("button.btn.small#save-filter", { onclick: saveFilter, title: "Keep these filters under a name" }, "Save…"),
    h("button.btn.small#export-jsonl", { onclick: () => exportRuns("jsonl"), title: "Every run these filters select, one JSON line each" }, "Export JSONL"),
    h("button.btn.small#export-csv", { onclick: () => exportRuns("csv"), title: "Every call of the runs these filters select, one CSV row each" }, "Export CSV"),
    h("button.btn.small#open-insights", { onclick: showInsights, title: "How people decide: approval rate, time to decide, what is approved most" }, "Insights"));
  const viewport = h("div.list-body#executions-list");
  const spacer = h("div", { style: "position:relative" });
  viewport.append(spacer);
  const detail = h("div.detail-pane#execution-detail");
  clear(root, splitPane(h("section.list-pane", h("div.list-head", { style: "flex-direction:column;align-items:stretch" }, chips, search, filterRow, filterError), viewport), detail));
  renderSaved();

  function currentFilter() {
    return Object.fromEntries(FIELDS.map(([name]) => [name, inputs[name].value.trim() || null]));
  }

  function applyFilter() {
    filter = currentFilter();
    reload();
  }

  /** Saved filters live in this window's storage, by name. */
  function savedFilters() {
    try { return JSON.parse(localStorage.getItem("savedFilters") || "{}"); } catch { return {}; }
  }

  function renderSaved() {
    const all = savedFilters();
    clear(saved, h("option", { value: "" }, "Saved filters"), Object.keys(all).sort().map((name) => h("option", { value: name }, name)));
  }

  function useSaved(name) {
    const chosen = savedFilters()[name];
    if (!chosen) return;
    for (const [field] of FIELDS) inputs[field].value = chosen[field] || "";
    applyFilter();
  }

  async function saveFilter() {
    const name = h("input.text#filter-name", { type: "text", placeholder: "A name, e.g. github last week" });
    const chosen = await dialog("Save these filters", h("div", name), [
      { label: "Cancel", value: () => null },
      { label: "Save", primary: true, id: "confirm-save-filter", className: "approve", value: () => name.value.trim() },
    ]);
    if (!chosen) return;
    localStorage.setItem("savedFilters", JSON.stringify({ ...savedFilters(), [chosen]: currentFilter() }));
    renderSaved();
    saved.value = chosen;
    toast(`Filters saved as "${chosen}"`);
  }

  async function exportRuns(format) {
    try {
      const written = await call("export_executions", { query: { status, text: text || null }, filter: currentFilter(), format });
      toast(`Exported ${written.runs} runs (${written.calls} calls) to ${written.path}`);
      filterError.hidden = true;
    } catch (error) {
      filterError.textContent = explain(error);
      filterError.hidden = false;
    }
  }

  async function showInsights() {
    let figures;
    try {
      figures = await call("insights", { since: inputs.since.value.trim() || null });
    } catch (error) {
      filterError.textContent = explain(error);
      filterError.hidden = false;
      return;
    }
    const time = (ms) => ms == null ? "—" : ms < 1000 ? `${ms} ms` : duration(ms);
    const body = h("div#insights",
      h("div.section-body",
        h("div#insights-counts", `${figures.allowed} allowed · ${figures.asked} asked · ${figures.denied} denied · ${figures.expired} expired`),
        h("div#insights-rate", `${figures.approved} approved · ${figures.rejected} rejected · approval rate ${figures.approvalRate == null ? "—" : Math.round(figures.approvalRate * 100) + "%"}`),
        h("div#insights-time", `time to decide: median ${time(figures.decideMedianMs)} · 90th percentile ${time(figures.decideP90Ms)}`)),
      figures.shapes.length ? h("div.section-head", "Approved most often") : null,
      figures.shapes.map((shape) => h("div.entry.shape",
        h("span.mono", `${shape.call} ${Object.keys(shape.when).length ? JSON.stringify(shape.when) : "(any arguments)"}`),
        h("span.dim", ` ${shape.approved} approved, ${shape.rejected} rejected `),
        h("button.btn.small.make-rule", { onclick: () => makeRule(shape.rule) }, "Make a rule…"))));
    await dialog(inputs.since.value.trim() ? `Insights since ${inputs.since.value.trim()}` : "Insights", body, [{ label: "Close", primary: true, value: () => null }]);
  }

  /** The allow rule an approved shape suggests, shown whole before it is added. */
  async function makeRule(rule) {
    const area = h("textarea.text.json#suggested-rule", { spellcheck: false, value: JSON.stringify(rule, null, 2) });
    const value = await dialog("Allow these calls without asking", h("div", h("div.dim", "Calls that match run without a person; edit before adding."), area), [
      { label: "Cancel", value: () => null },
      { label: "Add rule", primary: true, id: "confirm-make-rule", className: "approve", value: () => area.value },
    ]);
    if (!value) return;
    try {
      await call("add_rule", { rule: JSON.parse(value) });
      toast(`Rule "${JSON.parse(value).id}" added`);
    } catch (error) {
      toast(explain(error));
    }
  }

  let searchTimer = null;
  search.addEventListener("input", () => {
    clearTimeout(searchTimer);
    searchTimer = setTimeout(() => { text = search.value.trim(); reload(); }, 150);
  });
  viewport.addEventListener("scroll", () => { draw(); maybeMore(); });

  function renderChips() {
    const counts = (app.overview && app.overview.counts) || {};
    const total = Object.values(counts).reduce((a, b) => a + b, 0);
    const chip = (value, label, n) => h(`span.chip${status === value ? ".on" : ""}`, { dataset: { status: value || "all" }, onclick: () => { status = value; reload(); } },
      label, h("span.n", String(n)));
    clear(chips, chip(null, "All", total), STATUSES.filter((s) => counts[s] || s === status).map((s) => chip(s, s.replace("_", " "), counts[s] || 0)));
  }

  async function fetchPage(before) {
    /** @type {ExecutionQuery} */
    const query = { status, text: text || null, before, limit: PAGE };
    /** @type {Promise<ExecutionPage>} */
    const page = call("list_executions", { query, filter });
    return page;
  }

  /** Reloads from the top, keeping as many rows as were loaded, so live updates do not lose the scroll. */
  async function reload(keep = false) {
    const mine = ++generation;
    const want = keep ? Math.max(rows.length, PAGE) : PAGE;
    let fresh = [];
    let cursor = null;
    let more = true;
    while (fresh.length < want && more) {
      let page;
      try {
        page = await fetchPage(cursor);
        filterError.hidden = true;
      } catch (error) {
        if (mine !== generation) return;
        // A filter that does not parse says why, and the list stays as it was.
        filterError.textContent = explain(error);
        filterError.hidden = false;
        return;
      }
      if (mine !== generation) return;
      fresh = fresh.concat(page.executions);
      cursor = page.next || null;
      more = Boolean(page.next);
    }
    rows = fresh;
    next = cursor;
    exhausted = !more;
    if (!keep) viewport.scrollTop = 0;
    renderChips();
    draw(true);
    if (!selected && rows.length) select(rows[0].id);
    else if (selected) showDetail();
  }

  async function maybeMore() {
    if (loading || exhausted) return;
    if (viewport.scrollTop + viewport.clientHeight < rows.length * ROW - ROW * 20) return;
    loading = true;
    const mine = generation;
    try {
      const page = await fetchPage(next);
      if (mine === generation) {
        rows = rows.concat(page.executions);
        next = page.next || null;
        exhausted = !page.next;
        draw(true);
      }
    } finally {
      loading = false;
    }
  }

  let drawn = "";
  function draw(force = false) {
    spacer.style.height = `${rows.length * ROW}px`;
    const first = Math.max(0, Math.floor(viewport.scrollTop / ROW) - 10);
    const last = Math.min(rows.length, Math.ceil((viewport.scrollTop + viewport.clientHeight) / ROW) + 10);
    const key = `${first}:${last}:${selected}`;
    if (!force && key === drawn) return;
    drawn = key;
    const slice = rows.slice(first, last).map((row, i) => {
      const summary = row.pending ? `awaits ${row.pending}` : row.error ? row.error : row.resultPreview ?? "";
      return h(`div.row${row.id === selected ? ".selected" : ""}`, { style: `top:${(first + i) * ROW}px`, dataset: { id: row.id }, onclick: () => select(row.id) },
        h("span", statusBadge(row.status)),
        h("span.idcell", shortId(row.id)),
        h("span.summary", { title: summary }, summary),
        h("span.dim", { style: "font-size:12px" }, ago(row.createdAt)),
        h("span.dim", { style: "font-size:12px;text-align:right", title: "calls" }, String(row.calls)));
    });
    const filtering = text || status || Object.values(filter).some(Boolean);
    if (rows.length === 0) slice.push(h("div.empty", filtering ? "No execution matches." : "No executions yet."));
    clear(spacer, slice);
  }

  function select(id) {
    selected = id;
    report = null;
    draw(true);
    showDetail();
  }

  async function showDetail() {
    if (!selected) { clear(detail, h("div.empty", "Select an execution.")); return; }
    const id = selected;
    /** @type {ExecutionState} */
    let execution;
    /** @type {ToolLogEntry[]} */
    let plan = [];
    try {
      execution = await call("execution", { id });
      plan = await call("rollback_preview", { id });
    } catch (error) {
      if (id === selected) clear(detail, h("div.inline-error", error.message));
      return;
    }
    if (id !== selected) return;
    // A live update that changed nothing in this run leaves the pane as it is: open JSON nodes, the tab, the
    // scroll position and a selection all stay.
    const shown = JSON.stringify([execution, plan, report]);
    if (shown === detailShown && detail.firstChild) return;
    detailShown = shown;
    clear(detail, renderDetail(execution, plan));
  }
  /** What the detail pane shows now, as JSON. */
  let detailShown = null;

  function renderDetail(e, plan) {
    const deciders = e.log.filter((l) => l.decision || l.decidedBy).map((l) => `#${l.seq} ${decisionText(l, false)}`);
    const actions = h("div.actions",
      plan.length ? h("button.btn.danger#rollback", { onclick: () => rollback(e, plan) }, "Roll back") : null,
      e.interrupted ? h("button.btn#recover", { onclick: () => recover(e) }, "Recover") : null,
      e.host && !e.host.alive && !e.host.here ? h("button.btn#adopt", { onclick: () => adopt(e), title: "Decide and resume it on this host, with its connectors" }, "Adopt") : null,
      e.status === "completed" ? h("button.btn#save-snippet", { onclick: () => saveSnippet(e) }, "Save as snippet") : null,
      e.status === "paused" ? h("button.btn", { onclick: () => app.open("approvals", { id: e.id }) }, "Open in Approvals") : null,
      e.status !== "running" ? h("button.btn#rerun", { onclick: () => rerun(e, 0), title: "A new run of this program, linked to this one, under today's rules" }, "Rerun") : null,
      h("button.btn#delete", { onclick: () => remove(e) }, "Delete"));
    const tabs = ["timeline", "program", "result", "logs"];
    const body = h("div");
    const tabBar = h("div.tabs", tabs.map((t) => h(`span.tab${t === tab ? ".on" : ""}`, { dataset: { tab: t }, onclick: () => { tab = t; clear(detail, renderDetail(e, plan)); } }, t[0].toUpperCase() + t.slice(1))));
    if (tab === "timeline") body.append(timeline(e));
    if (tab === "program") body.append(h("div.section", h("div.section-body.flush", codeView(e.code))));
    if (tab === "result") {
      body.append(e.error ? h("div.inline-error#execution-error", e.error) : null,
        e.result !== undefined ? h("div.section", h("div.section-head", "Result", h("button.btn.small", { onclick: () => copy(JSON.stringify(e.result, null, 2), "Result copied") }, "Copy")), h("div.section-body#execution-result", jsonTree(e.result, 3))) : null,
        e.result === undefined && !e.error ? h("div.dim", "No result.") : null);
    }
    if (tab === "logs") body.append((e.logs || []).length ? h("div.section", h("div.section-body", h("pre.mono", { style: "margin:0;white-space:pre-wrap" }, e.logs.join("\n")))) : h("div.dim", "Nothing was logged."));
    return h("div",
      h("div.detail-head",
        h("div",
          h("h1", statusBadge(e.status), " ", h("span.mono.link", { title: "Copy the id", onclick: () => copy(e.id, "Run id copied") }, e.id)),
          h("div.sub",
            h("span", `started ${clock(e.createdAt)}`),
            h("span", `updated ${clock(e.updatedAt)}`),
            h("span", `${duration(e.updatedAt - e.createdAt)}`),
            e.source ? h("span", `from ${e.source}`) : null,
            e.host ? hostLabel(e.host) : null,
            deciders.length ? h("span", `${deciders.join(", ")}`) : null)),
        actions),
      e.interrupted ? h("div.note", "This run's process died mid-pass. Its unfinished call may already have been applied; Recover runs the program again (an approved call waits for you again).") : null,
      hostNote(e),
      lineage(e),
      report ? rollbackReport(report) : null,
      e.error && tab !== "result" ? h("div.inline-error#execution-error", e.error) : null,
      tabBar, body);
  }

  /** How long a person took (pause → decision) and how long the call ran (start → outcome), in ms. */
  function timings(entry) {
    const decided = entry.decision && entry.askedAt != null && entry.decision.at >= entry.askedAt ? entry.decision.at - entry.askedAt : null;
    const ran = entry.startedAt != null && entry.finishedAt != null ? entry.finishedAt - entry.startedAt : null;
    return { decided, ran };
  }

  /** Two bars beside a call, to one scale for the whole run: the time a person took, then the call's own. */
  function timingBars(entry, longest) {
    // A call served from the old run's record did not run here: it has no time of its own to show.
    if (entry.inherited) return null;
    const { decided, ran } = timings(entry);
    if (decided == null && ran == null) return null;
    const width = (ms) => `${Math.max(2, Math.round((ms / longest) * 120))}px`;
    return h("span.timing", { title: [decided != null ? `a person took ${duration(decided)}` : null, ran != null ? `ran ${duration(ran)}` : null].filter(Boolean).join("; ") },
      decided != null ? h("span.bar.decide", { style: `width:${width(decided)}` }) : null,
      ran != null ? h("span.bar.run", { style: `width:${width(ran)}` }) : null,
      h("span.dim.timing-text", [decided != null ? `decided in ${duration(decided)}` : null, ran != null ? `ran ${duration(ran)}` : null].filter(Boolean).join(" · ")));
  }

  function timeline(e) {
    if (!e.log.length) return h("div.dim", "No connector calls.");
    const longest = Math.max(1, ...e.log.map((entry) => { const t = timings(entry); return Math.max(t.decided || 0, t.ran || 0); }));
    return h("div.section", h("div.section-body.flush.timeline#timeline", e.log.map((entry) => {
      const step = entry.connector === "__step";
      const name = step ? entry.method : `${entry.connector}.${entry.method}`;
      const state = entry.state === "executing" && e.status !== "running" && e.status !== "paused" && !entry.interrupted ? "failed" : entry.state;
      const decision = entry.decision;
      const right = [decisionText(entry), resultSummary(entry.result), state].filter(Boolean).join(" · ");
      const edited = decision && decision.kind === "edited";
      const bodyEl = h("div.entry-body", { hidden: true },
        decision && decision.reason ? h("div.note.reason", { style: "grid-column:1/-1" }, h("b", "Reason given: "), decision.reason) : null,
        decision && decision.rule ? h("div.note.rule", { style: "grid-column:1/-1" }, `${decision.kind === "denied" ? "Denied" : "Allowed"} by rule `,
          h("span.link.mono.rule-link", { onclick: () => app.open("rules", { id: decision.rule }) }, decision.rule), " — open it in Rules") : null,
        decision && decision.shown ? shownPreview(decision.shown) : null,
        h("div", h("h4", edited ? "Arguments the program sent" : "Arguments"), entry.args === undefined ? h("span.dim", "none") : jsonTree(entry.args, 1)),
        edited ? h("div.edited-args", h("h4", "Arguments that ran (edited)"), decision.args === undefined ? h("span.dim", "none") : jsonTree(decision.args, 1)) : null,
        h("div", h("h4", "Result"), entry.result === undefined ? h("span.dim", entry.ephemeral ? "not recorded (re-executed on replay)" : "none") : jsonTree(entry.result, 1)),
        entry.interrupted ? h("div.note", { style: "grid-column:1/-1" }, "May already have been applied.") : null,
        entry.inherited ? h("div.note.inherited", { style: "grid-column:1/-1" }, "Served from the record of the run this one reruns: it did not run again here.") : null,
        entry.divergence ? divergence(entry) : null,
        e.status !== "running" ? h("div.entry-actions", { style: "grid-column:1/-1" },
          h("button.btn.small.rerun-from", { dataset: { seq: entry.seq }, onclick: () => rerun(e, entry.seq), title: `A new run served this run's outcomes for the calls before #${entry.seq}, running from #${entry.seq} under today's rules` }, "Rerun from here")) : null);
      const head = h("div.entry-head", { onclick: () => { bodyEl.hidden = !bodyEl.hidden; } }, stateDot(entry), h("span.seq", `#${entry.seq}`),
        h(`span.name${step ? ".italic" : ""}${entry.state === "reverted" ? ".struck" : ""}`, name),
        entry.requiresApproval ? h("span.tag", "approval") : null,
        entry.inherited ? h("span.tag.served", { title: "Served from the run this one reruns" }, "served") : null,
        timingBars(entry, longest),
        h("span.right", right));
      if (entry.divergence) bodyEl.hidden = false;
      return h("div.entry", { dataset: { seq: entry.seq } }, head, bodyEl);
    })));
  }

  /** What the person was shown before deciding, as they saw it (its diff worked out again from the kept
   * preview), with the digest of what was shown. */
  function shownPreview(shown) {
    const slot = h("div", shown.preview ? h("span.dim", "…") : h("span.dim", "The preview was too large to keep whole."));
    if (shown.preview) call("render_preview", { preview: shown.preview }).then((view) => clear(slot, previewPane(view))).catch(() => clear(slot, previewPane({ preview: shown.preview, hunks: [] })));
    return h("div.shown", { style: "grid-column:1/-1" }, h("h4", "What the person was shown before deciding"), slot,
      h("div.dim.mono", { style: "font-size:11px;margin-top:4px" }, `shown ${clock(shown.at)} · SHA-256 ${shown.digest}`));
  }

  function divergence(entry) {
    const d = entry.divergence || {};
    const recorded = d.recorded || { connector: entry.connector, method: entry.method, args: entry.args };
    const attempted = d.attempted || d;
    const differs = (key) => JSON.stringify((recorded || {})[key]) !== JSON.stringify((attempted || {})[key]);
    const side = (title, value) => h("div", h("h4", title), ["connector", "method", "args"].map((key) =>
      h(`div${differs(key) ? ".changed" : ""}`, h("span.dim", `${key}: `), key === "args" ? jsonTree(value[key], 3) : h("span.mono", String(value[key] ?? "")))));
    return h("div.diverge", side("Recorded", recorded), side("Attempted on replay", attempted));
  }

  /** Where a rerun came from (and where its program left the old run's calls), and the reruns of this run:
   * each id opens that run. */
  function lineage(e) {
    const open = (id) => h("span.mono.link", { title: "Open this run", onclick: () => select(id) }, shortId(id));
    const from = e.forkedFrom;
    return from || (e.reruns || []).length ? h("div.note#lineage",
      from ? h("div#forked-from", "Rerun of ", open(from.executionId), ` from #${from.seq}: the calls before it were served from that run's record.`) : null,
      from && from.diverged ? h("div#diverged", `The program diverged from that run at #${from.diverged.seq} (${from.diverged.detail}); it ran fresh from there.`) : null,
      (e.reruns || []).length ? h("div#reruns", "Rerun as ", e.reruns.flatMap((id, i) => i ? [", ", open(id)] : [open(id)])) : null) : null;
  }

  async function rerun(e, seq) {
    const served = seq > 0 ? `The calls before #${seq} are served from this run's record: none of them runs again. ` : "";
    const ok = await dialog(seq > 0 ? `Rerun from #${seq}?` : "Rerun this program?",
      h("p", `${served}A new run, linked to this one, makes ${seq > 0 ? `#${seq} and what follows` : "every call"} under today's rules: calls that need approval wait for you.`),
      [{ label: "Cancel", value: () => false }, { label: "Rerun", primary: true, id: "confirm-rerun", value: () => true }]);
    if (!ok) return;
    try {
      const rerun = await call("rerun_execution", { id: e.id, from: seq });
      const outcome = rerun.outcome;
      const diverged = rerun.forkedFrom.diverged ? ` — diverged at #${rerun.forkedFrom.diverged.seq}` : "";
      toast(`Rerun ${outcome.status === "error" ? `failed: ${outcome.error}` : outcome.status}${diverged}`);
      selected = outcome.executionId;
    } catch (error) {
      toast(explain(error));
    }
    await refresh();
  }

  function rollbackReport(r) {
    return h("div.section#rollback-report", h("div.section-head", "Rollback report", h("span", r.status ? r.status.replace("_", " ") : "")),
      h("div.section-body",
        r.reverted.map((c) => h("div", h("span.dot.reverted"), ` reverted #${c.seq} ${c.connector}.${c.method}`)),
        r.skipped.map((c) => h("div.dim", `skipped #${c.seq} ${c.connector}.${c.method}: ${c.reason}`)),
        r.failed.map((c) => h("div", { style: "color:var(--red)" }, `failed #${c.seq} ${c.connector}.${c.method}: ${c.error}`)),
        !r.reverted.length && !r.skipped.length && !r.failed.length ? h("div.dim", "Nothing to revert.") : null));
  }

  async function rollback(e, plan) {
    const ok = await dialog("Roll back this run?",
      h("div", h("p", "These calls will be reverted, in this order:"),
        h("ol.mono", plan.map((c) => h("li", `#${c.seq} ${c.connector}.${c.method}`,
          c.state === "applied" ? null : h("span.dim", " — may have been applied before a crash"))))),
      [{ label: "Cancel", value: () => false }, { label: "Roll back", className: "danger", primary: true, id: "confirm-rollback", value: () => true }]);
    if (!ok) return;
    try {
      report = await call("rollback", { id: e.id });
      toast(report.failed.length ? `Rollback: ${report.failed.length} revert(s) failed` : `Rolled back ${report.reverted.length} call(s)`);
    } catch (error) {
      toast(explain(error));
    }
    const kept = report;
    await refresh();
    report = kept;
    showDetail();
  }

  async function adopt(e) {
    try {
      await call("adopt", { id: e.id });
      toast("Adopted: this host now decides and resumes it");
    } catch (error) {
      toast(explain(error));
    }
    refresh();
  }

  async function recover(e) {
    try {
      /** @type {Outcome} */
      const outcome = await call("recover", { id: e.id });
      toast(outcome.status === "error" ? outcome.error : `Recovered: ${outcome.status}`);
    } catch (error) {
      toast(explain(error));
    }
    refresh();
  }

  async function saveSnippet(e) {
    const name = h("input.text#snippet-name", { placeholder: "e.g. weekly-report" });
    const description = h("textarea.text#snippet-description", { rows: 3, placeholder: "What it does, for agents searching the library" });
    const result = await dialog("Save as snippet", h("div", h("label", "Name"), name, h("label", "Description"), description),
      [{ label: "Cancel", value: () => null }, { label: "Save", className: "primary", primary: true, id: "confirm-snippet", value: () => ({ name: name.value.trim(), description: description.value.trim() }) }]);
    if (!result) return;
    if (!result.name) { toast("A snippet needs a name"); return; }
    try {
      await call("save_snippet", { name: result.name, executionId: e.id, description: result.description || null });
      toast(`Saved snippet "${result.name}"`);
    } catch (error) {
      toast(error.message);
    }
  }

  async function remove(e) {
    const ok = await dialog("Delete this run?", h("p", "The run and its call log are deleted, and what connectors kept to roll it back is dropped. This cannot be undone."),
      [{ label: "Cancel", value: () => false }, { label: "Delete", className: "danger", primary: true, id: "confirm-delete", value: () => true }]);
    if (!ok) return;
    try {
      await call("delete_execution", { id: e.id });
      toast("Deleted");
      selected = null;
    } catch (error) {
      toast(explain(error));
    }
    refresh();
  }

  app.refreshers.add(() => reload(true));
  renderChips();
  reload().catch((error) => clear(detail, h("div.inline-error", error.message)));
  return {
    key(key) {
      const index = rows.findIndex((r) => r.id === selected);
      if (key === "j" && index < rows.length - 1) select(rows[index + 1].id);
      else if (key === "k" && index > 0) select(rows[index - 1].id);
      else if (key === "/") { search.focus(); }
      else return false;
      if (key === "j" || key === "k") {
        const top = rows.findIndex((r) => r.id === selected) * ROW;
        if (top < viewport.scrollTop || top > viewport.scrollTop + viewport.clientHeight - ROW) viewport.scrollTop = top - viewport.clientHeight / 2;
      }
      return true;
    },
  };
}
