//! What the worker knows of the pass under way, shared by every native function: its seqs, its replay log,
//! the steps it ran without asking, and whether it was stopped.

use super::Channel;
use crate::protocol::{OpenStep, ReplayEntry};
use boa_engine::{JsError, error::PanicError};
use boa_gc::{Finalize, Trace};
use std::cell::{Cell, RefCell};
use std::collections::HashMap;
use std::rc::Rc;

/// Host-side state of one pass, shared by every native function (and by nested snippet contexts).
pub(super) struct PassState {
    pub(super) channel: Rc<Channel>,
    pub(super) connectors: RefCell<Vec<String>>,
    next_seq: Cell<u64>,
    pub(super) replay: RefCell<HashMap<u64, ReplayEntry>>,
    /// Seqs from here on have nothing recorded (when the host said so).
    pub(super) log_end: Cell<Option<u64>>,
    /// Steps run without asking the host and not recorded yet, by seq: their names, and whether the host has
    /// been told they started (a call made inside one tells it; then the record is a plain one).
    pub(super) fresh_steps: RefCell<HashMap<u64, (String, bool)>>,
    pub(super) stopped: Cell<bool>,
    pub(super) replayed: Cell<u64>,
}

impl PassState {
    pub(super) fn new(channel: &Rc<Channel>) -> Rc<Self> {
        Rc::new(PassState {
            channel: channel.clone(),
            connectors: RefCell::new(Vec::new()),
            next_seq: Cell::new(0),
            replay: RefCell::new(HashMap::new()),
            log_end: Cell::new(None),
            fresh_steps: RefCell::new(HashMap::new()),
            stopped: Cell::new(false),
            replayed: Cell::new(0),
        })
    }

    pub(super) fn take_seq(&self) -> u64 {
        let seq = self.next_seq.get();
        self.next_seq.set(seq + 1);
        seq
    }

    /// The steps started without asking that the host has not heard of yet (still running, or their closure
    /// threw), now marked as told. Every call and the end of the pass carry them, so whatever the host records
    /// next shows them executing, as decided steps would be (docs/semantics.md §3.6).
    pub(super) fn announce_steps(&self) -> Vec<OpenStep> {
        let mut steps: Vec<OpenStep> = self
            .fresh_steps
            .borrow_mut()
            .iter_mut()
            .filter(|(_, (_, told))| !*told)
            .map(|(seq, (name, told))| {
                *told = true;
                OpenStep {
                    seq: *seq,
                    name: name.clone(),
                }
            })
            .collect();
        steps.sort_by_key(|step| step.seq);
        steps
    }

    /// Ends the pass: from here on, nothing in the program may run.
    pub(super) fn stop(&self) -> JsError {
        self.stopped.set(true);
        PanicError::new("__CODEMODE_PAUSE__").into()
    }
}

#[derive(Clone, Trace, Finalize)]
#[boa_gc(unsafe_empty_trace)]
pub(super) struct Shared(pub(super) Rc<PassState>);
