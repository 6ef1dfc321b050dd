//! Duties of a host on a shared store: resuming runs handed to it, waiting for another host to take one, and
//! adopting a run whose host is gone (docs/shared-store.md).

use super::*;

/// How long approving another host's run waits for that host to resume it and end its pass.
pub(super) const HANDED_WAIT: Duration = Duration::from_secs(30);

/// A host's duties on a shared store (docs/shared-store.md, "Hosts"): its heartbeat, and resuming the runs
/// other hosts approve for it — each as the listener hears of it, and all that wait whenever the listener
/// (re)connects. Ends when the runtime is dropped.
pub(super) async fn serve_host(
    inner: std::sync::Weak<Inner>,
    mut hand_offs: tokio::sync::mpsc::UnboundedReceiver<crate::store::Handed>,
) {
    let mut beat = tokio::time::interval(HEARTBEAT_EVERY);
    beat.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tokio::select! {
            _ = beat.tick() => {
                let Some(inner) = inner.upgrade() else { return };
                let _ = inner.store.heartbeat();
            }
            handed = hand_offs.recv() => {
                let (Some(handed), Some(inner)) = (handed, inner.upgrade()) else { return };
                let ids = match handed {
                    crate::store::Handed::Run(id) => vec![id],
                    crate::store::Handed::Rescan => inner.store.handed_runs().unwrap_or_default(),
                };
                let runtime = Runtime { inner };
                for id in ids {
                    let runtime = runtime.clone();
                    tokio::spawn(async move {
                        let _ = runtime.resume_handed(&id).await;
                    });
                }
            }
        }
    }
}

/// On a shared store, what runs a run's connectors (a recovery, a rollback) happens on its own host: another
/// host's connectors of the same name act on another machine (docs/shared-store.md, "Hosts").
pub(super) fn only_here(execution: &ExecutionState, op: Operation) -> Result<(), RuntimeError> {
    match &execution.host {
        Some(host) if !host.here => Err(Refusal::OtherHost {
            run: execution.id.clone(),
            host: host.name.clone(),
            alive: host.alive,
            op,
        }
        .into()),
        _ => Ok(()),
    }
}

impl Runtime {
    /// Resumes a run of this host that another host approved ([`Store::resume`] handing it off), with that
    /// decision, read with the run by the claim. Edited arguments its tool refuses drop the decision: the run
    /// waits for a decision again.
    pub async fn resume_handed(&self, id: &str) -> Result<Outcome, RuntimeError> {
        let names = self.inner.names();
        let claimed =
            self.inner
                .store
                .resume(id, Claim::Handed { checked: false }, None, &names)?;
        let Resume::Edited(decision) = claimed else {
            return self.after_claim(id, claimed).await;
        };
        if let Some(edited) = &decision.args
            && let Some(pending) = self.inner.store.pending(Some(id))?.into_iter().next()
            && let Err(error) = self
                .check_edited(&pending.connector, &pending.method, edited)
                .await
        {
            // The approver waiting on another host reads why (`await_host`).
            self.inner.store.withdraw_handed(id, &error.to_string())?;
            return Err(error);
        }
        let claimed = self
            .inner
            .store
            .resume(id, Claim::Handed { checked: true }, None, &names)?;
        self.after_claim(id, claimed).await
    }

    /// Waits for the host a decision was handed to to resume the run and end its pass. The call at `seq`
    /// waiting again, undecided, means the host refused the decision (edited arguments its tool rejects).
    pub(super) async fn await_host(
        &self,
        id: &str,
        host: &RunHost,
        seq: Option<u64>,
    ) -> Result<Outcome, RuntimeError> {
        let deadline = tokio::time::Instant::now() + HANDED_WAIT;
        loop {
            let token = self.inner.store.change_token()?;
            // The head, and the calls an outcome carries once the run has settled: one read.
            let with_log = self.inner.options.outcome_calls;
            let Some(execution) = self.inner.store.execution_if_settled(id, with_log)? else {
                return Err(no_run(id, Operation::Approve));
            };
            if execution.handed.is_none() && execution.status != ExecutionStatus::Running {
                // Only a run paused again may wait on the same call (its host refused the decision): the
                // waiting call is read only then, one round trip less on every other outcome.
                let waiting = match execution.status {
                    ExecutionStatus::Paused => {
                        self.inner.store.pending(Some(id))?.first().map(|p| p.seq)
                    }
                    _ => None,
                };
                if waiting.is_some() && waiting == seq {
                    let why = self
                        .inner
                        .store
                        .handed_refusal(id)?
                        .unwrap_or_else(|| "its tool refuses the edited arguments".to_owned());
                    return Err(RuntimeError::InvalidArgs(format!(
                        "Host {} did not accept the decision on execution \"{id}\": {why}. The call waits for a decision again.",
                        host.name
                    )));
                }
                return self.outcome_of(execution);
            }
            let left = deadline.saturating_duration_since(tokio::time::Instant::now());
            if left.is_zero() {
                return Err(Refusal::StillResuming {
                    run: id.to_owned(),
                    host: host.name.clone(),
                }
                .into());
            }
            self.inner.store.changed(token, left).await;
        }
    }

    /// Adopts a run whose host is gone, so that this host decides and resumes it: it must have every
    /// connector the run was begun with (docs/shared-store.md, "A host that is gone").
    pub fn adopt(&self, id: &str) -> Result<(), RuntimeError> {
        let names: Vec<String> = self
            .inner
            .connectors
            .iter()
            .map(|r| r.connector.name().to_owned())
            .collect();
        match self.inner.store.adopt(id, &names)? {
            Adoption::Adopted => Ok(()),
            Adoption::HostAlive(host) if host.here => {
                Err(Refusal::AlreadyHere { run: id.to_owned() }.into())
            }
            Adoption::HostAlive(host) => Err(Refusal::HostAlive {
                run: id.to_owned(),
                host: host.name,
            }
            .into()),
            Adoption::MissingConnectors(missing) => Err(unconfigured(id, &missing, "host")),
            Adoption::NoHost => Err(Refusal::NotShared { run: id.to_owned() }.into()),
            Adoption::Missing => Err(no_run(id, Operation::Adopt)),
        }
    }
}

impl Runtime {
    /// Makes `user` a `role` on the shared store (docs/shared-store.md, "People and permissions"), running
    /// [`crate::grant_sql`] on this runtime's connection, which must be the tables' owner's.
    pub fn grant(&self, role: crate::StoreRole, user: &str) -> Result<(), RuntimeError> {
        let sql = crate::grant_sql(role, user).map_err(RuntimeError::InvalidArgs)?;
        Ok(self.inner.store.administer(&sql)?)
    }
}
