//! The worker side of a pass: a fresh boa context per pass whose connector namespaces and `codemode` SDK talk
//! to the host over the pipe protocol, with recorded results served locally.
//!
//! Everything that decides how a pass ends lives in host-side state, never in the JS promise: boa drops engine
//! errors raised after an `await`, so a stop (pause or durable failure) is a flag checked first, enforced by an
//! uncatchable error at the call site so that no program code runs past it.

mod channel;
mod evaluation;
mod globals;
mod jobs;
mod natives;
mod pass_state;
mod values;

pub use channel::Channel;

use crate::normalize::normalize_code;
use crate::protocol::{DoneStatus, HostMessage, ReplayEntry, WorkerMessage};
use boa_engine::JsResult;
use evaluation::{Evaluated, evaluate};
use globals::{Sandbox, build_sandbox};
use pass_state::PassState;
use std::rc::Rc;
use std::time::Instant;

/// The message of a pass whose promise can no longer settle.
pub const NEVER_SETTLES: &str = "the program is waiting for a promise that can never settle";

/// How long after a pass the worker leaves the CPU to its host before it cleans up and builds the next
/// context (a few milliseconds of CPU): the host is recording the outcome and answering its caller then.
pub const TIDY_DELAY: std::time::Duration = std::time::Duration::from_millis(3);

/// Serves passes until the host closes stdin.
pub fn serve(channel: &Rc<Channel>) {
    channel.send(&WorkerMessage::Ready {
        version: crate::protocol::PROTOCOL_VERSION,
    });
    // The connectors of the last pass: the next one almost always has the same, so they are installed while
    // the worker waits.
    let mut connectors_seen: Vec<String> = Vec::new();
    // The next pass's context is built while the worker waits for it, so the pass does not pay for it.
    let mut prepared = Some(prepare(channel, &connectors_seen));
    loop {
        // Anything but `run` outside a pass is a host bug; skip it rather than die mid-protocol.
        let HostMessage::Run {
            code,
            connectors,
            log,
            log_end,
        } = channel.receive()
        else {
            continue;
        };
        let ready = match prepared.take() {
            Some(ready) => ready,
            // The host came back before the clean-up: do it now.
            None => {
                release_memory();
                prepare(channel, &connectors)
            }
        };
        let done = run_pass(ready, &code, &connectors, log, log_end);
        connectors_seen = connectors;
        channel.send(&done);
        if !channel.input_within(TIDY_DELAY) {
            release_memory();
            prepared = Some(prepare(channel, &connectors_seen));
        }
    }
}

type Prepared = (Rc<PassState>, Result<Sandbox, String>);

fn prepare(channel: &Rc<Channel>, connectors: &[String]) -> Prepared {
    let state = PassState::new(channel);
    let sandbox = build_sandbox(&state, true).and_then(|mut sandbox| {
        sandbox.install_connectors(connectors)?;
        Ok(sandbox)
    });
    (state, sandbox.map_err(|e| e.to_string()))
}

/// Runs a trivial pass so that boa's one-time initialisation is paid before the first real one.
pub fn prewarm() {
    let channel = Channel::new(Box::new(std::io::empty()), Box::new(std::io::sink()));
    let _ = run_pass(
        prepare(&channel, &[]),
        "async () => [1].map((x) => x + 1)",
        &[],
        Vec::new(),
        None,
    );
    release_memory();
}

/// Garbage from one pass must not count against the next pass's memory limit.
fn release_memory() {
    boa_gc::force_collect();
    #[cfg(target_os = "linux")]
    // SAFETY: malloc_trim only returns free heap pages to the kernel.
    unsafe {
        libc::malloc_trim(0);
    }
}

/// The prepared sandbox with exactly `connectors` defined: as prepared when the list did not change, else
/// completed, or built afresh when it holds others.
fn with_connectors(
    mut sandbox: Sandbox,
    state: &Rc<PassState>,
    connectors: &[String],
) -> JsResult<Sandbox> {
    if sandbox.installed == connectors {
        return Ok(sandbox);
    }
    if !sandbox.installed.is_empty() {
        sandbox = build_sandbox(state, true)?;
    }
    sandbox.install_connectors(connectors)?;
    Ok(sandbox)
}

fn run_pass(
    prepared: Prepared,
    code: &str,
    connectors: &[String],
    log: Vec<ReplayEntry>,
    log_end: Option<u64>,
) -> WorkerMessage {
    let started = Instant::now();
    let (state, sandbox) = prepared;
    state.log_end.set(log_end);
    *state.connectors.borrow_mut() = connectors.to_vec();
    *state.replay.borrow_mut() = log.into_iter().map(|entry| (entry.seq, entry)).collect();
    let normalized = normalize_code(code);
    let sandbox = sandbox.and_then(|sandbox| {
        with_connectors(sandbox, &state, connectors).map_err(|e| e.to_string())
    });
    let outcome = match sandbox {
        Ok(mut sandbox) => evaluate(&mut sandbox, &state, &normalized),
        Err(e) => Evaluated::Failed(format!("the sandbox could not start: {e}")),
    };
    let (status, result, result_error, error) = match outcome {
        Evaluated::Completed {
            result,
            result_error,
        } => (DoneStatus::Completed, result, result_error, None),
        Evaluated::Failed(message) => (DoneStatus::Failed, None, None, Some(message)),
        Evaluated::Stopped => (DoneStatus::Stopped, None, None, None),
    };
    WorkerMessage::Done {
        status,
        result,
        result_error,
        error,
        replayed: state.replayed.get(),
        worker_micros: started.elapsed().as_micros() as u64,
        steps: state.announce_steps(),
    }
}
