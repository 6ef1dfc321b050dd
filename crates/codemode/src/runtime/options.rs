//! What a runtime is opened with: its options, and how a run's result is shaped before it is returned.

use super::*;

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
    /// Whether an [`Outcome`] carries the run's calls (`calls`), read from the log when the pass ends. On by
    /// default, as the reference answers; hosts whose front ends ask for calls only sometimes turn it off and
    /// read them on request ([`Runtime::with_calls`]; docs/performance.md, "Lean reads").
    pub outcome_calls: bool,
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
            outcome_calls: true,
        }
    }
}

impl RuntimeOptions {
    /// Retention by count (`keep` runs) with these options' age for runs holding a record.
    pub(super) fn retention(&self, keep: usize) -> crate::store::Retention {
        crate::store::Retention {
            keep,
            keep_decided_for: self.keep_decided_for,
        }
    }
}
