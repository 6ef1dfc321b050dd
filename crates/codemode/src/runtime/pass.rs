//! Driving a pass: running a program from the top in the sandbox with the pass host, ending it, and what
//! happens when the store fails mid-pass or a run is recovered (docs/design.md, "When the store fails").

use super::*;

pub(super) fn quoted_list(names: &[&str]) -> String {
    names
        .iter()
        .map(|n| format!("\"{n}\""))
        .collect::<Vec<_>>()
        .join(", ")
}

/// Where a pass starts from.
pub(super) enum Start {
    /// A new run, recorded while the worker parses its program.
    New(Begin),
    /// A run with calls on record, which the pass reads first.
    Recorded,
    /// A run its claim resumed: the log the claim read with the run, and the call it decided, which the pass
    /// records as executing in one statement when it reaches it ([`crate::store::Store::execute_approved_at_once`]).
    Resumed {
        log: crate::store::ReplayLog,
        decided: Option<u64>,
    },
}

/// A run that needs connectors this `place` ("runtime", "host") does not have.
pub(super) fn unconfigured(id: &str, missing: &[String], place: &str) -> RuntimeError {
    let missing: Vec<&str> = missing.iter().map(String::as_str).collect();
    RuntimeError::Configuration(format!(
        "Execution \"{id}\" requires connector(s) {} that are not configured on this {place}.",
        quoted_list(&missing)
    ))
}

/// A new run's id: its start time first, so ids sort as runs began.
pub(super) fn new_execution_id(now: i64) -> String {
    format!("exec_{now:016}_{}", uuid::Uuid::new_v4())
}

impl Runtime {
    /// Runs new code (a fresh execution) to its first pause or its end.
    pub async fn execute(&self, code: &str) -> Result<Outcome, RuntimeError> {
        self.execute_from(code, None).await
    }

    /// Like [`execute`](Self::execute), recording where the code came from (an MCP client's name, `cli`…).
    pub async fn execute_from(
        &self,
        code: &str,
        source: Option<&str>,
    ) -> Result<Outcome, RuntimeError> {
        if let Some(unfit) = self.unfit_code(code) {
            return Ok(Outcome::early_error("", unfit));
        }
        let now = self.inner.now();
        let begin = Begin {
            id: new_execution_id(now),
            code: code.to_owned(),
            names: self.inner.names(),
            source: source.map(str::to_owned),
            now,
        };
        let id = begin.id.clone();
        self.pass(&id, code, source, Start::New(begin)).await
    }

    /// Why `code` cannot be a run's program (too large to record, or what the store cannot keep), if so.
    pub(super) fn unfit_code(&self, code: &str) -> Option<String> {
        let size = utf16_len(code);
        if size > MAX_DURABLE_VALUE {
            return Some(too_large_message("The execution code", size));
        }
        if self.inner.store.is_shared() && code.contains('\0') {
            return Some("The execution code contains a NUL character, which the shared store cannot keep; write it as \\0 or \\u0000 in a string.".to_owned());
        }
        None
    }

    /// One pass over the stored code, then the outcome as the store says it ended (docs/semantics.md §2.3). A
    /// new execution ([`Start::New`]) is recorded while the worker already parses the program: nothing the
    /// program asks for is answered before that record is committed.
    pub(super) async fn pass(
        &self,
        id: &str,
        code: &str,
        source: Option<&str>,
        start: Start,
    ) -> Result<Outcome, RuntimeError> {
        let inner = self.inner.clone();
        let (begin, (log, log_end), decided) = match start {
            // A new execution has nothing recorded yet.
            Start::New(begin) => (Some(begin), (Vec::new(), 0), None),
            Start::Recorded => (None, inner.store.replay_log(id)?, None),
            Start::Resumed { log, decided } => (None, log, decided),
        };
        let request = PassRequest {
            code: code.to_owned(),
            connectors: inner.names(),
            log,
            log_end: Some(log_end),
        };
        let handle = Handle::current();
        let execution_id = id.to_owned();
        let source = source.map(str::to_owned);
        // On a multi-threaded runtime the pass runs on the calling worker thread (its other tasks move
        // away): handing it to the blocking pool and back costs two thread wake-ups, about half a
        // millisecond on an idle 2-core VM. Two passes polled from one task (`join!`) therefore run one
        // after the other; separate tasks still run them in parallel.
        let multi_thread = handle.runtime_flavor() == tokio::runtime::RuntimeFlavor::MultiThread;
        let work = move || {
            let mut host = RuntimeHost {
                inner: inner.clone(),
                id: execution_id,
                source,
                handle,
                steps: HashMap::new(),
                begin,
                recording: None,
                begun: None,
                logged: false,
                broken: None,
                in_doubt: false,
                told: Vec::new(),
                outcome_sent: None,
                decided,
            };
            let ran = inner.executor.run(&request, &mut host);
            // A worker that could not be started never asked for the record; the failure is recorded.
            host.started();
            host.recorded();
            // A new run whose pass recorded nothing has no calls to read back.
            let read_log = inner.options.outcome_calls && (host.begun.is_none() || host.logged);
            let ended = host.complete(&ran, read_log);
            // However the pass ended, nothing it sent to the store is left unread.
            host.settle();
            (ran, ended, host.begun, host.broken)
        };
        let (ran, ended, begun, broken) = if multi_thread {
            tokio::task::block_in_place(work)
        } else {
            tokio::task::spawn_blocking(work)
                .await
                .map_err(|e| RuntimeError::Interrupted(e.to_string()))?
        };
        if let Some(broken) = broken {
            self.release_broken_pass(id);
            return Err(broken);
        }
        let outcome_calls = self.inner.options.outcome_calls;
        if let Some(begun) = begun {
            self.forget(&begun?).await;
        }
        let now = self.inner.now();
        let store = &self.inner.store;
        let end = match ran {
            Ok(outcome) => Ok((outcome.end, outcome.logs)),
            Err(error) => Err(error),
        };
        // The usual end first: the pass's thread completed the run and read its calls, in one conditional
        // transaction (`RuntimeHost::complete`).
        let end = match (end, ended) {
            (Ok((PassEnd::Completed { .. }, logs)), Some(ended)) => match ended? {
                Ended::Unserialisable(error) => {
                    store.fail(id, &error, now)?;
                    return self.finish_error(id, error).await;
                }
                Ended::Completed {
                    result,
                    calls: Some(calls),
                } => {
                    self.pass_end(id, ExecutionStatus::Completed).await;
                    self.dispose(id, ExecutionStatus::Completed).await;
                    let result = match (&self.inner.options.transform_result, result) {
                        (Some(transform), Some(value)) => {
                            Some(transform(value.clone()).unwrap_or(value))
                        }
                        (_, result) => result,
                    };
                    return Ok(Outcome::Completed {
                        execution_id: id.to_owned(),
                        result,
                        logs: (!logs.is_empty()).then_some(logs),
                        calls: outcome_calls.then_some(calls),
                    });
                }
                // No longer running (paused, failed or reclaimed meanwhile): the store says how it ended.
                Ended::Completed { calls: None, .. } => Ok((PassEnd::Stopped, logs)),
            },
            (Ok((PassEnd::Completed { .. }, logs)), None) => Ok((PassEnd::Stopped, logs)),
            (other, _) => other,
        };
        match store.status(id)? {
            Some(ExecutionStatus::Paused) => {
                self.pass_end(id, ExecutionStatus::Paused).await;
                self.paused_outcome(id)
            }
            Some(ExecutionStatus::Running) => {
                let error = match end {
                    Ok((PassEnd::Failed { error }, _)) => error,
                    Ok(_) => "Codemode execution failed".to_owned(),
                    Err(executor) => format!("Code execution failed: {executor}"),
                };
                store.fail(id, &error, now)?;
                self.finish_error(id, error).await
            }
            Some(_) => {
                let error = store
                    .execution(id)?
                    .and_then(|e| e.error)
                    .unwrap_or_else(|| "Codemode execution failed".to_owned());
                self.finish_error(id, error).await
            }
            None => Ok(Outcome::early_error(id, format!("No execution \"{id}\""))),
        }
    }

    /// Takes over an execution left running by a process that died (docs/design.md, difference 5). An approved
    /// call that was executing is not run again but waits for a new decision, marked `interrupted`; any other
    /// interrupted run runs its pass again (calls that were executing re-execute: connectors get `seq` to make
    /// that idempotent).
    pub async fn recover(&self, id: &str) -> Result<Outcome, RuntimeError> {
        let Some(execution) = self.inner.store.execution(id)? else {
            return Err(no_run(id, Operation::Recover));
        };
        only_here(&execution, Operation::Recover)?;
        match self.inner.store.recover(id, self.inner.now())? {
            Recover::Repaused => {
                self.pass_end(id, ExecutionStatus::Paused).await;
                self.paused_outcome(id)
            }
            Recover::Rerun => {
                self.pass(
                    id,
                    &execution.code,
                    execution.source.as_deref(),
                    Start::Recorded,
                )
                .await
            }
            Recover::NotInterrupted(status) => Err(Refusal::NotInterrupted {
                run: id.to_owned(),
                status,
            }
            .into()),
            Recover::StillRunning(pid) => Err(Refusal::Running {
                run: id.to_owned(),
                pid,
                op: Operation::Recover,
            }
            .into()),
            Recover::RollingBack(pid) => Err(Refusal::RollingBack {
                run: id.to_owned(),
                pid,
                op: Operation::Recover,
            }
            .into()),
            Recover::Missing => Err(no_run(id, Operation::Recover)),
        }
    }

    /// Fault injection for tests: the store's SQLite connection suffers `fault` until called with `None`.
    #[doc(hidden)]
    pub fn inject_store_fault_for_tests(&self, fault: Option<crate::store::StoreFault>) {
        self.inner.store.fault_for_tests(fault);
    }

    /// Leaves a run whose pass the store failed in `interrupted`: this process lets go of it, so `recover`
    /// (or expiry) can take it over and a call in doubt is asked about again rather than replayed as if it
    /// had not run. The store may still be failing: the release is retried in the background, with backoff,
    /// for as long as this process lives, and never dropped (docs/design.md, "When the store fails").
    pub(super) fn release_broken_pass(&self, id: &str) {
        if self.inner.store.release_pass(id).is_ok() {
            return;
        }
        let inner = std::sync::Arc::downgrade(&self.inner);
        let id = id.to_owned();
        std::thread::spawn(move || {
            let mut wait = Duration::from_millis(100);
            loop {
                std::thread::sleep(wait);
                let Some(inner) = inner.upgrade() else { return };
                if inner.store.release_pass(&id).is_ok() {
                    return;
                }
                wait = (wait * 2).min(Duration::from_secs(30));
            }
        });
    }

    /// A paused execution as an Outcome: its pending calls and its call log.
    pub fn paused_outcome(&self, id: &str) -> Result<Outcome, RuntimeError> {
        let store = &self.inner.store;
        Ok(Outcome::Paused {
            execution_id: id.to_owned(),
            pending: store.pending(Some(id))?,
            calls: self.outcome_log(id)?,
        })
    }

    pub(super) async fn finish_error(
        &self,
        id: &str,
        error: String,
    ) -> Result<Outcome, RuntimeError> {
        self.pass_end(id, ExecutionStatus::Error).await;
        self.dispose(id, ExecutionStatus::Error).await;
        Ok(Outcome::Error {
            execution_id: id.to_owned(),
            error,
            logs: None,
            calls: self.outcome_log(id)?,
        })
    }

    /// A run's calls for its outcome, when outcomes carry them ([`RuntimeOptions::outcome_calls`]).
    pub(super) fn outcome_log(&self, id: &str) -> Result<Option<Vec<ToolLogEntry>>, RuntimeError> {
        if !self.inner.options.outcome_calls {
            return Ok(None);
        }
        Ok(Some(self.inner.store.call_log(id)?))
    }

    pub(super) async fn pass_end(&self, id: &str, status: ExecutionStatus) {
        for registered in &self.inner.connectors {
            registered.connector.on_pass_end(id, status).await;
        }
    }

    pub(super) async fn dispose(&self, id: &str, status: ExecutionStatus) {
        for registered in &self.inner.connectors {
            registered.connector.dispose_execution(id, status).await;
        }
    }
}
