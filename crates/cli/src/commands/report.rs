//! What a command produced, for `--json` and for people, one decision or several.

use crate::render;
use codemode::Outcome;
use codemode_api::ApiError;
use serde::Serialize;
use serde_json::{Value, json};

/// What a command produced: a JSON value for `--json`, a text for people, and whether it succeeded.
pub(crate) struct Report {
    pub(crate) json: Value,
    pub(crate) text: String,
    pub(crate) ok: bool,
}

impl Report {
    pub(crate) fn new(value: &impl Serialize, text: String, ok: bool) -> Self {
        Report {
            json: serde_json::to_value(value).unwrap_or(Value::Null),
            text,
            ok,
        }
    }

    /// A failed operation: `{"error": message, "code": code}` with `--json`, the message on stderr otherwise.
    pub(crate) fn failed(error: &ApiError) -> Self {
        Report {
            json: json!({ "error": error.message, "code": error.code }),
            text: format!("error: {}", error.message),
            ok: false,
        }
    }
}

/// Several decisions: a JSON array in the given order (a refused one as `{executionId, error, code}`), one
/// line each in text; not ok if any failed.
pub(super) fn several<'a>(
    reports: impl Iterator<Item = (&'a str, Result<Report, ApiError>)>,
) -> Report {
    let (mut json, mut text, mut ok) = (Vec::new(), Vec::new(), true);
    for (id, report) in reports {
        match report {
            Ok(report) => {
                ok &= report.ok;
                json.push(report.json);
                text.push(report.text);
            }
            Err(error) => {
                ok = false;
                json.push(json!({ "executionId": id, "error": error.message, "code": error.code }));
                text.push(format!("{id}: error: {}", error.message));
            }
        }
    }
    Report {
        json: Value::Array(json),
        text: text.join("\n"),
        ok,
    }
}

pub(super) fn outcome_report(outcome: Outcome) -> Report {
    let ok = !matches!(outcome, Outcome::Error { .. });
    Report::new(&outcome, render::outcome(&outcome), ok)
}
