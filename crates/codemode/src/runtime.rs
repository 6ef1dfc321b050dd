//! The durable runtime: runs executions pass by pass, records every connector call, pauses at approval-gated
//! calls and resumes them by deterministic replay (reference §2–§4, docs/design.md).

use crate::codec::{MAX_DURABLE_VALUE, too_large_message, utf16_len};
use crate::connector::{CallContext, Connector, Replay, ToolDescriptor};
use crate::discovery::{self, Catalog, DescribeOutput, SearchIndex, SearchOutput};
use crate::executor::{
    CallAnswer, ConnectorCall, Executor, ExecutorError, ExecutorOptions, PassEnd, PassHost,
    PassRequest, SnippetAnswer, StepAnswer,
};
use crate::model::{
    Actor, CallRef, ExecutionPage, ExecutionQuery, ExecutionState, ExecutionStatus, FailedRevert,
    Outcome, PendingAction, RevertedCall, RollbackReport, RunHost, SkippedCall, ToolLogEntry,
};
use crate::model::{Decision, DecisionKind, EntryState, Preview, SHOWN_PREVIEW_LIMIT, Shown};
use crate::model::{SaveSnippet, Snippet};
use crate::names::check_connector_names;
use crate::protocol::raw;
use crate::rules::{CompiledRule, Rule, RuleError, Verdict};
use crate::store::{
    Adoption, CallPlan, Deletion, HEARTBEAT_EVERY, HOST_TIMEOUT_MS, HandOff, HostIdentity, Recover,
    Rejection, Resume, RollbackClaim, Store, StoreError, StoreLocation, unserialisable,
};
use serde_json::Value;
use serde_json::value::RawValue;
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::runtime::Handle;

/// The source of time, injected so that expiry and retention can be tested without sleeping.
pub trait Clock: Send + Sync {
    /// Milliseconds since the Unix epoch.
    fn now_ms(&self) -> i64;
}

/// The wall clock.
pub struct SystemClock;

impl Clock for SystemClock {
    fn now_ms(&self) -> i64 {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_millis() as i64)
    }
}

/// Reshapes a completed result for the model; the audit trail keeps the raw value.
pub type TransformResult = Arc<dyn Fn(Value) -> Result<Value, String> + Send + Sync>;

/// How a runtime behaves.
#[derive(Clone)]
pub struct RuntimeOptions {
    /// Separate histories per name (`^[a-zA-Z0-9_.-]+$`).
    pub name: String,
    pub max_executions: usize,
    /// How long a run holding a record (a person's or expiry's decision, an applied gated call, a revert) is
    /// kept whatever `max_executions` says (`runtime.keepDecidedFor`; docs/design.md, "Retention").
    pub keep_decided_for: Duration,
    pub timeout: Duration,
    pub memory_limit_mb: u64,
    /// Keep a pre-warmed sandbox worker ready (long-lived hosts).
    pub keep_warm: bool,
    /// The worker binary; `None` finds it next to the executable or at `$CODEMODE_WORKER`.
    pub worker: Option<PathBuf>,
    pub transform_result: Option<TransformResult>,
    pub clock: Arc<dyn Clock>,
    /// How long one revert may take before rollback reports it failed and goes on.
    pub revert_timeout: Duration,
    /// Read-only rules (from `connectors.json`), applied after the database's.
    pub rules: Vec<Rule>,
    /// On a shared store, the host this process is (docs/shared-store.md, "Hosts"); this machine's when `None`.
    pub host: Option<HostIdentity>,
    /// Serve as that host: beat its heart and resume the runs other hosts approve for it. For long-lived
    /// processes (the app, `codemode mcp`); a one-shot command leaves it to them.
    pub serve_host: bool,
}

impl Default for RuntimeOptions {
    fn default() -> Self {
        RuntimeOptions {
            name: "default".to_owned(),
            max_executions: 50,
            keep_decided_for: crate::store::Retention::DEFAULT_KEEP_DECIDED_FOR,
            timeout: Duration::from_secs(60),
            memory_limit_mb: 512,
            keep_warm: false,
            worker: None,
            transform_result: None,
            clock: Arc::new(SystemClock),
            revert_timeout: Duration::from_secs(30),
            rules: Vec::new(),
            host: None,
            serve_host: false,
        }
    }
}

impl RuntimeOptions {
    /// Retention by count (`keep` runs) with these options' age for runs holding a record.
    fn retention(&self, keep: usize) -> crate::store::Retention {
        crate::store::Retention {
            keep,
            keep_decided_for: self.keep_decided_for,
        }
    }
}

/// Failures of the runtime itself (not of a program, which are outcomes).
#[derive(Debug, thiserror::Error)]
pub enum RuntimeError {
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error("{0}")]
    Configuration(String),
    #[error(transparent)]
    Executor(#[from] ExecutorError),
    /// No such execution (or snippet).
    #[error("{0}")]
    NotFound(String),
    /// A decision or operation that no longer applies: the run is not paused, the call is not pending, the
    /// run is not interrupted. Nothing was changed; the message is the reference's text.
    #[error("{0}")]
    Stale(String),
    /// Edited arguments (or another input) that cannot be used: nothing was changed.
    #[error("{0}")]
    InvalidArgs(String),
    #[error("a pass was interrupted: {0}")]
    Interrupted(String),
    /// Another live process holds the run (a pass or a rollback): nothing was changed.
    #[error("{0}")]
    Busy(String),
    /// Approved on a shared store for another host, which has not resumed the run yet: the decision stands
    /// (docs/shared-store.md, "Approving another host's run").
    #[error("{0}")]
    Handed(String),
}

/// A connector and, once known, its methods.
struct Registered {
    connector: Arc<dyn Connector>,
    loaded: Mutex<Option<Arc<Methods>>>,
}

/// What a connector offers at one tools generation.
struct Methods {
    generation: u64,
    instructions: Option<String>,
    /// In the connector's order (discovery lists them so).
    tools: Vec<ToolDescriptor>,
}

impl Methods {
    fn tool(&self, name: &str) -> Option<&ToolDescriptor> {
        self.tools.iter().find(|t| t.name == name)
    }
}

impl Registered {
    /// The methods already known for the current tools generation, without asking the connector.
    fn cached(&self) -> Option<Arc<Methods>> {
        let generation = self.connector.tools_generation();
        lock(&self.loaded)
            .as_ref()
            .filter(|m| m.generation == generation)
            .cloned()
    }

    /// The connector's methods: asked once per tools generation, so a restarted server is asked again.
    async fn methods(&self) -> Result<Arc<Methods>, String> {
        if let Some(methods) = self.cached() {
            return Ok(methods);
        }
        let tools = self.connector.tools().await?;
        for tool in &tools {
            if tool.requires_approval && tool.replay == Replay::Reexecute {
                return Err(format!(
                    "Connector \"{}\" tool \"{}\" cannot combine requiresApproval with replay: \"reexecute\" — approved actions must be logged, not re-executed.",
                    self.connector.name(),
                    tool.name
                ));
            }
        }
        let methods = Arc::new(Methods {
            generation: self.connector.tools_generation(),
            instructions: self.connector.instructions(),
            tools,
        });
        *lock(&self.loaded) = Some(methods.clone());
        Ok(methods)
    }
}

/// The longest reason a person may give with a decision, in UTF-16 units: enough for a paragraph the agent
/// reads, small enough to stay readable in every outcome.
pub const MAX_REASON: usize = 4_000;

/// A poisoned lock only means another thread panicked while holding it; the cached value is still usable.
fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// Where a rule lives.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum RuleOrigin {
    #[serde(rename = "database")]
    Database,
    #[serde(rename = "connectors.json")]
    File,
}

/// A rule as listings show it.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct RuleListing {
    #[serde(flatten)]
    pub rule: Rule,
    pub origin: RuleOrigin,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub created_by: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub created_at: Option<i64>,
    pub hits: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_hit: Option<i64>,
}

/// One connector as listings show it: its methods, or why they could not be had.
#[derive(Debug, Clone)]
pub struct ConnectorListing {
    pub name: String,
    pub instructions: Option<String>,
    pub methods: Vec<ToolDescriptor>,
    pub error: Option<String>,
}

struct Inner {
    /// The rules in force, reloaded when another process changes them.
    rules: Mutex<RuleCache>,
    /// Read-only rules from `connectors.json`, after the database's.
    file_rules: Vec<CompiledRule>,
    /// The search index of connector methods and the tools generations it was built from.
    methods: Mutex<Option<(Vec<u64>, Arc<SearchIndex>)>>,
    options: RuntimeOptions,
    store: Store,
    executor: Executor,
    connectors: Vec<Registered>,
}

impl Inner {
    fn connector(&self, name: &str) -> Option<&Registered> {
        self.connectors.iter().find(|c| c.connector.name() == name)
    }

    /// Every connector's methods; connectors whose methods cannot be had (a server that does not start) are
    /// left out of discovery rather than failing it.
    async fn loaded(&self) -> Vec<(&Registered, Result<Arc<Methods>, String>)> {
        let mut loaded = Vec::with_capacity(self.connectors.len());
        for registered in &self.connectors {
            loaded.push((registered, registered.methods().await));
        }
        loaded
    }

    /// Methods come from an index built once per tools generation; snippets are read (and indexed) per query,
    /// as they change.
    async fn search(&self, query: &str) -> Result<SearchOutput, RuntimeError> {
        let loaded = self.loaded().await;
        let generations: Option<Vec<u64>> = loaded
            .iter()
            .map(|(_, m)| m.as_ref().ok().map(|m| m.generation))
            .collect();
        // Methods a rule hides change with the rules: their version is part of the key.
        let rules = self.rules();
        let generations = generations.map(|mut g| {
            g.push(rules.version as u64);
            g
        });
        let cached = lock(&self.methods)
            .as_ref()
            .filter(|(key, _)| Some(key) == generations.as_ref())
            .map(|(_, index)| index.clone());
        let methods = match cached {
            Some(index) => index,
            None => {
                let index = Arc::new(SearchIndex::new(&catalogs(&loaded, &rules)));
                if let Some(generations) = generations {
                    *lock(&self.methods) = Some((generations, index.clone()));
                }
                index
            }
        };
        let mut snippets = SearchIndex::default();
        snippets.add_snippets(&self.store.snippets(None)?);
        Ok(discovery::search_indexes(&[&methods, &snippets], query))
    }

    async fn describe(&self, target: &str) -> Result<DescribeOutput, RuntimeError> {
        let snippets = self.store.snippets(None)?;
        let loaded = self.loaded().await;
        Ok(discovery::describe(
            target,
            &catalogs(&loaded, &self.rules()),
            &snippets,
        ))
    }

    fn names(&self) -> Vec<String> {
        self.connectors
            .iter()
            .map(|c| c.connector.name().to_owned())
            .collect()
    }

    fn now(&self) -> i64 {
        self.options.clock.now_ms()
    }

    /// The rules in force. The database's version is checked at most every [`RULES_RECHECK`], so a rule added
    /// by another process applies to this one's next call within a second, at no cost per call.
    fn rules(&self) -> Arc<RuleSet> {
        let mut cache = lock(&self.rules);
        if cache
            .checked
            .is_some_and(|checked| checked.elapsed() < RULES_RECHECK)
        {
            return cache.set.clone();
        }
        cache.checked = Some(std::time::Instant::now());
        let Ok(version) = self.store.rules_version() else {
            return cache.set.clone();
        };
        let stale = version != cache.set.version
            || cache.set.rules.rules().is_empty() && !self.file_rules.is_empty();
        if stale && let Ok(stored) = self.store.rules() {
            let mut rules: Vec<CompiledRule> = stored
                .into_iter()
                .filter_map(|stored| CompiledRule::new(stored.rule).ok())
                .collect();
            rules.extend(self.file_rules.iter().cloned());
            cache.set = Arc::new(RuleSet {
                version,
                rules: crate::rules::RuleIndex::new(rules),
            });
        }
        cache.set.clone()
    }

    /// Whether `id` names a read-only rule of `connectors.json`.
    fn is_file_rule(&self, id: &str) -> bool {
        self.file_rules.iter().any(|r| r.rule.id == id)
    }

    /// After this process changed the rules: the next call reads them again.
    fn rules_changed(&self) {
        lock(&self.rules).checked = None;
    }
}

/// How often a process looks for rule changes made by others.
const RULES_RECHECK: Duration = Duration::from_millis(250);

/// Compiled rules in precedence order (the database's in creation order, then the file's), with the database
/// version they were read at.
#[derive(Default)]
struct RuleSet {
    version: i64,
    rules: crate::rules::RuleIndex,
}

impl RuleSet {
    fn evaluate(&self, call: &crate::rules::Call<'_>, requires_approval: bool) -> Verdict {
        self.rules.evaluate(call, requires_approval)
    }

    fn hides(&self, connector: &str, method: &str) -> bool {
        self.rules.hides(connector, method)
    }
}

struct RuleCache {
    checked: Option<std::time::Instant>,
    set: Arc<RuleSet>,
}

/// What discovery may show: visible methods of every connector whose methods are known (neither `hidden` nor
/// hidden by an unconditional `deny` rule).
fn catalogs<'a>(
    loaded: &'a [(&'a Registered, Result<Arc<Methods>, String>)],
    rules: &RuleSet,
) -> Vec<Catalog<'a>> {
    loaded
        .iter()
        .filter_map(|(registered, methods)| {
            let methods = methods.as_ref().ok()?;
            Some(Catalog {
                name: registered.connector.name(),
                instructions: methods.instructions.as_deref(),
                tools: methods
                    .tools
                    .iter()
                    .filter(|t| !t.hidden && !rules.hides(registered.connector.name(), &t.name))
                    .collect(),
            })
        })
        .collect()
}

/// The durable Code Mode runtime over one database file.
#[derive(Clone)]
pub struct Runtime {
    inner: Arc<Inner>,
}

impl Runtime {
    /// Opens the runtime: validates the name and connectors, describes every connector once, and opens (or
    /// creates and migrates) the store: an SQLite file (a path) or a shared PostgreSQL database.
    pub async fn open(
        store: impl Into<StoreLocation>,
        options: RuntimeOptions,
        connectors: Vec<Arc<dyn Connector>>,
    ) -> Result<Self, RuntimeError> {
        if !crate::names::is_runtime_name(&options.name) {
            return Err(RuntimeError::Configuration(format!(
                "Invalid codemode runtime name \"{}\" — use letters, digits, \"_\", \"-\" or \".\"",
                options.name
            )));
        }
        check_connector_names(connectors.iter().map(|c| c.name()))
            .map_err(RuntimeError::Configuration)?;
        let mut registered = Vec::with_capacity(connectors.len());
        for connector in connectors {
            let entry = Registered {
                connector,
                loaded: Mutex::new(None),
            };
            if !entry.connector.lazy() {
                entry.methods().await.map_err(RuntimeError::Configuration)?;
            }
            registered.push(entry);
        }
        let mut file_rules = Vec::with_capacity(options.rules.len());
        for rule in &options.rules {
            let compiled = CompiledRule::new(rule.clone())
                .map_err(|e| RuntimeError::Configuration(e.to_string()))?;
            if file_rules
                .iter()
                .any(|r: &CompiledRule| r.rule.id == rule.id)
            {
                return Err(RuntimeError::Configuration(format!(
                    "rule {}: id: used twice",
                    rule.id
                )));
            }
            file_rules.push(compiled);
        }
        let store = Store::open(
            &store.into(),
            &options.name,
            options.host.clone(),
            options.clock.clone(),
        )?;
        if store.is_shared() {
            let names: Vec<String> = registered
                .iter()
                .map(|r| r.connector.name().to_owned())
                .collect();
            store.register_host(&names, options.serve_host)?;
        }
        let hand_offs = if options.serve_host {
            store.take_hand_offs()
        } else {
            None
        };
        let executor = Executor::new(ExecutorOptions {
            worker: options.worker.clone(),
            timeout: options.timeout,
            memory_limit_mb: options.memory_limit_mb,
            keep_warm: options.keep_warm,
        });
        let runtime = Runtime {
            inner: Arc::new(Inner {
                rules: Mutex::new(RuleCache {
                    checked: None,
                    set: Arc::new(RuleSet::default()),
                }),
                file_rules,
                methods: Mutex::new(None),
                options,
                store,
                executor,
                connectors: registered,
            }),
        };
        if let Some(hand_offs) = hand_offs {
            tokio::spawn(serve_host(Arc::downgrade(&runtime.inner), hand_offs));
        }
        Ok(runtime)
    }

    /// Runs new code (a fresh execution) to its first pause or its end.
    pub async fn execute(&self, code: &str) -> Result<Outcome, RuntimeError> {
        self.execute_from(code, None).await
    }

    /// Like [`execute`](Self::execute), recording where the code came from (an MCP client's name, `cli`…).
    pub async fn execute_from(
        &self,
        code: &str,
        source: Option<&str>,
    ) -> Result<Outcome, RuntimeError> {
        let size = utf16_len(code);
        if size > MAX_DURABLE_VALUE {
            return Ok(Outcome::early_error(
                "",
                too_large_message("The execution code", size),
            ));
        }
        if self.inner.store.is_shared() && code.contains('\0') {
            return Ok(Outcome::early_error(
                "",
                "The execution code contains a NUL character, which the shared store cannot keep; write it as \\0 or \\u0000 in a string.",
            ));
        }
        let now = self.inner.now();
        let begin = Begin {
            id: format!("exec_{now:016}_{}", uuid::Uuid::new_v4()),
            code: code.to_owned(),
            names: self.inner.names(),
            source: source.map(str::to_owned),
            now,
        };
        let id = begin.id.clone();
        self.pass(&id, code, source, Some(begin)).await
    }

    /// Resumes a paused execution: the pending call executes exactly once and the program replays to its next
    /// pause or its end (reference §2.4). With `edited` arguments, the call runs with those instead (checked
    /// against the tool's input schema first); the log keeps what the program sent, so replay still matches,
    /// and the decision records what ran. An unknown id is [`RuntimeError::NotFound`]; a run that is not
    /// paused (or is being rolled back) is [`RuntimeError::Stale`]; nothing is changed then.
    pub async fn approve(
        &self,
        id: &str,
        actor: Actor,
        edited: Option<Value>,
    ) -> Result<Outcome, RuntimeError> {
        self.approve_call(id, None, actor, edited).await
    }

    /// [`Runtime::approve`] bound to the call a person was shown (docs/design.md, "A decision names its
    /// call"): when the run now waits on another call, or on that call with other arguments, the answer is
    /// [`RuntimeError::Stale`] and nothing runs. `None` decides whatever call waits now.
    pub async fn approve_call(
        &self,
        id: &str,
        shown: Option<&CallRef>,
        actor: Actor,
        edited: Option<Value>,
    ) -> Result<Outcome, RuntimeError> {
        let decision = Decision {
            kind: if edited.is_some() {
                DecisionKind::Edited
            } else {
                DecisionKind::Approved
            },
            by: actor.as_str().to_owned(),
            at: self.inner.now(),
            reason: None,
            rule: None,
            args: edited,
            shown: None,
        };
        self.resume_with(id, decision, shown).await
    }

    /// Approves, as the `allow` rule `rule` says, every waiting call that rule matches (each its own decision,
    /// `allowed` by `rule`); returns what happened to each, in queue order.
    pub async fn approve_waiting(
        &self,
        rule: &str,
    ) -> Result<Vec<(String, Result<Outcome, RuntimeError>)>, RuntimeError> {
        let rules = self.inner.rules();
        let Some(compiled) = rules.rules.rules().iter().find(|r| r.rule.id == rule) else {
            return Err(RuntimeError::NotFound(format!("No rule \"{rule}\"")));
        };
        if compiled.rule.effect != crate::rules::Effect::Allow {
            return Err(RuntimeError::InvalidArgs(format!(
                "Rule \"{rule}\" does not allow: only an allow rule approves waiting calls."
            )));
        }
        let mut decided = Vec::new();
        // The queue in one query: each waiting call with its run's source.
        let waiting_calls: Vec<(String, Option<String>, crate::model::ToolLogEntry)> = self
            .inner
            .store
            .paused_executions()?
            .into_iter()
            .flat_map(|run| {
                let (id, source) = (run.id, run.source);
                run.log
                    .into_iter()
                    .filter(|e| e.state == EntryState::Pending)
                    .map(move |e| (id.clone(), source.clone(), e))
            })
            .collect();
        for (execution_id, source, waiting) in waiting_calls {
            let path = format!("{}.{}", waiting.connector, waiting.method);
            let call = crate::rules::Call {
                path: &path,
                // As the rule would have read the call when it was made.
                args: waiting.canonical.as_ref().or(waiting.args.as_ref()),
                source: source.as_deref(),
                now: self.inner.now(),
            };
            if !compiled.matches(&call) {
                continue;
            }
            let decision = Decision {
                kind: DecisionKind::Allowed,
                by: "rule".to_owned(),
                at: self.inner.now(),
                reason: compiled.rule.reason.clone(),
                rule: Some(rule.to_owned()),
                args: None,
                shown: None,
            };
            let outcome = self.resume_with(&execution_id, decision, None).await;
            decided.push((execution_id, outcome));
        }
        Ok(decided)
    }

    /// Resumes a paused run with `decision` recorded on its pending call. On a shared store a run of another
    /// host is not resumed here: the decision is handed to its host, which resumes it with its own
    /// connectors, and this waits for the outcome (docs/shared-store.md, "Approving another host's run").
    async fn resume_with(
        &self,
        id: &str,
        decision: Decision,
        shown: Option<&CallRef>,
    ) -> Result<Outcome, RuntimeError> {
        if self.inner.store.is_shared() {
            let pending = self.inner.store.pending(Some(id))?.into_iter().next();
            if let (Some(edited), Some(pending)) = (&decision.args, &pending)
                && self.inner.connector(&pending.connector).is_some()
            {
                self.check_edited(&pending.connector, &pending.method, edited)
                    .await?;
            }
            match self.inner.store.hand_off(id, &decision, shown)? {
                HandOff::Here => {}
                HandOff::Handed(host) => {
                    let seq = pending.map(|p| p.seq);
                    return self.await_host(id, &host, seq).await;
                }
                HandOff::HostGone(host) => {
                    return Err(RuntimeError::Stale(format!(
                        "Execution \"{id}\" belongs to host {}, which is gone (no heartbeat for {} s): it waits for its host, or for a host with its connectors to adopt it.",
                        host.name,
                        HOST_TIMEOUT_MS / 1000
                    )));
                }
                HandOff::NotPaused(status) => {
                    return Err(RuntimeError::Stale(format!(
                        "Execution \"{id}\" is not paused (status: {status}); only a paused run can be approved."
                    )));
                }
                HandOff::RollingBack(pid) => {
                    return Err(RuntimeError::Stale(format!(
                        "Execution \"{id}\" is being rolled back by process {pid}; it can no longer be approved."
                    )));
                }
                HandOff::AlreadyDecided => return Err(already_decided(id)),
                HandOff::OtherCall(other) => return Err(not_the_call_shown(&other)),
                HandOff::Missing => {
                    return Err(RuntimeError::NotFound(format!(
                        "No execution \"{id}\" to resume."
                    )));
                }
            }
        }
        self.resume_here(id, decision, false, shown).await
    }

    /// Resumes a run of this host that another host approved ([`Store::hand_off`]), with that decision.
    /// Edited arguments its tool refuses drop the decision: the run waits for a decision again.
    pub async fn resume_handed(&self, id: &str) -> Result<Outcome, RuntimeError> {
        let Some(decision) = self.inner.store.handed_decision(id)? else {
            return Err(RuntimeError::Stale(format!(
                "Execution \"{id}\" has no approval waiting for this host."
            )));
        };
        if let Some(edited) = &decision.args
            && let Some(pending) = self.inner.store.pending(Some(id))?.into_iter().next()
            && let Err(error) = self
                .check_edited(&pending.connector, &pending.method, edited)
                .await
        {
            self.inner.store.withdraw_handed(id)?;
            return Err(error);
        }
        self.resume_here(id, decision, true, None).await
    }

    /// Waits for the host a decision was handed to to resume the run and end its pass. The call at `seq`
    /// waiting again, undecided, means the host refused the decision (edited arguments its tool rejects).
    async fn await_host(
        &self,
        id: &str,
        host: &RunHost,
        seq: Option<u64>,
    ) -> Result<Outcome, RuntimeError> {
        let deadline = tokio::time::Instant::now() + HANDED_WAIT;
        loop {
            let token = self.inner.store.change_token()?;
            let Some(execution) = self.inner.store.execution_head(id)? else {
                return Err(RuntimeError::NotFound(format!(
                    "No execution \"{id}\" to resume."
                )));
            };
            if execution.handed.is_none() && execution.status != ExecutionStatus::Running {
                let waiting = self.inner.store.pending(Some(id))?.first().map(|p| p.seq);
                if execution.status == ExecutionStatus::Paused
                    && waiting.is_some()
                    && waiting == seq
                {
                    return Err(RuntimeError::InvalidArgs(format!(
                        "Host {} did not accept the decision on execution \"{id}\" (its tool refuses the edited arguments); the call waits for a decision again.",
                        host.name
                    )));
                }
                return self.outcome_of(execution);
            }
            let left = deadline.saturating_duration_since(tokio::time::Instant::now());
            if left.is_zero() {
                return Err(RuntimeError::Handed(format!(
                    "Approved: execution \"{id}\" runs on host {}, which has not finished resuming it yet; `codemode wait {id}` returns its outcome.",
                    host.name
                )));
            }
            self.inner.store.changed(token, left).await;
        }
    }

    /// Waits for the store to change after `token` (a [`Runtime::change_token`]), up to `timeout`: woken by
    /// a notification on a shared store, a short poll on an SQLite file.
    pub async fn changed(&self, token: (i64, u64), timeout: Duration) {
        self.inner.store.changed(token, timeout).await;
    }

    /// What a stored run tells an agent: its outcome once a pass ended (completed, failed, paused again).
    pub fn outcome_of(&self, execution: ExecutionState) -> Result<Outcome, RuntimeError> {
        let id = execution.id;
        Ok(match execution.status {
            ExecutionStatus::Completed => Outcome::Completed {
                result: execution.result,
                logs: execution.logs,
                calls: Some(match execution.log.is_empty() {
                    true => self
                        .inner
                        .store
                        .execution(&id)?
                        .map(|e| e.log)
                        .unwrap_or_default(),
                    false => execution.log,
                }),
                execution_id: id,
            },
            ExecutionStatus::RolledBack => Outcome::early_error(id, "Execution was rolled back"),
            ExecutionStatus::Error | ExecutionStatus::Rejected | ExecutionStatus::Running => {
                Outcome::early_error(id, execution.error.unwrap_or_default())
            }
            ExecutionStatus::Paused => self.paused_outcome(&id)?,
        })
    }

    /// Adopts a run whose host is gone, so that this host decides and resumes it: it must have every
    /// connector the run was begun with (docs/shared-store.md, "A host that is gone").
    pub fn adopt(&self, id: &str) -> Result<(), RuntimeError> {
        let names: Vec<String> = self
            .inner
            .connectors
            .iter()
            .map(|r| r.connector.name().to_owned())
            .collect();
        match self.inner.store.adopt(id, &names)? {
            Adoption::Adopted => Ok(()),
            Adoption::HostAlive(host) if host.here => Err(RuntimeError::Stale(format!(
                "Execution \"{id}\" already belongs to this host."
            ))),
            Adoption::HostAlive(host) => Err(RuntimeError::Busy(format!(
                "Execution \"{id}\" belongs to host {}, which is alive: it resumes its own runs.",
                host.name
            ))),
            Adoption::MissingConnectors(missing) => {
                let missing: Vec<&str> = missing.iter().map(String::as_str).collect();
                Err(RuntimeError::Configuration(format!(
                    "Execution \"{id}\" requires connector(s) {} that are not configured on this host.",
                    quoted_list(&missing)
                )))
            }
            Adoption::NoHost => Err(RuntimeError::Stale(format!(
                "Execution \"{id}\" has no host to adopt it from: its store is not shared."
            ))),
            Adoption::Missing => Err(RuntimeError::NotFound(format!(
                "No execution \"{id}\" to adopt."
            ))),
        }
    }

    /// Resumes a paused run here with `decision` (`handed`: the one another host handed to this one).
    async fn resume_here(
        &self,
        id: &str,
        decision: Decision,
        handed: bool,
        shown: Option<&CallRef>,
    ) -> Result<Outcome, RuntimeError> {
        let edited = decision.args.clone();
        // The head only: the log is read once, by the replay that follows.
        let Some(execution) = self.inner.store.execution_head(id)? else {
            return Err(RuntimeError::NotFound(format!(
                "No execution \"{id}\" to resume."
            )));
        };
        let missing: Vec<&str> = execution
            .connectors
            .iter()
            .filter(|name| self.inner.connector(name).is_none())
            .map(String::as_str)
            .collect();
        if !missing.is_empty() {
            return Err(RuntimeError::Configuration(format!(
                "Execution \"{id}\" requires connector(s) {} that are not configured on this runtime.",
                quoted_list(&missing)
            )));
        }
        if let Some(edited) = &edited
            && execution.status == ExecutionStatus::Paused
            && let Some(pending) = self.inner.store.pending(Some(id))?.into_iter().next()
        {
            self.check_edited(&pending.connector, &pending.method, edited)
                .await?;
        }
        match self.inner.store.resume(id, &decision, handed, shown)? {
            Resume::Resumed => {
                self.pass(id, &execution.code, execution.source.as_deref(), None)
                    .await
            }
            Resume::AlreadyDecided => Err(already_decided(id)),
            Resume::OtherCall(other) => Err(not_the_call_shown(&other)),
            Resume::NotPaused(status) => Err(RuntimeError::Stale(format!(
                "Execution \"{id}\" is not paused (status: {status}); only a paused run can be approved."
            ))),
            Resume::RollingBack(pid) => Err(RuntimeError::Stale(format!(
                "Execution \"{id}\" is being rolled back by process {pid}; it can no longer be approved."
            ))),
            Resume::Missing => Err(RuntimeError::NotFound(format!(
                "No execution \"{id}\" to resume."
            ))),
        }
    }

    /// Approves several paused executions, each its own decision (one failing leaves the others decided),
    /// in the given order.
    pub async fn approve_each(
        &self,
        ids: &[String],
        actor: Actor,
    ) -> Vec<Result<Outcome, RuntimeError>> {
        let mut outcomes = Vec::with_capacity(ids.len());
        for id in ids {
            outcomes.push(self.approve(id, actor, None).await);
        }
        outcomes
    }

    /// Edited arguments must be recordable and fit the tool's input schema, when it has one.
    async fn check_edited(
        &self,
        connector: &str,
        method: &str,
        edited: &Value,
    ) -> Result<(), RuntimeError> {
        let size = utf16_len(&edited.to_string());
        if size > MAX_DURABLE_VALUE {
            return Err(RuntimeError::InvalidArgs(too_large_message(
                &format!("Edited arguments to {connector}.{method}"),
                size,
            )));
        }
        let Some(registered) = self.inner.connector(connector) else {
            return Ok(());
        };
        let methods = registered
            .methods()
            .await
            .map_err(RuntimeError::Configuration)?;
        let Some(schema) = methods.tool(method).and_then(|t| t.input_schema.as_ref()) else {
            return Ok(());
        };
        crate::schema::check(schema, edited).map_err(|problems| {
            RuntimeError::InvalidArgs(format!(
                "Edited arguments for {connector}.{method} do not match its input schema: {problems}"
            ))
        })
    }

    /// Takes over an execution left running by a process that died (docs/design.md, difference 5). An approved
    /// call that was executing is not run again but waits for a new decision, marked `interrupted`; any other
    /// interrupted run runs its pass again (calls that were executing re-execute: connectors get `seq` to make
    /// that idempotent).
    pub async fn recover(&self, id: &str) -> Result<Outcome, RuntimeError> {
        let Some(execution) = self.inner.store.execution(id)? else {
            return Err(RuntimeError::NotFound(format!(
                "No execution \"{id}\" to recover."
            )));
        };
        only_here(&execution, "recovered")?;
        match self.inner.store.recover(id, self.inner.now())? {
            Recover::Repaused => {
                self.pass_end(id, ExecutionStatus::Paused).await;
                self.paused_outcome(id)
            }
            Recover::Rerun => {
                self.pass(id, &execution.code, execution.source.as_deref(), None)
                    .await
            }
            Recover::NotInterrupted(status) => Err(RuntimeError::Stale(format!(
                "Execution \"{id}\" is not interrupted (status: {status}); only an interrupted run can be recovered."
            ))),
            Recover::StillRunning(pid) => Err(RuntimeError::Busy(format!(
                "Execution \"{id}\" is still running in process {pid}; only an interrupted run can be recovered."
            ))),
            Recover::RollingBack(pid) => Err(RuntimeError::Busy(format!(
                "Execution \"{id}\" is being rolled back by process {pid}; it cannot be recovered."
            ))),
            Recover::Missing => Err(RuntimeError::NotFound(format!(
                "No execution \"{id}\" to recover."
            ))),
        }
    }

    /// Rejects the pending call at `seq` (reference §2.5), with an optional reason the agent reads in the run's
    /// error (`Action c.m rejected by user: <reason>`). An unknown id is [`RuntimeError::NotFound`]; a run
    /// that is not paused, or a call that is not pending, is [`RuntimeError::Stale`]: nothing is changed.
    pub async fn reject(
        &self,
        id: &str,
        seq: u64,
        actor: Actor,
        reason: Option<&str>,
    ) -> Result<(), RuntimeError> {
        self.reject_call(id, seq, None, actor, reason).await
    }

    /// [`Runtime::reject`] bound to the arguments a person was shown as well as the seq: when the call at
    /// `seq` has other arguments than `digest` says, the answer is [`RuntimeError::Stale`].
    pub async fn reject_call(
        &self,
        id: &str,
        seq: u64,
        digest: Option<&str>,
        actor: Actor,
        reason: Option<&str>,
    ) -> Result<(), RuntimeError> {
        let reason = reason.map(str::trim).filter(|r| !r.is_empty());
        if let Some(reason) = reason
            && utf16_len(reason) > MAX_REASON
        {
            return Err(RuntimeError::InvalidArgs(format!(
                "A reason is at most {MAX_REASON} characters; this one has {}.",
                utf16_len(reason)
            )));
        }
        match self
            .inner
            .store
            .reject(id, seq, digest, actor, reason, self.inner.now())?
        {
            Rejection::Rejected => {
                self.dispose(id, ExecutionStatus::Rejected).await;
                Ok(())
            }
            Rejection::Missing => Err(RuntimeError::NotFound(format!("No execution \"{id}\""))),
            Rejection::NotPaused(status) => Err(RuntimeError::Stale(format!(
                "Execution \"{id}\" is not paused (status: {status}); only a paused run can be rejected."
            ))),
            Rejection::RollingBack(pid) => Err(RuntimeError::Stale(format!(
                "Execution \"{id}\" is being rolled back by process {pid}; it can no longer be rejected."
            ))),
            Rejection::NotPending => Err(RuntimeError::Stale(format!(
                "Call {seq} of execution \"{id}\" is not waiting for a decision."
            ))),
            Rejection::AlreadyDecided => Err(already_decided(id)),
            Rejection::OtherCall(other) => Err(not_the_call_shown(&other)),
        }
    }

    /// Rejects several pending calls, each its own decision, in the given order.
    /// What the pending call at `seq` would change, for a person about to decide it (docs/design.md,
    /// "Previews"). Computed now by its connector, bounded in size and in time (the call timeout); a failure
    /// is an `unavailable` preview rather than an error, so a preview never stands between a person and the
    /// decision. What is returned is kept as what the person was shown, and the decision takes it along.
    pub async fn preview(&self, id: &str, seq: u64) -> Result<Option<Preview>, RuntimeError> {
        let Some(state) = self.inner.store.execution(id)? else {
            return Err(RuntimeError::NotFound(format!("No execution \"{id}\"")));
        };
        let Some(entry) = state
            .log
            .iter()
            .find(|e| e.seq == seq && e.state == EntryState::Pending)
        else {
            return Err(RuntimeError::Stale(format!(
                "Call {seq} of execution \"{id}\" is not waiting for a decision"
            )));
        };
        if let Some(host) = state.host.as_ref().filter(|host| !host.here) {
            // What the call would change is on its host's machine; this one's files would mislead.
            return Ok(Some(Preview::Unavailable {
                message: format!(
                    "the call runs on host {}, whose connectors preview it",
                    host.name
                ),
            }));
        }
        let Some(registered) = self.inner.connector(&entry.connector) else {
            return Ok(None);
        };
        let ctx = CallContext {
            execution_id: id.to_owned(),
            seq,
        };
        let computing = registered
            .connector
            .preview(&entry.method, entry.args.clone(), ctx);
        let preview = match tokio::time::timeout(self.inner.options.timeout, computing).await {
            Ok(Ok(preview)) => preview,
            Ok(Err(message)) => Some(Preview::Unavailable { message }),
            Err(_) => Some(Preview::Unavailable {
                message: format!(
                    "the preview took longer than {} ms",
                    self.inner.options.timeout.as_millis()
                ),
            }),
        };
        let Some(preview) = preview.map(Preview::bounded) else {
            return Ok(None);
        };
        let json = serde_json::to_string(&preview).unwrap_or_default();
        let shown = Shown {
            digest: crate::codec::sha256_hex(json.as_bytes()),
            at: self.inner.now(),
            preview: (json.len() <= SHOWN_PREVIEW_LIMIT).then(|| preview.clone()),
        };
        self.inner.store.record_shown(
            id,
            seq,
            &serde_json::to_string(&shown).unwrap_or_default(),
        )?;
        Ok(Some(preview))
    }

    pub async fn reject_each(
        &self,
        calls: &[(String, u64)],
        actor: Actor,
        reason: Option<&str>,
    ) -> Vec<Result<(), RuntimeError>> {
        let mut results = Vec::with_capacity(calls.len());
        for (id, seq) in calls {
            results.push(self.reject(id, *seq, actor, reason).await);
        }
        results
    }

    /// Reclaims runs paused (or left running) longer than `max_age` (reference §6): each is disposed with
    /// `rejected`, as the reference does. Returns their ids.
    pub async fn expire_paused(&self, max_age: Duration) -> Result<Vec<String>, RuntimeError> {
        let now = self.inner.now();
        let cutoff = now.saturating_sub(max_age.as_millis().min(i64::MAX as u128) as i64);
        let expired = self.inner.store.expire(cutoff, now)?;
        for id in &expired {
            self.dispose(id, ExecutionStatus::Rejected).await;
        }
        Ok(expired)
    }

    /// Deletes terminal executions beyond the newest `keep`, never a run holding a record younger than
    /// `keep_decided_for` (docs/design.md, "Retention"); returns how many.
    pub async fn prune_executions(&self, keep: usize) -> Result<usize, RuntimeError> {
        let pruned = self.inner.store.prune(self.inner.options.retention(keep))?;
        self.forget(&pruned).await;
        Ok(pruned.len())
    }

    /// Deletes one execution; a paused one has its execution resources disposed (`rejected`). A run whose
    /// pass or rollback a live process holds is refused ([`RuntimeError::Busy`]) and keeps its audit row.
    pub async fn delete_execution(&self, id: &str) -> Result<(), RuntimeError> {
        let status = match self.inner.store.delete(id)? {
            Deletion::Deleted(status) => status,
            Deletion::Missing => {
                return Err(RuntimeError::NotFound(format!("No execution \"{id}\"")));
            }
            Deletion::Running(pid) => {
                return Err(RuntimeError::Busy(format!(
                    "Execution \"{id}\" is running in process {pid}; it can be deleted once its pass ends."
                )));
            }
            Deletion::RollingBack(pid) => {
                return Err(RuntimeError::Busy(format!(
                    "Execution \"{id}\" is being rolled back by process {pid}; it can be deleted once the rollback ends."
                )));
            }
        };
        if !status.is_terminal() {
            self.dispose(id, ExecutionStatus::Rejected).await;
        }
        self.forget(&[id.to_owned()]).await;
        Ok(())
    }

    async fn forget(&self, ids: &[String]) {
        for id in ids {
            for registered in &self.inner.connectors {
                registered.connector.forget_execution(id).await;
            }
        }
    }

    /// Compensates the applied calls of an execution, newest first (reference §5): every method with a
    /// revert is reverted (approval-gated or not); missing connectors and methods without revert are skipped;
    /// a failed or timed-out revert does not stop the rest. The run becomes `rolled_back` only when at least
    /// one call was reverted. A second rollback finds nothing left to revert.
    ///
    /// The run is claimed first, so nothing is approved or recovered while it is being compensated and two
    /// rollbacks never revert the same call; a run whose pass is live in another process is refused
    /// ([`RuntimeError::Busy`]).
    pub async fn rollback(&self, id: &str) -> Result<RollbackReport, RuntimeError> {
        if let Some(execution) = self.inner.store.execution_head(id)? {
            only_here(&execution, "rolled back")?;
        }
        match self.inner.store.claim_rollback(id, self.inner.now())? {
            RollbackClaim::Claimed => {}
            RollbackClaim::Missing => {
                return Err(RuntimeError::NotFound(format!(
                    "No execution \"{id}\" to roll back."
                )));
            }
            RollbackClaim::Running(pid) => {
                return Err(RuntimeError::Busy(format!(
                    "Execution \"{id}\" is running in process {pid}; it can be rolled back once its pass ends."
                )));
            }
            RollbackClaim::RollingBack(pid) => {
                return Err(RuntimeError::Busy(format!(
                    "Execution \"{id}\" is already being rolled back by process {pid}."
                )));
            }
        }
        let compensated = self.compensate(id).await;
        let rolled_back = compensated
            .as_ref()
            .is_ok_and(|report| !report.reverted.is_empty());
        self.inner
            .store
            .finish_rollback(id, rolled_back, self.inner.now())?;
        let mut report = compensated?;
        if rolled_back {
            self.dispose(id, ExecutionStatus::RolledBack).await;
        }
        report.status = self.inner.store.status(id)?;
        Ok(report)
    }

    /// Reverts what a claimed rollback finds applied.
    async fn compensate(&self, id: &str) -> Result<RollbackReport, RuntimeError> {
        let mut report = RollbackReport {
            execution_id: id.to_owned(),
            ..RollbackReport::default()
        };
        for entry in self.inner.store.actions_to_revert(id)? {
            let (seq, connector, method) =
                (entry.seq, entry.connector.clone(), entry.method.clone());
            let skip = |reason: &str| SkippedCall {
                seq,
                connector: connector.clone(),
                method: method.clone(),
                reason: reason.to_owned(),
            };
            let Some(registered) = self.inner.connector(&entry.connector) else {
                report.skipped.push(skip("connector not configured"));
                continue;
            };
            let ctx = CallContext {
                execution_id: id.to_owned(),
                seq,
            };
            // A revert undoes what ran: for an edited approval, the person's arguments, not the program's.
            let ran_with = match &entry.decision {
                Some(decision) if decision.kind == crate::model::DecisionKind::Edited => {
                    decision.args.clone()
                }
                _ => entry.args.clone(),
            };
            let revert =
                registered
                    .connector
                    .revert(&entry.method, ran_with, entry.result.clone(), ctx);
            match tokio::time::timeout(self.inner.options.revert_timeout, revert).await {
                Ok(Ok(true)) => {
                    self.inner.store.mark_reverted(id, seq, self.inner.now())?;
                    report.reverted.push(RevertedCall {
                        seq,
                        connector,
                        method,
                    });
                }
                Ok(Ok(false)) => report.skipped.push(skip("no revert")),
                Ok(Err(error)) => report.failed.push(FailedRevert {
                    seq,
                    connector,
                    method,
                    error,
                }),
                Err(_) => report.failed.push(FailedRevert {
                    seq,
                    connector,
                    method,
                    error: format!(
                        "revert timed out after {} ms",
                        self.inner.options.revert_timeout.as_millis()
                    ),
                }),
            }
        }
        Ok(report)
    }

    /// What a rollback would revert, newest first: applied calls whose method has a revert. It starts no
    /// server: a connector whose methods are not known yet is assumed revertible, since the rollback will try.
    pub async fn rollback_plan(&self, id: &str) -> Result<Vec<ToolLogEntry>, RuntimeError> {
        let mut plan = Vec::new();
        // Another runtime's run is not found, as every read of it by id (docs/shared-store.md).
        let Some(execution) = self.inner.store.execution_head(id)? else {
            return Err(RuntimeError::NotFound(format!("No execution \"{id}\"")));
        };
        // Another host's run is rolled back there: this host's connectors say nothing of what it can undo.
        if only_here(&execution, "rolled back").is_err() {
            return Ok(plan);
        }
        for entry in self.inner.store.actions_to_revert(id)? {
            let revertible = match self.inner.connector(&entry.connector) {
                None => false,
                Some(registered) => match registered.cached() {
                    Some(methods) => methods.tool(&entry.method).is_some_and(|t| t.revertible),
                    None => true,
                },
            };
            if revertible {
                plan.push(entry);
            }
        }
        Ok(plan)
    }

    /// Promotes an execution's code to a snippet (reference §8.1). Any status is accepted: the caller decides
    /// what to offer. Saving under an existing name replaces it.
    pub fn save_snippet(&self, name: &str, save: SaveSnippet) -> Result<Snippet, RuntimeError> {
        let Some(execution) = self.inner.store.execution(&save.execution_id)? else {
            return Err(RuntimeError::NotFound(format!(
                "No execution \"{}\" to save from",
                save.execution_id
            )));
        };
        if let Some(schema) = &save.input_schema {
            let size = utf16_len(&schema.to_string());
            if size > MAX_DURABLE_VALUE {
                return Err(RuntimeError::Configuration(too_large_message(
                    "The snippet input schema",
                    size,
                )));
            }
        }
        let snippet = Snippet {
            name: name.to_owned(),
            description: save.description.unwrap_or_default(),
            code: execution.code,
            saved_at: self.inner.now(),
            input_schema: save.input_schema,
            connectors: Some(execution.connectors),
        };
        self.inner.store.save_snippet(&snippet)?;
        Ok(snippet)
    }

    /// Every snippet, by name.
    pub fn snippets(&self) -> Result<Vec<Snippet>, RuntimeError> {
        Ok(self.inner.store.snippets(None)?)
    }

    /// Deletes a snippet; false when there was none by that name.
    pub fn delete_snippet(&self, name: &str) -> Result<bool, RuntimeError> {
        Ok(self.inner.store.delete_snippet(name)?)
    }

    /// Now, on the runtime's clock (epoch ms).
    pub fn now_ms(&self) -> i64 {
        self.inner.now()
    }

    /// Every rule in force, in precedence order: the database's (with who added it, when, and how often it
    /// decided), then the read-only ones from `connectors.json`.
    pub fn rules(&self) -> Result<Vec<RuleListing>, RuntimeError> {
        let mut listing: Vec<RuleListing> = self
            .inner
            .store
            .rules()?
            .into_iter()
            .map(|stored| RuleListing {
                rule: stored.rule,
                origin: RuleOrigin::Database,
                created_by: Some(stored.created_by),
                created_at: Some(stored.created_at),
                hits: stored.hits,
                last_hit: stored.last_hit,
            })
            .collect();
        listing.extend(self.inner.file_rules.iter().map(|compiled| RuleListing {
            rule: compiled.rule.clone(),
            origin: RuleOrigin::File,
            created_by: None,
            created_at: None,
            hits: 0,
            last_hit: None,
        }));
        Ok(listing)
    }

    /// Adds a rule to the database, recorded as added by `by`; every process applies it within a second.
    /// A rule that cannot be used, or whose id is taken, is [`RuntimeError::InvalidArgs`] naming the field.
    pub fn add_rule(&self, rule: Rule, by: &str) -> Result<(), RuntimeError> {
        let compiled =
            CompiledRule::new(rule).map_err(|e| RuntimeError::InvalidArgs(e.to_string()))?;
        if self.inner.is_file_rule(&compiled.rule.id)
            || !self
                .inner
                .store
                .add_rule(&compiled.rule, by, self.inner.now())?
        {
            return Err(id_taken(&compiled.rule.id));
        }
        self.inner.rules_changed();
        Ok(())
    }

    /// Replaces the database rule `id` with `rule` (an edit in the app, switching it off or on); who added it,
    /// when, and its hits stay. Validated as [`add_rule`](Self::add_rule) validates.
    pub fn replace_rule(&self, id: &str, rule: Rule) -> Result<(), RuntimeError> {
        let compiled =
            CompiledRule::new(rule).map_err(|e| RuntimeError::InvalidArgs(e.to_string()))?;
        if self.inner.is_file_rule(id) {
            return Err(file_rule(id));
        }
        if compiled.rule.id != id && self.inner.is_file_rule(&compiled.rule.id) {
            return Err(id_taken(&compiled.rule.id));
        }
        if !self.inner.store.replace_rule(id, &compiled.rule)? {
            return Err(RuntimeError::NotFound(format!(
                "No rule \"{id}\", or \"{}\" is taken by another rule",
                compiled.rule.id
            )));
        }
        self.inner.rules_changed();
        Ok(())
    }

    /// The newest `limit` calls of recent runs, steps left out (the console's rule tools).
    pub fn recent_calls(
        &self,
        limit: usize,
    ) -> Result<Vec<crate::store::RecentCallRow>, RuntimeError> {
        Ok(self.inner.store.recent_calls(limit)?)
    }

    /// Whether `edited` arguments could replace the pending call's of run `id` (recordable, and fitting the
    /// tool's input schema): what an editor checks before it offers to approve.
    pub async fn check_edit(&self, id: &str, edited: &Value) -> Result<(), RuntimeError> {
        let Some(call) = self.pending(Some(id))?.into_iter().next() else {
            return Err(RuntimeError::Stale(format!(
                "Execution \"{id}\" has no call waiting for a decision"
            )));
        };
        self.check_edited(&call.connector, &call.method, edited)
            .await
    }

    /// Removes a database rule; a rule from `connectors.json` is changed in the file.
    pub fn remove_rule(&self, id: &str) -> Result<(), RuntimeError> {
        if self.inner.is_file_rule(id) {
            return Err(file_rule(id));
        }
        if !self.inner.store.remove_rule(id)? {
            return Err(RuntimeError::NotFound(format!("No rule \"{id}\"")));
        }
        self.inner.rules_changed();
        Ok(())
    }

    /// What the rules would do with a call (`connector.method` with these arguments, from `source`), without
    /// running anything.
    pub async fn test_rules(
        &self,
        call: &str,
        args: Option<&Value>,
        source: Option<&str>,
    ) -> Result<Verdict, RuntimeError> {
        let Some((connector, method)) = call.split_once('.') else {
            return Err(RuntimeError::InvalidArgs(format!(
                "\"{call}\" is not connector.method"
            )));
        };
        let (requires_approval, canonical) = match self.inner.connector(connector) {
            Some(registered) => {
                let gated = registered
                    .methods()
                    .await
                    .map_err(RuntimeError::Configuration)?
                    .tool(method)
                    .is_some_and(|t| t.requires_approval);
                // As a real call is judged: on the connector's reading of the arguments.
                let canonical = registered
                    .connector
                    .canonical(method, args)
                    .map_err(RuntimeError::InvalidArgs)?;
                (gated, canonical)
            }
            None => (false, None),
        };
        let rules = self.inner.rules();
        Ok(rules.evaluate(
            &crate::rules::Call {
                path: call,
                args: canonical.as_ref().or(args),
                source,
                now: self.inner.now(),
            },
            requires_approval,
        ))
    }

    /// Ranked search over connector methods and snippets (reference §8.3).
    pub async fn search(&self, query: &str) -> Result<SearchOutput, RuntimeError> {
        self.inner.search(query).await
    }

    /// A snippet, connector or method with its TypeScript declarations (reference §8.4).
    pub async fn describe(&self, target: &str) -> Result<DescribeOutput, RuntimeError> {
        self.inner.describe(target).await
    }

    /// Every connector with its methods (hidden ones included, flagged) or the reason they are unavailable;
    /// asking starts servers that have not started yet.
    pub async fn connectors(&self) -> Vec<ConnectorListing> {
        self.inner
            .loaded()
            .await
            .into_iter()
            .map(|(registered, methods)| {
                let name = registered.connector.name().to_owned();
                match methods {
                    Ok(methods) => ConnectorListing {
                        name,
                        instructions: methods.instructions.clone(),
                        methods: methods.tools.clone(),
                        error: None,
                    },
                    Err(error) => ConnectorListing {
                        name,
                        instructions: None,
                        methods: Vec::new(),
                        error: Some(error),
                    },
                }
            })
            .collect()
    }

    /// The model-facing description of the `codemode` tool, with optional per-connector hints.
    pub fn tool_description(&self, hints: &HashMap<String, String>) -> String {
        let connectors: Vec<(&str, Option<&str>)> = self
            .inner
            .connectors
            .iter()
            .map(|c| {
                (
                    c.connector.name(),
                    hints.get(c.connector.name()).map(String::as_str),
                )
            })
            .collect();
        discovery::tool_description(&connectors)
    }

    /// Pending calls of paused runs, newest first; with an id, only that run's.
    pub fn pending(&self, id: Option<&str>) -> Result<Vec<PendingAction>, RuntimeError> {
        Ok(self.inner.store.pending(id)?)
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

    /// One pass over the stored code, then the outcome as the store says it ended (reference §2.3). A new
    /// execution (`begin`) is recorded while the worker already parses the program: nothing the program asks
    /// for is answered before that record is committed.
    async fn pass(
        &self,
        id: &str,
        code: &str,
        source: Option<&str>,
        begin: Option<Begin>,
    ) -> Result<Outcome, RuntimeError> {
        let inner = self.inner.clone();
        // A new execution has nothing recorded yet.
        let (log, log_end) = match begin {
            Some(_) => (Vec::new(), 0),
            None => inner.store.replay_log(id)?,
        };
        let request = PassRequest {
            code: code.to_owned(),
            connectors: inner.names(),
            log,
            log_end: Some(log_end),
        };
        let handle = Handle::current();
        let execution_id = id.to_owned();
        let source = source.map(str::to_owned);
        // On a multi-threaded runtime the pass runs on the calling worker thread (its other tasks move
        // away): handing it to the blocking pool and back costs two thread wake-ups, about half a
        // millisecond on an idle 2-core VM. Two passes polled from one task (`join!`) therefore run one
        // after the other; separate tasks still run them in parallel.
        let multi_thread = handle.runtime_flavor() == tokio::runtime::RuntimeFlavor::MultiThread;
        let work = move || {
            let mut host = RuntimeHost {
                inner: inner.clone(),
                id: execution_id,
                source,
                handle,
                steps: HashMap::new(),
                begin,
                recording: None,
                begun: None,
                logged: false,
                broken: None,
                in_doubt: false,
            };
            let ran = inner.executor.run(&request, &mut host);
            // A worker that could not be started never asked for the record; the failure is recorded.
            host.started();
            host.recorded();
            (ran, host.begun, host.logged, host.broken)
        };
        let (ran, begun, logged, broken) = if multi_thread {
            tokio::task::block_in_place(work)
        } else {
            tokio::task::spawn_blocking(work)
                .await
                .map_err(|e| RuntimeError::Interrupted(e.to_string()))?
        };
        if let Some(broken) = broken {
            self.release_broken_pass(id);
            return Err(broken);
        }
        // A new run whose pass recorded nothing has no calls to read back.
        let read_log = begun.is_none() || logged;
        if let Some(begun) = begun {
            self.forget(&begun?).await;
        }
        let now = self.inner.now();
        let store = &self.inner.store;
        let end = match ran {
            Ok(outcome) => Ok((outcome.end, outcome.logs)),
            Err(error) => Err(error),
        };
        // The usual end first: one conditional transaction completes the run and reads its calls.
        let end = match end {
            Ok((
                PassEnd::Completed {
                    result,
                    result_error,
                },
                logs,
            )) => {
                // A final value that JSON cannot carry (a cycle, a lone surrogate) fails the run with the
                // reason: the reference hands the model the live value, which a worker process cannot, and a
                // completed run with no result would hide it (docs/design.md, "Values that JSON cannot carry").
                let parsed = match (result_error, result.as_deref().map(parse_raw).transpose()) {
                    (Some(reason), _) | (None, Err(reason)) => Err(reason),
                    (None, Ok(result)) => Ok(result),
                };
                let result = match parsed {
                    Ok(result) => result,
                    Err(reason) => {
                        let error = unserialisable("The final result", &reason);
                        store.fail(id, &error, now)?;
                        return self.finish_error(id, error).await;
                    }
                };
                let audit = result.clone();
                if let Some(calls) = store.complete(id, audit.as_ref(), &logs, now, read_log)? {
                    self.pass_end(id, ExecutionStatus::Completed).await;
                    self.dispose(id, ExecutionStatus::Completed).await;
                    let result = match (&self.inner.options.transform_result, result) {
                        (Some(transform), Some(value)) => {
                            Some(transform(value.clone()).unwrap_or(value))
                        }
                        (_, result) => result,
                    };
                    return Ok(Outcome::Completed {
                        execution_id: id.to_owned(),
                        result,
                        logs: (!logs.is_empty()).then_some(logs),
                        calls: Some(calls),
                    });
                }
                // No longer running (paused, failed or reclaimed meanwhile): the store says how it ended.
                Ok((PassEnd::Stopped, logs))
            }
            other => other,
        };
        match store.status(id)? {
            Some(ExecutionStatus::Paused) => {
                self.pass_end(id, ExecutionStatus::Paused).await;
                self.paused_outcome(id)
            }
            Some(ExecutionStatus::Running) => {
                let error = match end {
                    Ok((PassEnd::Failed { error }, _)) => error,
                    Ok(_) => "Codemode execution failed".to_owned(),
                    Err(executor) => format!("Code execution failed: {executor}"),
                };
                store.fail(id, &error, now)?;
                self.finish_error(id, error).await
            }
            Some(_) => {
                let error = store
                    .execution(id)?
                    .and_then(|e| e.error)
                    .unwrap_or_else(|| "Codemode execution failed".to_owned());
                self.finish_error(id, error).await
            }
            None => Ok(Outcome::early_error(id, format!("No execution \"{id}\""))),
        }
    }

    /// Fault injection for tests: the store's SQLite connection suffers `fault` until called with `None`.
    #[doc(hidden)]
    pub fn inject_store_fault_for_tests(&self, fault: Option<crate::store::StoreFault>) {
        self.inner.store.fault_for_tests(fault);
    }

    /// Leaves a run whose pass the store failed in `interrupted`: this process lets go of it, so `recover`
    /// (or expiry) can take it over and a call in doubt is asked about again rather than replayed as if it
    /// had not run. The store may still be failing: the release is retried in the background, with backoff,
    /// for as long as this process lives, and never dropped (docs/design.md, "When the store fails").
    fn release_broken_pass(&self, id: &str) {
        if self.inner.store.release_pass(id).is_ok() {
            return;
        }
        let inner = std::sync::Arc::downgrade(&self.inner);
        let id = id.to_owned();
        std::thread::spawn(move || {
            let mut wait = Duration::from_millis(100);
            loop {
                std::thread::sleep(wait);
                let Some(inner) = inner.upgrade() else { return };
                if inner.store.release_pass(&id).is_ok() {
                    return;
                }
                wait = (wait * 2).min(Duration::from_secs(30));
            }
        });
    }

    /// A paused execution as an Outcome: its pending calls and its call log.
    pub fn paused_outcome(&self, id: &str) -> Result<Outcome, RuntimeError> {
        let store = &self.inner.store;
        Ok(Outcome::Paused {
            execution_id: id.to_owned(),
            pending: store.pending(Some(id))?,
            calls: Some(store.execution(id)?.map(|e| e.log).unwrap_or_default()),
        })
    }

    async fn finish_error(&self, id: &str, error: String) -> Result<Outcome, RuntimeError> {
        self.pass_end(id, ExecutionStatus::Error).await;
        self.dispose(id, ExecutionStatus::Error).await;
        Ok(Outcome::Error {
            execution_id: id.to_owned(),
            error,
            logs: None,
            calls: Some(
                self.inner
                    .store
                    .execution(id)?
                    .map(|e| e.log)
                    .unwrap_or_default(),
            ),
        })
    }

    async fn pass_end(&self, id: &str, status: ExecutionStatus) {
        for registered in &self.inner.connectors {
            registered.connector.on_pass_end(id, status).await;
        }
    }

    async fn dispose(&self, id: &str, status: ExecutionStatus) {
        for registered in &self.inner.connectors {
            registered.connector.dispose_execution(id, status).await;
        }
    }
}

fn quoted_list(names: &[&str]) -> String {
    names
        .iter()
        .map(|n| format!("\"{n}\""))
        .collect::<Vec<_>>()
        .join(", ")
}

/// A step value that cannot be stored ends the run: replay could not hand it back.
fn step_unrecordable(host: &RuntimeHost, seq: u64, reason: &str, now: i64) -> bool {
    let name = host.steps.get(&seq).cloned().unwrap_or_default();
    let what = format!("The result of {}.{name}", crate::STEP_CONNECTOR);
    let _ = host
        .inner
        .store
        .fail_unrecordable(&host.id, seq, &unserialisable(&what, reason), now);
    false
}

/// A value from the worker as JSON; deeper than serde_json's 128 levels, or a string holding half of a
/// UTF-16 surrogate pair, is an error with its reason, never a silent nothing.
fn parse_raw(raw: &RawValue) -> Result<Value, String> {
    serde_json::from_str(raw.get()).map_err(|e| {
        if e.to_string().contains("surrogate") {
            "a string holds a lone surrogate (half of a UTF-16 pair), which JSON text cannot carry"
                .to_owned()
        } else {
            e.to_string()
        }
    })
}

/// Answers a pass's requests: every connector call goes through `decide` and `record_result`.
struct RuntimeHost {
    inner: Arc<Inner>,
    id: String,
    /// Where the run came from, as rules see it.
    source: Option<String>,
    handle: Handle,
    /// Step names by seq, for the messages of unrecordable step values.
    steps: HashMap<u64, String>,
    /// A new execution to record once the worker has the program.
    begin: Option<Begin>,
    /// Its record being written.
    recording: Option<tokio::task::JoinHandle<Result<Vec<String>, StoreError>>>,
    /// What recording it did: the executions pruned to make room, or why it failed.
    begun: Option<Result<Vec<String>, RuntimeError>>,
    /// Whether the pass asked to record a call or step (and so may have added to the log).
    logged: bool,
    /// The store failed while the pass needed it: the pass stopped, and the run is left interrupted rather than
    /// ended by a store that cannot be trusted to record it (docs/design.md, "When the store fails").
    broken: Option<RuntimeError>,
    /// A connector acted and its outcome could not be recorded: that call is in doubt.
    in_doubt: bool,
}

impl RuntimeHost {
    /// Whether a step's value was recorded; a store failure stops the pass, since a replay would then give the
    /// program another value than this pass saw (docs/design.md, "When the store fails").
    fn settle(&mut self, recorded: Result<bool, StoreError>) -> bool {
        recorded.unwrap_or_else(|error| {
            self.broken = Some(RuntimeError::Store(error));
            false
        })
    }

    /// Waits for the new execution's record; false when it could not be written (the pass must stop).
    fn recorded(&mut self) -> bool {
        if let Some(recording) = self.recording.take() {
            let begun = match self.handle.block_on(recording) {
                Ok(begun) => begun.map_err(RuntimeError::from),
                Err(e) => Err(RuntimeError::Interrupted(e.to_string())),
            };
            self.begun = Some(begun);
        }
        !matches!(self.begun, Some(Err(_)))
    }
}

/// What a program asking for something is told when its execution could not be recorded (the run then
/// ends with the store's error).
const UNRECORDED: &str = "the execution could not be recorded";

/// A new execution, recorded when its first pass starts.
struct Begin {
    id: String,
    code: String,
    names: Vec<String>,
    source: Option<String>,
    now: i64,
}

impl PassHost for RuntimeHost {
    /// Records a new execution on a thread of the blocking pool: this thread is about to wait for the worker,
    /// which then runs here while the record is written on the other CPU.
    fn started(&mut self) {
        if let Some(begin) = self.begin.take() {
            let inner = self.inner.clone();
            self.recording = Some(self.handle.spawn_blocking(move || {
                inner.store.begin(
                    &begin.id,
                    &begin.code,
                    &begin.names,
                    begin.source.as_deref(),
                    begin.now,
                    inner.options.retention(inner.options.max_executions),
                )
            }));
        }
    }

    fn call(&mut self, call: ConnectorCall) -> CallAnswer {
        if !self.recorded() {
            return CallAnswer::Stop;
        }
        self.logged = true;
        let inner = self.inner.clone();
        let store = &inner.store;
        let now = inner.now();
        let Some(registered) = inner.connector(&call.connector) else {
            return CallAnswer::Error(format!(
                "Connector \"{}\" is not configured",
                call.connector
            ));
        };
        if let Some(reason) = &call.args_error {
            let message = unserialisable(
                &format!("Arguments to {}.{}", call.connector, call.method),
                reason,
            );
            return match store.fail(&self.id, &message, now) {
                Ok(()) | Err(_) => CallAnswer::Stop,
            };
        }
        let args = match call.args.as_deref().map(parse_raw).transpose() {
            Ok(args) => args,
            Err(reason) => {
                let message = unserialisable(
                    &format!("Arguments to {}.{}", call.connector, call.method),
                    &reason,
                );
                return match store.fail(&self.id, &message, now) {
                    Ok(()) | Err(_) => CallAnswer::Stop,
                };
            }
        };
        let methods = match self.handle.block_on(registered.methods()) {
            Ok(methods) => methods,
            Err(message) => return CallAnswer::Error(message),
        };
        let rules = inner.rules();
        // A method hidden by an unconditional deny is still found here, so the deny answers it with its
        // reason and counts the hit (docs/design.md, "Rules"); only `hidden` methods are not there at all.
        let tool = methods.tool(&call.method).filter(|t| !t.hidden);
        let requires_approval = tool.is_some_and(|t| t.requires_approval);
        let ephemeral = tool.is_some_and(|t| t.replay == Replay::Reexecute);
        // Rules decide a fresh call on what the connector will really do with it — its canonical reading of
        // the arguments — and the store uses the verdict only for a call it records now, so replay never
        // evaluates again (docs/design.md, "Rules" and "What a call means").
        let (canonical, refused) = match tool {
            Some(_) => match registered.connector.canonical(&call.method, args.as_ref()) {
                Ok(canonical) => (canonical, None),
                Err(message) => (None, Some(message)),
            },
            None => (None, None),
        };
        let path = format!("{}.{}", call.connector, call.method);
        let verdict = match (tool, &refused) {
            (Some(_), None) => rules.evaluate(
                &crate::rules::Call {
                    path: &path,
                    args: canonical.as_ref().or(args.as_ref()),
                    source: self.source.as_deref(),
                    now,
                },
                requires_approval,
            ),
            // Not found, or refused by the connector whatever anyone decides: no rule or person is asked.
            _ => crate::rules::Verdict {
                effect: crate::rules::Effect::Allow,
                rule: None,
                reason: None,
            },
        };
        let plan = store.decide(
            &self.id,
            call.seq,
            &call.connector,
            &call.method,
            args.as_ref(),
            canonical.as_ref(),
            &verdict,
            ephemeral,
            now,
        );
        // The entry keeps what the program sent (replay matches it); an edited approval runs what the person
        // changed it to.
        let mut args = args;
        match plan {
            Ok(CallPlan::Execute) => {}
            Ok(CallPlan::ExecuteEdited(edited)) => args = Some(edited),
            Ok(CallPlan::Replay(result)) => return CallAnswer::Value(result.map(|r| raw(&r))),
            Ok(CallPlan::ReplayError(message)) => return CallAnswer::Error(message),
            Ok(CallPlan::Missing) => {
                return CallAnswer::Error(format!("No execution \"{}\"", self.id));
            }
            Ok(CallPlan::Pause) => return CallAnswer::Stop,
            // Nothing ran, but a program that caught this error would go on differently from its replay:
            // the pass stops instead, with the store's error (docs/design.md, "When the store fails").
            Err(error) => {
                self.broken = Some(RuntimeError::Store(error));
                return CallAnswer::Stop;
            }
        }
        let unrunnable = match (tool, refused) {
            (None, _) => Some(format!(
                "Tool \"{}\" not found on {}",
                call.method, call.connector
            )),
            (Some(_), refused) => refused,
        };
        if let Some(message) = unrunnable {
            return match store.record_error(&self.id, call.seq, &message, inner.now()) {
                Ok(_) => CallAnswer::Error(message),
                Err(error) => {
                    self.broken = Some(RuntimeError::Store(error));
                    CallAnswer::Stop
                }
            };
        }
        let ctx = CallContext {
            execution_id: self.id.clone(),
            seq: call.seq,
        };
        let connector = registered.connector.clone();
        let executed = self
            .handle
            .block_on(connector.execute(&call.method, args, ctx));
        let recorded = match &executed {
            Ok(result) => store
                .record_result(&self.id, call.seq, result.as_ref(), inner.now())
                .map(|_| ()),
            // The connector answered: the call has an outcome, replayed as this same error and never
            // executed again (docs/design.md, "A call's outcome is recorded, errors included").
            Err(message) => store.record_error(&self.id, call.seq, message, inner.now()),
        };
        if let Err(error) = recorded {
            // The connector acted and its outcome is not on record: the run must never be replayed as if the
            // call had not run. It stops here, interrupted with the call in doubt (docs/design.md, "When the
            // store fails").
            self.broken = Some(RuntimeError::Interrupted(format!(
                "the outcome of {}.{} (call {}) could not be recorded after it ran: {error}; the run is interrupted with that call in doubt",
                call.connector, call.method, call.seq
            )));
            self.in_doubt = true;
            return CallAnswer::Stop;
        }
        // A result too large to record fails the run (record_result said so in the store); the program still
        // gets it, and the next call (or the end of the pass) sees the failure.
        match executed {
            Ok(result) => CallAnswer::Value(result.map(|r| raw(&r))),
            Err(message) => CallAnswer::Error(message),
        }
    }

    fn step_decide(&mut self, seq: u64, name: &str) -> StepAnswer {
        if !self.recorded() {
            return StepAnswer::Stop;
        }
        self.logged = true;
        self.steps.insert(seq, name.to_owned());
        let decision = self.inner.store.decide(
            &self.id,
            seq,
            crate::STEP_CONNECTOR,
            name,
            None,
            None,
            &crate::rules::Verdict {
                effect: crate::rules::Effect::Allow,
                rule: None,
                reason: None,
            },
            false,
            self.inner.now(),
        );
        match decision {
            Ok(CallPlan::Execute) => StepAnswer::Execute,
            Ok(CallPlan::Replay(value)) => StepAnswer::Replay(value.map(|v| raw(&v))),
            Ok(_) => StepAnswer::Stop,
            Err(error) => {
                self.broken = Some(RuntimeError::Store(error));
                StepAnswer::Stop
            }
        }
    }

    fn step_record(&mut self, seq: u64, value: Result<Option<Box<RawValue>>, String>) -> bool {
        if !self.recorded() {
            return false;
        }
        let now = self.inner.now();
        match value {
            Ok(value) => match value.as_deref().map(parse_raw).transpose() {
                Ok(value) => {
                    let recorded =
                        self.inner
                            .store
                            .record_result(&self.id, seq, value.as_ref(), now);
                    self.settle(recorded)
                }
                Err(reason) => step_unrecordable(self, seq, &reason, now),
            },
            Err(reason) => step_unrecordable(self, seq, &reason, now),
        }
    }

    fn step_fresh(
        &mut self,
        seq: u64,
        name: &str,
        value: Result<Option<Box<RawValue>>, String>,
    ) -> bool {
        if !self.recorded() {
            return false;
        }
        self.logged = true;
        let now = self.inner.now();
        let parsed = value.and_then(|value| value.as_deref().map(parse_raw).transpose());
        let unrecordable;
        let value = match &parsed {
            Ok(value) => Ok(value.as_ref()),
            Err(reason) => {
                let what = format!("The result of {}.{name}", crate::STEP_CONNECTOR);
                unrecordable = unserialisable(&what, reason);
                Err(unrecordable.as_str())
            }
        };
        let recorded = self
            .inner
            .store
            .record_step(&self.id, seq, name, value, now);
        self.settle(recorded)
    }

    fn search(&mut self, query: &str) -> Result<Box<RawValue>, String> {
        if !self.recorded() {
            return Err(UNRECORDED.to_owned());
        }
        self.handle
            .block_on(self.inner.search(query))
            .map(|output| raw(&output))
            .map_err(|e| e.to_string())
    }

    fn describe(&mut self, target: &str) -> Result<Box<RawValue>, String> {
        if !self.recorded() {
            return Err(UNRECORDED.to_owned());
        }
        self.handle
            .block_on(self.inner.describe(target))
            .map(|output| raw(&output))
            .map_err(|e| e.to_string())
    }

    fn snippet(&mut self, name: &str) -> SnippetAnswer {
        if !self.recorded() {
            return SnippetAnswer::Stop;
        }
        let error =
            |message: String| SnippetAnswer::Value(raw(&serde_json::json!({ "error": message })));
        let snippet = match self.inner.store.snippets(Some(name)) {
            Ok(mut found) if !found.is_empty() => found.remove(0),
            Ok(_) => return error(format!("Snippet \"{name}\" not found.")),
            Err(e) => return error(e.to_string()),
        };
        let missing: Vec<&str> = snippet
            .connectors
            .iter()
            .flatten()
            .filter(|c| self.inner.connector(c).is_none())
            .map(String::as_str)
            .collect();
        if !missing.is_empty() {
            return error(format!(
                "Snippet \"{name}\" requires connector(s) {} that are not configured on this runtime.",
                quoted_list(&missing)
            ));
        }
        SnippetAnswer::Code(snippet.code)
    }
}

/// A rule id already used (by the database or `connectors.json`), said as rule validation says it.
fn id_taken(id: &str) -> RuntimeError {
    RuntimeError::InvalidArgs(
        RuleError {
            rule: id.to_owned(),
            field: "id".to_owned(),
            problem: "a rule with this id exists".to_owned(),
        }
        .to_string(),
    )
}

fn file_rule(id: &str) -> RuntimeError {
    RuntimeError::InvalidArgs(format!(
        "Rule \"{id}\" comes from connectors.json: edit the file to change it."
    ))
}

/// How long approving another host's run waits for that host to resume it and end its pass.
const HANDED_WAIT: Duration = Duration::from_secs(30);

/// A decision on a call that no longer waits as it was shown (docs/design.md, "A decision names its call").
fn not_the_call_shown(why: &str) -> RuntimeError {
    RuntimeError::Stale(format!(
        "Not decided: {why}. Look at the call again before deciding."
    ))
}

fn already_decided(id: &str) -> RuntimeError {
    RuntimeError::Stale(format!(
        "Execution \"{id}\" was already approved on another host; it waits for its own host to resume it."
    ))
}

/// A host's duties on a shared store (docs/shared-store.md, "Hosts"): its heartbeat, and resuming the runs
/// other hosts approve for it — each as the listener hears of it, and all that wait whenever the listener
/// (re)connects. Ends when the runtime is dropped.
async fn serve_host(
    inner: std::sync::Weak<Inner>,
    mut hand_offs: tokio::sync::mpsc::UnboundedReceiver<crate::store::Handed>,
) {
    let mut beat = tokio::time::interval(HEARTBEAT_EVERY);
    beat.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tokio::select! {
            _ = beat.tick() => {
                let Some(inner) = inner.upgrade() else { return };
                let _ = inner.store.heartbeat();
            }
            handed = hand_offs.recv() => {
                let (Some(handed), Some(inner)) = (handed, inner.upgrade()) else { return };
                let ids = match handed {
                    crate::store::Handed::Run(id) => vec![id],
                    crate::store::Handed::Rescan => inner.store.handed_runs().unwrap_or_default(),
                };
                let runtime = Runtime { inner };
                for id in ids {
                    let runtime = runtime.clone();
                    tokio::spawn(async move {
                        let _ = runtime.resume_handed(&id).await;
                    });
                }
            }
        }
    }
}

/// On a shared store, what runs a run's connectors (a recovery, a rollback) happens on its own host: another
/// host's connectors of the same name act on another machine (docs/shared-store.md, "Hosts").
fn only_here(execution: &ExecutionState, what: &str) -> Result<(), RuntimeError> {
    match &execution.host {
        Some(host) if !host.here && host.alive => Err(RuntimeError::Busy(format!(
            "Execution \"{}\" belongs to host {}: it can be {what} there, with the connectors that ran it.",
            execution.id, host.name
        ))),
        Some(host) if !host.here => Err(RuntimeError::Stale(format!(
            "Execution \"{}\" belongs to host {}, which is gone: it can be {what} there, or here once this host adopts it.",
            execution.id, host.name
        ))),
        _ => Ok(()),
    }
}
