// What every view shares, with no view imported: the backend bridge, the app's state, errors in words, the
// theme, paths as the person reads them, and the coalescing refresh. app.js (the frame) imports the views; the
// views import this, so nothing imports in a circle.

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
 * expiry sweep) is said as such; a broken connectors.json points at the file; a server that does not answer
 * is said to be retried.
 * @param {ApiError} error
 */
export function explain(error) {
  if (error.code === "stale" || error.code === "not_found") return `Already decided or gone: ${error.message}`;
  if (error.code === "config") return `${error.message}\nFix connectors.json; reading still works meanwhile.`;
  if (error.code === "unavailable") return `${error.message}\nThe connector's server did not answer; nothing changed, try again once it runs.`;
  return error.message;
}

export const app = {
  overview: null,
  view: null,
  current: null,
  /** Views register what to do when the data changed. */
  refreshers: new Set(),
  /** Set by app.js: re-reads the sidebar's counts and banners. */
  loadOverview: null,
  preferences: { notifications: true, theme: "system", closeToTray: true, startAtLogin: false },
  /** Set by app.js: shows a view (`app.open("rules", {id})`). */
  open: null,
};

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

let refreshing = null;
let again = false;
/** Re-reads the overview and asks the open view to refresh; coalesces bursts of change events. */
export async function refresh() {
  if (refreshing) { again = true; return refreshing; }
  refreshing = (async () => {
    try {
      if (app.loadOverview) await app.loadOverview();
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

