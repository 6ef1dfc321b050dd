//! Undoing a run: its reversible calls reverted newest first, once, by the connectors that made them.

use super::*;

impl Runtime {
    /// Compensates the applied calls of an execution, newest first (docs/semantics.md §5): every method with
    /// a revert is reverted (approval-gated or not); missing connectors and methods without revert are
    /// skipped; a failed or timed-out revert does not stop the rest. The run becomes `rolled_back` only when
    /// at least one call was reverted. A second rollback finds nothing left to revert.
    ///
    /// The run is claimed first, so nothing is approved or recovered while it is being compensated and two
    /// rollbacks never revert the same call; a run whose pass is live in another process is refused
    /// ([`Refusal::Running`], [`Refusal::RollingBack`]).
    pub async fn rollback(&self, id: &str) -> Result<RollbackReport, RuntimeError> {
        if let Some(execution) = self.inner.store.execution_head(id)? {
            only_here(&execution, Operation::RollBack)?;
        }
        match self.inner.store.claim_rollback(id, self.inner.now())? {
            RollbackClaim::Claimed => {}
            RollbackClaim::Missing => {
                return Err(no_run(id, Operation::RollBack));
            }
            RollbackClaim::Running(pid) => {
                return Err(Refusal::Running {
                    run: id.to_owned(),
                    pid,
                    op: Operation::RollBack,
                }
                .into());
            }
            RollbackClaim::RollingBack(pid) => {
                return Err(Refusal::RollingBack {
                    run: id.to_owned(),
                    pid,
                    op: Operation::RollBack,
                }
                .into());
            }
        }
        let compensated = self.compensate(id).await;
        let rolled_back = compensated
            .as_ref()
            .is_ok_and(|report| !report.reverted.is_empty());
        self.inner
            .store
            .finish_rollback(id, rolled_back, self.inner.now())?;
        let mut report = compensated?;
        if rolled_back {
            self.dispose(id, ExecutionStatus::RolledBack).await;
        }
        report.status = self.inner.store.status(id)?;
        Ok(report)
    }

    /// Reverts what a claimed rollback finds applied.
    pub(super) async fn compensate(&self, id: &str) -> Result<RollbackReport, RuntimeError> {
        let mut report = RollbackReport {
            execution_id: id.to_owned(),
            ..RollbackReport::default()
        };
        for entry in self.inner.store.actions_to_revert(id)? {
            let (seq, connector, method) =
                (entry.seq, entry.connector.clone(), entry.method.clone());
            let skip = |reason: &str| SkippedCall {
                seq,
                connector: connector.clone(),
                method: method.clone(),
                reason: reason.to_owned(),
            };
            let Some(registered) = self.inner.connector(&entry.connector) else {
                report.skipped.push(skip("connector not configured"));
                continue;
            };
            let ctx = CallContext {
                execution_id: id.to_owned(),
                seq,
            };
            // A revert undoes what ran: for an edited approval, the person's arguments, not the program's.
            let ran_with = match &entry.decision {
                Some(decision) if decision.kind == crate::model::DecisionKind::Edited => {
                    decision.args.clone()
                }
                _ => entry.args.clone(),
            };
            let revert =
                registered
                    .connector
                    .revert(&entry.method, ran_with, entry.result.clone(), ctx);
            match tokio::time::timeout(self.inner.options.revert_timeout, revert).await {
                Ok(Ok(true)) => {
                    self.inner.store.mark_reverted(id, seq, self.inner.now())?;
                    report.reverted.push(RevertedCall {
                        seq,
                        connector,
                        method,
                    });
                }
                Ok(Ok(false)) => report.skipped.push(skip("no revert")),
                Ok(Err(error)) => report.failed.push(FailedRevert {
                    seq,
                    connector,
                    method,
                    error,
                }),
                Err(_) => report.failed.push(FailedRevert {
                    seq,
                    connector,
                    method,
                    error: format!(
                        "revert timed out after {} ms",
                        self.inner.options.revert_timeout.as_millis()
                    ),
                }),
            }
        }
        Ok(report)
    }

    /// What a rollback would revert, newest first: applied calls whose method has a revert. It starts no
    /// server: a connector whose methods are not known yet is assumed revertible, since the rollback will try.
    pub async fn rollback_plan(&self, id: &str) -> Result<Vec<ToolLogEntry>, RuntimeError> {
        let mut plan = Vec::new();
        // Another runtime's run is not found, as every read of it by id (docs/shared-store.md).
        let Some(execution) = self.inner.store.execution_head(id)? else {
            return Err(no_run(id, Operation::Read));
        };
        // Another host's run is rolled back there: this host's connectors say nothing of what it can undo.
        if only_here(&execution, Operation::RollBack).is_err() {
            return Ok(plan);
        }
        for entry in self.inner.store.actions_to_revert(id)? {
            let revertible = match self.inner.connector(&entry.connector) {
                None => false,
                Some(registered) => match registered.cached() {
                    Some(methods) => methods.tool(&entry.method).is_some_and(|t| t.revertible),
                    None => true,
                },
            };
            if revertible {
                plan.push(entry);
            }
        }
        Ok(plan)
    }
}
