//! How runs end their life: paused runs expire, old runs are pruned by count and age, a person deletes one.

use super::*;

impl Runtime {
    /// Reclaims runs paused (or left running) longer than `max_age` (docs/semantics.md §6): each is disposed
    /// with `rejected`, as the reference does. Returns their ids.
    pub async fn expire_paused(&self, max_age: Duration) -> Result<Vec<String>, RuntimeError> {
        let now = self.inner.now();
        let cutoff = now.saturating_sub(max_age.as_millis().min(i64::MAX as u128) as i64);
        let expired = self.inner.store.expire(cutoff, now)?;
        for id in &expired {
            self.dispose(id, ExecutionStatus::Rejected).await;
        }
        Ok(expired)
    }

    /// Deletes terminal executions beyond the newest `keep`, never a run holding a record younger than
    /// `keep_decided_for` (docs/design.md, "Retention"); returns how many.
    pub async fn prune_executions(&self, keep: usize) -> Result<usize, RuntimeError> {
        let pruned = self.inner.store.prune(self.inner.options.retention(keep))?;
        self.forget(&pruned).await;
        Ok(pruned.len())
    }

    /// Deletes one execution; a paused one has its execution resources disposed (`rejected`). A run whose
    /// pass or rollback a live process holds is refused ([`Refusal::Running`], [`Refusal::RollingBack`]) and keeps its audit row.
    pub async fn delete_execution(&self, id: &str) -> Result<(), RuntimeError> {
        let status = match self.inner.store.delete(id)? {
            Deletion::Deleted(status) => status,
            Deletion::Missing => {
                return Err(no_run(id, Operation::Delete));
            }
            Deletion::Running(pid) => {
                return Err(Refusal::Running {
                    run: id.to_owned(),
                    pid,
                    op: Operation::Delete,
                }
                .into());
            }
            Deletion::RollingBack(pid) => {
                return Err(Refusal::RollingBack {
                    run: id.to_owned(),
                    pid,
                    op: Operation::Delete,
                }
                .into());
            }
        };
        if !status.is_terminal() {
            self.dispose(id, ExecutionStatus::Rejected).await;
        }
        self.forget(&[id.to_owned()]).await;
        Ok(())
    }

    pub(super) async fn forget(&self, ids: &[String]) {
        for id in ids {
            for registered in &self.inner.connectors {
                registered.connector.forget_execution(id).await;
            }
        }
    }
}
