//! What people read: tables and short reports for each command (`--json` prints the values themselves).

use codemode::discovery::SearchOutput;
use codemode::{
    ExecutionState, Outcome, PendingAction, Replay, RollbackReport, Snippet, ToolLogEntry,
};
use codemode_api::ConnectorInfo;
use codemode_api::display;
use serde_json::Value;

/// Everything the CLI prints for people passes through this (main.rs), so no value from an agent, a connector or
/// a file reaches the terminal raw; the API's renderer marks the same characters on every surface.
pub use codemode_api::display::visible;

/// A call's arguments as every surface shows them ([`codemode_api::display`]), `indent` spaces in.
fn arguments(args: Option<&Value>, canonical: Option<&Value>, indent: usize) -> String {
    display::arguments_text(args, canonical, indent)
}

/// A compact one-line JSON, cut to `max` characters.
fn brief(value: &Value, max: usize) -> String {
    let text = value.to_string();
    if text.chars().count() <= max {
        text
    } else {
        let cut: String = text.chars().take(max.saturating_sub(1)).collect();
        format!("{cut}…")
    }
}

fn pretty(value: &Value) -> String {
    serde_json::to_string_pretty(value).unwrap_or_default()
}

/// Columns padded to their widest cell.
fn table(header: &[&str], rows: &[Vec<String>]) -> String {
    // Escaped before measuring, so an escape widens its column instead of shifting the next one.
    let rows: Vec<Vec<String>> = rows
        .iter()
        .map(|row| row.iter().map(|c| visible(c).into_owned()).collect())
        .collect();
    let mut widths: Vec<usize> = header.iter().map(|h| h.chars().count()).collect();
    for row in &rows {
        for (i, cell) in row.iter().enumerate() {
            widths[i] = widths[i].max(cell.chars().count());
        }
    }
    let line = |cells: Vec<String>| {
        let last = cells.len().saturating_sub(1);
        cells
            .iter()
            .enumerate()
            .map(|(i, c)| {
                if i == last {
                    c.clone()
                } else {
                    format!("{c:<width$}", width = widths[i])
                }
            })
            .collect::<Vec<_>>()
            .join("  ")
    };
    let mut out = vec![line(header.iter().map(|h| (*h).to_owned()).collect())];
    out.extend(rows.iter().map(|r| line(r.clone())));
    out.join("\n")
}

fn time(ms: i64) -> String {
    // UTC, to the second: enough to order and find a run; no time-zone database needed.
    let (y, m, d, hour, minute, second, _) = codemode::clock::civil_time(ms);
    format!("{y:04}-{m:02}-{d:02} {hour:02}:{minute:02}:{second:02}")
}

pub fn outcome(outcome: &Outcome) -> String {
    match outcome {
        Outcome::Completed {
            execution_id,
            result,
            logs,
            ..
        } => {
            let mut text = format!("completed  {execution_id}");
            for line in logs.iter().flatten() {
                text.push_str(&format!("\nconsole: {line}"));
            }
            if let Some(result) = result {
                text.push_str(&format!("\n{}", pretty(result)));
            }
            text
        }
        Outcome::Paused {
            execution_id,
            pending,
            ..
        } => {
            let mut text = format!("paused     {execution_id}");
            for p in pending {
                text.push_str(&format!(
                    "\nawaiting approval: #{} {}.{}\n{}\napprove: codemode approve {execution_id}\nreject:  codemode reject {execution_id} {}",
                    p.seq,
                    p.connector,
                    p.method,
                    arguments(p.args.as_ref(), p.canonical.as_ref(), 2),
                    p.seq
                ));
            }
            text
        }
        Outcome::Error {
            execution_id,
            error,
            ..
        } => {
            if execution_id.is_empty() {
                format!("error: {error}")
            } else {
                format!("error      {execution_id}\n{error}")
            }
        }
    }
}

pub fn pending(pending: &[PendingAction]) -> String {
    if pending.is_empty() {
        return "nothing awaits approval".to_owned();
    }
    // A block per call rather than a table row: the arguments are what is approved, and a column would cut them.
    pending
        .iter()
        .map(pending_one)
        .collect::<Vec<_>>()
        .join("\n\n")
}

fn pending_one(p: &PendingAction) -> String {
    let asked = p
        .asked_by
        .as_deref()
        .map(|rule| format!("  (asked by rule {})", visible(rule)))
        .unwrap_or_default();
    // The deadline as a time, not a countdown: the output may be read later than it was printed.
    let due = p
        .decide_by
        .map(|by| format!("  (decide by {} UTC, or it expires)", time(by)))
        .unwrap_or_default();
    // Four eyes: "1 of 2 — approved by alice via console", so the next person knows they are the second.
    let quorum = p
        .quorum_line()
        .map(|line| format!("  ({})", visible(&line)))
        .unwrap_or_default();
    format!(
        "{}  #{}  {}.{}{}{asked}{quorum}{due}\n{}",
        p.execution_id,
        p.seq,
        p.connector,
        p.method,
        if p.interrupted { "  (interrupted)" } else { "" },
        arguments(p.args.as_ref(), p.canonical.as_ref(), 2)
    )
}

/// Each waiting call as [`pending`] shows it, with what it would change beneath.
pub fn pending_previews(pending: &[codemode_api::PendingPreview]) -> String {
    if pending.is_empty() {
        return "nothing awaits approval".to_owned();
    }
    pending
        .iter()
        .map(|p| {
            let call = pending_one(&p.action);
            match &p.view {
                Some(view) => format!("{call}\n{}", preview(view)),
                None => format!("{call}\n  (no preview)"),
            }
        })
        .collect::<Vec<_>>()
        .join("\n\n")
}

/// A preview in words, and a unified diff when it compares text.
pub fn preview(view: &codemode_api::PreviewView) -> String {
    use codemode::Preview;
    let cut = |cut: &bool| if *cut { " (long text cut)" } else { "" };
    let heading = match &view.preview {
        Preview::Diff {
            path,
            before,
            cut: c,
            ..
        } => match before {
            Some(_) => format!("  changes {path}{}", cut(c)),
            None => format!("  creates {path}{}", cut(c)),
        },
        Preview::Delete {
            path,
            before,
            cut: c,
        } => match before {
            Some(_) => format!("  deletes {path}{}", cut(c)),
            None => format!("  deletes {path}, which does not exist"),
        },
        Preview::Move {
            from,
            to,
            overwrites,
            cut: c,
        } => match overwrites {
            Some(_) => format!(
                "  moves {from} to {to}, replacing what {to} holds{}",
                cut(c)
            ),
            None => format!("  moves {from} to {to}"),
        },
        Preview::Binary {
            path,
            before_size,
            after_size,
            before_sha256,
            after_sha256,
        } => match (before_size, before_sha256) {
            (Some(size), Some(digest)) => format!(
                "  replaces binary {path}: {size} bytes (SHA-256 {digest}) → {after_size} bytes (SHA-256 {after_sha256})"
            ),
            _ => format!("  creates binary {path}: {after_size} bytes (SHA-256 {after_sha256})"),
        },
        Preview::Current { value, cut: c } => {
            format!("  now{}:\n{}", cut(c), arguments(Some(value), None, 4))
        }
        Preview::Unavailable { message } => format!("  preview unavailable: {message}"),
    };
    match view.unified() {
        Some(diff) if !diff.is_empty() => format!("{heading}\n{}", indent(&diff, 4)),
        _ => heading,
    }
}

fn indent(text: &str, by: usize) -> String {
    let pad = " ".repeat(by);
    text.lines()
        .map(|line| format!("{pad}{line}"))
        .collect::<Vec<_>>()
        .join("\n")
}

/// Insights as a person reads them (docs/history.md, "Insights").
pub fn insights(figures: &codemode::Insights) -> String {
    let seconds = |ms: i64| match ms.max(0) {
        ms if ms < 1000 => format!("{ms} ms"),
        ms if ms < 60_000 => format!("{:.1} s", ms as f64 / 1000.0),
        ms if ms < 3_600_000 => format!("{} min {} s", ms / 60_000, ms % 60_000 / 1000),
        ms => format!("{} h {} min", ms / 3_600_000, ms % 3_600_000 / 60_000),
    };
    let mut lines = vec![
        format!(
            "calls: {} allowed · {} asked · {} denied · {} expired",
            figures.allowed, figures.asked, figures.denied, figures.expired
        ),
        format!(
            "asked: {} approved · {} rejected · approval rate {}",
            figures.approved,
            figures.rejected,
            figures
                .approval_rate
                .map_or("—".to_owned(), |rate| format!("{:.0}%", rate * 100.0))
        ),
        format!(
            "time to decide: median {} · 90th percentile {}",
            figures.decide_median_ms.map_or("—".to_owned(), seconds),
            figures.decide_p90_ms.map_or("—".to_owned(), seconds)
        ),
    ];
    if !figures.shapes.is_empty() {
        lines.push("approved most often (make a rule to stop being asked):".to_owned());
        for shape in &figures.shapes {
            let when = if shape.when.is_empty() {
                "any arguments".to_owned()
            } else {
                serde_json::Value::Object(shape.when.clone()).to_string()
            };
            lines.push(format!(
                "  {:>4} approved, {} rejected  {}  {}\n        codemode rules add '{}'",
                shape.approved,
                shape.rejected,
                visible(&shape.call),
                visible(&when),
                visible(&shape.rule.to_string().replace('\'', "'\\''"))
            ));
        }
    }
    lines.join("\n")
}

pub fn executions(executions: &[ExecutionState]) -> String {
    if executions.is_empty() {
        return "no executions".to_owned();
    }
    // On a shared store every run has a host, and the table says which.
    let shared = executions.iter().any(|e| e.host.is_some());
    let rows: Vec<Vec<String>> = executions
        .iter()
        .map(|e| {
            let mut status = e.status.as_str().to_owned();
            if e.interrupted {
                status.push_str(" (interrupted)");
            }
            let mut row = vec![
                e.id.clone(),
                status,
                e.log.len().to_string(),
                time(e.updated_at),
                e.source.clone().unwrap_or_default(),
            ];
            if shared {
                row.push(e.host.as_ref().map(host_column).unwrap_or_default());
            }
            row
        })
        .collect();
    if shared {
        table(
            &["ID", "STATUS", "CALLS", "UPDATED (UTC)", "SOURCE", "HOST"],
            &rows,
        )
    } else {
        table(&["ID", "STATUS", "CALLS", "UPDATED (UTC)", "SOURCE"], &rows)
    }
}

/// A host as a table cell: its name, marked when it is this one or gone.
fn host_column(host: &codemode::RunHost) -> String {
    match (host.here, host.alive) {
        (true, _) => format!("{} (here)", host.name),
        (false, true) => host.name.clone(),
        (false, false) => format!("{} (gone)", host.name),
    }
}

/// What was decided about a call, as a person reads it: `rejected by ann via cli: not today`, `allowed by rule
/// notes`.
fn decision(entry: &ToolLogEntry) -> String {
    if entry.inherited {
        return "served from the old run".to_owned();
    }
    let Some(decision) = &entry.decision else {
        return entry.decided_by.clone().unwrap_or_default();
    };
    let kind = serde_json::to_value(decision.kind)
        .ok()
        .and_then(|v| v.as_str().map(str::to_owned))
        .unwrap_or_default();
    // Who, as the store authenticated them, then the way they answered: "approved by alice via cli".
    let by = decision.who();
    match &decision.reason {
        Some(reason) => format!("{kind} by {by}: {reason}"),
        None => format!("{kind} by {by}"),
    }
}

fn entry_row(entry: &ToolLogEntry) -> Vec<String> {
    let mut state = entry.state.as_str().to_owned();
    if entry.requires_approval {
        state.push_str(" ⏸");
    }
    vec![
        entry.seq.to_string(),
        format!("{}.{}", entry.connector, entry.method),
        state,
        decision(entry),
        entry
            .result
            .as_ref()
            .map(|r| brief(r, 60))
            .unwrap_or_default(),
    ]
}

/// A rerun: where it came from, whether its program kept to the old run's calls, then its outcome.
pub fn rerun(rerun: &codemode_api::Rerun) -> String {
    let mut text = forked_line(&rerun.forked_from);
    text.push('\n');
    text.push_str(&outcome(&rerun.outcome));
    text
}

/// `rerun of exec_… from call 2`, and the departure when the program left the old run's calls.
fn forked_line(forked: &codemode::ForkedFrom) -> String {
    let mut text = format!("rerun of {} from call {}", forked.execution_id, forked.seq);
    if let Some(diverged) = &forked.diverged {
        text.push_str(&format!("\n{}", diverged.sentence()));
    }
    text
}

pub fn execution(e: &ExecutionState) -> String {
    let mut text = format!(
        "{}\nstatus:   {}{}\ncreated:  {} UTC\nupdated:  {} UTC\n",
        e.id,
        e.status.as_str(),
        if e.interrupted { " (interrupted)" } else { "" },
        time(e.created_at),
        time(e.updated_at)
    );
    if let Some(source) = &e.source {
        text.push_str(&format!("source:   {source}\n"));
    }
    if let Some(host) = &e.host {
        text.push_str(&format!("host:     {}\n", host_line(host)));
    }
    if let Some(handed) = &e.handed {
        text.push_str(&format!(
            "          approved by {}; waiting for its host to resume it\n",
            handed.by
        ));
    }
    if let Some(forked) = &e.forked_from {
        for line in forked_line(forked).lines() {
            text.push_str(&format!("rerun:    {line}\n"));
        }
    }
    if !e.reruns.is_empty() {
        text.push_str(&format!("reruns:   {}\n", e.reruns.join(", ")));
    }
    text.push_str(&format!("\n{}\n", e.code.trim_end()));
    if e.log.is_empty() {
        text.push_str("\nno connector calls\n");
    } else {
        let rows: Vec<Vec<String>> = e.log.iter().map(entry_row).collect();
        text.push('\n');
        text.push_str(&table(
            &["SEQ", "CALL", "STATE", "DECISION", "RESULT"],
            &rows,
        ));
        text.push('\n');
        // Arguments below the table, whole: what was approved or run must be readable in full.
        for entry in &e.log {
            text.push_str(&format!(
                "\n#{} {}.{}\n{}\n",
                entry.seq,
                entry.connector,
                entry.method,
                arguments(entry.args.as_ref(), entry.canonical.as_ref(), 2)
            ));
        }
    }
    for line in e.logs.iter().flatten() {
        text.push_str(&format!("console: {line}\n"));
    }
    if let Some(result) = &e.result {
        text.push_str(&format!("\nresult:\n{}\n", pretty(result)));
    }
    if let Some(error) = &e.error {
        text.push_str(&format!("\nerror:\n{error}\n"));
    }
    text.trim_end().to_owned()
}

/// The host a run belongs to on a shared store: `ann@laptop`, `… (this host)`, `… (gone: waiting for it)`.
fn host_line(host: &codemode::RunHost) -> String {
    if host.here {
        format!("{} (this host)", host.name)
    } else if host.alive {
        host.name.clone()
    } else {
        format!(
            "{} (gone: the run waits for it, or `codemode adopt` on a host with its connectors)",
            host.name
        )
    }
}

pub fn rollback(report: &RollbackReport) -> String {
    let mut lines = vec![format!(
        "{}: {}",
        report.execution_id,
        report.status.map(|s| s.as_str()).unwrap_or("unknown")
    )];
    for r in &report.reverted {
        lines.push(format!("reverted  #{} {}.{}", r.seq, r.connector, r.method));
    }
    for s in &report.skipped {
        lines.push(format!(
            "skipped   #{} {}.{}: {}",
            s.seq, s.connector, s.method, s.reason
        ));
    }
    for f in &report.failed {
        lines.push(format!(
            "FAILED    #{} {}.{}: {}",
            f.seq, f.connector, f.method, f.error
        ));
    }
    if lines.len() == 1 {
        lines.push("nothing to revert".to_owned());
    }
    lines.join("\n")
}

pub fn snippets(snippets: &[Snippet]) -> String {
    if snippets.is_empty() {
        return "no snippets".to_owned();
    }
    let rows: Vec<Vec<String>> = snippets
        .iter()
        .map(|s| {
            vec![
                s.name.clone(),
                s.connectors.clone().unwrap_or_default().join(", "),
                s.description.clone(),
            ]
        })
        .collect();
    table(&["NAME", "CONNECTORS", "DESCRIPTION"], &rows)
}

/// The rules in force, in precedence order, with where each lives and how often it decided.
pub fn rules(rules: &[codemode::RuleListing]) -> String {
    if rules.is_empty() {
        return "no rules: each connector's approval list decides".to_owned();
    }
    let rows: Vec<Vec<String>> = rules
        .iter()
        .map(|r| {
            let rule = &r.rule;
            let when = if rule.when.is_empty() {
                "-".to_owned()
            } else {
                serde_json::Value::Object(rule.when.clone()).to_string()
            };
            let origin = match r.origin {
                codemode::RuleOrigin::Database => {
                    format!(
                        "{} ({})",
                        r.created_by.as_deref().unwrap_or("?"),
                        "database"
                    )
                }
                codemode::RuleOrigin::File => "connectors.json".to_owned(),
            };
            vec![
                rule.id.clone(),
                rule.effect.as_str().to_owned(),
                rule.call.clone(),
                when,
                rule.source.clone().unwrap_or_else(|| "-".to_owned()),
                rule.until.map_or("-".to_owned(), time),
                origin,
                r.hits.to_string(),
                r.last_hit.map_or("-".to_owned(), time),
            ]
        })
        .collect();
    table(
        &[
            "ID", "EFFECT", "CALL", "WHEN", "SOURCE", "UNTIL", "ORIGIN", "HITS", "LAST HIT",
        ],
        &rows,
    )
}

pub fn search(found: &SearchOutput) -> String {
    if found.results.is_empty() {
        return "nothing found".to_owned();
    }
    let rows: Vec<Vec<String>> = found
        .results
        .iter()
        .map(|r| {
            vec![
                r.path.clone(),
                r.kind.clone(),
                if r.requires_approval {
                    "approval".to_owned()
                } else {
                    String::new()
                },
                r.description.clone().unwrap_or_default(),
            ]
        })
        .collect();
    let mut text = table(&["PATH", "KIND", "GATE", "DESCRIPTION"], &rows);
    if found.truncated {
        text.push_str(&format!(
            "\n… {} results in all; refine the query",
            found.total
        ));
    }
    text
}

/// The connectors as `codemode_api` lists them; a broken `connectors.json` is said first, since it is why
/// connectors are missing.
pub fn connectors(listing: &[ConnectorInfo], config_error: Option<&str>) -> String {
    let mut blocks = Vec::new();
    if let Some(error) = config_error {
        blocks.push(format!("connectors.json is invalid: {error}"));
    }
    if listing.is_empty() {
        blocks.push("no connectors: add them to connectors.json".to_owned());
    }
    for c in listing {
        let mut block = format!("{} ({})", c.name, c.kind);
        if let Some(endpoint) = c.endpoint.as_deref().filter(|e| !e.is_empty()) {
            block.push_str(&format!("\n  at {endpoint}"));
        }
        if c.signed_in == Some(true) {
            block.push_str(&format!(
                "\n  signed in (codemode logout {} to forget it)",
                c.name
            ));
        }
        if let Some(error) = &c.error {
            block.push_str(&format!("\n  unavailable: {error}"));
        }
        for m in &c.methods {
            let mut flags = Vec::new();
            if m.requires_approval {
                flags.push("approval");
            }
            if m.replay == Replay::Reexecute {
                flags.push("reexecute");
            }
            if m.revertible {
                flags.push("revert");
            }
            if m.hidden {
                flags.push("hidden");
            }
            let flags = if flags.is_empty() {
                String::new()
            } else {
                format!(" [{}]", flags.join(", "))
            };
            let description = m
                .description
                .as_deref()
                .and_then(|d| d.lines().next())
                .map(|d| format!(" — {d}"))
                .unwrap_or_default();
            block.push_str(&format!("\n  {}{flags}{description}", m.name));
            // Gated by what the server declares: say what it declared, so a change between its versions shows.
            if let Some(gate) = m
                .gate
                .as_deref()
                .filter(|g| g.starts_with("approval \"w") || g.starts_with("approval \"d"))
            {
                let verdict = if m.requires_approval { "asks" } else { "runs" };
                block.push_str(&format!("\n      {verdict}: {}", visible(gate)));
                if let Some(was) = &m.gate_changed {
                    let then = if was.asked { "asked" } else { "ran" };
                    block.push_str(&format!(
                        "\n      gate moved {} UTC: the server declares this tool differently than before, when it {then} ({})",
                        time(was.at),
                        visible(&was.gate)
                    ));
                }
            }
        }
        blocks.push(block);
    }
    blocks.join("\n\n")
}

/// Paired devices, by name.
pub fn devices(devices: &[codemode::Device]) -> String {
    if devices.is_empty() {
        return "no device is paired (pair one with: codemode devices pair NAME)".to_owned();
    }
    let rows: Vec<Vec<String>> = devices
        .iter()
        .map(|d| {
            vec![
                d.name.clone(),
                time(d.paired_at),
                d.last_used_at.map(time).unwrap_or_else(|| "-".to_owned()),
                match d.revoked_at {
                    Some(at) => format!("revoked {}", time(at)),
                    None => "active".to_owned(),
                },
            ]
        })
        .collect();
    table(&["DEVICE", "PAIRED", "LAST USED", "STATE"], &rows)
}

/// A pairing code as a person uses it: the link to open on the phone, the code to type instead, and the
/// fingerprint the phone's pairing page shows, to compare.
pub fn pairing(
    pairing: &codemode_api::Pairing,
    link: &str,
    fingerprint: &str,
    not_served: bool,
) -> String {
    let mut text = format!(
        "Pair \"{}\": scan the code, or open this link on the phone (or open /pair and type the code), before {}:\n\n{}\n  {link}\n\n  code         {}\n  fingerprint  {fingerprint}\n\nThe page shows the same fingerprint; if it does not, do not pair.",
        pairing.name,
        time(pairing.expires_at),
        codemode_phone::qr_text(link).unwrap_or_default(),
        pairing.code
    );
    if not_served {
        text.push_str(
            "\nNo phone page is served now: start it with `codemode serve --listen 0.0.0.0:8443`, or in the app \
             (Settings → Approve from a phone).",
        );
    }
    text
}

#[cfg(test)]
mod tests {
    use super::visible;
    use serde_json::json;

    #[test]
    fn pending_calls_print_the_apis_rendering_of_their_arguments() {
        let action: codemode::PendingAction = serde_json::from_value(json!({
            "executionId": "exec_1", "seq": 2, "connector": "files", "method": "write_file",
            "args": {"content": "x\u{200b}y", "path": "keep.txt"}, "digest": "-"
        }))
        .expect("a pending call");
        let shown = super::pending(&[action]);
        assert_eq!(
            shown,
            "exec_1  #2  files.write_file\n  path: \"keep.txt\"\n  content: \"x\\u{200b}y\""
        );
        assert_eq!(
            visible(&shown),
            shown,
            "nothing left for the last pass to mark"
        );
    }

    #[test]
    fn dates_are_utc_calendar_dates() {
        assert_eq!(super::time(0), "1970-01-01 00:00:00");
        assert_eq!(super::time(1_796_220_894_897), "2026-12-02 14:14:54");
        assert_eq!(super::time(951_782_400_000), "2000-02-29 00:00:00");
    }
}
