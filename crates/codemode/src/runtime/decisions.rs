//! A person's (or a rule's) answer to a paused call: approve, edit, reject, one or several, bound to the
//! call that was shown (docs/design.md, "A decision names its call").

use super::*;

impl Runtime {
    /// Resumes a paused execution: the pending call executes exactly once and the program replays to its next
    /// pause or its end (docs/semantics.md §2.4). With `edited` arguments, the call runs with those instead
    /// (checked against the tool's input schema first); the log keeps what the program sent, so replay still
    /// matches, and the decision records what ran. An unknown id is [`Refusal::NoRun`]; a run that is
    /// not paused (or is being rolled back) is a stale [`Refusal`]; nothing is changed then.
    pub async fn approve(
        &self,
        id: &str,
        actor: Actor,
        edited: Option<Value>,
    ) -> Result<Outcome, RuntimeError> {
        self.approve_call(id, None, actor, edited).await
    }

    /// [`Runtime::approve`] bound to the call a person was shown (docs/design.md, "A decision names its
    /// call"): when the run now waits on another call, or on that call with other arguments, the answer is
    /// a stale [`Refusal`] and nothing runs. `None` decides whatever call waits now.
    pub async fn approve_call(
        &self,
        id: &str,
        shown: Option<&CallRef>,
        actor: Actor,
        edited: Option<Value>,
    ) -> Result<Outcome, RuntimeError> {
        let kind = if edited.is_some() {
            DecisionKind::Edited
        } else {
            DecisionKind::Approved
        };
        let decision = Decision {
            args: edited,
            ..Decision::plain(kind, actor, self.inner.now())
        };
        self.resume_with(id, decision, shown).await
    }

    /// Resumes a paused run with `decision` recorded on its pending call. On a shared store a run of another
    /// host is not resumed here: the decision is handed to its host, which resumes it with its own
    /// connectors, and this waits for the outcome (docs/shared-store.md, "Approving another host's run").
    pub(super) async fn resume_with(
        &self,
        id: &str,
        decision: Decision,
        shown: Option<&CallRef>,
    ) -> Result<Outcome, RuntimeError> {
        // Edited arguments are checked against the tool before anything is written, when this host has it
        // (a host that resumes a handed run checks them again with its own).
        if let Some(edited) = &decision.args
            && let Some(pending) = self.inner.store.pending(Some(id))?.into_iter().next()
            && self.inner.connector(&pending.connector).is_some()
        {
            self.check_edited(&pending.connector, &pending.method, edited)
                .await?;
        }
        let claimed =
            self.inner
                .store
                .resume(id, Claim::Approve(&decision), shown, &self.inner.names())?;
        self.after_claim(id, claimed).await
    }

    /// Goes on from a claim ([`Store::resume`]): the pass of a run claimed here, the wait for the host a
    /// decision was handed to, or the refusal.
    pub(super) async fn after_claim(
        &self,
        id: &str,
        claimed: Resume,
    ) -> Result<Outcome, RuntimeError> {
        match claimed {
            Resume::Resumed {
                execution,
                log,
                decided,
            } => {
                let start = Start::Resumed { log, decided };
                self.pass(id, &execution.code, execution.source.as_deref(), start)
                    .await
            }
            Resume::Handed(host, seq) => self.await_host(id, &host, seq).await,
            Resume::HostGone(host) => Err(Refusal::HostGone {
                run: id.to_owned(),
                host: host.name,
                silent_s: HOST_TIMEOUT_MS / 1000,
            }
            .into()),
            Resume::Unconfigured(missing) => Err(unconfigured(id, &missing, "runtime")),
            // Only a handed claim asks for its decision to be checked, and it does so itself.
            Resume::Edited(_) | Resume::NoneHanded => {
                Err(Refusal::NoHandedApproval { run: id.to_owned() }.into())
            }
            Resume::AlreadyDecided => Err(already_decided(id)),
            Resume::Short(tally) => self.short_of_quorum(id, tally),
            Resume::OtherCall(other) => Err(not_the_call_shown(other)),
            Resume::NotPaused(status) => Err(Refusal::NotPaused {
                run: id.to_owned(),
                status,
                op: Operation::Approve,
            }
            .into()),
            Resume::RollingBack(pid) => Err(Refusal::RollingBack {
                run: id.to_owned(),
                pid,
                op: Operation::Approve,
            }
            .into()),
            Resume::Missing => Err(no_run(id, Operation::Approve)),
        }
    }

    /// An approval that did not make the quorum of the call it named (docs/design.md, "Four eyes"): counted,
    /// the run stays paused and its outcome says who approved so far; or refused, nothing changed.
    pub(super) fn short_of_quorum(&self, id: &str, tally: Tally) -> Result<Outcome, RuntimeError> {
        match tally {
            Tally::Waiting { .. } => self.paused_outcome(id),
            Tally::Again { person, need } => Err(Refusal::ApprovedAlready {
                run: id.to_owned(),
                person,
                need,
            }
            .into()),
            Tally::Edited { need } => Err(Refusal::EditNeedsQuorum {
                run: id.to_owned(),
                need,
            }
            .into()),
        }
    }

    /// Approves several paused executions, each its own decision (one failing leaves the others decided),
    /// in the given order.
    pub async fn approve_each(
        &self,
        ids: &[String],
        actor: Actor,
    ) -> Vec<Result<Outcome, RuntimeError>> {
        let mut outcomes = Vec::with_capacity(ids.len());
        for id in ids {
            outcomes.push(self.approve(id, actor, None).await);
        }
        outcomes
    }

    /// Edited arguments must be recordable and fit the tool's input schema, when it has one.
    pub(super) async fn check_edited(
        &self,
        connector: &str,
        method: &str,
        edited: &Value,
    ) -> Result<(), RuntimeError> {
        let size = utf16_len(&edited.to_string());
        if size > MAX_DURABLE_VALUE {
            return Err(RuntimeError::InvalidArgs(too_large_message(
                &format!("Edited arguments to {connector}.{method}"),
                size,
            )));
        }
        let Some(registered) = self.inner.connector(connector) else {
            return Ok(());
        };
        let methods = registered
            .methods()
            .await
            .map_err(RuntimeError::Unavailable)?;
        let Some(schema) = methods.tool(method).and_then(|t| t.input_schema.as_ref()) else {
            return Ok(());
        };
        crate::schema::check(schema, edited).map_err(|problems| {
            RuntimeError::InvalidArgs(format!(
                "Edited arguments for {connector}.{method} do not match its input schema: {problems}"
            ))
        })
    }

    /// Whether `edited` arguments could replace the pending call's of run `id` (recordable, and fitting the
    /// tool's input schema): what an editor checks before it offers to approve.
    pub async fn check_edit(&self, id: &str, edited: &Value) -> Result<(), RuntimeError> {
        let Some(call) = self.pending(Some(id))?.into_iter().next() else {
            return Err(Refusal::NothingWaiting { run: id.to_owned() }.into());
        };
        self.check_edited(&call.connector, &call.method, edited)
            .await
    }

    /// Rejects the pending call at `seq` (docs/semantics.md §2.5), with an optional reason the agent reads in
    /// the run's error (`Action c.m rejected by user: <reason>`). An unknown id is
    /// [`Refusal::NoRun`]; a run that is not paused, or a call that is not pending, is
    /// a stale [`Refusal`]: nothing is changed.
    pub async fn reject(
        &self,
        id: &str,
        seq: u64,
        actor: Actor,
        reason: Option<&str>,
    ) -> Result<(), RuntimeError> {
        self.reject_call(id, seq, None, actor, reason).await
    }

    /// [`Runtime::reject`] bound to the arguments a person was shown as well as the seq: when the call at
    /// `seq` has other arguments than `digest` says, the answer is a stale [`Refusal`].
    pub async fn reject_call(
        &self,
        id: &str,
        seq: u64,
        digest: Option<&str>,
        actor: Actor,
        reason: Option<&str>,
    ) -> Result<(), RuntimeError> {
        let decision = self.rejection(Decision::plain(DecisionKind::Rejected, actor, 0), reason)?;
        self.reject_decided(id, seq, digest, &decision).await
    }

    /// A rejection answered outside the console — in the agent's own MCP client (docs/design.md, "Asking in
    /// the client") or on a paired phone (docs/phone.md) — bound to the call the answerer was shown and
    /// recorded under the answerer's name.
    pub async fn reject_answered(
        &self,
        id: &str,
        shown: &CallRef,
        answerer: &Answerer,
        reason: Option<&str>,
    ) -> Result<(), RuntimeError> {
        let decision = self.rejection(answerer.decision(DecisionKind::Rejected, 0), reason)?;
        self.reject_decided(id, shown.seq, shown.digest.as_deref(), &decision)
            .await
    }

    /// An approval answered outside the console, bound to the call the answerer was shown; the run goes on
    /// as after any approval.
    pub async fn approve_answered(
        &self,
        id: &str,
        shown: &CallRef,
        answerer: &Answerer,
    ) -> Result<Outcome, RuntimeError> {
        let decision = answerer.decision(DecisionKind::Approved, self.inner.now());
        self.resume_with(id, decision, Some(shown)).await
    }

    /// Rejects, as expired, every waiting call whose `decideWithin` has passed by this runtime's clock
    /// (docs/design.md, "Deciding in time"): each its own transaction, a call decided meanwhile left alone.
    /// Returns the runs that ended so.
    pub async fn expire_overdue(&self) -> Result<Vec<String>, RuntimeError> {
        let now = self.inner.now();
        let mut expired = Vec::new();
        for (id, seq) in self.inner.store.overdue(now)? {
            let decision = Decision::expired(now);
            if self.reject_decided(&id, seq, None, &decision).await.is_ok() {
                expired.push(id);
            }
        }
        Ok(expired)
    }

    /// The earliest `decideBy` among the waiting calls (epoch ms), so a sweep can wake for it.
    pub fn next_deadline(&self) -> Result<Option<i64>, RuntimeError> {
        Ok(self.inner.store.next_deadline()?)
    }

    /// A rejection's decision, its reason checked first (trimmed; at most [`MAX_REASON`] characters).
    /// `decision` (a rejection) made now, with `reason` checked and trimmed.
    fn rejection(
        &self,
        decision: Decision,
        reason: Option<&str>,
    ) -> Result<Decision, RuntimeError> {
        let reason = reason.map(str::trim).filter(|r| !r.is_empty());
        if let Some(reason) = reason
            && utf16_len(reason) > MAX_REASON
        {
            return Err(RuntimeError::InvalidArgs(format!(
                "A reason is at most {MAX_REASON} characters; this one has {}.",
                utf16_len(reason)
            )));
        }
        Ok(Decision {
            at: self.inner.now(),
            reason: reason.map(str::to_owned),
            ..decision
        })
    }

    async fn reject_decided(
        &self,
        id: &str,
        seq: u64,
        digest: Option<&str>,
        decision: &Decision,
    ) -> Result<(), RuntimeError> {
        match self.inner.store.reject(id, seq, digest, decision)? {
            Rejection::Rejected => {
                self.dispose(id, ExecutionStatus::Rejected).await;
                Ok(())
            }
            Rejection::Missing => Err(no_run(id, Operation::Reject)),
            Rejection::NotPaused(status) => Err(Refusal::NotPaused {
                run: id.to_owned(),
                status,
                op: Operation::Reject,
            }
            .into()),
            Rejection::RollingBack(pid) => Err(Refusal::RollingBack {
                run: id.to_owned(),
                pid,
                op: Operation::Reject,
            }
            .into()),
            Rejection::NotPending => Err(Refusal::NotWaiting {
                run: id.to_owned(),
                seq,
            }
            .into()),
            Rejection::AlreadyDecided => Err(already_decided(id)),
            Rejection::OtherCall(other) => Err(not_the_call_shown(other)),
        }
    }

    pub async fn reject_each(
        &self,
        calls: &[(String, u64)],
        actor: Actor,
        reason: Option<&str>,
    ) -> Vec<Result<(), RuntimeError>> {
        let mut results = Vec::with_capacity(calls.len());
        for (id, seq) in calls {
            results.push(self.reject(id, *seq, actor, reason).await);
        }
        results
    }
}
