//! The approval queue: each waiting call, and what it would change.

use super::{arguments, time, visible};
use codemode::PendingAction;

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
