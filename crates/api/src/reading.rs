//! Reading runs, their waiting calls and previews, the approval queue and the store's change signal; no gate, as
//! reading keeps working while `connectors.json` is broken.

use crate::{Api, ApiError, ApprovalCard, PendingPreview, PreviewView, QueuedCall, cards};
use codemode::{ExecutionPage, ExecutionQuery, ExecutionState, ExecutionStatus, PendingAction};
use std::time::Duration;

impl Api {
    /// One run with its call log; `not_found` for an unknown id.
    pub fn execution(&self, id: &str) -> Result<ExecutionState, ApiError> {
        self.home
            .runtime
            .execution(id)?
            .ok_or_else(|| ApiError::no_execution(id))
    }

    /// A page of run summaries, newest first, filtered by status and text (the app's audit log).
    pub fn executions(&self, query: &ExecutionQuery) -> Result<ExecutionPage, ApiError> {
        Ok(self.home.runtime.list_executions(query)?)
    }

    /// Runs newest first with their logs, as `query` filters them (status, time, call, who decided, source:
    /// docs/history.md, "Filters") and at most `query.limit` of them (`codemode executions`).
    pub fn executions_with_logs(
        &self,
        query: &ExecutionQuery,
    ) -> Result<Vec<ExecutionState>, ApiError> {
        let filtered = query.since.is_some()
            || query.until.is_some()
            || query.call.is_some()
            || query.decided_by.is_some()
            || query.source.is_some()
            || query.text.is_some();
        if !filtered {
            // Status and limit only: one read of the runs and their logs.
            return Ok(self
                .home
                .runtime
                .executions_with_status(query.status, query.limit)?);
        }
        let page = self.executions(query)?;
        let mut runs = Vec::with_capacity(page.executions.len());
        for summary in page.executions {
            if let Some(run) = self.home.runtime.execution(&summary.id)? {
                runs.push(run);
            }
        }
        Ok(runs)
    }

    /// How people decided on the calls of runs begun since `since`: counts, approval rate, time to decide,
    /// and the shapes approved most often with the rule that would allow each (docs/history.md, "Insights").
    pub fn insights(&self, since: Option<i64>) -> Result<codemode::Insights, ApiError> {
        Ok(self.home.runtime.insights(since)?)
    }

    /// How many runs are in each status (statuses with none are left out).
    pub fn status_counts(&self) -> Result<Vec<(ExecutionStatus, u64)>, ApiError> {
        Ok(self.home.runtime.status_counts()?)
    }

    /// The runtime's clock (epoch ms): what deadlines and reminders are judged by.
    pub fn now_ms(&self) -> i64 {
        self.home.runtime.now_ms()
    }

    /// A value that changes whenever runs or snippets change, from any process: cheap to poll.
    pub fn change_token(&self) -> Result<(i64, u64), ApiError> {
        Ok(self.home.runtime.change_token()?)
    }

    /// Waits until the store changed after `token` (by any process), or `timeout` passed.
    pub async fn changed(&self, token: (i64, u64), timeout: Duration) {
        self.home.runtime.changed(token, timeout).await;
    }

    /// Pending calls of paused runs, newest run first; with an id, only that run's.
    pub fn pending(&self, id: Option<&str>) -> Result<Vec<PendingAction>, ApiError> {
        Ok(self.home.runtime.pending(id)?)
    }

    /// What the waiting call `seq` of run `id` would change, computed now; kept as what the person was shown
    /// (docs/design.md, "Previews"). `None` when its connector has nothing to show. Reading only: no gate.
    pub async fn preview(&self, id: &str, seq: u64) -> Result<Option<PreviewView>, ApiError> {
        Ok(self
            .home
            .runtime
            .preview(id, seq)
            .await?
            .map(PreviewView::new))
    }

    /// [`pending`](Self::pending) with each waiting call's preview (`codemode pending --preview`).
    pub async fn pending_previews(
        &self,
        id: Option<&str>,
    ) -> Result<Vec<PendingPreview>, ApiError> {
        let mut previews = Vec::new();
        for action in self.pending(id)? {
            let view = self.preview(&action.execution_id, action.seq).await?;
            previews.push(PendingPreview {
                action,
                preview: view.as_ref().map(|v| v.preview.clone()),
                view,
            });
        }
        Ok(previews)
    }

    /// The approval queue: a row per pending call of the paused runs, newest run first, read in one query
    /// without any run's code or log.
    pub fn approval_queue(&self) -> Result<Vec<QueuedCall>, ApiError> {
        let waiting = self.home.runtime.waiting_calls()?;
        Ok(cards::queue(waiting, self.home.settings.paused_ttl))
    }

    /// The whole card of waiting call `seq` of run `id`: its run's code and log. `stale` when that call is
    /// not waiting (any more).
    pub fn approval_card(&self, id: &str, seq: u64) -> Result<ApprovalCard, ApiError> {
        let execution = self
            .home
            .runtime
            .execution(id)?
            .ok_or_else(|| ApiError::no_execution(id))?;
        cards::card(execution, seq, self.home.settings.paused_ttl).ok_or_else(|| {
            ApiError::refused(codemode::Refusal::NotWaiting {
                run: id.to_owned(),
                seq,
            })
        })
    }
}
