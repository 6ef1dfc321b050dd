//! What front ends read of runs: outcomes, pending calls, listings, heads and the change signal.

use super::*;

impl Runtime {
    /// What a stored run tells an agent: its outcome once a pass ended (completed, failed, paused again).
    pub fn outcome_of(&self, execution: ExecutionState) -> Result<Outcome, RuntimeError> {
        let id = execution.id;
        Ok(match execution.status {
            ExecutionStatus::Completed => Outcome::Completed {
                result: execution.result,
                logs: execution.logs,
                calls: match execution.log.is_empty() {
                    true => self.outcome_log(&id)?,
                    false => self.inner.options.outcome_calls.then_some(execution.log),
                },
                execution_id: id,
            },
            ExecutionStatus::RolledBack => Outcome::early_error(id, "Execution was rolled back"),
            ExecutionStatus::Error | ExecutionStatus::Rejected | ExecutionStatus::Running => {
                Outcome::early_error(id, execution.error.unwrap_or_default())
            }
            ExecutionStatus::Paused => self.paused_outcome(&id)?,
        })
    }

    /// `outcome` with its run's calls, read now when the outcome was made without them
    /// ([`RuntimeOptions::outcome_calls`] off): for a front end asked to show them.
    pub fn with_calls(&self, mut outcome: Outcome) -> Result<Outcome, RuntimeError> {
        let id = outcome.execution_id().to_owned();
        let (Outcome::Completed { calls, .. }
        | Outcome::Paused { calls, .. }
        | Outcome::Error { calls, .. }) = &mut outcome;
        if calls.is_none() {
            *calls = self.inner.store.execution(&id)?.map(|e| e.log);
        }
        Ok(outcome)
    }

    /// Waits for the store to change after `token` (a [`Runtime::change_token`]), up to `timeout`: woken by
    /// a notification on a shared store, a short poll on an SQLite file.
    pub async fn changed(&self, token: (i64, u64), timeout: Duration) {
        self.inner.store.changed(token, timeout).await;
    }

    /// Pending calls of paused runs, newest first; with an id, only that run's.
    pub fn pending(&self, id: Option<&str>) -> Result<Vec<PendingAction>, RuntimeError> {
        Ok(self.inner.store.pending(id)?)
    }

    /// Pending calls of paused runs with their runs' source and times, newest run first: the approval queue,
    /// read without any run's code or log.
    pub fn waiting_calls(&self) -> Result<Vec<crate::WaitingCall>, RuntimeError> {
        Ok(self.inner.store.waiting_calls(None)?)
    }

    /// Executions newest first, with their logs.
    pub fn executions(&self, limit: Option<usize>) -> Result<Vec<ExecutionState>, RuntimeError> {
        Ok(self.inner.store.executions(limit)?)
    }

    /// Executions newest first, with their logs, only those in `status` when given; filtered and limited in SQL.
    pub fn executions_with_status(
        &self,
        status: Option<ExecutionStatus>,
        limit: Option<usize>,
    ) -> Result<Vec<ExecutionState>, RuntimeError> {
        Ok(self.inner.store.executions_with_status(status, limit)?)
    }

    /// Every paused execution with its whole log, newest first, read in one query (the approval queue).
    pub fn paused_executions(&self) -> Result<Vec<ExecutionState>, RuntimeError> {
        Ok(self.inner.store.paused_executions()?)
    }

    /// A page of execution summaries for the app: newest first, filtered by status and text.
    pub fn list_executions(&self, query: &ExecutionQuery) -> Result<ExecutionPage, RuntimeError> {
        Ok(self.inner.store.list_executions(query)?)
    }

    /// How people decided on the calls of runs begun since `since` (docs/history.md, "Insights").
    pub fn insights(&self, since: Option<i64>) -> Result<crate::Insights, RuntimeError> {
        Ok(crate::insights::insights(
            self.inner.store.call_facts(since)?,
        ))
    }

    /// One execution with its log.
    pub fn execution(&self, id: &str) -> Result<Option<ExecutionState>, RuntimeError> {
        Ok(self.inner.store.execution(id)?)
    }

    /// A long-lived host going quiet lets its warm sandbox worker go, and warms one again when it is back
    /// ([`crate::executor::Executor::set_warm`]).
    pub fn set_warm(&self, warm: bool) {
        self.inner.executor.set_warm(warm);
    }

    /// One execution without reading its log (`log` empty): its status, source and code.
    pub fn execution_head(&self, id: &str) -> Result<Option<ExecutionState>, RuntimeError> {
        Ok(self.inner.store.execution_head(id)?)
    }

    /// A value that changes whenever the stored executions or snippets change, from this process or another:
    /// cheap enough to poll several times a second.
    pub fn change_token(&self) -> Result<(i64, u64), RuntimeError> {
        Ok(self.inner.store.change_token()?)
    }

    /// How many executions are in each status (statuses with none are left out).
    pub fn status_counts(&self) -> Result<Vec<(ExecutionStatus, u64)>, RuntimeError> {
        Ok(self.inner.store.status_counts()?)
    }
}
