// Building blocks shared by the views: element creation (text only — nothing from an agent is ever parsed as
// HTML), the JSON tree, the code view, status badges, times, toasts and dialogs.

/** h("div.card#id", {onclick}, child, "text", [children]) */
export function h(spec, props, ...children) {
  const tag = spec.match(/^[a-z0-9]*/i)[0] || "div";
  const el = document.createElement(tag);
  const id = spec.match(/#([\w-]+)/);
  if (id) el.id = id[1];
  const classes = [...spec.matchAll(/\.([\w-]+)/g)].map((m) => m[1]);
  if (classes.length) el.className = classes.join(" ");
  if (props && (typeof props !== "object" || props instanceof Node || Array.isArray(props))) {
    children.unshift(props);
    props = null;
  }
  for (const [key, value] of Object.entries(props || {})) {
    if (value === undefined || value === null || value === false) continue;
    if (key.startsWith("on")) el.addEventListener(key.slice(2), value);
    else if (key === "dataset") Object.assign(el.dataset, value);
    else if (key === "style") el.setAttribute("style", value);
    else if (key in el && key !== "list") el[key] = value;
    else el.setAttribute(key, value === true ? "" : value);
  }
  append(el, children);
  return el;
}

function append(el, children) {
  for (const child of children) {
    if (child === null || child === undefined || child === false) continue;
    if (Array.isArray(child)) append(el, child);
    else if (child instanceof Node) el.append(child);
    else el.append(...visibleText(String(child)));
  }
}

// Characters that change how text reads without showing themselves: C0/C1 controls (newline and tab only lay
// text out), the line and paragraph separators, and every Unicode default-ignorable code point — zero-width
// spaces and joiners, the soft hyphen, the bidirectional controls (which can make "report\u202Efdp.exe" read as
// a PDF), variation selectors, tag characters, Hangul fillers. The API's renderer marks the same set
// (crates/api/src/display.rs, `disguises`).
const DISGUISING = /([\u0000-\u0008\u000B-\u001F\u007F-\u009F\u00AD\u034F\u061C\u115F\u1160\u17B4\u17B5\u180B-\u180F\u200B-\u200F\u2028\u2029\u202A-\u202E\u2060-\u206F\u3164\uFE00-\uFE0F\uFEFF\uFFA0\uFFF0-\uFFF8\u{1BCA0}-\u{1BCA3}\u{1D173}-\u{1D17A}\u{E0000}-\u{E0FFF}])/u;
const CHARACTER_NAMES = {
  0x00ad: "SOFT HYPHEN", 0x034f: "COMBINING GRAPHEME JOINER", 0x061c: "ARABIC LETTER MARK",
  0x200b: "ZERO WIDTH SPACE", 0x200c: "ZERO WIDTH NON-JOINER", 0x200d: "ZERO WIDTH JOINER",
  0x200e: "LEFT-TO-RIGHT MARK", 0x200f: "RIGHT-TO-LEFT MARK", 0x2028: "LINE SEPARATOR", 0x2029: "PARAGRAPH SEPARATOR",
  0x202a: "LEFT-TO-RIGHT EMBEDDING", 0x202b: "RIGHT-TO-LEFT EMBEDDING", 0x202c: "POP DIRECTIONAL FORMATTING",
  0x202d: "LEFT-TO-RIGHT OVERRIDE", 0x202e: "RIGHT-TO-LEFT OVERRIDE", 0x2060: "WORD JOINER", 0x2066: "LEFT-TO-RIGHT ISOLATE",
  0x2067: "RIGHT-TO-LEFT ISOLATE", 0x2068: "FIRST STRONG ISOLATE", 0x2069: "POP DIRECTIONAL ISOLATE",
  0x3164: "HANGUL FILLER", 0xfeff: "ZERO WIDTH NO-BREAK SPACE (BOM)", 0xffa0: "HALFWIDTH HANGUL FILLER",
};

/** What a marked character is, for a badge's tooltip. */
function characterName(code) {
  if (CHARACTER_NAMES[code]) return CHARACTER_NAMES[code];
  if (code <= 0x9f) return "CONTROL CHARACTER";
  if (code >= 0xfe00 && code <= 0xfe0f) return "VARIATION SELECTOR";
  if (code >= 0xe0100 && code <= 0xe01ef) return "VARIATION SELECTOR";
  if (code >= 0xe0000 && code <= 0xe007f) return "TAG CHARACTER";
  return "INVISIBLE CHARACTER";
}

/** Text as nodes, every disguising character replaced by a badge that names it. Every text the views build
 * goes through here (via `h` and `clear`), so nothing from an agent reaches the screen able to reorder or
 * hide what is around it; copying still copies the exact value. */
export function visibleText(text) {
  const parts = text.split(DISGUISING);
  if (parts.length === 1) return [document.createTextNode(text)];
  // `split` with a capturing group alternates text and the characters found: odd indexes are characters.
  return parts.flatMap((part, i) => {
    if (i % 2 === 0) return part ? [document.createTextNode(part)] : [];
    const point = part.codePointAt(0);
    const code = point.toString(16).toUpperCase().padStart(4, "0");
    const badge = document.createElement("span");
    badge.className = "invisible-char";
    badge.title = `U+${code} ${characterName(point)}`;
    badge.textContent = `⟨U+${code}⟩`;
    return [badge];
  });
}

/** Text the API's renderer marked (crates/api/src/display.rs): each `\u{200b}` it wrote for a character that
 * hides is set off as a badge, and the text stays exactly the renderer's. A backslash of the JSON itself is
 * always escaped (`\\`, `\n`, `\u0001`), so only a mark has `\u{`. */
export function markedText(text) {
  const nodes = [];
  const mark = /\\u\{([0-9a-f]+)\}/y;
  let plain = "";
  // Anything the renderer missed would still be badged: the plain runs go through visibleText too.
  const flush = () => { if (plain) nodes.push(...visibleText(plain)); plain = ""; };
  for (let i = 0; i < text.length; i++) {
    mark.lastIndex = i;
    const found = text[i] === "\\" ? mark.exec(text) : null;
    if (found) {
      flush();
      const code = found[1].toUpperCase().padStart(4, "0");
      nodes.push(h("span.invisible-char", { title: `U+${code} ${characterName(parseInt(found[1], 16))}` }, found[0]));
      i += found[0].length - 1;
    } else if (text[i] === "\\") {
      // A JSON escape: its backslash and the character after it are plain text.
      plain += text.slice(i, i + 2);
      i += 1;
    } else {
      plain += text[i];
    }
  }
  flush();
  return nodes;
}

/**
 * A call's arguments as the API renders them for every surface (ApprovalCard.arguments): one row a key, the
 * keys that name the target first and whole, long values folded, hidden characters marked.
 * @param {import('./types/ArgumentRow').ArgumentRow[]} rows
 */
export function argumentTable(rows) {
  if (!rows.length) return h("span.dim", "no arguments");
  return h("table.kv.arguments#argument-rows", rows.map((row) => h(`tr${row.identifying ? ".identifying" : ""}`,
    h("td.mono.key", markedText(row.key)),
    h("td.mono.value", h("pre", markedText(row.value)),
      row.sent ? h("div.dim.sent", "sent as ", h("span.mono", markedText(row.sent))) : null))));
}

/** One line of a card in a list: the rows' keys and values, the target first; CSS cuts what does not fit.
 * @param {import('./types/ArgumentRow').ArgumentRow[]} rows */
export function argumentLine(rows) {
  return rows.map((row) => `${row.key ? row.key + ": " : ""}${row.nested ? row.value.replace(/\s*\n\s*/g, " ") : row.value}`).join("  ·  ");
}

export function clear(el, ...children) {
  el.replaceChildren();
  append(el, children);
  return el;
}

export const shortId = (id) => (id && id.length > 24 ? `exec_…${id.slice(-4)}` : id || "");

export function ago(ms) {
  const s = Math.max(0, Math.round((Date.now() - ms) / 1000));
  if (s < 45) return "just now";
  if (s < 90) return "1 min ago";
  const m = Math.round(s / 60);
  if (m < 60) return `${m} min ago`;
  const hrs = Math.round(m / 60);
  if (hrs < 36) return `${hrs} h ago`;
  return `${Math.round(hrs / 24)} d ago`;
}

export function clock(ms) {
  const d = new Date(ms);
  return d.toLocaleString(undefined, { hour12: false });
}

export function duration(ms) {
  if (ms < 1000) return `${ms} ms`;
  if (ms < 60000) return `${(ms / 1000).toFixed(1)} s`;
  return `${Math.round(ms / 60000)} min`;
}

export function statusBadge(status) {
  return h(`span.status.${status}`, status.replace("_", " "));
}

/**
 * The host a run belongs to on a shared store (docs/shared-store.md): its name, marked when it is this one or
 * when it is gone.
 * @param {import("./types/RunHost").RunHost} host
 */
export function hostLabel(host) {
  const state = host.here ? "this host" : host.alive ? "another host" : "gone";
  return h(`span.host.${host.here ? "here" : host.alive ? "alive" : "gone"}#run-host`, { title: `Runs on ${host.name} (${state})` },
    `on ${host.name}${host.here ? " (here)" : host.alive ? "" : " (gone)"}`);
}

/**
 * What a person should know about a shared store's run before deciding: approved elsewhere and waiting for its
 * host, or its host gone.
 * @param {import("./types/ExecutionState").ExecutionState} e
 */
export function hostNote(e) {
  if (!e.host) return null;
  if (e.handed) return h("div.note#handed", `Approved by ${e.handed.by}; waiting for ${e.host.name} to resume it with its connectors.`);
  if (!e.host.alive && !e.host.here && (e.status === "paused" || e.status === "running")) {
    return h("div.note#host-gone", `Its host ${e.host.name} is gone (no heartbeat for 30 s). The run waits for it, or Adopt it here: this host then decides and resumes it, and needs every connector it was begun with.`);
  }
  return null;
}

const DECIDED = { approved: "approved", edited: "approved with edits", rejected: "rejected", allowed: "allowed", denied: "denied", expired: "expired" };

/**
 * What was decided about a call, as a person reads it: "rejected by ann via console at 14:02". A rejected call and a
 * rolled-back call are both `reverted`; only the decision tells them apart (docs/design.md, "Decisions").
 */
export function decisionText(entry, withTime = true) {
  const d = entry.decision;
  if (!d) return entry.decidedBy ? `decided by ${entry.decidedBy}` : null;
  const wayOf = (v) => (v.rule ? `rule ${v.rule}` : v.device ? `device "${v.device}"` : v.client ? `${v.by} "${v.client}"` : v.by);
  // Who, as the store authenticated them (docs/design.md, "Who decided"), then the way they answered.
  const one = (v) => (v.person ? `${v.person} via ${wayOf(v)}` : wayOf(v));
  // Four eyes: everyone whose approval counted (docs/design.md, "Four eyes").
  const by = d.approvals && d.approvals.length > 1 ? d.approvals.map(one).join(" and ") : one(d);
  return `${DECIDED[d.kind] || d.kind} by ${by}${withTime && d.at ? " at " + clock(d.at) : ""}`;
}

/** The dot for a call's state; steps are hollow. */
export function stateDot(entry) {
  if (entry.connector === "__step") return h("span.dot.step", { title: "step" });
  return h(`span.dot.${entry.state}`, { title: entry.state });
}

/** One-line preview of a value, cut to `max` characters. */
export function preview(value, max = 120) {
  if (value === undefined) return "";
  let text;
  try {
    text = typeof value === "string" ? JSON.stringify(value) : JSON.stringify(value);
  } catch {
    text = String(value);
  }
  if (text === undefined) return "";
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}

/** A friendly one-line description of a result, as timelines show it. */
export function resultSummary(result) {
  if (result === undefined || result === null) return "";
  if (Array.isArray(result)) return `${result.length} item${result.length === 1 ? "" : "s"}`;
  return preview(result, 60);
}

/** How a value the store keeps in an envelope reads: binary is `{__codemode_binary_v1__: kind, data: base64}`
 * (kind: Uint8Array, ArrayBuffer or ArrayBufferView), a BigInt `{__codemode_bigint_v1__: "123"}`
 * (crates/codemode/src/codec.rs). */
function envelope(value) {
  const keys = Object.keys(value);
  const binary = value.__codemode_binary_v1__;
  if (keys.length === 2 && typeof binary === "string" && typeof value.data === "string") {
    const padding = (value.data.match(/=*$/) || [""])[0].length;
    return `${binary}, ${size(Math.floor(value.data.length * 3 / 4) - padding)}`;
  }
  const bigint = value.__codemode_bigint_v1__;
  if (keys.length === 1 && typeof bigint === "string") return `${bigint}n`;
  return null;
}

function size(bytes) {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KB`;
  return `${(bytes / 1024 / 1024).toFixed(1)} MB`;
}

/** A JSON tree: expanded `open` levels deep; long strings cut until clicked; binary envelopes summarised. */
export function jsonTree(value, open = 2) {
  const root = h("div.json");
  root.append(node(value, open, 0));
  return root;
}

function node(value, open, depth) {
  if (value === null) return h("span.o", "null");
  if (value === undefined) return h("span.o", "undefined");
  if (typeof value === "string") {
    const full = JSON.stringify(value);
    if (full.length <= 160) return h("span.s", full);
    const span = h("span.s", `${full.slice(0, 120)}…"`);
    const more = h("span.more", ` ▸ ${size(value.length)}`);
    const expand = () => { clear(span, full); more.remove(); };
    span.addEventListener("click", expand);
    more.addEventListener("click", expand);
    return h("span", span, more);
  }
  if (typeof value === "number") return h("span.n", String(value));
  if (typeof value === "boolean") return h("span.o", String(value));
  if (typeof value === "object" && !Array.isArray(value)) {
    const summary = envelope(value);
    if (summary) return h("span.o", summary);
  }
  const isArray = Array.isArray(value);
  const entries = isArray ? value.map((v, i) => [i, v]) : Object.entries(value);
  const [openMark, closeMark] = isArray ? ["[", "]"] : ["{", "}"];
  if (entries.length === 0) return h("span", `${openMark}${closeMark}`);
  const body = h("div.indent");
  const render = () => {
    clear(body);
    entries.forEach(([k, v], i) => {
      body.append(h("div", isArray ? null : [h("span.k", JSON.stringify(String(k))), ": "], node(v, open, depth + 1), i < entries.length - 1 ? "," : ""));
    });
  };
  const collapsed = h("span.more", ` ${entries.length} ${isArray ? "items" : "keys"} `);
  const wrap = h("span");
  let expanded = depth < open;
  const toggle = h("span.toggle", expanded ? "▾ " : "▸ ");
  const draw = () => {
    toggle.textContent = expanded ? "▾ " : "▸ ";
    if (expanded) { render(); clear(wrap, openMark, body, closeMark); }
    else clear(wrap, openMark, collapsed, closeMark);
  };
  toggle.addEventListener("click", () => { expanded = !expanded; draw(); });
  collapsed.addEventListener("click", () => { expanded = true; draw(); });
  draw();
  return h("span", toggle, wrap);
}

const KEYWORDS = new Set("async await const let var return if else for of in while function new throw try catch finally typeof true false null undefined class extends break continue switch case default".split(" "));

/** Syntax colouring of one line of JavaScript, by token, as text nodes. */
function colour(line) {
  const out = [];
  const re = /(\/\/.*$)|("(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'|`(?:[^`\\]|\\.)*`)|(\b\d+(?:\.\d+)?\b)|([A-Za-z_$][\w$]*)/g;
  let last = 0;
  for (const m of line.matchAll(re)) {
    if (m.index > last) out.push(line.slice(last, m.index));
    if (m[1]) out.push(h("span.com", m[1]));
    else if (m[2]) out.push(h("span.str", m[2]));
    else if (m[3]) out.push(h("span.num", m[3]));
    else if (KEYWORDS.has(m[4])) out.push(h("span.kw", m[4]));
    else out.push(m[4]);
    last = m.index + m[0].length;
  }
  if (last < line.length) out.push(line.slice(last));
  return out;
}

/** Reasons offered when rejecting, in the app and on the phone page; the agent reads the one chosen. */
export const PRESET_REASONS = ["Not now", "Wrong file or target", "Ask me before doing this", "Too broad: do less at once", "Use a different approach"];

/** How long until `deadline` (epoch ms), as "within 12 min" or "within 1 h 5 min". */
export function timeLeft(deadline) {
  const minutes = Math.ceil((deadline - Date.now()) / 60000);
  if (minutes <= 0) return "now";
  if (minutes < 60) return `within ${minutes} min`;
  const hours = Math.floor(minutes / 60);
  return `within ${hours} h${minutes % 60 ? ` ${minutes % 60} min` : ""}`;
}

/** Code with line numbers; `hit` (1-based) is highlighted. */
export function codeView(code, hit) {
  const lines = (code || "").replace(/\s+$/, "").split("\n");
  const view = h("div.code");
  lines.forEach((line, i) => {
    view.append(h(`div.line${i + 1 === hit ? ".hit" : ""}`, h("span.ln", String(i + 1)), h("span", colour(line))));
  });
  return view;
}

/** The 1-based line of the `n`-th call (0-based) to connector.method in the code, if it can be found. */
export function callLine(code, connector, method, n = 0) {
  const lines = (code || "").split("\n");
  const needle = new RegExp(`\\b${connector}\\s*\\.\\s*${method.replace(/[$]/g, "\\$")}\\s*\\(`);
  const hits = [];
  lines.forEach((line, i) => { if (needle.test(line)) hits.push(i + 1); });
  if (hits.length === 0) return null;
  return hits[Math.min(n, hits.length - 1)];
}

export function toast(message) {
  const el = h("div.toast", message);
  document.getElementById("toasts").append(el);
  setTimeout(() => el.remove(), 3800);
}

export async function copy(text, what = "Copied") {
  try {
    await navigator.clipboard.writeText(text);
    toast(what);
  } catch {
    // WebKitGTK may refuse the async clipboard outside a user gesture; fall back to a selection copy.
    const area = h("textarea", { value: text, style: "position:fixed;opacity:0" });
    document.body.append(area);
    area.select();
    document.execCommand("copy");
    area.remove();
    toast(what);
  }
}

/** A modal with a body and buttons; resolves with the clicked button's value (or null on Escape). */
export function dialog(title, body, buttons) {
  return new Promise((resolve) => {
    const root = document.getElementById("modal-root");
    const close = (value) => { clear(root); document.removeEventListener("keydown", onKey, true); resolve(value); };
    const onKey = (e) => {
      if (e.key === "Escape") { e.stopPropagation(); close(null); }
      if (e.key === "Enter" && !(e.target instanceof HTMLTextAreaElement)) {
        const primary = buttons.find((b) => b.primary);
        if (primary) { e.preventDefault(); e.stopPropagation(); close(primary.value()); }
      }
    };
    document.addEventListener("keydown", onKey, true);
    const modal = h("div.modal", { role: "dialog" }, h("h3", title), body,
      h("div.buttons", buttons.map((b) => h(`button.btn${b.className ? "." + b.className : ""}`, { onclick: () => close(b.value()), id: b.id }, b.label))));
    clear(root, h("div.modal-back", { onclick: (e) => { if (e.target === e.currentTarget) close(null); } }, modal));
    const first = modal.querySelector("input, textarea");
    if (first) first.focus();
  });
}

/** A list pane and a detail pane side by side; the divider drags, and the width is remembered. */
export function splitPane(list, detail) {
  const saved = Number(localStorage.getItem("listWidth"));
  if (saved >= 240) list.style.width = `${saved}px`;
  const handle = h("div.resizer", { title: "Drag to resize" });
  handle.addEventListener("mousedown", (down) => {
    down.preventDefault();
    const startX = down.clientX;
    const startWidth = list.getBoundingClientRect().width;
    const move = (e) => {
      const width = Math.max(240, Math.min(window.innerWidth * 0.6, startWidth + e.clientX - startX));
      list.style.width = `${width}px`;
    };
    const up = () => {
      document.removeEventListener("mousemove", move);
      document.removeEventListener("mouseup", up);
      localStorage.setItem("listWidth", String(Math.round(list.getBoundingClientRect().width)));
    };
    document.addEventListener("mousemove", move);
    document.addEventListener("mouseup", up);
  });
  return h("div.split", list, handle, detail);
}

/** Lines of a diff shown before the rest is folded behind a button. */
const DIFF_FOLD = 400;

/** What a waiting call would change (a PreviewView): a heading in words, then the diff with line numbers and the
 * changed words marked, or sizes and digests for binary content, or the present state as a JSON tree.
 * @param {import('./types/PreviewView').PreviewView} view */
export function previewPane(view) {
  const p = view.preview;
  const cut = p.cut ? " — long text cut" : "";
  let heading;
  let body = null;
  switch (p.kind) {
    case "diff": heading = p.before === null ? `Creates ${p.path}` : `Changes ${p.path}`; break;
    case "delete": heading = p.before === null ? `Deletes ${p.path}, which does not exist` : `Deletes ${p.path} — this is what will be lost`; break;
    case "move": heading = p.overwrites === null ? `Moves ${p.from} to ${p.to}` : `Moves ${p.from} to ${p.to}, replacing what ${p.to} holds`; break;
    case "binary":
      heading = p.beforeSize === null ? `Creates binary ${p.path}` : `Replaces binary ${p.path}`;
      body = h("table.kv#binary-preview",
        p.beforeSize === null ? null : h("tr", h("td.dim", "now"), h("td.mono", `${p.beforeSize} bytes · SHA-256 ${p.beforeSha256}`)),
        h("tr", h("td.dim", "after"), h("td.mono", `${p.afterSize} bytes · SHA-256 ${p.afterSha256}`)));
      break;
    case "current": heading = "Now"; body = jsonTree(p.value, 2); break;
    default: heading = "No preview"; body = h("div.dim", p.message || "");
  }
  if (view.hunks.length) body = diffView(view.hunks);
  return h("div.preview-pane", h("div.preview-heading", heading + cut), body);
}

function diffView(hunks) {
  const table = h("table.diff#diff");
  let shown = 0;
  let rest = 0;
  const rows = [];
  hunks.forEach((hunk, index) => {
    if (index > 0) rows.push(h("tr.gap", h("td.no"), h("td.no"), h("td.sign"), h("td.text", "⋯")));
    for (const line of hunk.lines) {
      const sign = line.tag === "insert" ? "+" : line.tag === "delete" ? "−" : " ";
      const row = h(`tr.${line.tag}`, h("td.no", line.old ?? ""), h("td.no", line.new ?? ""), h("td.sign", sign),
        h("td.text", line.parts.map((part) => part.changed && line.tag !== "equal" ? h("mark", part.text) : part.text)));
      if (shown < DIFF_FOLD) { rows.push(row); shown += 1; } else { rest += 1; }
    }
  });
  table.append(...rows);
  if (!rest) return table;
  const more = h("button.btn.small#diff-more", { onclick: () => { more.replaceWith(h("div.dim", `${rest} more lines are not shown here.`)); } }, `${rest} more lines`);
  return h("div", table, more);
}

/** A modal whose caller decides when it closes (forms that check their input before they may be sent):
 * returns `close(value)` and `closed`, a promise of that value (null on Escape or a click outside). */
export function modal(title, body, buttons, { wide = false, id } = {}) {
  const root = document.getElementById("modal-root");
  let resolve;
  const closed = new Promise((r) => { resolve = r; });
  const close = (value) => { clear(root); document.removeEventListener("keydown", onKey, true); resolve(value); };
  const onKey = (e) => { if (e.key === "Escape") { e.stopPropagation(); close(null); } };
  document.addEventListener("keydown", onKey, true);
  const box = h(`div.modal${wide ? ".wide" : ""}`, { role: "dialog", id }, h("h3", title), body, h("div.buttons", buttons));
  clear(root, h("div.modal-back", { onclick: (e) => { if (e.target === e.currentTarget) close(null); } }, box));
  const first = box.querySelector("textarea, input, select");
  if (first) first.focus();
  return { close, closed };
}

/** Calls `f` once input has paused for `ms`. */
export function debounce(f, ms = 200) {
  let timer;
  return (...args) => { clearTimeout(timer); timer = setTimeout(() => f(...args), ms); };
}
