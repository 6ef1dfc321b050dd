// Rules: every rule in force (the database's, then the read-only ones of connectors.json) with what it decides,
// where it came from and how often it decided; add, edit, switch off and delete; and a test box that says which
// rule would decide a call (docs/design.md, "Rules").

import { app, call, refresh, explain } from "./core.js";

/** @typedef {import('./types/RuleListing').RuleListing} RuleListing */
/** @typedef {import('./types/RecentCall').RecentCall} RecentCall */
import { h, clear, clock, ago, toast, modal, dialog, debounce } from "./widgets.js";

/** What a rule's conditions say, in one line. */
function conditions(when) {
  const parts = Object.entries(when || {}).map(([path, test]) => {
    const name = path === "" ? "arguments" : path;
    if (test && typeof test === "object" && !Array.isArray(test)) {
      return Object.entries(test).map(([m, v]) => `${name} ${m} ${JSON.stringify(v)}`).join(", ");
    }
    return `${name} = ${JSON.stringify(test)}`;
  });
  return parts.join("; ");
}

/** The rule as stored: the listing without what the store adds. */
function ruleOf(listing) {
  const { origin, createdBy, createdAt, hits, lastHit, ...rule } = listing;
  return rule;
}

export function rulesView(root, options = {}) {
  const page = h("div.pagewide#rules-page");
  clear(root, page);
  /** @type {RuleListing[]} */
  let rules = [];
  /** @type {RecentCall[]} */
  let recent = [];
  let shown = null;
  const highlight = options.id || null;

  const callInput = h("input.text.mono#test-call", { placeholder: "files.write_file", style: "width:220px" });
  const argsInput = h("input.text.mono#test-args", { placeholder: '{"path": "notes/a.md"}', style: "flex:1" });
  const sourceInput = h("input.text#test-source", { placeholder: "source (optional)", style: "width:160px" });
  const recentPick = h("select#test-recent", { onchange: () => {
    const r = recent[Number(recentPick.value)];
    if (!r) return;
    callInput.value = r.call;
    argsInput.value = r.args === undefined ? "" : JSON.stringify(r.args);
    sourceInput.value = r.source || "";
    test();
  } });
  const verdict = h("div.check#test-verdict", "");
  const test = debounce(async () => {
    if (!callInput.value.trim()) { verdict.textContent = ""; return; }
    let args = null;
    if (argsInput.value.trim()) {
      try { args = JSON.parse(argsInput.value); } catch (error) { verdict.className = "check bad"; verdict.textContent = `Arguments are not JSON: ${error.message}`; return; }
    }
    try {
      const v = await call("test_rules", { call: callInput.value.trim(), args, source: sourceInput.value.trim() || null });
      verdict.className = `check rule-effect ${v.effect}`;
      verdict.textContent = v.rule
        ? `${v.effect} — decided by rule ${v.rule}${v.reason ? `: ${v.reason}` : ""}`
        : `${v.effect} — no rule matches; the connector's approval list decides`;
    } catch (error) {
      verdict.className = "check bad";
      verdict.textContent = explain(error);
    }
  }, 150);
  for (const input of [callInput, argsInput, sourceInput]) input.addEventListener("input", test);

  async function load() {
    let fresh;
    try {
      [fresh, recent] = await Promise.all([call("rules"), call("recent_calls")]);
    } catch (error) {
      clear(page, h("h2", "Rules"), h("div.inline-error", explain(error)));
      return;
    }
    // A live update that changed no rule leaves the page (and a half-typed test) as it is.
    const now = JSON.stringify([fresh, recent]);
    if (now === shown) return;
    shown = now;
    rules = fresh;
    render();
  }

  function render() {
    clear(recentPick, h("option", { value: "" }, "Pick a recent call…"),
      recent.map((r, i) => h("option", { value: String(i) }, `${r.call} ${r.args === undefined ? "" : JSON.stringify(r.args).slice(0, 80)}${r.source ? ` · ${r.source}` : ""}`)));
    const rows = rules.map((r) => {
      const fromFile = r.origin === "connectors.json";
      const expired = r.until && r.until < Date.now();
      return h(`tr${r.disabled || expired ? ".disabled" : ""}${r.id === highlight ? ".selected" : ""}`, { dataset: { rule: r.id } },
        h("td", h(`span.rule-effect.${r.effect}`, r.effect)),
        h("td.mono", r.id),
        h("td.mono", r.call),
        h("td.mono", conditions(r.when) || h("span.dim", "any arguments")),
        h("td", r.source || h("span.dim", "any")),
        h("td", r.until ? (expired ? `expired ${clock(r.until)}` : `until ${clock(r.until)}`) : h("span.dim", "never")),
        h("td", fromFile ? "connectors.json" : r.createdBy === "console" ? "app" : r.createdBy === "cli" ? "CLI" : (r.createdBy || "")),
        h("td", String(r.hits)),
        h("td", r.lastHit ? ago(r.lastHit) : h("span.dim", "—")),
        h("td", fromFile ? h("span.dim", { title: "Edit connectors.json to change it" }, "read-only")
          : [h("span.link", { onclick: () => edit(r) }, "edit"), " ",
            h("span.link", { onclick: () => toggle(r) }, r.disabled ? "switch on" : "switch off"), " ",
            h("span.link", { onclick: () => remove(r) }, "delete")]));
    });
    clear(page,
      h("div", { style: "display:flex;justify-content:space-between;align-items:center" }, h("h2", "Rules"),
        h("button.btn#add-rule", { onclick: () => edit(null) }, "Add rule")),
      h("div.dim", "Among the rules that match a call, deny beats ask beats allow; among equals the first listed decides. With none, the connector's approval list decides."),
      h("div.section#rules-table", h("div.section-body.flush",
        rows.length ? h("table.methods#rules-list",
          h("thead", h("tr", ["Effect", "Id", "Call", "Conditions", "Source", "Expires", "Origin", "Hits", "Last hit", ""].map((t) => h("th", t)))),
          h("tbody", rows))
          : h("div.empty", "No rules yet. Approve and allow… on an approval card, or add one here."))),
      h("div.section#rules-test", h("div.section-head", "Which rule would decide this call?"),
        h("div.section-body", h("div", { style: "display:flex;gap:8px;flex-wrap:wrap" }, recentPick),
          h("div", { style: "display:flex;gap:8px;margin-top:8px" }, callInput, argsInput, sourceInput), verdict)));
  }

  function edit(listing) {
    const rule = listing ? ruleOf(listing) : { id: "my-rule", effect: "allow", call: "files.write_file", when: { path: { glob: "scratch/**" } }, reason: "scratch space" };
    const area = h("textarea.text.json#rule-json", { spellcheck: false, value: JSON.stringify(rule, null, 2) });
    const problem = h("div.check.bad#rule-problem", "");
    const cancel = h("button.btn", "Cancel");
    const save = h("button.btn.approve#save-rule", listing ? "Save" : "Add");
    const m = modal(listing ? `Edit rule ${listing.id}` : "Add a rule", h("div",
      h("div.dim", "effect: allow | ask | deny; call: connector.method (* matches any run); when: argument path → a value or one of glob, regex, prefix, oneOf, lt, lte, gt, gte, maxLength, exists; source; until (epoch ms); reason. An ask rule may add confirmInApp, askInClient (ask in the agent's client too), decideWithin (30m: rejected as expired if nobody decides) and quorum (2: two different people must approve)."),
      area, problem), [cancel, save], { wide: true, id: "rule-modal" });
    cancel.onclick = () => m.close(null);
    save.onclick = async () => {
      let value;
      try { value = JSON.parse(area.value); } catch (error) { problem.textContent = `Not JSON: ${error.message}`; return; }
      try {
        if (listing) await call("replace_rule", { id: listing.id, rule: value });
        else await call("add_rule", { rule: value });
        m.close(true);
        toast(listing ? `Rule ${value.id} saved` : `Rule ${value.id} added`);
        shown = null;
        await refresh();
      } catch (error) {
        problem.textContent = explain(error);
      }
    };
  }

  async function toggle(listing) {
    const rule = { ...ruleOf(listing), disabled: !listing.disabled };
    try {
      await call("replace_rule", { id: listing.id, rule });
      toast(`Rule ${listing.id} switched ${rule.disabled ? "off" : "on"}`);
    } catch (error) {
      toast(explain(error));
    }
    shown = null;
    await refresh();
  }

  async function remove(listing) {
    const ok = await dialog(`Delete rule ${listing.id}?`, h("p", "Calls it decided keep their decision; new calls are decided without it."),
      [{ label: "Cancel", value: () => false }, { label: "Delete", className: "danger", primary: true, id: "confirm-delete-rule", value: () => true }]);
    if (!ok) return;
    try {
      await call("remove_rule", { id: listing.id });
      toast(`Rule ${listing.id} deleted`);
    } catch (error) {
      toast(explain(error));
    }
    shown = null;
    await refresh();
  }

  app.refreshers.add(load);
  load();
  return {};
}
