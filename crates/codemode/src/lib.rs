//! Codemode: a durable Code Mode runtime. Model-written JavaScript runs in a sandboxed worker process; every
//! connector call is recorded; approval-gated calls pause the run, and approval resumes it by deterministic
//! replay.

pub mod allowing;
pub mod clock;
pub mod codec;
pub mod connector;
pub mod discovery;
pub mod executor;
pub mod insights;
pub mod lineage;
pub mod model;
pub mod names;
pub mod normalize;
pub mod owner;
pub mod protocol;
pub mod refusal;
pub mod rerun;
pub mod rules;
pub mod runtime;
pub mod sandbox;
pub mod schema;
pub mod sources;
mod store;
mod transitions;
pub mod typegen;

pub use allowing::{AllowIntent, Approved, ArgumentMatch};
pub use clock::{format_moment, parse_moment};
pub use connector::{BoxFuture, CallContext, Connector, GateChange, Replay, ToolDescriptor};
pub use executor::{
    CallAnswer, ConnectorCall, Executor, ExecutorOptions, PassEnd, PassHost, PassOutcome,
    PassRequest, SnippetAnswer, StepAnswer,
};
pub use insights::{ApprovedShape, Insights};
pub use lineage::{Departure, ForkedFrom};
pub use model::{
    Actor, Answerer, CallRef, Decision, DecisionKind, EntryState, ExecutionPage, ExecutionQuery,
    ExecutionState, ExecutionStatus, ExecutionSummary, Outcome, PendingAction, Preview,
    RollbackReport, RunHost, SaveSnippet, Shown, Snippet, ToolLogEntry, Vote, WaitingCall,
    args_digest, quorum_line,
};
pub use refusal::{Operation, Refusal, RefusalKind};
pub use rules::{Effect, Rule, RuleError, Verdict};
pub use runtime::{
    Clock, ConnectorListing, RuleListing, RuleOrigin, Runtime, RuntimeError, RuntimeOptions,
    SystemClock, TransformResult,
};
pub use store::{
    Device, HostIdentity, RecentCallRow, Redeemed, Retention, StoreFault, StoreLocation, StoreRole,
    grant_sql,
};
// The store itself and the outcomes of its transitions: for this crate's integration tests, which drive the
// store directly to set up races and crashes a runtime cannot produce on demand.
#[doc(hidden)]
pub use store::{
    Adoption, CallPlan, Deletion, Recover, RollbackClaim, SCHEMA_VERSION, Store, ToldStep,
};

/// The connector name under which `codemode.step` entries are recorded.
pub const STEP_CONNECTOR: &str = "__step";
