//! The audit log: runs, their calls and decisions, reruns, rollbacks and insights.

use super::{arguments, brief, outcome, pretty, table, time, visible};
use codemode::{ExecutionState, RollbackReport, ToolLogEntry};

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
