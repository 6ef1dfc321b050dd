//! The runtime settings form: `connectors.json`'s `runtime` block as people edit it (durations as text, the
//! sweep interval in minutes), read from and written back to the file every host shares.

use crate::{Api, ApiError};
use connectors::config::{self, RuntimeSettings};
use serde::{Deserialize, Serialize};
use std::time::Duration;

/// Runtime settings as `connectors.json` spells them.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ts_rs::TS)]
#[serde(rename_all = "camelCase")]
pub struct RuntimeForm {
    pub name: String,
    pub max_executions: usize,
    pub timeout_ms: u64,
    pub memory_limit_mb: u64,
    /// `0s`, `90m`, `24h`, `7d`.
    pub paused_ttl: String,
    pub expiry_sweep_minutes: u64,
    /// How long a run holding a record (a decision, an applied gated call, a revert) is kept whatever
    /// `max_executions` says: `90d`, `24h`.
    pub keep_decided_for: String,
}

impl From<&RuntimeSettings> for RuntimeForm {
    fn from(settings: &RuntimeSettings) -> Self {
        RuntimeForm {
            name: settings.name.clone(),
            max_executions: settings.max_executions,
            timeout_ms: settings.timeout.as_millis().min(u64::MAX as u128) as u64,
            memory_limit_mb: settings.memory_limit_mb,
            paused_ttl: config::format_age(settings.paused_ttl),
            expiry_sweep_minutes: settings.expiry_sweep.as_secs() / 60,
            keep_decided_for: config::format_age(settings.keep_decided_for),
        }
    }
}

impl RuntimeForm {
    /// The settings the form stands for, or `invalid_args` for a duration that does not parse.
    pub fn settings(&self) -> Result<RuntimeSettings, ApiError> {
        let paused_ttl = config::parse_age_text(&self.paused_ttl).ok_or_else(|| {
            ApiError::invalid_args(format!(
                "pausedTtl \"{}\" is not a duration such as 0s, 90m, 24h or 7d",
                self.paused_ttl
            ))
        })?;
        let keep_decided_for = config::parse_age_text(&self.keep_decided_for).ok_or_else(|| {
            ApiError::invalid_args(format!(
                "keepDecidedFor \"{}\" is not a duration such as 90d, 24h or 0s",
                self.keep_decided_for
            ))
        })?;
        Ok(RuntimeSettings {
            name: self.name.clone(),
            max_executions: self.max_executions,
            timeout: Duration::from_millis(self.timeout_ms),
            memory_limit_mb: self.memory_limit_mb,
            paused_ttl,
            expiry_sweep: Duration::from_secs(self.expiry_sweep_minutes.saturating_mul(60)),
            keep_decided_for,
        })
    }
}

impl Api {
    /// The runtime settings in force, as the form shows them.
    pub fn runtime_settings(&self) -> RuntimeForm {
        RuntimeForm::from(&self.home.settings)
    }

    /// Writes the runtime settings into `connectors.json`, keeping the rest of the file. They take effect
    /// when the data directory is opened again (the app reopens it; the CLI opens it per command).
    pub fn save_runtime_settings(&self, form: &RuntimeForm) -> Result<(), ApiError> {
        self.usable()?;
        let settings = form.settings()?;
        // The file parsed when the gate passed; what is left to fail is a value out of range.
        connectors::editing::save_runtime_settings(&self.home.dir, &settings)
            .map_err(|e| ApiError::invalid_args(e.to_string()))
    }
}
