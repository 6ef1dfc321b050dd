//! The audit log as evidence: every run a filter selects, with its calls and decisions, streamed as JSON
//! lines (one run a line, described by docs/export.schema.json) or CSV (one call a row), a page of runs at a
//! time so memory stays flat however long the history (docs/history.md, "Export").

use crate::{Api, ApiError};
use codemode::{ExecutionQuery, ExecutionState, ToolLogEntry};
use std::io::Write;

/// How an export is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExportFormat {
    /// One run a line, as `codemode show --json` prints it.
    Jsonl,
    /// One call a row, with its run's id, status and source; a run without calls is one row without a call.
    Csv,
}

impl ExportFormat {
    pub fn parse(text: &str) -> Result<Self, ApiError> {
        match text {
            "jsonl" | "json" => Ok(ExportFormat::Jsonl),
            "csv" => Ok(ExportFormat::Csv),
            other => Err(ApiError::invalid_args(format!(
                "Unknown export format \"{other}\": jsonl or csv."
            ))),
        }
    }
}

/// What an export wrote.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Exported {
    pub runs: u64,
    pub calls: u64,
}

/// How many runs are read at a time.
const PAGE: usize = 200;

/// The CSV columns, in order.
const CSV_COLUMNS: [&str; 18] = [
    "execution_id",
    "run_status",
    "run_source",
    "run_created_at",
    "seq",
    "connector",
    "method",
    "state",
    "requires_approval",
    "decision",
    "decided_via",
    "decided_by_person",
    "decided_at",
    "approvals",
    "reason",
    "args",
    "error",
    "served_from",
];

impl Api {
    /// Writes every run `query` selects (newest first; its `limit` and `before` are ignored) to `out`.
    pub fn export(
        &self,
        query: &ExecutionQuery,
        format: ExportFormat,
        out: &mut dyn Write,
    ) -> Result<Exported, ApiError> {
        let mut exported = Exported::default();
        let written =
            |e: std::io::Error| ApiError::internal(format!("Could not write the export: {e}"));
        if format == ExportFormat::Csv {
            writeln!(out, "{}", CSV_COLUMNS.join(",")).map_err(written)?;
        }
        let mut page = ExecutionQuery {
            limit: Some(PAGE),
            before: None,
            ..query.clone()
        };
        loop {
            let summaries = self.executions(&page)?;
            for summary in &summaries.executions {
                // A run deleted since the page was read is left out.
                let Some(run) = self.home.runtime.execution(&summary.id)? else {
                    continue;
                };
                exported.runs += 1;
                exported.calls += run.log.len() as u64;
                match format {
                    ExportFormat::Jsonl => {
                        serde_json::to_writer(&mut *out, &run)
                            .map_err(|e| ApiError::internal(e.to_string()))?;
                        writeln!(out).map_err(written)?;
                    }
                    ExportFormat::Csv => write_csv_rows(out, &run).map_err(written)?,
                }
            }
            match summaries.next {
                Some(next) => page.before = Some(next),
                None => break,
            }
        }
        out.flush().map_err(written)?;
        Ok(exported)
    }
}

fn write_csv_rows(out: &mut dyn Write, run: &ExecutionState) -> std::io::Result<()> {
    let created = codemode::format_moment(run.created_at);
    let run_fields = [
        run.id.clone(),
        run.status.as_str().to_owned(),
        run.source.clone().unwrap_or_default(),
        created,
    ];
    if run.log.is_empty() {
        let mut row: Vec<String> = run_fields.to_vec();
        row.resize(CSV_COLUMNS.len(), String::new());
        return write_csv_row(out, &row);
    }
    let forked_from = run.forked_from.as_ref().map(|f| f.execution_id.as_str());
    for entry in &run.log {
        let mut row: Vec<String> = run_fields.to_vec();
        row.extend(call_fields(entry));
        // A call served from the run this one reruns did not run here: the run whose record it came from.
        row.push(
            forked_from
                .filter(|_| entry.inherited)
                .unwrap_or_default()
                .to_owned(),
        );
        write_csv_row(out, &row)?;
    }
    Ok(())
}

/// The call's columns, from `seq` to `error`.
fn call_fields(entry: &ToolLogEntry) -> Vec<String> {
    let decision = entry.decision.as_ref();
    let kind = decision
        .and_then(|d| serde_json::to_value(d.kind).ok())
        .and_then(|v| v.as_str().map(str::to_owned))
        .unwrap_or_default();
    let approvals = decision
        .map(|d| {
            d.approvals
                .iter()
                .map(codemode::Vote::who)
                .collect::<Vec<_>>()
                .join("; ")
        })
        .unwrap_or_default();
    vec![
        entry.seq.to_string(),
        entry.connector.clone(),
        entry.method.clone(),
        entry.state.as_str().to_owned(),
        entry.requires_approval.to_string(),
        kind,
        decision.map(|d| d.by.to_string()).unwrap_or_default(),
        decision.and_then(|d| d.person.clone()).unwrap_or_default(),
        decision
            .map(|d| codemode::format_moment(d.at))
            .unwrap_or_default(),
        approvals,
        decision.and_then(|d| d.reason.clone()).unwrap_or_default(),
        entry
            .args
            .as_ref()
            .map(|a| a.to_string())
            .unwrap_or_default(),
        entry.error.clone().unwrap_or_default(),
    ]
}

/// One CSV record (RFC 4180): a field holding a comma, a quote or a line break is quoted, its quotes doubled.
/// A field a spreadsheet would read as a formula (`=`, `+`, `-`, `@` first) gets a leading `'`, so an
/// agent's argument cannot run in the auditor's spreadsheet.
fn write_csv_row(out: &mut dyn Write, fields: &[String]) -> std::io::Result<()> {
    let mut line = String::new();
    for (i, field) in fields.iter().enumerate() {
        if i > 0 {
            line.push(',');
        }
        let field = if field.starts_with(['=', '+', '-', '@']) {
            format!("'{field}")
        } else {
            field.clone()
        };
        if field.contains([',', '"', '\n', '\r']) {
            line.push('"');
            line.push_str(&field.replace('"', "\"\""));
            line.push('"');
        } else {
            line.push_str(&field);
        }
    }
    line.push_str("\r\n");
    out.write_all(line.as_bytes())
}
