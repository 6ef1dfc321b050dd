//! What a pass is and what it asks of its host: the request, the host's answers to each kind of request,
//! and how the pass ended.

use crate::protocol::{OpenStep, ReplayEntry};
use serde_json::value::RawValue;

/// One pass to run.
#[derive(Debug, Clone, Default)]
pub struct PassRequest {
    pub code: String,
    /// Connector namespaces to install, in the order the globals hint lists them.
    pub connectors: Vec<String>,
    /// Recorded results the worker may serve without asking the host.
    pub log: Vec<ReplayEntry>,
    /// One past the highest recorded seq, if the host knows it: steps from there on are new, and the worker
    /// runs them without asking first ([`PassHost::step_fresh`]). `None` asks about every step.
    pub log_end: Option<u64>,
}

/// A connector call that reached the host.
#[derive(Debug)]
pub struct ConnectorCall {
    pub seq: u64,
    pub connector: String,
    pub method: String,
    /// Arguments in the storage codec; `None` when the program passed none (or `undefined`).
    pub args: Option<Box<RawValue>>,
    /// Why the arguments could not be serialised, if they could not.
    pub args_error: Option<String>,
}

/// The host's answer to a connector call.
#[derive(Debug)]
pub enum CallAnswer {
    /// The call's result (storage codec); `None` is `undefined`.
    Value(Option<Box<RawValue>>),
    /// The call failed; the program sees `Error(message)` and may catch it.
    Error(String),
    /// End the pass here (the run paused, or failed durably).
    Stop,
}

/// The host's answer to `codemode.step`'s decision request.
#[derive(Debug)]
pub enum StepAnswer {
    Execute,
    Replay(Option<Box<RawValue>>),
    Stop,
}

/// The host's answer to `codemode.run(name)`.
#[derive(Debug)]
pub enum SnippetAnswer {
    /// Run this stored code nested in the pass.
    Code(String),
    /// Resolve `codemode.run` with this value without running anything (e.g. `{error: …}`).
    Value(Box<RawValue>),
    Stop,
}

/// What the host provides to a running pass. Each method is called on the thread running the pass, in the
/// order the program makes its requests.
pub trait PassHost {
    /// Called once the worker has the program, before any of its requests is read, so that the host's own
    /// start-up (recording a new run) can overlap the worker's parse and compile.
    fn started(&mut self) {}
    fn call(&mut self, call: ConnectorCall) -> CallAnswer;
    fn step_decide(&mut self, seq: u64, name: &str) -> StepAnswer;
    /// Records a step's value (`Err` when it could not be serialised). `false` ends the pass.
    fn step_record(&mut self, seq: u64, value: Result<Option<Box<RawValue>>, String>) -> bool;
    /// Records a step at or beyond [`PassRequest::log_end`], which the worker ran without asking: its
    /// decision and its value in one. `false` ends the pass.
    fn step_fresh(
        &mut self,
        seq: u64,
        name: &str,
        value: Result<Option<Box<RawValue>>, String>,
    ) -> bool {
        matches!(self.step_decide(seq, name), StepAnswer::Execute) && self.step_record(seq, value)
    }
    /// A step at or beyond [`PassRequest::log_end`] whose value the worker told without waiting
    /// (`stepValue`): the host may hold it to record with others, as long as it is recorded before
    /// [`PassHost::flush_steps`] returns. `false` stops the program at its next request.
    fn step_told(&mut self, seq: u64, name: &str, value: Option<Box<RawValue>>) -> bool {
        self.step_fresh(seq, name, Ok(value))
    }
    /// Records the steps told and not yet recorded; called before the host answers any other request or
    /// ends the pass, and whenever the worker has nothing more to say for the moment. `false` stops the
    /// program at its next request (or ends the pass as stopped).
    fn flush_steps(&mut self) -> bool {
        true
    }
    /// Records everything held or sent and not yet known to be recorded — the steps told, and whatever else
    /// the host sends ahead (a call's outcome) — before the host answers anything but a call (which settles
    /// what concerns it itself), ends the pass, or sees it die. `false` stops the program at its next
    /// request (or ends the pass as stopped).
    fn settle(&mut self) -> bool {
        self.flush_steps()
    }
    /// Whether steps told are waiting to be recorded.
    fn steps_unrecorded(&self) -> bool {
        false
    }
    /// Steps the worker started without asking and that are still running when the program makes a call
    /// from inside them: they are recorded as decided before the call. `false` ends the pass.
    fn steps_opened(&mut self, steps: &[OpenStep]) -> bool {
        steps
            .iter()
            .all(|step| matches!(self.step_decide(step.seq, &step.name), StepAnswer::Execute))
    }
    fn search(&mut self, query: &str) -> Result<Box<RawValue>, String>;
    fn describe(&mut self, target: &str) -> Result<Box<RawValue>, String>;
    fn snippet(&mut self, name: &str) -> SnippetAnswer;
    /// A console line, as it is printed.
    fn console(&mut self, _line: &str) {}
}

/// How a pass ended.
#[derive(Debug)]
pub enum PassEnd {
    /// The program returned. `result` is `None` for `undefined`; `result_error` says why the value could
    /// not be serialised, if it could not.
    Completed {
        result: Option<Box<RawValue>>,
        result_error: Option<String>,
    },
    /// The program failed; `error` is the full model-facing text (`Code execution failed: …`).
    Failed { error: String },
    /// The host stopped the pass (pause or durable failure).
    Stopped,
}

/// A finished pass.
#[derive(Debug)]
pub struct PassOutcome {
    pub end: PassEnd,
    /// Console lines, with the reference's prefixes.
    pub logs: Vec<String>,
    /// Calls and steps answered from the replay log inside the worker.
    pub replayed: u64,
    /// Time inside the worker, as it measured it (zero when it died).
    pub worker_micros: u64,
}
