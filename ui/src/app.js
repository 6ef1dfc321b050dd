// The console's frame: the backend bridge, navigation, the sidebar's live counts, banners, and the refresh that
// follows every change in the database (from this window or any other process).

import { h, clear, toast } from "./widgets.js";
import { approvalsView } from "./approvals.js";
import { executionsView } from "./executions.js";
import { snippetsView, playgroundView } from "./library.js";
import { connectorsView, settingsView } from "./system.js";

const tauri = window.__TAURI__;

/** @typedef {import('./types/ApiError').ApiError} ApiError */
/** @typedef {import('./types/ErrorCode').ErrorCode} ErrorCode */

/**
 * Calls a backend command; failures reject with an {@link ApiError} `{code, message}`. Branch on `code`
 * (`not_found`, `stale`, `invalid_args`, `config`, `conflict`, `internal`), never on the message.
 * @returns {Promise<any>}
 */
export async function call(command, args = {}) {
  try {
    return await tauri.core.invoke(command, args);
  } catch (error) {
    if (error && typeof error === "object" && "code" in error && "message" in error) throw error;
    throw /** @type {ApiError} */ ({ code: "internal", message: String(error) });
  }
}

/**
 * What a failed operation tells the person: a run decided or deleted elsewhere (another window, the CLI, the
 * expiry sweep) is said as such; a broken connectors.json points at the file.
 * @param {ApiError} error
 */
export function explain(error) {
  if (error.code === "stale" || error.code === "not_found") return `Already decided or gone: ${error.message}`;
  if (error.code === "config") return `${error.message}\nFix connectors.json; reading still works meanwhile.`;
  return error.message;
}

export const app = {
  overview: null,
  view: null,
  current: null,
  /** Views register what to do when the data changed. */
  refreshers: new Set(),
  preferences: { notifications: true, theme: "system" },
  open(name, options) { return navigate(name, options); },
};

const VIEWS = {
  approvals: approvalsView,
  executions: executionsView,
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

export function applyTheme(theme) {
  const dark = theme === "dark" || (theme === "system" && window.matchMedia("(prefers-color-scheme: dark)").matches);
  document.documentElement.dataset.theme = dark ? "dark" : "light";
}

/** A path under the user's home folder as `~/…`. */
export function abbreviate(dir) {
  const home = app.overview && app.overview.homeDir;
  if (!dir || !home) return dir || "";
  return dir === home || dir.startsWith(home + "/") ? "~" + dir.slice(home.length) : dir;
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

let refreshing = null;
let again = false;
/** Re-reads the overview and asks the open view to refresh; coalesces bursts of change events. */
export async function refresh() {
  if (refreshing) { again = true; return refreshing; }
  refreshing = (async () => {
    try {
      await loadOverview();
      for (const refresher of app.refreshers) await refresher();
      setLive(true);
    } catch (error) {
      setLive(false);
      console.error(error);
    }
  })();
  await refreshing;
  refreshing = null;
  if (again) { again = false; return refresh(); }
}

function setLive(ok) {
  document.getElementById("live-dot").classList.toggle("stale", !ok);
  document.getElementById("live-text").textContent = ok ? "live" : "reconnecting";
}

function keyboard(event) {
  if (event.target.closest("input, textarea, select") || event.ctrlKey || event.metaKey || event.altKey) return;
  if (document.getElementById("modal-root").childElementCount) return;
  if (app.current && app.current.key && app.current.key(event.key, event) !== false) {
    event.preventDefault();
    return;
  }
  const jump = { "1": "approvals", "2": "executions", "3": "snippets", "4": "playground", "5": "connectors", "6": "settings" }[event.key];
  if (jump) navigate(jump);
}

async function start() {
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
  await tauri.event.listen("open-run", (event) => navigate("approvals", { id: event.payload.id }));
  setInterval(() => { for (const el of document.querySelectorAll("[data-ago]")) el.dispatchEvent(new Event("tick")); }, 30000);
  const paused = (app.overview && app.overview.counts.paused) || 0;
  navigate(paused > 0 || !app.overview ? "approvals" : "approvals");
  document.body.dataset.ready = "true";
}

start();
