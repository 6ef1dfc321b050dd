//! Codemode: a durable Code Mode runtime. Model-written JavaScript runs in a sandboxed worker process; every
//! connector call is recorded; approval-gated calls pause the run, and approval resumes it by deterministic
//! replay.

pub mod codec;
pub mod executor;
pub mod names;
pub mod normalize;
pub mod protocol;
pub mod sandbox;

pub use executor::{
    CallAnswer, ConnectorCall, Executor, ExecutorOptions, PassEnd, PassHost, PassOutcome,
    PassRequest, SnippetAnswer, StepAnswer,
};

/// The connector name under which `codemode.step` entries are recorded.
pub const STEP_CONNECTOR: &str = "__step";
