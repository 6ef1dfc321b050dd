//! The approval queue as a person reviews it: one card per pending call, with the program that makes it and
//! the calls before it, all read in one query.

use codemode::{EntryState, ExecutionState, PendingAction};
use serde::Serialize;
use std::time::Duration;

/// One pending call and the run it belongs to.
#[derive(Debug, Clone, PartialEq, Serialize, ts_rs::TS)]
#[serde(rename_all = "camelCase")]
pub struct ApprovalCard {
    pub action: PendingAction,
    /// The call's arguments as every surface shows them ([`crate::display::argument_rows`]): the window
    /// shows these rows rather than building its own text.
    pub arguments: Vec<crate::ArgumentRow>,
    /// The paused run: its code and its whole log (the calls before `action.seq` are what approval replays).
    pub execution: ExecutionState,
    /// When the run will be expired (epoch ms), given the configured paused TTL.
    pub expires_at: i64,
}

/// A card for every pending call of the paused runs (newest run first, calls in order).
pub(crate) fn cards(paused: Vec<ExecutionState>, ttl: Duration) -> Vec<ApprovalCard> {
    let ttl = ttl.as_millis().min(i64::MAX as u128) as i64;
    let mut cards = Vec::new();
    for execution in paused {
        let actions: Vec<PendingAction> = execution
            .log
            .iter()
            .filter(|e| e.state == EntryState::Pending)
            .map(|e| PendingAction::of(&execution.id, e))
            .collect();
        for action in actions {
            cards.push(ApprovalCard {
                expires_at: execution.updated_at.saturating_add(ttl),
                arguments: crate::display::argument_rows(
                    action.args.as_ref(),
                    action.canonical.as_ref(),
                ),
                action,
                execution: execution.clone(),
            });
        }
    }
    cards
}
