//! The operations the Codemode front ends perform — the app's commands, the `codemode` subcommands and the
//! `codemode mcp` tools — in one place, so each front end only parses its input, calls [`Api`] and renders
//! the result. Failures are [`ApiError`]s with a stable [`ErrorCode`]. Every operation that changes the
//! database or `connectors.json` first passes the same gate: it is refused with `config` while
//! `connectors.json` is broken; reading keeps working.

mod asking;
mod bounded;
mod cards;
mod deciding;
mod devices;
pub mod display;
mod error;
mod export;
mod following;
mod history;
mod listing;
mod managing;
mod notifying;
mod permissions;
mod preview;
mod reruns;
mod settings;
pub mod types;
mod wait;
mod webhooks;

pub use asking::{ClientAnswer, ClientDecision, ClientQuestion, question_text};
pub use bounded::{DEFAULT_MAX_OUTPUT_CHARS, MIN_MAX_OUTPUT_CHARS, OutputBudget, bound_outcome};
pub use cards::{ApprovalCard, QueuedCall};
pub use deciding::{
    AllowPreview, AllowReport, DecisionResult, RECENT_CALLS, RecentCall, RuleReach, ShownCall,
};
pub use devices::{LINK_VALID, PAIRING_VALID, PairedDevice, Pairing, SignedLink};
pub use display::ArgumentRow;
pub use error::{ApiError, ErrorCode};
pub use export::{ExportFormat, Exported};
pub use following::FollowingApi;
pub use history::HistoryFilter;
pub use listing::{ConnectorInfo, ConnectorStatus, MethodInfo, endpoint};
pub use managing::{MethodFlag, ServerDraft, TemplateField, TestReport, TestTarget};
pub use notifying::{
    ActionOutcome, BODY_MARKUP, NotificationAction, NotificationAnswer, NotificationCard,
    NotificationSignal, SentNotification, notification_body_for, reminder_due,
};
pub use permissions::Grant;
pub use preview::{DiffLine, Hunk, LinePart, LineTag, PendingPreview, PreviewView};
pub use reruns::Rerun;
pub use settings::RuntimeForm;
pub use wait::{Running, WaitOutcome};
pub use webhooks::{Announcement, WEBHOOK_ATTEMPTS};

use codemode::discovery::{DescribeOutput, SearchOutput};
use codemode::{
    Actor, CallRef, Connector, ExecutionPage, ExecutionQuery, ExecutionState, ExecutionStatus,
    Outcome, PendingAction, RollbackReport, SaveSnippet, Snippet, ToolLogEntry,
};
use connectors::config::{self, RuntimeSettings};
use connectors::{Home, HomeOptions};
use std::path::Path;
use std::time::Duration;

/// An opened data directory and everything a front end may do with it.
pub struct Api {
    home: Home,
}

/// How often a long-lived host looks for `decideWithin` deadlines, at most.
pub const DEADLINE_LOOK: Duration = Duration::from_secs(30);

impl Api {
    /// Opens a data directory as every host does. A broken `connectors.json` does not stop it from opening:
    /// reads work, and mutating operations answer `config`.
    pub async fn open(dir: &Path, options: HomeOptions) -> Result<Api, ApiError> {
        Ok(Api::new(Home::open(dir, options).await?))
    }

    /// Over a data directory the host opened itself.
    pub fn new(home: Home) -> Api {
        Api { home }
    }

    pub fn dir(&self) -> &Path {
        &self.home.dir
    }

    /// Why `connectors.json` cannot be used, if it cannot.
    pub fn config_error(&self) -> Option<&str> {
        self.home.config_error.as_deref()
    }

    /// The runtime settings in force (defaults when `connectors.json` is broken).
    pub fn settings(&self) -> &RuntimeSettings {
        &self.home.settings
    }

    /// Stops the MCP servers this host started; call it before the host exits or drops the `Api`.
    pub async fn shutdown(&self) {
        self.home.connectors.shutdown().await;
    }

    /// The gate of every mutating operation: `config` while `connectors.json` is broken.
    pub fn usable(&self) -> Result<(), ApiError> {
        self.home
            .usable()
            .map_err(|message| ApiError::new(ErrorCode::Config, message))
    }

    // ---- runs and decisions ----

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

    /// Waits up to `timeout` for a person to decide on a run (from any process) and returns what
    /// `codemode_wait` answers: the outcome once decided, else the paused outcome or `{status: "running"}`.
    pub async fn wait(&self, id: &str, timeout: Duration) -> Result<WaitOutcome, ApiError> {
        let deadline = tokio::time::Instant::now() + timeout;
        loop {
            let token = self.home.runtime.change_token()?;
            // The run's row only: its log is read once, for the outcome, when the run has settled.
            let execution = self
                .home
                .runtime
                .execution_head(id)?
                .ok_or_else(|| ApiError::no_execution(id))?;
            if WaitOutcome::settled(&execution) || tokio::time::Instant::now() >= deadline {
                return Ok(WaitOutcome::of(&self.home.runtime, execution));
            }
            let left = deadline.saturating_duration_since(tokio::time::Instant::now());
            // A shared store wakes this on its next notification; an SQLite file is looked at again shortly.
            self.home.runtime.changed(token, left).await;
        }
    }

    // ---- reading ----

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

    /// Every connector with its methods, in one shape for every front end. MCP servers that have not started
    /// yet are started to list theirs.
    pub async fn connectors(&self) -> Vec<ConnectorInfo> {
        listing::list(&self.home).await
    }

    /// Signs in to a remote connector with OAuth (docs/remote-servers.md): `open` gets the address a person
    /// opens in a browser; this returns once the browser came back and the tokens are kept. The server is
    /// restarted with them on its next call.
    pub async fn sign_in(&self, connector: &str, open: impl FnOnce(&str)) -> Result<(), ApiError> {
        self.usable()?;
        let (url, ca_file, oauth, path) = self.remote(connector)?;
        connectors::remote::sign_in(
            connector,
            &url,
            ca_file.as_deref(),
            oauth.as_ref(),
            &path,
            open,
        )
        .await
        .map_err(ApiError::invalid_args)?;
        self.restart(connector).await;
        Ok(())
    }

    /// Forgets a remote connector's sign-in; `false` when there was none.
    pub async fn sign_out(&self, connector: &str) -> Result<bool, ApiError> {
        let (_, _, _, path) = self.remote(connector)?;
        let signed_out = connectors::remote::sign_out(&path).map_err(ApiError::internal)?;
        self.restart(connector).await;
        Ok(signed_out)
    }

    /// A remote connector's address, private CA, pre-registered client and sign-in file.
    #[allow(clippy::type_complexity)]
    fn remote(
        &self,
        connector: &str,
    ) -> Result<
        (
            String,
            Option<std::path::PathBuf>,
            Option<config::OAuthClient>,
            std::path::PathBuf,
        ),
        ApiError,
    > {
        let entry = self
            .home
            .entry(connector)
            .ok_or_else(|| ApiError::no_connector(connector))?;
        let server = self
            .home
            .connectors
            .servers
            .iter()
            .find(|s| s.name() == connector);
        match (&entry.kind, server.and_then(|s| s.credentials())) {
            (
                config::ConnectorKind::Http {
                    url,
                    ca_file,
                    oauth,
                    ..
                },
                Some(path),
            ) => Ok((url.clone(), ca_file.clone(), oauth.clone(), path.to_owned())),
            _ => Err(ApiError::invalid_args(format!(
                "connector \"{connector}\" is not a remote server (it has no \"url\"): there is nothing to sign in to"
            ))),
        }
    }

    /// Stops a server, so that its next call starts it with what changed.
    async fn restart(&self, connector: &str) {
        if let Some(server) = self
            .home
            .connectors
            .servers
            .iter()
            .find(|s| s.name() == connector)
        {
            server.shutdown().await;
        }
    }

    /// The configured connectors as they stand, starting nothing (their methods come with [`Api::connectors`]).
    pub fn configured_connectors(&self) -> Vec<ConnectorInfo> {
        listing::configured(&self.home)
    }

    /// Ranked search over connector methods and snippets.
    pub async fn search(&self, query: &str) -> Result<SearchOutput, ApiError> {
        Ok(self.home.runtime.search(query).await?)
    }

    /// A connector, method or snippet with its TypeScript declarations.
    pub async fn describe(&self, target: &str) -> Result<DescribeOutput, ApiError> {
        Ok(self.home.runtime.describe(target).await?)
    }

    /// The model-facing description of the `codemode` tool, with the configured connector hints.
    pub fn tool_description(&self) -> String {
        self.home.runtime.tool_description(&self.home.hints())
    }

    // ---- snippets ----

    /// The app closed to the tray stands by: no warm sandbox worker is kept until it is back
    /// (docs/desktop.md, "Closed to the tray"); a pass meanwhile starts its own.
    pub fn stand_by(&self, standing_by: bool) {
        self.home.runtime.set_warm(!standing_by);
    }

    /// How much an outcome for the model may say (`runtime.maxOutputChars`), listing its calls or not.
    pub fn output_budget(&self, include_calls: bool) -> OutputBudget {
        OutputBudget {
            max_chars: self
                .home
                .config
                .as_ref()
                .map_or(DEFAULT_MAX_OUTPUT_CHARS, |c| c.max_output_chars),
            include_calls,
        }
    }

    /// Every rule in force: the database's, then the read-only ones of `connectors.json`.
    pub fn rules(&self) -> Result<Vec<codemode::RuleListing>, ApiError> {
        Ok(self.home.runtime.rules()?)
    }

    /// Adds a rule, recorded as added by `actor`; a bad rule is `invalid_args` naming the field.
    pub fn add_rule(&self, rule: codemode::Rule, actor: Actor) -> Result<(), ApiError> {
        self.usable()?;
        Ok(self.home.runtime.add_rule(rule, actor.as_str())?)
    }

    /// Removes a database rule.
    pub fn remove_rule(&self, id: &str) -> Result<(), ApiError> {
        self.usable()?;
        Ok(self.home.runtime.remove_rule(id)?)
    }

    /// What the rules would do with `connector.method` called with `args` from `source`; runs nothing.
    pub async fn test_rules(
        &self,
        call: &str,
        args: Option<&serde_json::Value>,
        source: Option<&str>,
    ) -> Result<codemode::Verdict, ApiError> {
        Ok(self.home.runtime.test_rules(call, args, source).await?)
    }

    pub fn snippets(&self) -> Result<Vec<Snippet>, ApiError> {
        Ok(self.home.runtime.snippets()?)
    }

    /// Saves a run's code as a snippet (an empty description counts as none); a name in use is replaced.
    pub fn save_snippet(&self, name: &str, mut save: SaveSnippet) -> Result<Snippet, ApiError> {
        self.usable()?;
        self.execution(&save.execution_id)?;
        save.description = save.description.filter(|d| !d.trim().is_empty());
        Ok(self.home.runtime.save_snippet(name, save)?)
    }

    /// Deletes a snippet; `not_found` when there is none by that name.
    pub fn delete_snippet(&self, name: &str) -> Result<(), ApiError> {
        self.usable()?;
        if self.home.runtime.delete_snippet(name)? {
            Ok(())
        } else {
            Err(ApiError::refused(codemode::Refusal::NoSnippet {
                name: name.to_owned(),
            }))
        }
    }

    // ---- settings ----

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

#[cfg(test)]
mod tests;
