//! Rerunning a run from a step: what links a rerun to the run it came from, which of the old run's calls it
//! may be served, and what a call before the step does in the rerun — as plain functions over plain data
//! (docs/history.md, "Rerun from a step").

use crate::lineage::Departure;
use crate::model::{EntryState, ToolLogEntry};
use serde_json::Value;

/// Whether a rerun of a run with this log may begin at `from`: every call before it must have an outcome
/// on record that can be served — a result, or the error its connector answered with. A call that was
/// rejected, rolled back, never reached or is still waiting cannot be served: the rerun must begin at it or
/// before. `run` names the old run in the message.
pub fn check_from(run: &str, log: &[ToolLogEntry], from: u64) -> Result<(), String> {
    let end = log.last().map_or(0, |entry| entry.seq + 1);
    if from > end {
        return Err(format!(
            "Execution \"{run}\" has {end} recorded call{} (0 to {}): a rerun can begin at {end} at the latest.",
            if end == 1 { "" } else { "s" },
            end.saturating_sub(1)
        ));
    }
    for entry in log.iter().take_while(|entry| entry.seq < from) {
        if served(entry).is_none() {
            return Err(format!(
                "Call {} ({}.{}) of execution \"{run}\" {}: its outcome cannot be served. Rerun from {} or earlier.",
                entry.seq,
                entry.connector,
                entry.method,
                unservable_state(entry),
                entry.seq
            ));
        }
    }
    Ok(())
}

fn unservable_state(entry: &ToolLogEntry) -> &'static str {
    match entry.state {
        EntryState::Pending => "is waiting for a decision",
        EntryState::Executing => "never finished",
        EntryState::Reverted if entry.decision.is_some() => "was rejected or rolled back",
        EntryState::Reverted => "was rolled back",
        EntryState::Error if entry.divergence.is_some() => "is where that run diverged",
        EntryState::Error => "has no recorded outcome",
        EntryState::Applied => "was re-executed on every pass and kept no result",
    }
}

/// What the old run recorded for a call, as a rerun is served it: its result, or its connector's error.
#[derive(Debug, Clone, PartialEq)]
pub enum Served {
    Result(Option<Value>),
    Error(String),
    /// A call its connector re-executes on every pass (`replay: reexecute`): it keeps no result, so the
    /// rerun runs it again, as every replay does.
    Reexecuted,
}

fn served(entry: &ToolLogEntry) -> Option<Served> {
    outcome(
        entry.state,
        entry.ephemeral,
        &entry.result,
        &entry.error,
        entry.divergence.is_some(),
    )
}

/// The outcome on record of a call in this state, when it has one a rerun can be served.
fn outcome(
    state: EntryState,
    ephemeral: bool,
    result: &Option<Value>,
    error: &Option<String>,
    diverged: bool,
) -> Option<Served> {
    match state {
        EntryState::Applied if ephemeral => Some(Served::Reexecuted),
        EntryState::Applied => Some(Served::Result(result.clone())),
        EntryState::Error if !diverged => error.clone().map(Served::Error),
        _ => None,
    }
}

/// The old run's call at some seq, as the store reads it for a rerun.
#[derive(Debug, Clone, PartialEq)]
pub struct OldCall {
    pub connector: String,
    pub method: String,
    pub args: Option<Value>,
    pub state: EntryState,
    pub ephemeral: bool,
    pub result: Option<Value>,
    pub error: Option<String>,
    pub divergence: bool,
}

/// What a call the rerun's program makes before its step does.
#[derive(Debug, Clone, PartialEq)]
pub enum Inheritance {
    /// The same call as the old run's: answered with the old run's outcome.
    Serve(Served),
    /// Another call, or the same with other arguments: the rerun leaves the old run's calls here and runs
    /// fresh from this call on (under today's rules).
    Depart(Departure),
    /// The old run no longer holds an outcome for this call (deleted, or rolled back since the rerun
    /// began): the rerun fails with this message rather than run a call it promised not to.
    Lost(String),
}

/// What the rerun's call at `seq` (`connector.method` with `args`) does, given the old run's call there.
pub fn inherit(
    old_run: &str,
    seq: u64,
    old: Option<&OldCall>,
    connector: &str,
    method: &str,
    args: Option<&Value>,
) -> Inheritance {
    let Some(old) = old else {
        return Inheritance::Lost(format!(
            "Execution \"{old_run}\", which this run reruns, no longer holds call {seq}: its outcome cannot be served. Rerun from {seq} or earlier."
        ));
    };
    if old.connector != connector || old.method != method {
        return Inheritance::Depart(Departure {
            seq,
            detail: format!(
                "expected {}.{}, got {connector}.{method}",
                old.connector, old.method
            ),
        });
    }
    if old.args.as_ref() != args {
        return Inheritance::Depart(Departure {
            seq,
            detail: format!("{connector}.{method} was called with other arguments"),
        });
    }
    match outcome(
        old.state,
        old.ephemeral,
        &old.result,
        &old.error,
        old.divergence,
    ) {
        Some(served) => Inheritance::Serve(served),
        None => Inheritance::Lost(format!(
            "Call {seq} ({connector}.{method}) of execution \"{old_run}\" {} since this rerun began: its outcome cannot be served. Rerun from {seq} or earlier.",
            match old.state {
                EntryState::Reverted => "was rolled back",
                _ => "changed",
            }
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn entry(seq: u64, state: EntryState) -> ToolLogEntry {
        let old = OldCall {
            connector: "ledger".into(),
            method: "add".into(),
            args: Some(json!({"n": seq})),
            state,
            ephemeral: false,
            result: Some(json!(seq)),
            error: (state == EntryState::Error).then(|| "boom".to_owned()),
            divergence: false,
        };
        ToolLogEntry {
            seq,
            connector: old.connector,
            method: old.method,
            args: old.args,
            canonical: None,
            result: old.result,
            requires_approval: false,
            ephemeral: false,
            state,
            decided_by: None,
            decided_at: None,
            interrupted: false,
            divergence: None,
            error: old.error,
            decision: None,
            asked_by: None,
            confirm_in_app: false,
            ask_in_client: false,
            decide_within: None,
            decide_by: None,
            quorum: None,
            approvals: Vec::new(),
            asked_at: None,
            started_at: None,
            finished_at: None,
            inherited: false,
        }
    }

    #[test]
    fn a_rerun_begins_only_where_every_call_before_it_can_be_served() {
        let log = vec![
            entry(0, EntryState::Applied),
            entry(1, EntryState::Error),
            entry(2, EntryState::Reverted),
            entry(3, EntryState::Pending),
        ];
        for from in 0..=2 {
            assert_eq!(check_from("old", &log, from), Ok(()), "from {from}");
        }
        let refused = check_from("old", &log, 3).unwrap_err();
        assert!(refused.starts_with("Call 2 (ledger.add) of execution \"old\" was rolled back"));
        assert!(refused.ends_with("Rerun from 2 or earlier."), "{refused}");
        assert_eq!(
            check_from("old", &log, 5).unwrap_err(),
            "Execution \"old\" has 4 recorded calls (0 to 3): a rerun can begin at 4 at the latest."
        );
        assert_eq!(check_from("empty", &[], 0), Ok(()));
    }

    #[test]
    fn the_same_call_is_served_and_any_other_departs() {
        let old = OldCall {
            connector: "ledger".into(),
            method: "add".into(),
            args: Some(json!({"n": 1})),
            state: EntryState::Applied,
            ephemeral: false,
            result: Some(json!(41)),
            error: None,
            divergence: false,
        };
        let same = inherit(
            "old",
            0,
            Some(&old),
            "ledger",
            "add",
            Some(&json!({"n": 1})),
        );
        assert_eq!(same, Inheritance::Serve(Served::Result(Some(json!(41)))));
        let other_method = inherit(
            "old",
            0,
            Some(&old),
            "ledger",
            "sub",
            Some(&json!({"n": 1})),
        );
        assert_eq!(
            other_method,
            Inheritance::Depart(Departure {
                seq: 0,
                detail: "expected ledger.add, got ledger.sub".into()
            })
        );
        let other_args = inherit(
            "old",
            0,
            Some(&old),
            "ledger",
            "add",
            Some(&json!({"n": 2})),
        );
        assert!(
            matches!(other_args, Inheritance::Depart(d) if d.detail.contains("other arguments"))
        );
        let failed = OldCall {
            state: EntryState::Error,
            error: Some("no such issue".into()),
            ..old.clone()
        };
        assert_eq!(
            inherit(
                "old",
                0,
                Some(&failed),
                "ledger",
                "add",
                Some(&json!({"n": 1}))
            ),
            Inheritance::Serve(Served::Error("no such issue".into()))
        );
        let reexecuted = OldCall {
            ephemeral: true,
            ..old.clone()
        };
        assert_eq!(
            inherit(
                "old",
                0,
                Some(&reexecuted),
                "ledger",
                "add",
                Some(&json!({"n": 1}))
            ),
            Inheritance::Serve(Served::Reexecuted)
        );
        let undone = OldCall {
            state: EntryState::Reverted,
            ..old
        };
        assert!(matches!(
            inherit("old", 0, Some(&undone), "ledger", "add", Some(&json!({"n": 1}))),
            Inheritance::Lost(m) if m.contains("was rolled back since this rerun began")
        ));
        assert!(matches!(
            inherit("old", 4, None, "ledger", "add", None),
            Inheritance::Lost(m) if m.contains("no longer holds call 4")
        ));
    }
}
