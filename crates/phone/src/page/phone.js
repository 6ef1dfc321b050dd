// The phone page (docs/phone.md): the queue of waiting calls and each call's card, drawn with the app's own
// widgets (argument rows from the API's one renderer, the preview diff, the program with the call's line), and
// Approve / Reject bound to the call shown (run, seq, digest). Live: the server's change stream redraws.

import { h, clear, argumentLine, argumentTable, previewPane, codeView, callLine, timeLeft, ago, toast, PRESET_REASONS } from "./widgets.js";

const page = document.getElementById("page");
let skew = 0; // server clock minus this phone's, so "decide within" counts on the computer's time
let shown = null; // the call whose card is open: {executionId, seq, digest}
let busy = false;

async function get(path) {
  const response = await fetch(path, { credentials: "same-origin", cache: "no-store" });
  const body = await response.json().catch(() => ({ code: "internal", message: response.statusText }));
  if (!response.ok) throw body;
  return body;
}

function unpaired(error) {
  if (error && error.code === "unauthorized") {
    clear(page, h("div.phone-message", h("h1", "Not paired"), h("p#message", error.message),
      h("p.dim", "On the computer, run codemode devices pair NAME (or use Settings → Approve from a phone) and open the link it gives.")));
    return true;
  }
  return false;
}

function target() {
  const m = location.hash.match(/^#call=([^:]+):(\d+):(.*)$/);
  return m ? { executionId: decodeURIComponent(m[1]), seq: Number(m[2]), digest: decodeURIComponent(m[3]) } : null;
}

async function draw() {
  const call = target();
  try {
    if (call) await drawCard(call); else await drawQueue();
  } catch (error) {
    if (!unpaired(error)) clear(page, h("div.phone-message", h("p.inline-error#message", error.message || String(error))));
  }
}

async function drawQueue() {
  shown = null;
  const { device, now, queue } = await get("/api/queue");
  skew = now - Date.now();
  document.getElementById("device").textContent = device;
  document.title = queue.length ? `(${queue.length}) Approvals — Codemode Console` : "Approvals — Codemode Console";
  if (!queue.length) {
    clear(page, h("div.empty#queue-empty", "Nothing waits for a decision."));
    return;
  }
  clear(page, h("div#queue", queue.map((row) => {
    const a = row.action;
    const href = `#call=${encodeURIComponent(a.executionId)}:${a.seq}:${encodeURIComponent(a.digest)}`;
    return h("a.queue-row", { href, dataset: { run: a.executionId, seq: String(a.seq) } },
      h("div.call", `${a.connector}.${a.method}`),
      h("div.args", argumentLine(row.arguments)),
      h("div.meta",
        h("span", [row.source ? `from ${row.source}` : null, ago(row.createdAt)].filter(Boolean).join(" · ")),
        h("span", row.confirmInApp ? "decide in the app" : `decide ${timeLeft(row.expiresAt - skew)}`)));
  })));
}

async function drawCard(call) {
  let card;
  try {
    card = await get(`/api/card?run=${encodeURIComponent(call.executionId)}&seq=${call.seq}`);
  } catch (error) {
    if (unpaired(error)) return;
    shown = null;
    clear(page, h("a.back", { href: "#" }, "‹ Queue"),
      h("div.phone-card", h("div.note#card-gone", "This call no longer waits: it was decided, or its run ended."),
        h("p.dim", error.message || "")));
    return;
  }
  skew = card.now - Date.now();
  const a = card.action;
  shown = { executionId: a.executionId, seq: a.seq, digest: a.digest };
  const line = callLine(card.code, a.connector, a.method, card.nth);
  const changed = call.digest && call.digest !== a.digest;
  const sub = h("div.sub",
    h("span.mono", a.executionId.slice(-12)),
    card.source ? h("span#source", `from ${card.source}`) : null,
    a.askedBy ? h("span#asked-by", `asked by rule ${a.askedBy}`) : null,
    card.quorum ? h("span#quorum", { title: "This call runs once enough different people approved it" }, card.quorum) : null,
    h("span#decide-by", `decide ${timeLeft(card.expiresAt - skew)}`),
    a.askInClient ? h("span", "asked in the client too") : null);
  const sections = [
    changed ? h("div.note#changed", "This call's arguments changed since the message that brought you here: below is the call as it is now.") : null,
    a.interrupted ? h("div.note", "This call may already have been applied: the process running it died mid-call. Approving runs it again.") : null,
    card.preview ? h("div.section#preview", h("div.section-head", "What this call would change"), h("div.section-body", previewPane(card.preview))) : null,
    h("div.section#arguments", h("div.section-head", "Arguments"), h("div.section-body", argumentTable(card.arguments))),
    h("div.section#program",
      h("div.section-head", "Program", line ? h("span", `line ${line}`) : null),
      h("div.section-body.flush", codeView(card.code, line))),
  ];
  clear(page, h("a.back", { href: "#" }, "‹ Queue"),
    h("div.phone-card", h("h1#card-title", `${a.connector}.${a.method}`), sub, h("div#decision-error"), sections),
    card.confirmInApp ? h("div.decide-bar", h("div.note#confirm-in-app", "This call is decided in the app on the computer, not from a phone."))
      : decideBar());
  if (line) page.querySelector(".line.hit")?.scrollIntoView({ block: "center" });
  window.scrollTo(0, 0);
}

function decideBar() {
  const reason = h("input.text#reason", { type: "text", placeholder: "Reason for the agent (optional)", maxLength: 4000 });
  const box = h("div.reason-box#reason-box", { hidden: true },
    h("div.presets", PRESET_REASONS.map((r) => h("button.btn", { type: "button", onclick: () => { reason.value = r; } }, r))),
    reason,
    h("button.btn.reject#reject-confirm", { onclick: () => decide("reject", reason.value) }, "Reject"));
  return h("div.decide-bar", box, h("div.buttons",
    h("button.btn.reject#reject", { onclick: () => { box.hidden = !box.hidden; if (!box.hidden) reason.focus(); } }, "Reject…"),
    h("button.btn.approve#approve", { onclick: () => decide("approve") }, "Approve")));
}

async function decide(decision, reason) {
  if (busy || !shown) return;
  busy = true;
  for (const b of page.querySelectorAll(".decide-bar button")) b.disabled = true;
  try {
    const response = await fetch("/api/decide", {
      method: "POST", credentials: "same-origin", headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ ...shown, decision, reason: reason || undefined }),
    });
    const body = await response.json().catch(() => ({ code: "internal", message: response.statusText }));
    if (!response.ok) throw body;
    const outcome = body.outcome || {};
    toast(decision === "approve" ? `Approved — the run is ${outcome.status || "going on"}` : "Rejected — the agent reads your reason");
    location.hash = "";
  } catch (error) {
    if (unpaired(error)) return;
    const where = document.getElementById("decision-error");
    if (where) clear(where, h("div.inline-error#decision-error-text",
      error.code === "stale" ? `Not decided: ${error.message}` : error.message || String(error)));
    for (const b of page.querySelectorAll(".decide-bar button")) b.disabled = false;
  } finally {
    busy = false;
  }
}

function live() {
  const dot = document.getElementById("live");
  const events = new EventSource("/api/events");
  events.addEventListener("changed", () => {
    dot.classList.remove("stale");
    if (busy) return;
    // An open card stays as it is (a reason being typed included) while its call waits unchanged.
    if (shown) {
      const open = shown;
      get(`/api/card?run=${encodeURIComponent(open.executionId)}&seq=${open.seq}`)
        .then((card) => { if (card.action.digest !== open.digest) draw(); })
        .catch(() => draw());
    } else {
      draw();
    }
  });
  events.onerror = () => {
    dot.classList.add("stale");
    // A revoked device's stream ends: one request says why.
    get("/api/queue").catch((error) => { if (unpaired(error)) events.close(); });
  };
}

window.addEventListener("hashchange", draw);
draw().then(live);
