// The console's frame: the backend bridge, navigation, the sidebar's live counts, banners, and the refresh that
// follows every change in the database (from this window or any other process).

import { h, clear, toast, dialog } from "./widgets.js";
import { app, call, refresh, applyTheme, abbreviate } from "./core.js";
import { rulesView } from "./rules.js";
import { approvalsView } from "./approvals.js";
import { executionsView } from "./executions.js";
import { snippetsView, playgroundView } from "./library.js";
import { settingsView } from "./system.js";
import { connectorsView } from "./connectors.js";

const tauri = window.__TAURI__;

const VIEWS = {
  approvals: approvalsView,
  executions: executionsView,
  rules: rulesView,
  snippets: snippetsView,
  playground: playgroundView,
  connectors: connectorsView,
  settings: settingsView,
};

async function navigate(name, options = {}) {
  if (!VIEWS[name]) name = "approvals";
  if (app.current && app.current.leave) app.current.leave();
  app.view = name;
  app.refreshers.clear();
  for (const link of document.querySelectorAll(".nav")) link.classList.toggle("active", link.dataset.view === name);
  const root = document.getElementById("view");
  clear(root);
  if (app.overview && app.overview.fatal) {
    renderFatal(app.overview);
    return;
  }
  app.current = VIEWS[name](root, options) || null;
}

async function loadOverview() {
  const overview = await call("overview");
  app.overview = overview;
  const paused = overview.counts.paused || 0;
  const badge = document.getElementById("approvals-count");
  badge.textContent = String(paused);
  badge.hidden = paused === 0;
  document.getElementById("connectors-alert").hidden = !overview.configError;
  document.getElementById("data-dir").textContent = abbreviate(overview.dataDir);
  document.getElementById("data-dir").title = overview.dataDir;
  renderBanners(overview);
  return overview;
}

function renderBanners(overview) {
  const banners = document.getElementById("banners");
  clear(banners);
  if (overview.fatal) {
    renderFatal(overview);
    return;
  }
  if (overview.configError) {
    banners.append(h("div.banner.error", h("b", "connectors.json is invalid."),
      h("span.mono", overview.configError),
      h("span", "Runs, approvals and rollbacks wait until it is fixed; the audit log is still here.")));
  }
  if (overview.otherInstance) banners.append(h("div.banner.warn", overview.otherInstance));
}

function renderFatal(overview) {
  clear(document.getElementById("view"), h("div.fatal#fatal",
    h("h1", "The data directory cannot be opened"),
    h("p", "Nothing was changed. The console shows what is wrong instead of guessing:"),
    h("pre.snippet.mono", overview.fatal),
    h("p.dim", `Data directory: ${abbreviate(overview.dataDir)}`)));
}

function keyboard(event) {
  if (event.target.closest("input, textarea, select") || event.ctrlKey || event.metaKey || event.altKey) return;
  if (document.getElementById("modal-root").childElementCount) return;
  if (app.current && app.current.key && app.current.key(event.key, event) !== false) {
    event.preventDefault();
    return;
  }
  if (event.key === "?") { shortcuts(); return; }
  const jump = { "1": "approvals", "2": "executions", "3": "rules", "4": "snippets", "5": "playground", "6": "connectors", "7": "settings" }[event.key];
  if (jump) navigate(jump);
}

/** Every shortcut, by view; `?` shows it. Each decision has one, so deciding needs no mouse. */
const SHORTCUTS = [
  ["Anywhere", [["?", "these shortcuts"], ["1 … 7", "Approvals, Executions, Rules, Snippets, Playground, Connectors, Settings"], ["Esc", "close a dialog, leave a field"]]],
  ["Approvals", [["j / k", "next / previous waiting call"], ["a", "approve"], ["A", "approve and allow… (add a rule)"], ["e", "edit the arguments, then approve"],
    ["r", "reject: type a reason (optional), then Enter"], ["x", "pick the call for a decision together (shift-click picks a range)"]]],
  ["Executions", [["j / k", "next / previous run"], ["/", "search"]]],
];

function shortcuts() {
  const body = h("table.shortcuts#shortcuts", SHORTCUTS.map(([view, keys]) => [
    h("tr", h("td", { colspan: 2 }, h("b", view))),
    keys.map(([key, what]) => h("tr", h("td", h("kbd.key", key)), h("td", what)))]));
  dialog("Keyboard shortcuts", body, [{ label: "Close", primary: true, value: () => true }]);
}

async function start() {
  app.open = navigate;
  app.loadOverview = loadOverview;
  for (const link of document.querySelectorAll(".nav")) link.addEventListener("click", () => navigate(link.dataset.view));
  document.addEventListener("keydown", keyboard);
  try {
    const settings = await call("settings");
    app.preferences = settings.preferences;
  } catch { /* defaults */ }
  applyTheme(app.preferences.theme);
  window.matchMedia("(prefers-color-scheme: dark)").addEventListener("change", () => applyTheme(app.preferences.theme));
  try {
    await loadOverview();
  } catch (error) {
    toast(error.message);
  }
  await tauri.event.listen("changed", () => refresh());
  // A click on a desktop notification: show that run.
  // A run to show, from a notification, the tray or a codemode://run/<id> link: `approvals` while it waits.
  await tauri.event.listen("open-run", (event) => navigate(event.payload.view, { id: event.payload.id }));
  setInterval(() => { for (const el of document.querySelectorAll("[data-ago]")) el.dispatchEvent(new Event("tick")); }, 30000);
  let opening = null;
  try {
    opening = await call("take_open_request");
  } catch { /* none */ }
  if (opening) navigate(opening.view, { id: opening.id });
  else navigate("approvals");
  document.body.dataset.ready = "true";
}

start();
