//! The approval queue as a person reviews it: a light row per pending call for the list (no run's code or log
//! is read), and the whole card — the program that makes the call and the calls before it — for the one call
//! the person looks at (docs/performance.md, "Lean reads").

use codemode::{EntryState, ExecutionState, PendingAction, WaitingCall};
use serde::Serialize;
use std::time::Duration;

/// One pending call as the queue lists it.
#[derive(Debug, Clone, PartialEq, Serialize, ts_rs::TS)]
#[serde(rename_all = "camelCase")]
pub struct QueuedCall {
    pub action: PendingAction,
    /// The call's arguments as every surface shows them ([`crate::display::argument_rows`]).
    pub arguments: Vec<crate::ArgumentRow>,
    /// The run's source (who started it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<String>,
    /// When the run started (epoch ms).
    pub created_at: i64,
    /// When the run last changed (epoch ms): a front end re-reads the run's [`ApprovalCard`] only when this
    /// (or the call) changed.
    pub updated_at: i64,
    /// When the call stops waiting if nobody decides (epoch ms): its `decideWithin` deadline, or the run's
    /// paused TTL, whichever is first.
    pub expires_at: i64,
    /// For a call that needs several people: `1 of 2 — approved by alice via console` ([`codemode::quorum_line`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub quorum: Option<String>,
}

/// One pending call and the run it belongs to, whole.
#[derive(Debug, Clone, PartialEq, Serialize, ts_rs::TS)]
#[serde(rename_all = "camelCase")]
pub struct ApprovalCard {
    pub action: PendingAction,
    /// The call's arguments as every surface shows them ([`crate::display::argument_rows`]): the window
    /// shows these rows rather than building its own text.
    pub arguments: Vec<crate::ArgumentRow>,
    /// The paused run: its code and its whole log (the calls before `action.seq` are what approval replays).
    pub execution: ExecutionState,
    /// When the call stops waiting if nobody decides (epoch ms): its `decideWithin` deadline, or the run's
    /// paused TTL, whichever is first.
    pub expires_at: i64,
    /// For a call that needs several people: `1 of 2 — approved by alice via console` ([`codemode::quorum_line`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub quorum: Option<String>,
}

/// When the call stops waiting for want of a decision: its `decideWithin` deadline, or the run's paused
/// TTL, whichever comes first.
fn expires_at(updated_at: i64, ttl: Duration, action: &PendingAction) -> i64 {
    let by_ttl = updated_at.saturating_add(ttl.as_millis().min(i64::MAX as u128) as i64);
    action.decide_by.map_or(by_ttl, |by| by.min(by_ttl))
}

/// The queue's rows, newest run first, calls in order.
pub(crate) fn queue(waiting: Vec<WaitingCall>, ttl: Duration) -> Vec<QueuedCall> {
    waiting
        .into_iter()
        .map(|w| QueuedCall {
            expires_at: expires_at(w.updated_at, ttl, &w.action),
            quorum: w.action.quorum_line(),
            arguments: crate::display::argument_rows(
                w.action.args.as_ref(),
                w.action.canonical.as_ref(),
            ),
            action: w.action,
            source: w.source,
            created_at: w.created_at,
            updated_at: w.updated_at,
        })
        .collect()
}

/// The card of call `seq` of a paused run, if that call waits.
pub(crate) fn card(execution: ExecutionState, seq: u64, ttl: Duration) -> Option<ApprovalCard> {
    let entry = execution
        .log
        .iter()
        .find(|e| e.seq == seq && e.state == EntryState::Pending)?;
    let action = PendingAction::of(&execution.id, entry);
    Some(ApprovalCard {
        expires_at: expires_at(execution.updated_at, ttl, &action),
        quorum: action.quorum_line(),
        arguments: crate::display::argument_rows(action.args.as_ref(), action.canonical.as_ref()),
        action,
        execution,
    })
}
