//! The pass host: what the sandbox asks of the runtime during a pass — each connector call judged, served
//! from the log or run and recorded, steps, discovery and snippets (docs/design.md, "Replay").

use super::*;
use crate::executor::PassOutcome;
use crate::store::ToldStep;

/// A step value that cannot be stored ends the run: replay could not hand it back.
pub(super) fn step_unrecordable(host: &RuntimeHost, seq: u64, reason: &str, now: i64) -> bool {
    let name = host.steps.get(&seq).cloned().unwrap_or_default();
    let what = format!("The result of {}.{name}", crate::STEP_CONNECTOR);
    let _ = host
        .inner
        .store
        .fail_unrecordable(&host.id, seq, &unserialisable(&what, reason), now);
    false
}

/// A value from the worker as JSON; deeper than serde_json's 128 levels, or a string holding half of a
/// UTF-16 surrogate pair, is an error with its reason, never a silent nothing.
pub(super) fn parse_raw(raw: &RawValue) -> Result<Value, String> {
    serde_json::from_str(raw.get()).map_err(|e| {
        if e.to_string().contains("surrogate") {
            "a string holds a lone surrogate (half of a UTF-16 pair), which JSON text cannot carry"
                .to_owned()
        } else {
            e.to_string()
        }
    })
}

/// Answers a pass's requests: every connector call goes through `decide` and `record_result`.
pub(super) struct RuntimeHost {
    pub(super) inner: Arc<Inner>,
    pub(super) id: String,
    /// Where the run came from, as rules see it.
    pub(super) source: Option<String>,
    pub(super) handle: Handle,
    /// Step names by seq, for the messages of unrecordable step values.
    pub(super) steps: HashMap<u64, String>,
    /// A new execution to record once the worker has the program.
    pub(super) begin: Option<Begin>,
    /// Its record being written.
    pub(super) recording: Option<tokio::task::JoinHandle<Result<Vec<String>, StoreError>>>,
    /// What recording it did: the executions pruned to make room, or why it failed.
    pub(super) begun: Option<Result<Vec<String>, RuntimeError>>,
    /// Whether the pass asked to record a call or step (and so may have added to the log).
    pub(super) logged: bool,
    /// The store failed while the pass needed it: the pass stopped, and the run is left interrupted rather than
    /// ended by a store that cannot be trusted to record it (docs/design.md, "When the store fails").
    pub(super) broken: Option<RuntimeError>,
    /// A connector acted and its outcome could not be recorded: that call is in doubt.
    pub(super) in_doubt: bool,
    /// New steps' values the worker told without waiting, in seq order, to record together
    /// ([`PassHost::flush_steps`]).
    pub(super) told: Vec<ToldStep>,
    /// The last call's outcome, sent to a shared store and not yet known to be recorded: which call it was.
    /// Settled before anything the program does next leaves the host (docs/semantics.md §3.6).
    pub(super) outcome_sent: Option<(u64, String)>,
    /// The call the claim that resumed this pass decided, until the pass reaches it.
    pub(super) decided: Option<u64>,
}

/// How a program that completed was ended in the store, by its pass's own thread.
pub(super) enum Ended {
    /// The run completed: its result as recorded, and its calls (`None`: it was no longer running, and the
    /// store says how it ended).
    Completed {
        result: Option<Value>,
        calls: Option<Vec<ToolLogEntry>>,
    },
    /// Its final value cannot be carried as JSON: the run fails with this message.
    Unserialisable(String),
}

/// How many told steps are held at most before they are recorded, whatever the worker still has to say.
const TOLD_AT_MOST: usize = 256;

impl RuntimeHost {
    /// Whether a step's value was recorded; a store failure stops the pass, since a replay would then give the
    /// program another value than this pass saw (docs/design.md, "When the store fails").
    pub(super) fn step_recorded(&mut self, recorded: Result<bool, StoreError>) -> bool {
        recorded.unwrap_or_else(|error| {
            self.store_failed(error);
            false
        })
    }

    /// The store failed while the pass needed it. A call in doubt, said first or later, is what the pass
    /// ends with: it is what `recover` must know.
    fn store_failed(&mut self, error: StoreError) {
        if self.broken.is_none() {
            self.broken = Some(RuntimeError::Store(error));
        }
    }

    /// Whether the last call's outcome sent to the store was recorded (waiting for it if need be); false when
    /// it could not be, and the pass must stop.
    pub(super) fn outcome_recorded(&mut self) -> bool {
        let Some((_, what)) = self.outcome_sent.take() else {
            return true;
        };
        match self.inner.store.outcome_landed(&self.id) {
            Ok(()) => true,
            Err(error) => {
                self.outcome_unrecorded(what, error);
                false
            }
        }
    }

    /// The connector acted and its outcome is not on record: the run must never be replayed as if the call
    /// had not run. It stops, interrupted with the call in doubt (docs/design.md, "When the store fails").
    fn outcome_unrecorded(&mut self, what: String, error: StoreError) {
        self.broken = Some(RuntimeError::Interrupted(format!(
            "the outcome of {what} could not be recorded after it ran: {error}; the run is interrupted with that call in doubt"
        )));
        self.in_doubt = true;
    }

    /// Ends a program that completed, from the pass's own thread: the completion goes in one flight behind
    /// the last call's outcome when that is still in the air, and commits only if the outcome did
    /// (docs/shared-store.md, "A call's outcome is sent, not waited for"). `None` when the pass did not
    /// complete, or stopped (`broken`): the caller ends it as the store says.
    pub(super) fn complete(
        &mut self,
        ran: &Result<PassOutcome, ExecutorError>,
        read_log: bool,
    ) -> Option<Result<Ended, StoreError>> {
        let Ok(PassOutcome {
            end:
                PassEnd::Completed {
                    result,
                    result_error,
                },
            logs,
            ..
        }) = ran
        else {
            return None;
        };
        if self.broken.is_some() || matches!(self.begun, Some(Err(_))) {
            return None;
        }
        // Told steps are recorded first, behind the outcome; the completion then goes alone.
        if !self.told.is_empty() && !self.settle() {
            return None;
        }
        // A final value that JSON cannot carry (a cycle, a lone surrogate) fails the run with the reason: the
        // reference hands the model the live value, which a worker process cannot, and a completed run with
        // no result would hide it (docs/design.md, "Values that JSON cannot carry").
        let parsed = match (
            result_error.clone(),
            result.as_deref().map(parse_raw).transpose(),
        ) {
            (Some(reason), _) | (None, Err(reason)) => Err(reason),
            (None, Ok(result)) => Ok(result),
        };
        let result = match parsed {
            Ok(result) => result,
            Err(reason) => {
                return Some(Ok(Ended::Unserialisable(unserialisable(
                    "The final result",
                    &reason,
                ))));
            }
        };
        let behind = self.outcome_sent.as_ref().map(|(seq, _)| *seq);
        let completed = self.inner.store.complete(
            &self.id,
            result.as_ref(),
            logs,
            self.inner.now(),
            read_log,
            behind,
        );
        // What the outcome ahead of it came to is known now; when it failed, the completion did not commit
        // and the run stops interrupted with that call in doubt.
        if !self.outcome_recorded() {
            return None;
        }
        Some(completed.map(|calls| Ended::Completed { result, calls }))
    }

    /// Waits for the new execution's record; false when it could not be written (the pass must stop).
    pub(super) fn recorded(&mut self) -> bool {
        if let Some(recording) = self.recording.take() {
            let begun = match self.handle.block_on(recording) {
                Ok(begun) => begun.map_err(RuntimeError::from),
                Err(e) => Err(RuntimeError::Interrupted(e.to_string())),
            };
            self.begun = Some(begun);
        }
        !matches!(self.begun, Some(Err(_)))
    }
}

/// What a program asking for something is told when its execution could not be recorded (the run then
/// ends with the store's error).
pub(super) const UNRECORDED: &str = "the execution could not be recorded";

/// A new execution, recorded when its first pass starts.
pub(super) struct Begin {
    pub(super) id: String,
    pub(super) code: String,
    pub(super) names: Vec<String>,
    pub(super) source: Option<String>,
    pub(super) now: i64,
}

impl PassHost for RuntimeHost {
    /// Records a new execution on a thread of the blocking pool: this thread is about to wait for the worker,
    /// which then runs here while the record is written on the other CPU.
    fn started(&mut self) {
        if let Some(begin) = self.begin.take() {
            let inner = self.inner.clone();
            self.recording = Some(self.handle.spawn_blocking(move || {
                inner.store.begin(
                    &begin.id,
                    &begin.code,
                    &begin.names,
                    begin.source.as_deref(),
                    begin.now,
                    inner.options.retention(inner.options.max_executions),
                )
            }));
        }
    }

    fn call(&mut self, call: ConnectorCall) -> CallAnswer {
        if !self.recorded() {
            return CallAnswer::Stop;
        }
        self.logged = true;
        let inner = self.inner.clone();
        let store = &inner.store;
        let now = inner.now();
        let Some(registered) = inner.connector(&call.connector) else {
            return CallAnswer::Error(format!(
                "Connector \"{}\" is not configured",
                call.connector
            ));
        };
        if let Some(reason) = &call.args_error {
            let message = unserialisable(
                &format!("Arguments to {}.{}", call.connector, call.method),
                reason,
            );
            return match store.fail(&self.id, &message, now) {
                Ok(()) | Err(_) => CallAnswer::Stop,
            };
        }
        let args = match call.args.as_deref().map(parse_raw).transpose() {
            Ok(args) => args,
            Err(reason) => {
                let message = unserialisable(
                    &format!("Arguments to {}.{}", call.connector, call.method),
                    &reason,
                );
                return match store.fail(&self.id, &message, now) {
                    Ok(()) | Err(_) => CallAnswer::Stop,
                };
            }
        };
        let methods = match self.handle.block_on(registered.methods()) {
            Ok(methods) => methods,
            Err(message) => return CallAnswer::Error(message),
        };
        let rules = inner.rules();
        // A method hidden by an unconditional deny is still found here, so the deny answers it with its
        // reason and counts the hit (docs/design.md, "Rules"); only `hidden` methods are not there at all.
        let tool = methods.tool(&call.method).filter(|t| !t.hidden);
        let requires_approval = tool.is_some_and(|t| t.requires_approval);
        let ephemeral = tool.is_some_and(|t| t.replay == Replay::Reexecute);
        // Rules decide a fresh call on what the connector will really do with it — its canonical reading of
        // the arguments — and the store uses the verdict only for a call it records now, so replay never
        // evaluates again (docs/design.md, "Rules" and "What a call means").
        let (canonical, refused) = match tool {
            Some(_) => match registered.connector.canonical(&call.method, args.as_ref()) {
                Ok(canonical) => (canonical, None),
                Err(message) => (None, Some(message)),
            },
            None => (None, None),
        };
        let path = format!("{}.{}", call.connector, call.method);
        let verdict = match (tool, &refused) {
            (Some(tool), None) => rules
                .evaluate(
                    &crate::rules::Call {
                        path: &path,
                        args: canonical.as_ref().or(args.as_ref()),
                        source: self.source.as_deref(),
                        now,
                    },
                    requires_approval,
                )
                .with_connector_asking(tool.ask_in_client, tool.decide_within_ms),
            // Not found, or refused by the connector whatever anyone decides: no rule or person is asked.
            _ => crate::rules::Verdict::allow(),
        };
        // The call a person just approved, reached as recorded, starts in one statement; anything else (it
        // diverged, the run stopped) is decided from what is on record.
        let approved = match self.decided {
            Some(seq) if seq == call.seq => {
                self.decided = None;
                store
                    .execute_approved_at_once(
                        &self.id,
                        call.seq,
                        &call.connector,
                        &call.method,
                        args.as_ref(),
                        now,
                    )
                    .transpose()
            }
            _ => None,
        };
        let plan = approved.unwrap_or_else(|| {
            store.decide(
                &self.id,
                call.seq,
                &call.connector,
                &call.method,
                args.as_ref(),
                canonical.as_ref(),
                &verdict,
                ephemeral,
                now,
            )
        });
        // The last call's outcome travelled ahead of this record: known now.
        if !self.outcome_recorded() {
            return CallAnswer::Stop;
        }
        // The entry keeps what the program sent (replay matches it); an edited approval runs what the person
        // changed it to.
        let mut args = args;
        match plan {
            Ok(CallPlan::Execute) => {}
            Ok(CallPlan::ExecuteEdited(edited)) => args = Some(edited),
            Ok(CallPlan::Replay(result)) => return CallAnswer::Value(result.map(|r| raw(&r))),
            Ok(CallPlan::ReplayError(message)) => return CallAnswer::Error(message),
            Ok(CallPlan::Missing) => {
                return CallAnswer::Error(format!("No execution \"{}\"", self.id));
            }
            Ok(CallPlan::Pause) => return CallAnswer::Stop,
            // Nothing ran, but a program that caught this error would go on differently from its replay:
            // the pass stops instead, with the store's error (docs/design.md, "When the store fails").
            Err(error) => {
                self.store_failed(error);
                return CallAnswer::Stop;
            }
        }
        let unrunnable = match (tool, refused) {
            (None, _) => Some(format!(
                "Tool \"{}\" not found on {}",
                call.method, call.connector
            )),
            (Some(_), refused) => refused,
        };
        if let Some(message) = unrunnable {
            return match store.record_error(&self.id, call.seq, &message, inner.now()) {
                Ok(_) => CallAnswer::Error(message),
                Err(error) => {
                    self.store_failed(error);
                    CallAnswer::Stop
                }
            };
        }
        let ctx = CallContext {
            execution_id: self.id.clone(),
            seq: call.seq,
        };
        let connector = registered.connector.clone();
        let executed = self
            .handle
            .block_on(connector.execute(&call.method, args, ctx));
        let what = format!("{}.{} (call {})", call.connector, call.method, call.seq);
        let outcome = match &executed {
            Ok(result) => Ok(result.as_ref()),
            Err(message) => Err(message.as_str()),
        };
        if store.send_outcome(&self.id, call.seq, outcome, inner.now()) {
            self.outcome_sent = Some((call.seq, what));
        } else {
            let recorded = match outcome {
                Ok(result) => store
                    .record_result(&self.id, call.seq, result, inner.now())
                    .map(|_| ()),
                // The connector answered: the call has an outcome, replayed as this same error and never
                // executed again (docs/design.md, "A call's outcome is recorded, errors included").
                Err(message) => store.record_error(&self.id, call.seq, message, inner.now()),
            };
            if let Err(error) = recorded {
                self.outcome_unrecorded(what, error);
                return CallAnswer::Stop;
            }
        }
        // A result too large to record fails the run (record_result said so in the store); the program still
        // gets it, and the next call (or the end of the pass) sees the failure.
        match executed {
            Ok(result) => CallAnswer::Value(result.map(|r| raw(&r))),
            Err(message) => CallAnswer::Error(message),
        }
    }

    fn step_decide(&mut self, seq: u64, name: &str) -> StepAnswer {
        if !self.recorded() {
            return StepAnswer::Stop;
        }
        self.logged = true;
        self.steps.insert(seq, name.to_owned());
        let decision = self.inner.store.decide(
            &self.id,
            seq,
            crate::STEP_CONNECTOR,
            name,
            None,
            None,
            &crate::rules::Verdict::allow(),
            false,
            self.inner.now(),
        );
        match decision {
            Ok(CallPlan::Execute) => StepAnswer::Execute,
            Ok(CallPlan::Replay(value)) => StepAnswer::Replay(value.map(|v| raw(&v))),
            Ok(_) => StepAnswer::Stop,
            Err(error) => {
                self.store_failed(error);
                StepAnswer::Stop
            }
        }
    }

    fn step_record(&mut self, seq: u64, value: Result<Option<Box<RawValue>>, String>) -> bool {
        if !self.recorded() {
            return false;
        }
        let now = self.inner.now();
        match value {
            Ok(value) => match value.as_deref().map(parse_raw).transpose() {
                Ok(value) => {
                    let recorded =
                        self.inner
                            .store
                            .record_result(&self.id, seq, value.as_ref(), now);
                    self.step_recorded(recorded)
                }
                Err(reason) => step_unrecordable(self, seq, &reason, now),
            },
            Err(reason) => step_unrecordable(self, seq, &reason, now),
        }
    }

    fn step_fresh(
        &mut self,
        seq: u64,
        name: &str,
        value: Result<Option<Box<RawValue>>, String>,
    ) -> bool {
        if !self.recorded() {
            return false;
        }
        self.logged = true;
        let now = self.inner.now();
        let parsed = value.and_then(|value| value.as_deref().map(parse_raw).transpose());
        let unrecordable;
        let value = match &parsed {
            Ok(value) => Ok(value.as_ref()),
            Err(reason) => {
                let what = format!("The result of {}.{name}", crate::STEP_CONNECTOR);
                unrecordable = unserialisable(&what, reason);
                Err(unrecordable.as_str())
            }
        };
        let recorded = self
            .inner
            .store
            .record_step(&self.id, seq, name, value, now);
        self.step_recorded(recorded)
    }

    fn step_told(&mut self, seq: u64, name: &str, value: Option<Box<RawValue>>) -> bool {
        // A value too large to store is found by the store when it records the group: it fails the run
        // there, after the steps before it (`Store::record_steps`).
        match value.as_deref().map(parse_raw).transpose() {
            Ok(value) => {
                self.told.push(ToldStep {
                    seq,
                    name: name.to_owned(),
                    value,
                });
                self.told.len() < TOLD_AT_MOST || self.flush_steps()
            }
            // A value JSON cannot carry fails the run at this step, after the ones told before it.
            Err(_) => self.flush_steps() && self.step_fresh(seq, name, Ok(value)),
        }
    }

    fn flush_steps(&mut self) -> bool {
        if self.in_doubt {
            // The pass stops with a call in doubt; the next computes these steps again.
            self.told.clear();
            return false;
        }
        if self.told.is_empty() {
            return true;
        }
        let told = std::mem::take(&mut self.told);
        if !self.recorded() {
            return false;
        }
        self.logged = true;
        let now = self.inner.now();
        let recorded = self.inner.store.record_steps(&self.id, &told, now);
        self.step_recorded(recorded)
    }

    fn settle(&mut self) -> bool {
        // The outcome first: when it failed, the steps told after it are not recorded (`flush_steps`).
        self.outcome_recorded() && self.flush_steps()
    }

    fn steps_unrecorded(&self) -> bool {
        !self.told.is_empty()
    }

    fn search(&mut self, query: &str) -> Result<Box<RawValue>, String> {
        if !self.recorded() {
            return Err(UNRECORDED.to_owned());
        }
        self.handle
            .block_on(self.inner.search(query))
            .map(|output| raw(&output))
            .map_err(|e| e.to_string())
    }

    fn describe(&mut self, target: &str) -> Result<Box<RawValue>, String> {
        if !self.recorded() {
            return Err(UNRECORDED.to_owned());
        }
        self.handle
            .block_on(self.inner.describe(target))
            .map(|output| raw(&output))
            .map_err(|e| e.to_string())
    }

    fn snippet(&mut self, name: &str) -> SnippetAnswer {
        if !self.recorded() {
            return SnippetAnswer::Stop;
        }
        let error =
            |message: String| SnippetAnswer::Value(raw(&serde_json::json!({ "error": message })));
        let snippet = match self.inner.store.snippets(Some(name)) {
            Ok(mut found) if !found.is_empty() => found.remove(0),
            Ok(_) => return error(format!("Snippet \"{name}\" not found.")),
            Err(e) => return error(e.to_string()),
        };
        let missing: Vec<&str> = snippet
            .connectors
            .iter()
            .flatten()
            .filter(|c| self.inner.connector(c).is_none())
            .map(String::as_str)
            .collect();
        if !missing.is_empty() {
            return error(format!(
                "Snippet \"{name}\" requires connector(s) {} that are not configured on this runtime.",
                quoted_list(&missing)
            ));
        }
        SnippetAnswer::Code(snippet.code)
    }
}
