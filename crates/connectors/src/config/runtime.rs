//! The `runtime` block: its settings, their defaults and least values, and how the file spells them.

use super::format_age;
use serde_json::Value;
use std::time::Duration;

/// `runtime.maxOutputChars` when the file does not set it: the reference's 24,000 characters.
pub const DEFAULT_MAX_OUTPUT_CHARS: usize = 24_000;
/// The least `runtime.maxOutputChars`: room for a paused call and the notes that say what was cut.
pub const MIN_MAX_OUTPUT_CHARS: usize = 2_000;

#[derive(Debug, Clone, PartialEq)]
pub struct RuntimeSettings {
    pub name: String,
    pub max_executions: usize,
    pub timeout: Duration,
    pub memory_limit_mb: u64,
    pub paused_ttl: Duration,
    pub expiry_sweep: Duration,
    /// `runtime.keepDecidedFor`: how long a run holding a record (a person's or expiry's decision, an applied
    /// gated call, a revert) is kept whatever `maxExecutions` says (docs/design.md, "Retention").
    pub keep_decided_for: Duration,
}

impl Default for RuntimeSettings {
    fn default() -> Self {
        RuntimeSettings {
            name: "default".to_owned(),
            max_executions: 50,
            timeout: Duration::from_secs(60),
            memory_limit_mb: 512,
            paused_ttl: Duration::from_secs(24 * 3600),
            expiry_sweep: Duration::from_secs(600),
            keep_decided_for: codemode::Retention::DEFAULT_KEEP_DECIDED_FOR,
        }
    }
}

/// The `runtime` block's fields as the file spells them.
pub(crate) fn runtime_fields(settings: &RuntimeSettings) -> [(&'static str, Value); 7] {
    [
        ("name", Value::from(settings.name.clone())),
        ("maxExecutions", Value::from(settings.max_executions)),
        (
            "timeoutMs",
            Value::from(settings.timeout.as_millis() as u64),
        ),
        ("memoryLimitMb", Value::from(settings.memory_limit_mb)),
        ("pausedTtl", Value::from(format_age(settings.paused_ttl))),
        (
            "expirySweepMinutes",
            Value::from(settings.expiry_sweep.as_secs() / 60),
        ),
        (
            "keepDecidedFor",
            Value::from(format_age(settings.keep_decided_for)),
        ),
    ]
}

/// Settings a person can type that the runtime cannot use, with the field at fault. Checked when the file is
/// read as well as when settings are saved: a value the runtime cannot use otherwise surfaces much later, as
/// an unrelated failure (a sandbox worker that cannot start with `memoryLimitMb: 0`).
pub(crate) fn check_settings(settings: &RuntimeSettings) -> Result<(), (&'static str, String)> {
    if !codemode::names::is_runtime_name(&settings.name) {
        return Err((
            "name",
            format!(
                "runtime name \"{}\": use letters, digits, \"_\", \"-\" or \".\"",
                settings.name
            ),
        ));
    }
    let minimums = [
        ("maxExecutions", settings.max_executions as u128, 1),
        ("timeoutMs", settings.timeout.as_millis(), 100),
        ("memoryLimitMb", u128::from(settings.memory_limit_mb), 16),
        (
            "expirySweepMinutes",
            u128::from(settings.expiry_sweep.as_secs() / 60),
            1,
        ),
    ];
    match minimums.into_iter().find(|(_, value, least)| value < least) {
        Some((field, _, least)) => Err((field, format!("{field} must be at least {least}"))),
        None => Ok(()),
    }
}
