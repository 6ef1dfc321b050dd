//! Rolling a run back (docs/semantics.md §5): the claim, what to revert, each revert, the end of the claim.

use super::rows::{log_of, run_row};
use super::runs::{of_runtime, touch};
use super::sql::args;
use super::{Store, StoreError};
use crate::model::{EntryState, ToolLogEntry};
use crate::transitions::{self, RevertFacts, RollbackStep};

/// The result of trying to claim a run for rollback.
#[derive(Debug, Clone, PartialEq)]
pub enum RollbackClaim {
    Claimed,
    /// A live process is running a pass of it.
    Running(u32),
    /// A live process is already rolling it back.
    RollingBack(u32),
    Missing,
}

impl Store {
    /// What a rollback compensates, newest first ([`transitions::revertible`]): the applied calls
    /// (docs/semantics.md §5) and the ones that may have been applied before a crash; never a step, a call
    /// that failed, or one never reached.
    pub fn actions_to_revert(&self, id: &str) -> Result<Vec<ToolLogEntry>, StoreError> {
        self.with(|connection| {
            let reverted: std::collections::HashSet<u64> = connection
                .query_map(
                    &format!(
                        "SELECT seq FROM cm_log WHERE execution_id = ?1 AND reverted_at IS NOT NULL AND {}",
                        of_runtime("?2")
                    ),
                    args![id, self.runtime],
                    |row| row.get(0),
                )?
                .into_iter()
                .collect();
            let mut log = log_of(connection, &self.runtime, id)?;
            log.retain(|entry| {
                transitions::revertible(RevertFacts {
                    state: entry.state,
                    interrupted: entry.interrupted,
                    reverted: reverted.contains(&entry.seq),
                    is_step: entry.connector == crate::STEP_CONNECTOR,
                    inherited: entry.inherited,
                })
            });
            log.reverse();
            Ok(log)
        })
    }

    /// Marks one call reverted and, in the same transaction, the run `rolled_back` (docs/semantics.md §5: a
    /// rollback that reverted something): a rollback killed after its last revert but before it finished
    /// still leaves the run rolled back, and a retry reverts whatever the killed one had not reached. The
    /// update is conditional on the state read, which [`transitions::revertible`] accepted.
    pub fn mark_reverted(&self, id: &str, seq: u64, now: i64) -> Result<(), StoreError> {
        self.write(|tx| {
            let facts = tx.query_row_opt(
                &format!(
                    "SELECT state, interrupted, reverted_at IS NOT NULL, connector, inherited FROM cm_log
                     WHERE execution_id = ?1 AND seq = ?2 AND {}",
                    of_runtime("?3")
                ),
                args![id, seq as i64, self.runtime],
                |row| {
                    let state: String = row.get(0)?;
                    Ok(RevertFacts {
                        state: EntryState::parse(&state).unwrap_or(EntryState::Error),
                        interrupted: row.get(1)?,
                        reverted: row.get(2)?,
                        is_step: row.get::<String>(3)? == crate::STEP_CONNECTOR,
                        inherited: row.get(4)?,
                    })
                },
            )?;
            let Some(facts) = facts.filter(|facts| transitions::revertible(*facts)) else {
                return touch(tx, &self.runtime, id, now);
            };
            let reverted = tx.execute(
                "UPDATE cm_log SET state = 'reverted', reverted_at = ?3
                 WHERE execution_id = ?1 AND seq = ?2 AND state = ?4 AND reverted_at IS NULL",
                args![id, seq as i64, now, facts.state.as_str()],
            )?;
            if reverted == 1 {
                tx.execute(
                    "UPDATE cm_executions SET status = 'rolled_back'
                     WHERE id = ?1 AND runtime = ?5 AND rollback_pid IS NOT DISTINCT FROM ?2
                       AND rollback_started IS NOT DISTINCT FROM ?3 AND rollback_host IS NOT DISTINCT FROM ?4",
                    args![id, self.owner.pid, self.owner.started as i64, self.host_id(), self.runtime],
                )?;
            }
            touch(tx, &self.runtime, id, now)
        })
    }

    /// Claims a run for rollback ([`transitions::rollback_step`]): refused while a live process runs a pass
    /// of it or rolls it back; the claim of a process that died mid-rollback is taken over (its reverts are
    /// retried: connectors make them idempotent).
    pub fn claim_rollback(&self, id: &str, now: i64) -> Result<RollbackClaim, StoreError> {
        self.write(|tx| {
            let Some(run) = run_row(tx, &self.runtime, id)? else {
                return Ok(RollbackClaim::Missing);
            };
            match transitions::rollback_step(run.status, self.holders(&run)) {
                RollbackStep::Running(pid) => return Ok(RollbackClaim::Running(pid)),
                RollbackStep::RollingBack(pid) => return Ok(RollbackClaim::RollingBack(pid)),
                RollbackStep::Claim => {}
            }
            let holder = &run.rollback;
            let claimed = tx.execute(
                "UPDATE cm_executions SET rollback_pid = ?5, rollback_started = ?6, rollback_host = ?8, updated_at = ?7
                 WHERE id = ?1 AND status = ?2 AND rollback_pid IS NOT DISTINCT FROM ?3
                   AND rollback_started IS NOT DISTINCT FROM ?4 AND rollback_host IS NOT DISTINCT FROM ?9",
                args![
                    id,
                    run.status.as_str(),
                    holder.pid,
                    holder.started,
                    self.owner.pid,
                    self.owner.started as i64,
                    now,
                    self.host_id(),
                    holder.host
                ],
            )?;
            Ok(if claimed == 1 {
                RollbackClaim::Claimed
            } else {
                RollbackClaim::RollingBack(holder.pid.unwrap_or(0))
            })
        })
    }

    /// Ends this process's rollback claim; with `rolled_back`, the run becomes `rolled_back` (whatever it
    /// was: docs/semantics.md §5) in the same transaction.
    pub fn finish_rollback(&self, id: &str, rolled_back: bool, now: i64) -> Result<(), StoreError> {
        let status = if rolled_back {
            "'rolled_back'"
        } else {
            "status"
        };
        self.write(|tx| {
            tx.execute(
                &format!(
                    "UPDATE cm_executions SET status = {status}, rollback_pid = NULL, rollback_started = NULL,
                         rollback_host = NULL, updated_at = ?2
                     WHERE id = ?1 AND runtime = ?6 AND rollback_pid IS NOT DISTINCT FROM ?3
                       AND rollback_started IS NOT DISTINCT FROM ?4 AND rollback_host IS NOT DISTINCT FROM ?5"
                ),
                args![id, now, self.owner.pid, self.owner.started as i64, self.host_id(), self.runtime],
            )?;
            Ok(())
        })
    }
}
