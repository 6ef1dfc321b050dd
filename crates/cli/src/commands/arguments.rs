//! Arguments clap leaves as words: call targets, durations, and JSON given inline or as `@FILE`.

use codemode::CallRef;
use codemode_api::ApiError;
use connectors::config::parse_age_text;
use serde_json::Value;
use std::time::Duration;

/// `ID SEQ`, or `ID:SEQ…` (ids hold no `:`).
/// `ID`, `ID:SEQ` or `ID:SEQ:DIGEST`: the run, and the call a person saw in `codemode pending` — a decision
/// on a call that no longer waits as seen is `stale` (docs/design.md, "A decision names its call").
pub(super) fn call_target(word: &str) -> Result<(String, Option<CallRef>), ApiError> {
    let mut parts = word.splitn(3, ':');
    let id = parts.next().unwrap_or_default().to_owned();
    let bad = || {
        ApiError::invalid_args(format!(
            "\"{word}\" is not ID, ID:SEQ or ID:SEQ:DIGEST (as `codemode pending --json` gives them)"
        ))
    };
    let seq = match parts.next() {
        None => return Ok((id, None)),
        Some(seq) => seq.parse::<u64>().map_err(|_| bad())?,
    };
    let digest = parts.next().map(str::to_owned);
    if id.is_empty() || digest.as_deref().is_some_and(str::is_empty) {
        return Err(bad());
    }
    Ok((id, Some(CallRef { seq, digest })))
}

/// `ID SEQ`, or one or more `ID:SEQ[:DIGEST]`.
pub(crate) fn reject_targets(
    words: &[String],
) -> Result<Vec<(String, u64, Option<String>)>, ApiError> {
    if let [id, seq] = words
        && !id.contains(':')
        && let Ok(seq) = seq.parse()
    {
        return Ok(vec![(id.clone(), seq, None)]);
    }
    words
        .iter()
        .map(|word| match call_target(word)? {
            (id, Some(call)) => Ok((id, call.seq, call.digest)),
            (_, None) => Err(ApiError::invalid_args(format!(
                "\"{word}\" is not ID:SEQ (or give one ID and its SEQ)"
            ))),
        })
        .collect()
}

/// `90m`, `24h`, `7d`.
pub(super) fn parse_duration(text: &str) -> Result<Duration, ApiError> {
    parse_age_text(text).ok_or_else(|| {
        ApiError::invalid_args(format!(
            "\"{text}\" is not a duration such as 90m, 24h or 7d"
        ))
    })
}

/// `--args`: JSON, or `@FILE` holding JSON.
pub(super) fn edited_args(text: &str) -> Result<Value, ApiError> {
    json_argument("--args", text)
}

/// An argument that is JSON, or `@FILE` holding JSON; `what` names it in errors.
pub(super) fn json_argument(what: &str, text: &str) -> Result<Value, ApiError> {
    let (what, json) = match text.strip_prefix('@') {
        Some(file) => (
            file.to_owned(),
            std::fs::read_to_string(file)
                .map_err(|e| ApiError::invalid_args(format!("cannot read {file}: {e}")))?,
        ),
        None => (what.to_owned(), text.to_owned()),
    };
    serde_json::from_str(&json)
        .map_err(|e| ApiError::invalid_args(format!("{what} is not JSON: {e}")))
}
