//! The trust invariants as a standing property test (docs/design.md, "Trust invariants"): over many generated
//! programs and generated sequences of decisions (approve, reject, a world that changes between passes so
//! replays diverge, rollback, expiry), compare what the `ledger` connector itself received and reverted with
//! what the log says:
//! - every applied call was received exactly once, with exactly the recorded (approved) arguments, and a gated
//!   one only after a decision;
//! - every input the connector received belongs to a recorded call that ran, and no call ran twice;
//! - every reverted call had been applied, and none was reverted twice;
//! - a terminal run's status changes only to `rolled_back`, and a decision once recorded never changes;
//! - when the store fails right after a connector acted (SQLite read-only or full; PostgreSQL refusing writes
//!   or its connections terminated), the call is recorded or left in doubt — the run stops `interrupted`, and
//!   recovering asks about it again — and is never replayed as if it had not run (docs/design.md, "When the
//!   store fails").

mod support;

use codemode::RefusalKind;
use codemode::{
    Actor, DecisionKind, EntryState, ExecutionState, ExecutionStatus, Runtime, RuntimeError,
    RuntimeOptions, StoreFault, StoreLocation, ToolLogEntry,
};
use proptest::prelude::*;
use proptest::test_runner::{Config, TestCaseError, TestRunner};
use serde_json::json;
use std::collections::{HashMap, HashSet};
use std::time::Duration;
use support::TestClock;
use support::ledger::Ledger;

/// One statement of a generated program.
#[derive(Debug, Clone)]
enum Op {
    Read(u8),
    Write(u8),
    WriteNoArgs,
    /// Arguments that depend on the re-executed `mode`: they change when the world changes.
    WriteByMode,
    Pay(u8),
    Charge(u8),
    Create(u8),
    Step(u8),
}

impl Op {
    fn js(&self) -> String {
        let call = match self {
            Op::Read(n) => format!("ledger.read({{ n: {n} }})"),
            Op::Write(n) => format!("ledger.write({{ path: 'p{n}' }})"),
            Op::WriteNoArgs => "ledger.write()".to_owned(),
            Op::WriteByMode => {
                "ledger.write(mode === 0 ? undefined : { path: 'm' + mode })".to_owned()
            }
            Op::Pay(n) => format!("ledger.pay({{ amount: {n} }})"),
            Op::Charge(n) => format!("ledger.charge({{ amount: {n} }})"),
            Op::Create(n) => format!("ledger.create({{ name: 'e{}' }})", n % 3),
            Op::Step(n) => format!("codemode.step('s{n}', () => ({{ n: {n}, at: mode }}))"),
        };
        format!("  try {{ out.push(await {call}); }} catch (e) {{ out.push(e.message); }}\n")
    }
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        any::<u8>().prop_map(Op::Read),
        any::<u8>().prop_map(Op::Write),
        Just(Op::WriteNoArgs),
        Just(Op::WriteByMode),
        any::<u8>().prop_map(Op::Pay),
        any::<u8>().prop_map(Op::Charge),
        any::<u8>().prop_map(Op::Create),
        any::<u8>().prop_map(Op::Step),
    ]
}

/// What happens while a run is paused (or after it ended).
#[derive(Debug, Clone)]
enum Action {
    Approve,
    /// Approved with other arguments (`{path: 'edited'}`): those must be what runs.
    ApproveEdited,
    Reject,
    /// The world changes (the re-executed `mode` reads another value), then the run is approved.
    ChangeWorldThenApprove(u8),
    Rollback,
    /// The clock moves a day on and expiry sweeps.
    Expire,
    /// The store fails right after the next effect, then the run is approved: read-only (`false`), or full
    /// (SQLite) / closed to connections with the ones it had terminated (PostgreSQL) (`true`).
    StoreFailsAfterEffect(bool),
}

fn action() -> impl Strategy<Value = Action> {
    prop_oneof![
        4 => Just(Action::Approve),
        1 => Just(Action::ApproveEdited),
        1 => Just(Action::Reject),
        2 => (0u8..3).prop_map(Action::ChangeWorldThenApprove),
        1 => Just(Action::Rollback),
        1 => Just(Action::Expire),
        1 => any::<bool>().prop_map(Action::StoreFailsAfterEffect),
    ]
}

/// Closes the PostgreSQL database `name` to new connections and terminates the ones it has, as a failover
/// does (run from the server's own `postgres` database: a database cannot close itself).
fn pg_close(name: &str) -> String {
    format!(
        "ALTER DATABASE \"{name}\" WITH ALLOW_CONNECTIONS false;
         SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE datname = '{name}';"
    )
}

/// `url` with its database replaced by the server's own `postgres`.
fn server_of(url: &str) -> String {
    let (server, _) = url.rsplit_once('/').expect("the URL names a database");
    format!("{server}/postgres")
}

fn database_of(url: &str) -> String {
    url.rsplit_once('/')
        .expect("the URL names a database")
        .1
        .to_owned()
}

/// The fault `other` names on this store, as a hook for the ledger to run right after its next effect.
fn fault(runtime: &Runtime, store: &StoreLocation, other: bool) -> Box<dyn FnOnce() + Send> {
    match store {
        StoreLocation::File(_) => {
            let runtime = runtime.clone();
            let fault = if other {
                StoreFault::Full
            } else {
                StoreFault::ReadOnly
            };
            Box::new(move || runtime.inject_store_fault_for_tests(Some(fault)))
        }
        StoreLocation::Postgres(url) => {
            let url = url.clone();
            if other {
                Box::new(move || {
                    support::store::psql(&server_of(&url), &pg_close(&database_of(&url)), false)
                })
            } else {
                Box::new(move || {
                    support::store::psql(&url, support::store::PG_REFUSE_WRITES, false)
                })
            }
        }
    }
}

/// The store takes writes again.
fn heal(runtime: &Runtime, store: &StoreLocation) {
    match store {
        StoreLocation::File(_) => runtime.inject_store_fault_for_tests(None),
        StoreLocation::Postgres(url) => {
            let open = format!(
                "ALTER DATABASE \"{}\" WITH ALLOW_CONNECTIONS true",
                database_of(url)
            );
            support::store::psql(&server_of(url), &open, false);
            support::store::psql(url, support::store::PG_TAKE_WRITES, false);
        }
    }
}

/// Waits (bounded) until the pass the store failed has been let go: its background release retries.
async fn let_go(runtime: &Runtime, id: &str) -> bool {
    for _ in 0..400 {
        if runtime
            .execution(id)
            .ok()
            .flatten()
            .is_some_and(|run| run.interrupted)
        {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    false
}

fn program(ops: &[Op]) -> String {
    let body: String = ops.iter().map(Op::js).collect();
    format!(
        "async () => {{\n  const mode = await ledger.mode();\n  const out = [];\n{body}  return out;\n}}"
    )
}

fn is_terminal(status: ExecutionStatus) -> bool {
    status.is_terminal()
}

/// The invariants that hold between any two observations of the store.
struct Observer {
    statuses: HashMap<String, ExecutionStatus>,
    decisions: HashMap<(String, u64), (String, i64)>,
}

impl Observer {
    fn observe(&mut self, runtime: &Runtime) -> Result<(), TestCaseError> {
        for execution in runtime.executions(None).map_err(fail)? {
            if let Some(before) = self.statuses.get(&execution.id)
                && is_terminal(*before)
                && *before != execution.status
            {
                prop_assert!(
                    execution.status == ExecutionStatus::RolledBack
                        && *before != ExecutionStatus::RolledBack,
                    "terminal run {} went from {before} to {}",
                    execution.id,
                    execution.status
                );
            }
            self.statuses.insert(execution.id.clone(), execution.status);
            for entry in &execution.log {
                if let (Some(by), Some(at)) = (&entry.decided_by, entry.decided_at) {
                    let key = (execution.id.clone(), entry.seq);
                    if let Some(before) = self.decisions.get(&key) {
                        prop_assert_eq!(before, &(by.clone(), at), "decision changed at {:?}", key);
                    }
                    self.decisions.insert(key, (by.clone(), at));
                }
            }
        }
        Ok(())
    }
}

fn fail(error: impl std::fmt::Display) -> TestCaseError {
    TestCaseError::fail(error.to_string())
}

/// A decision the runtime refuses (the run is no longer paused, the call not pending) is part of the game;
/// any other error is a failure.
fn allow_refusal<T>(result: Result<T, RuntimeError>) -> Result<(), TestCaseError> {
    match result {
        Ok(_) => Ok(()),
        Err(error) if error.refusal() == Some(RefusalKind::Stale) => Ok(()),
        Err(error) => Err(fail(error)),
    }
}

/// What the connector saw, against the log.
fn check_ledger(
    ledger: &Ledger,
    executions: &[ExecutionState],
    in_doubt: &HashSet<(String, u64)>,
) -> Result<(), TestCaseError> {
    let (received, reverted) = ledger.with(|s| (s.received.clone(), s.reverted.clone()));
    let logs: HashMap<&str, &Vec<ToolLogEntry>> =
        executions.iter().map(|e| (e.id.as_str(), &e.log)).collect();
    let entry = |id: &str, seq: u64| {
        logs.get(id)
            .and_then(|log| log.iter().find(|e| e.seq == seq))
    };
    let mut ran = HashSet::new();
    for input in received.iter().filter(|r| r.method != "mode") {
        let key = (input.execution_id.clone(), input.seq);
        let entry = entry(&input.execution_id, input.seq);
        let entry = entry.ok_or_else(|| fail(format!("no log entry for {key:?}")))?;
        // Recovering re-executes an ungated call in doubt with the same (execution id, seq), by which a
        // connector applies it once; a gated one only a person can run again.
        let again = in_doubt.contains(&key) && !entry.requires_approval;
        prop_assert!(ran.insert(key.clone()) || again, "ran twice: {key:?}");
        prop_assert_eq!(&entry.method, &input.method);
        // What ran is what was approved: the program's arguments, or the ones a person edited.
        let approved = match &entry.decision {
            Some(decision) if decision.kind == DecisionKind::Edited => decision.args.clone(),
            _ => entry.args.clone(),
        };
        prop_assert_eq!(
            &approved,
            &input.args,
            "received other arguments than approved at {:?}",
            key
        );
        if entry.requires_approval {
            prop_assert!(
                entry.decided_by.is_some(),
                "a gated call ran undecided: {key:?}"
            );
        }
        let ran_state = matches!(entry.state, EntryState::Applied | EntryState::Reverted)
            || (entry.state == EntryState::Error && entry.error.is_some());
        // A call whose outcome the failing store lost stays in doubt, or was decided again by a person.
        prop_assert!(
            ran_state || in_doubt.contains(&key),
            "a call that ran is {:?} at {key:?}",
            entry.state
        );
    }
    for execution in executions {
        for entry in &execution.log {
            if entry.connector != "ledger" || entry.method == "mode" {
                continue;
            }
            let key = (execution.id.clone(), entry.seq);
            if entry.state == EntryState::Applied {
                prop_assert!(ran.contains(&key), "applied but never received: {key:?}");
            }
            if matches!(entry.state, EntryState::Pending | EntryState::Executing)
                && !in_doubt.contains(&key)
            {
                prop_assert!(!ran.contains(&key), "{:?} but it ran: {key:?}", entry.state);
            }
        }
    }
    let mut undone = HashSet::new();
    for (id, seq, method) in &reverted {
        let key = (id.clone(), *seq);
        prop_assert!(undone.insert(key.clone()), "reverted twice: {key:?}");
        prop_assert!(
            ran.contains(&key),
            "reverted {method} that never ran: {key:?}"
        );
        let entry = entry(id, *seq).ok_or_else(|| fail(format!("no entry for revert {key:?}")))?;
        prop_assert!(
            entry.error.is_none(),
            "reverted a call that failed: {key:?}"
        );
    }
    Ok(())
}

#[test]
fn what_runs_is_what_was_approved_and_rollback_undoes_only_what_happened() {
    let tokio = tokio::runtime::Runtime::new().expect("tokio");
    let mut runner = TestRunner::new(Config {
        cases: 64,
        failure_persistence: None,
        ..Config::default()
    });
    let strategy = (
        prop::collection::vec(prop::collection::vec(op(), 1..7), 1..4),
        prop::collection::vec(action(), 1..12),
    );
    let faults = std::cell::RefCell::new(Faults::default());
    let result = runner.run(&strategy, |(programs, actions)| {
        let mut faults = faults.borrow_mut();
        tokio.block_on(async {
            let db = std::env::temp_dir()
                .join(format!("codemode-invariants-{}", uuid::Uuid::new_v4()))
                .join("codemode.db");
            let ledger = Ledger::new();
            let clock = TestClock::at(1_700_000_000_000);
            let store = support::store_at(&db);
            let runtime = Runtime::open(
                store.clone(),
                RuntimeOptions {
                    worker: Some(support::worker_path()),
                    keep_warm: true,
                    clock: clock.clone(),
                    ..RuntimeOptions::default()
                },
                vec![ledger.clone()],
            )
            .await
            .map_err(fail)?;
            let mut observer = Observer {
                statuses: HashMap::new(),
                decisions: HashMap::new(),
            };
            let mut ids = Vec::new();
            let mut in_doubt = HashSet::new();
            for ops in &programs {
                let outcome = runtime.execute(&program(ops)).await.map_err(fail)?;
                ids.push(outcome.execution_id().to_owned());
                observer.observe(&runtime)?;
            }
            for (turn, action) in actions.iter().enumerate() {
                let id = &ids[turn % ids.len()];
                match action {
                    Action::Approve => {
                        allow_refusal(runtime.approve(id, Actor::Console, None).await)?;
                    }
                    Action::ApproveEdited => {
                        let edited = json!({"path": "edited", "amount": 1, "name": "e9"});
                        allow_refusal(runtime.approve(id, Actor::Console, Some(edited)).await)?;
                    }
                    Action::Reject => {
                        let pending = runtime.pending(Some(id)).map_err(fail)?;
                        let seq = pending.first().map_or(0, |p| p.seq);
                        allow_refusal(runtime.reject(id, seq, Actor::Cli, None).await)?;
                    }
                    Action::ChangeWorldThenApprove(mode) => {
                        ledger.with(|s| s.mode = json!(mode));
                        allow_refusal(runtime.approve(id, Actor::Console, None).await)?;
                    }
                    Action::Rollback => {
                        allow_refusal(runtime.rollback(id).await)?;
                    }
                    Action::StoreFailsAfterEffect(other) => {
                        *ledger.after_effect.lock().unwrap() =
                            Some(fault(&runtime, &store, *other));
                        // A full disk refuses what grows the file: a result that needs new pages.
                        if *other {
                            ledger.with(|s| s.pad_next_result = 64 * 1024);
                        }
                        let before = ledger.with(|s| s.received.len());
                        let approved = runtime.approve(id, Actor::Console, None).await;
                        // Disarmed when nothing acted; the store takes writes again either way.
                        let fired = ledger.after_effect.lock().unwrap().take().is_none();
                        heal(&runtime, &store);
                        ledger.with(|s| s.pad_next_result = 0);
                        let kind = match (&store, other) {
                            (StoreLocation::File(_), false) => "SQLite read-only",
                            (StoreLocation::File(_), true) => "SQLite full",
                            (StoreLocation::Postgres(_), false) => "PostgreSQL refusing writes",
                            (StoreLocation::Postgres(_), true) => {
                                "PostgreSQL closed and its connections terminated"
                            }
                        };
                        faults.by_kind.entry(kind).or_default().0 += u64::from(fired);
                        match approved {
                            Err(RuntimeError::Interrupted(message)) => {
                                prop_assert!(fired, "interrupted with no fault: {message}");
                                prop_assert!(
                                    message.contains("could not be recorded"),
                                    "{message}"
                                );
                                faults.by_kind.entry(kind).or_default().1 += 1;
                                let doubted = ledger.with(|s| {
                                    s.received[before..]
                                        .last()
                                        .map(|r| (r.execution_id.clone(), r.seq))
                                });
                                let doubted =
                                    doubted.ok_or_else(|| fail("no effect before the fault"))?;
                                prop_assert!(
                                    let_go(&runtime, id).await,
                                    "the failed pass was never let go"
                                );
                                in_doubt.insert(doubted.clone());
                                // Recovering asks again about a gated call in doubt (or records an
                                // ungated one as failed); it never runs it as if it had not run.
                                let received = ledger.with(|s| s.received.len());
                                let gated = runtime
                                    .execution(id)
                                    .map_err(fail)?
                                    .and_then(|run| {
                                        run.log.into_iter().find(|e| e.seq == doubted.1)
                                    })
                                    .is_some_and(|entry| entry.requires_approval);
                                let recovered = runtime.recover(id).await.map_err(fail)?;
                                if gated {
                                    prop_assert_eq!(
                                        ledger.with(|s| s.received.len()),
                                        received,
                                        "recovering ran a gated call in doubt again"
                                    );
                                }
                                let recovered = serde_json::to_value(&recovered).map_err(fail)?;
                                if recovered["status"] == "paused"
                                    && recovered["pending"][0]["seq"] == doubted.1
                                {
                                    prop_assert_eq!(
                                        &recovered["pending"][0]["interrupted"],
                                        &json!(true),
                                        "{}",
                                        recovered
                                    );
                                    // As a careful person would: it may have run.
                                    allow_refusal(
                                        runtime
                                            .reject(
                                                id,
                                                doubted.1,
                                                Actor::Cli,
                                                Some("it may have run"),
                                            )
                                            .await,
                                    )?;
                                }
                            }
                            other => allow_refusal(other)?,
                        }
                    }
                    Action::Expire => {
                        clock.advance(24 * 3_600_000 + 1);
                        runtime
                            .expire_paused(Duration::from_secs(3_600))
                            .await
                            .map_err(fail)?;
                    }
                }
                observer.observe(&runtime)?;
            }
            let executions = runtime.executions(None).map_err(fail)?;
            check_ledger(&ledger, &executions, &in_doubt)
        })
    });
    if let Err(error) = result {
        panic!("{error}");
    }
    let faults = faults.into_inner();
    for (kind, (injected, interrupted)) in &faults.by_kind {
        println!(
            "properties: what_runs_is_what_was_approved: {kind} after an effect {injected} times, {interrupted} of them interrupting the run"
        );
    }
    assert!(
        faults
            .by_kind
            .values()
            .any(|(_, interrupted)| *interrupted > 0),
        "no generated case failed the store after an effect"
    );
}

/// How often the generated cases failed the store, by kind: (after an effect, interrupting the run).
#[derive(Default)]
struct Faults {
    by_kind: std::collections::BTreeMap<&'static str, (u64, u64)>,
}
