//! Running programs and deciding their waiting calls: approve, reject, rollback, recover and adopt.

use crate::{Api, ApiError};
use codemode::{Actor, CallRef, ExecutionState, Outcome, RollbackReport, ToolLogEntry};

impl Api {
    /// Runs a program; `source` says where it came from (`cli`, `Playground`, an MCP client's name).
    pub async fn run(&self, code: &str, source: &str) -> Result<Outcome, ApiError> {
        self.usable()?;
        Ok(self.home.runtime.execute_from(code, Some(source)).await?)
    }

    /// `outcome` with its run's calls, read now if it was made without them (a host opened with
    /// `outcome_calls` off reads them only when a front end is asked for them).
    pub fn with_calls(&self, outcome: Outcome) -> Result<Outcome, ApiError> {
        Ok(self.home.runtime.with_calls(outcome)?)
    }

    /// Approves the pending call of a paused run and resumes it; with `edited` arguments the call runs with
    /// those instead (checked against the tool's input schema). Unknown id: `not_found`; a run that is not
    /// paused: `stale`; arguments that do not fit: `invalid_args` — nothing changes then.
    pub async fn approve(
        &self,
        id: &str,
        actor: Actor,
        edited: Option<serde_json::Value>,
    ) -> Result<Outcome, ApiError> {
        self.approve_call(id, None, actor, edited).await
    }

    /// [`Api::approve`] bound to the call the person was shown: its seq and argument digest
    /// ([`codemode::PendingAction::digest`]). When the run now waits on another call or other arguments the
    /// answer is `stale` and nothing runs (docs/design.md, "A decision names its call"). Every front end that
    /// shows a call sends it; `None` decides whatever waits now (`codemode approve ID`).
    pub async fn approve_call(
        &self,
        id: &str,
        shown: Option<&CallRef>,
        actor: Actor,
        edited: Option<serde_json::Value>,
    ) -> Result<Outcome, ApiError> {
        self.usable()?;
        Ok(self
            .home
            .runtime
            .approve_call(id, shown, actor, edited)
            .await?)
    }

    /// Approves every waiting call that the `allow` rule `rule` matches, each its own decision by that rule.
    pub async fn approve_waiting(
        &self,
        rule: &str,
    ) -> Result<Vec<(String, Result<Outcome, ApiError>)>, ApiError> {
        self.usable()?;
        Ok(self
            .home
            .runtime
            .approve_waiting(rule)
            .await?
            .into_iter()
            .map(|(id, outcome)| (id, outcome.map_err(ApiError::from)))
            .collect())
    }

    /// Approves several paused runs, each its own decision, in the given order.
    pub async fn approve_each(
        &self,
        ids: &[String],
        actor: Actor,
    ) -> Vec<Result<Outcome, ApiError>> {
        if let Err(error) = self.usable() {
            return ids.iter().map(|_| Err(error.clone())).collect();
        }
        let outcomes = self.home.runtime.approve_each(ids, actor).await;
        outcomes
            .into_iter()
            .map(|o| o.map_err(ApiError::from))
            .collect()
    }

    /// Rejects the pending call `seq` of a paused run, with an optional reason the agent reads; `stale` when
    /// that call is not pending or the run is not paused.
    pub async fn reject(
        &self,
        id: &str,
        seq: u64,
        actor: Actor,
        reason: Option<&str>,
    ) -> Result<(), ApiError> {
        self.reject_call(id, seq, None, actor, reason).await
    }

    /// [`Api::reject`] bound to the arguments shown as well as the seq: other arguments at that seq are
    /// `stale`, and nothing is decided.
    pub async fn reject_call(
        &self,
        id: &str,
        seq: u64,
        digest: Option<&str>,
        actor: Actor,
        reason: Option<&str>,
    ) -> Result<(), ApiError> {
        self.usable()?;
        Ok(self
            .home
            .runtime
            .reject_call(id, seq, digest, actor, reason)
            .await?)
    }

    /// Rejects several pending calls, each its own decision, in the given order.
    pub async fn reject_each(
        &self,
        calls: &[(String, u64)],
        actor: Actor,
        reason: Option<&str>,
    ) -> Vec<Result<(), ApiError>> {
        if let Err(error) = self.usable() {
            return calls.iter().map(|_| Err(error.clone())).collect();
        }
        let results = self.home.runtime.reject_each(calls, actor, reason).await;
        results
            .into_iter()
            .map(|r| r.map_err(ApiError::from))
            .collect()
    }

    /// Undoes the applied calls of a run that have a revert.
    pub async fn rollback(&self, id: &str) -> Result<RollbackReport, ApiError> {
        self.usable()?;
        Ok(self.home.runtime.rollback(id).await?)
    }

    /// What [`Api::rollback`] would revert, newest first; starts no server.
    pub async fn rollback_plan(&self, id: &str) -> Result<Vec<ToolLogEntry>, ApiError> {
        self.execution(id)?;
        Ok(self.home.runtime.rollback_plan(id).await?)
    }

    /// Takes over a run left running by a process that died.
    pub async fn recover(&self, id: &str) -> Result<Outcome, ApiError> {
        self.usable()?;
        Ok(self.home.runtime.recover(id).await?)
    }

    /// Adopts, on a shared store, a run whose host is gone: this host then decides and resumes it with its own
    /// connectors, which must include every one the run was begun with (docs/shared-store.md).
    pub fn adopt(&self, id: &str) -> Result<ExecutionState, ApiError> {
        self.usable()?;
        self.home.runtime.adopt(id)?;
        self.execution(id)
    }
}
