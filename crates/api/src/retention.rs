//! Which runs are kept: deleting and pruning them, and expiring waiting calls past their deadline or paused runs
//! past their age, as the sweep of long-lived hosts does.

use crate::{Api, ApiError};
use std::time::Duration;

/// How often a long-lived host looks for `decideWithin` deadlines, at most.
pub const DEADLINE_LOOK: Duration = Duration::from_secs(30);

impl Api {
    /// Deletes one run and what its connectors kept for rollback.
    pub async fn delete(&self, id: &str) -> Result<(), ApiError> {
        self.usable()?;
        Ok(self.home.runtime.delete_execution(id).await?)
    }

    /// Keeps the newest `keep` runs (default: `runtime.maxExecutions`) and deletes the other finished ones;
    /// returns how many were deleted.
    pub async fn prune(&self, keep: Option<usize>) -> Result<usize, ApiError> {
        self.usable()?;
        let keep = keep.unwrap_or(self.home.settings.max_executions);
        Ok(self.home.runtime.prune_executions(keep).await?)
    }

    /// Rejects paused runs older than `max_age` (default: `runtime.pausedTtl`); returns their ids.
    pub async fn expire(&self, max_age: Option<Duration>) -> Result<Vec<String>, ApiError> {
        self.usable()?;
        let max_age = max_age.unwrap_or(self.home.settings.paused_ttl);
        Ok(self.home.runtime.expire_paused(max_age).await?)
    }

    /// One round of the expiry sweep long-lived hosts (the app, `codemode mcp`) run every
    /// [`Api::sweep_interval`] (sooner when a `decideWithin` deadline comes first): waiting calls past their
    /// `decideWithin` are rejected as expired, then paused runs past the configured TTL. Returns their ids. While
    /// `connectors.json` is broken the round expires nothing (the gate would refuse) and is not an error:
    /// hosts already report the broken file, and would otherwise log the same refusal every round.
    pub async fn sweep(&self) -> Result<Vec<String>, ApiError> {
        if self.usable().is_err() {
            return Ok(Vec::new());
        }
        let mut expired = self.home.runtime.expire_overdue().await?;
        expired.extend(self.expire(None).await?);
        Ok(expired)
    }

    /// How often long-lived hosts call [`Api::sweep`] (`runtime.expirySweepMinutes`).
    pub fn sweep_interval(&self) -> Duration {
        self.home.settings.expiry_sweep
    }

    /// Rejects, as expired, the waiting calls past their `decideWithin` (docs/design.md, "Deciding in
    /// time"); returns the runs that ended so. Long-lived hosts call it at [`Api::next_deadline_in`].
    pub async fn expire_overdue(&self) -> Result<Vec<String>, ApiError> {
        if self.usable().is_err() {
            return Ok(Vec::new());
        }
        Ok(self.home.runtime.expire_overdue().await?)
    }

    /// How long until the earliest `decideWithin` deadline of a waiting call, at most [`DEADLINE_LOOK`] (a
    /// call paused meanwhile may carry an earlier one), so a call expires on time, not a sweep interval late.
    pub fn next_deadline_in(&self) -> Duration {
        match self.home.runtime.next_deadline() {
            Ok(Some(deadline)) => {
                let now = self.home.runtime.now_ms();
                let until = Duration::from_millis(deadline.saturating_sub(now).max(0) as u64);
                DEADLINE_LOOK.min(until.max(Duration::from_millis(100)))
            }
            _ => DEADLINE_LOOK,
        }
    }
}
