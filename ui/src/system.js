// Settings: runtime settings shared with the CLI and `codemode mcp` through connectors.json, and this window's
// preferences.

import { app, call, refresh, applyTheme, abbreviate } from "./core.js";

/** @typedef {import('./types/RuntimeForm').RuntimeForm} RuntimeForm */
import { h, clear, toast, copy, clock } from "./widgets.js";

export function settingsView(root) {
  const page = h("div.pagewide#settings-page");
  clear(root, page);

  async function load() {
    let settings;
    try {
      settings = await call("settings");
    } catch (error) {
      clear(page, h("div.inline-error", error.message));
      return;
    }
    const r = settings.runtime;
    const field = (id, value, type = "text") => h(`input.text#${id}`, { type, value: String(value) });
    const inputs = {
      maxExecutions: field("setting-max-executions", r.maxExecutions, "number"),
      timeoutMs: field("setting-timeout", r.timeoutMs, "number"),
      memoryLimitMb: field("setting-memory", r.memoryLimitMb, "number"),
      pausedTtl: field("setting-ttl", r.pausedTtl),
      expirySweepMinutes: field("setting-sweep", r.expirySweepMinutes, "number"),
      keepDecidedFor: field("setting-keep-decided", r.keepDecidedFor),
    };
    const message = h("div");
    const save = h("button.btn.primary#save-runtime", { onclick: async () => {
      save.disabled = true;
      try {
        const saved = await call("save_runtime_settings", { runtime: {
          name: r.name,
          maxExecutions: Number(inputs.maxExecutions.value),
          timeoutMs: Number(inputs.timeoutMs.value),
          memoryLimitMb: Number(inputs.memoryLimitMb.value),
          pausedTtl: inputs.pausedTtl.value.trim(),
          expirySweepMinutes: Number(inputs.expirySweepMinutes.value),
          keepDecidedFor: inputs.keepDecidedFor.value.trim(),
        } });
        clear(message);
        toast("Saved to connectors.json");
        settings = saved;
        refresh();
      } catch (error) {
        clear(message, h("div.inline-error#settings-error", error.message));
      }
      save.disabled = false;
    } }, "Save");
    const notifications = h("input#setting-notifications", { type: "checkbox", checked: settings.preferences.notifications });
    const closeToTray = h("input#setting-close-to-tray", { type: "checkbox", checked: settings.preferences.closeToTray });
    const startAtLogin = h("input#setting-start-at-login", { type: "checkbox", checked: settings.preferences.startAtLogin });
    const theme = h("select#setting-theme", ["system", "light", "dark"].map((t) => h("option", { value: t, selected: settings.preferences.theme === t }, t)));
    const savePreferences = async () => {
      try {
        const saved = await call("save_preferences", { preferences: {
          notifications: notifications.checked, theme: theme.value, closeToTray: closeToTray.checked, startAtLogin: startAtLogin.checked,
        } });
        app.preferences = saved;
        applyTheme(saved.theme);
        toast("Preferences saved");
      } catch (error) {
        toast(error.message);
      }
    };
    notifications.addEventListener("change", savePreferences);
    closeToTray.addEventListener("change", savePreferences);
    startAtLogin.addEventListener("change", savePreferences);
    theme.addEventListener("change", savePreferences);
    const overview = app.overview || {};
    clear(page,
      h("h2", "Settings"),
      h("div.section", h("div.section-head", "Runtime", h("span", { style: "text-transform:none;letter-spacing:0;font-weight:400" }, abbreviate(settings.configPath))),
        h("div.section-body",
          h("div.form",
            h("label", { for: "setting-max-executions" }, "Executions kept"), inputs.maxExecutions, h("span.help", "Older finished runs are pruned (runtime.maxExecutions)."),
            h("label", { for: "setting-timeout" }, "Pass timeout (ms)"), inputs.timeoutMs, h("span.help", "How long one pass of a program may run."),
            h("label", { for: "setting-memory" }, "Memory limit (MiB)"), inputs.memoryLimitMb, h("span.help", "Per sandbox worker."),
            h("label", { for: "setting-ttl" }, "Paused runs expire after"), inputs.pausedTtl, h("span.help", "e.g. 90m, 24h, 7d — then they are rejected."),
            h("label", { for: "setting-sweep" }, "Expiry sweep (minutes)"), inputs.expirySweepMinutes, h("span.help", "How often expired paused runs are looked for."),
            h("label", { for: "setting-keep-decided" }, "Keep decided runs for"), inputs.keepDecidedFor, h("span.help", "A run a person decided, or whose approved call ran or was undone, is kept this long (e.g. 90d) whatever the count above says."),
            h("span"), h("span", save), h("span.help", "Written to connectors.json, which the CLI and codemode mcp read too.")),
          message)),
      h("div.section", h("div.section-head", "On this desktop"),
        h("div.section-body", h("div.form",
          h("label", { for: "setting-notifications" }, "Desktop notifications"), h("span", notifications), h("span.help", "One per newly paused run, with Approve and Reject where the desktop supports them."),
          h("label", { for: "setting-close-to-tray" }, "Keep running in the tray"), h("span", closeToTray), h("span.help", "Closing the window leaves the app in the tray, so notifications and expiry go on."),
          h("label", { for: "setting-start-at-login" }, "Start at login"), h("span", startAtLogin), h("span.help", "In the tray, without opening the window."),
          h("label", { for: "setting-theme" }, "Theme"), theme, h("span.help", "")))),
      phoneSection(),
      h("div.section", h("div.section-head", "Connect an agent", h("button.btn.small#copy-mcp-config", { onclick: () => copy(overview.mcpConfig || "", "MCP config copied") }, "Copy MCP config")),
        h("div.section-body", h("div.dim", `Data directory: ${abbreviate(settings.dataDir)}`), h("pre.snippet.mono", overview.mcpConfig || ""))));
  }

  load();
  return {};
}

/**
 * Settings → "Approve from a phone" (docs/phone.md): serve the phone page, pair a phone by QR code, see and
 * revoke paired phones.
 */
function phoneSection() {
  const body = h("div.section-body#phone-settings");
  const section = h("div.section", h("div.section-head", "Approve from a phone"), body);
  const pairing = h("div#phone-pairing");

  async function render(view) {
    const toggle = h("input#setting-phone", { type: "checkbox", checked: !!view.serving });
    toggle.addEventListener("change", async () => {
      toggle.disabled = true;
      try {
        clear(pairing);
        render(await call("set_phone", { on: toggle.checked }));
      } catch (error) {
        toggle.checked = !toggle.checked;
        toggle.disabled = false;
        toast(error.message);
      }
    });
    const name = h("input.text#phone-name", { placeholder: "Pixel 8", maxlength: 40 });
    const pair = h("button.btn.small#pair-phone", { disabled: !view.serving, onclick: async () => {
      try {
        const made = await call("pair_phone", { name: name.value.trim() });
        showPairing(made, view.fingerprint);
      } catch (error) {
        clear(pairing, h("div.inline-error#pair-error", error.message));
      }
    } }, "Pair a phone");
    clear(body,
      h("div.form",
        h("label", { for: "setting-phone" }, "Serve the phone page"), h("span", toggle),
        h("span.help", `Paired phones on this network see the queue and approve or reject, over HTTPS (${view.listen}). Off by default.`),
        view.serving ? [h("label", "Address"), h("span.mono#phone-url", view.serving.url), h("span.help", "")] : null,
        view.serving ? [h("label", "Fingerprint"), h("span.mono.small#phone-fingerprint", view.serving.fingerprint), h("span.help", "The phone's pairing page shows the same; compare before pairing.")] : null,
        h("label", { for: "phone-name" }, "Pair"), h("span", name, " ", pair), h("span.help", "A one-time code, valid 10 minutes, for a device of this name.")),
      pairing,
      devicesList(view));
  }

  function devicesList(view) {
    return view.devices.length
      ? h("table.methods#phone-devices",
          h("tr", h("th", "Device"), h("th", "Paired"), h("th", "Last used"), h("th", "")),
          view.devices.map((d) => h("tr", { "data-device": d.name },
            h("td", d.name), h("td", clock(d.pairedAt)), h("td", d.lastUsedAt ? clock(d.lastUsedAt) : "—"),
            h("td", d.revokedAt ? h("span.dim", `revoked ${clock(d.revokedAt)}`)
              : h("button.btn.small.danger", { onclick: async () => {
                  try { render(await call("revoke_phone", { name: d.name })); toast(`${d.name} can no longer decide`); } catch (error) { toast(error.message); }
                } }, "Revoke")))))
      : h("div.dim#phone-devices", "No phone is paired.");
  }

  // A phone that pairs (or is revoked from the CLI) shows up here without leaving Settings; only the list is
  // redrawn, so a name being typed stays.
  app.refreshers.add(async () => {
    const list = body.querySelector("#phone-devices");
    if (!list) return;
    const view = await call("phone");
    list.replaceWith(devicesList(view));
  });

  function showPairing(made, fingerprint) {
    let qr = null;
    if (made.qrSvg) {
      // Our own SVG (the link's modules as one path), parsed as SVG rather than set as HTML.
      const svg = new DOMParser().parseFromString(made.qrSvg, "image/svg+xml").documentElement;
      qr = h("div.qr#pair-qr");
      qr.append(document.importNode(svg, true));
    }
    clear(pairing, h("div.pairing",
      qr,
      h("div",
        h("div", `Scan with the phone's camera, or open the link on it, before ${clock(made.pairing.expiresAt)}:`),
        h("div.mono#pair-link", made.link),
        h("div", "Code ", h("b.mono#pair-code", made.pairing.code)),
        fingerprint ? h("div.dim", "Then check the fingerprint on the phone matches the one above.") : null)));
  }

  call("phone").then(render, (error) => clear(body, h("div.inline-error", error.message)));
  return section;
}
