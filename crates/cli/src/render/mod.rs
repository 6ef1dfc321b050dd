//! What people read: tables and short reports for each command (`--json` prints the values themselves).

mod catalog;
mod devices;
mod history;
mod queue;
#[cfg(test)]
mod tests;

pub use catalog::{connectors, rules, search, snippets};
pub use devices::{devices, pairing};
pub use history::{execution, executions, insights, rerun, rollback};
pub use queue::{pending, pending_previews};

use codemode::Outcome;
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
