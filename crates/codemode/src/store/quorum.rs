//! Four eyes: the approvals of a call that needs several people, counted by the store in the transaction that
//! would resume it, one per person (as the store authenticated them) and bound to the arguments shown
//! (docs/design.md, "Four eyes").

use super::Result;
use super::rows::Waiting;
use super::sql::{Dialect, Sql, args};
use crate::model::{Decision, EntryState, ToolLogEntry, Vote, args_digest};

/// Where an approval left a call that needs several people, when it did not reach the quorum.
#[derive(Debug, Clone, PartialEq)]
pub enum Tally {
    /// Counted: the call waits for more people (`have` of `need`).
    Waiting { have: u32, need: u32 },
    /// This person approved the call already; their second approval counts for nothing.
    Again { person: String, need: u32 },
    /// An approval with edited arguments: the others approved what was shown, not the edit.
    Edited { need: u32 },
}

/// What counting an approval came to.
pub(super) enum Counted {
    /// The call needs one person: the approval decides it, as always.
    Alone,
    /// The quorum is reached with this approval: the call runs, its decision listing every approval.
    Reached(Vec<Vote>),
    /// Not reached, or not counted.
    Short(Tally),
}

/// Counts `decision` (as `attributed`, the text the store records) toward the quorum of `waiting`, the first
/// call waiting in run `id`, inside the caller's write transaction. On PostgreSQL the approval's person is written by the
/// server (migration 15), so a front end cannot count as someone else.
pub(super) fn count_approval(
    tx: &dyn Sql,
    id: &str,
    decision: &Decision,
    attributed: &str,
    waiting: Option<&Waiting>,
) -> Result<Counted> {
    let Some(Waiting {
        seq,
        args: call_args,
        quorum: Some(need),
    }) = waiting
    else {
        return Ok(Counted::Alone);
    };
    let (seq, need) = (*seq as i64, *need);
    let need = u32::try_from(need).unwrap_or(u32::MAX);
    if need <= 1 {
        return Ok(Counted::Alone);
    }
    if decision.args.is_some() {
        return Ok(Counted::Short(Tally::Edited { need }));
    }
    let digest = args_digest(call_args.as_ref());
    // On SQLite the person is the operating-system user `attributed` names; PostgreSQL's trigger overwrites it.
    let person = serde_json::from_str::<Decision>(attributed)
        .ok()
        .and_then(|d| d.person)
        .unwrap_or_else(|| decision.by.to_string());
    let counted = tx.execute(
        "INSERT INTO cm_approvals (execution_id, seq, digest, person, decision, at)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6)
         ON CONFLICT (execution_id, seq, digest, person) DO NOTHING",
        args![id, seq, digest, person, attributed, decision.at],
    )?;
    if counted == 0 {
        let person = match tx.dialect() {
            Dialect::Sqlite => person,
            Dialect::Postgres => {
                tx.query_row("SELECT CAST(session_user AS TEXT)", args![], |row| {
                    row.get::<String>(0)
                })?
            }
        };
        return Ok(Counted::Short(Tally::Again { person, need }));
    }
    let votes = votes(tx, id, seq, &digest)?;
    let have = u32::try_from(votes.len()).unwrap_or(u32::MAX);
    if have < need {
        // The run changed for everyone who shows it: its card now says who approved.
        tx.execute(
            "UPDATE cm_executions SET updated_at = ?2 WHERE id = ?1 AND status = 'paused'",
            args![id, decision.at],
        )?;
        return Ok(Counted::Short(Tally::Waiting { have, need }));
    }
    Ok(Counted::Reached(votes))
}

/// The approvals given to call `seq` of run `id` with the arguments whose digest is `digest`, in order.
fn votes(tx: &dyn Sql, id: &str, seq: i64, digest: &str) -> Result<Vec<Vote>> {
    let decisions = tx.query_map(
        "SELECT decision FROM cm_approvals WHERE execution_id = ?1 AND seq = ?2 AND digest = ?3
         ORDER BY at, person",
        args![id, seq, digest],
        |row| row.get::<String>(0),
    )?;
    Ok(decisions
        .iter()
        .filter_map(|text| serde_json::from_str::<Decision>(text).ok())
        .map(|d| Vote::of(&d))
        .collect())
}

/// Fills in, for each waiting entry of run `id` that needs several people, the approvals it has so far.
pub(super) fn fill_approvals(tx: &dyn Sql, id: &str, log: &mut [ToolLogEntry]) -> Result<()> {
    for entry in log
        .iter_mut()
        .filter(|e| e.state == EntryState::Pending && e.quorum.is_some())
    {
        let digest = args_digest(entry.args.as_ref());
        entry.approvals = votes(tx, id, entry.seq as i64, &digest)?;
    }
    Ok(())
}

/// [`fill_approvals`] for one waiting call.
pub(super) fn approvals_of(tx: &dyn Sql, id: &str, seq: u64, digest: &str) -> Result<Vec<Vote>> {
    votes(tx, id, seq as i64, digest)
}

/// `attributed` (a decision's recorded text) listing `votes` as the approvals that ran the call.
pub(super) fn with_votes(attributed: &str, votes: Vec<Vote>) -> String {
    match serde_json::from_str::<Decision>(attributed) {
        Ok(mut decision) => {
            decision.approvals = votes;
            serde_json::to_string(&decision).unwrap_or_else(|_| attributed.to_owned())
        }
        Err(_) => attributed.to_owned(),
    }
}
