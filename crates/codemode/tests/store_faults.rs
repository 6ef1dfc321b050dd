//! A failed write after an effect is never forgotten (docs/design.md, "When the store fails"): the store is
//! made to refuse writes right after a connector acted, and the run must then stop interrupted with that call
//! in doubt — never replayed as if it had not run — and be recoverable once the store takes writes again.
//! On SQLite the process's own connection refuses writes; on PostgreSQL the database does (a trigger), and
//! the call's outcome, sent without waiting there (docs/semantics.md §3.6), is found unrecorded at the
//! program's next request.

mod support;

use codemode::{
    Actor, BoxFuture, CallContext, Connector, EntryState, Runtime, RuntimeError, RuntimeOptions,
    StoreFault, StoreLocation, ToolDescriptor,
};
use serde_json::{Value, json};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

/// `act` (gated) and `note` (not gated) each count an effect, then make the store refuse writes while the
/// test says so: the failure lands exactly between the effect and its record.
#[derive(Default)]
struct Sink {
    effects: Mutex<Vec<(String, u64, String)>>,
    runtime: OnceLock<Runtime>,
    store: OnceLock<StoreLocation>,
    fail_after_effect: Mutex<bool>,
}

impl Sink {
    /// The store refuses writes (`true`) or takes them again.
    fn refuse_writes(&self, refuse: bool) {
        let (Some(runtime), Some(store)) = (self.runtime.get(), self.store.get()) else {
            return;
        };
        match store {
            StoreLocation::File(_) => {
                runtime.inject_store_fault_for_tests(refuse.then_some(StoreFault::ReadOnly))
            }
            StoreLocation::Postgres(url) if refuse => {
                support::store::psql(url, support::store::PG_REFUSE_WRITES, true)
            }
            StoreLocation::Postgres(url) => {
                support::store::psql(url, support::store::PG_TAKE_WRITES, false)
            }
        }
    }
}

impl Connector for Sink {
    fn name(&self) -> &str {
        "sink"
    }

    fn tools(&self) -> BoxFuture<'_, Result<Vec<ToolDescriptor>, String>> {
        Box::pin(async {
            Ok(vec![
                ToolDescriptor {
                    name: "act".into(),
                    requires_approval: true,
                    ..ToolDescriptor::default()
                },
                ToolDescriptor {
                    name: "note".into(),
                    ..ToolDescriptor::default()
                },
            ])
        })
    }

    fn execute<'a>(
        &'a self,
        method: &'a str,
        _args: Option<Value>,
        ctx: CallContext,
    ) -> BoxFuture<'a, Result<Option<Value>, String>> {
        Box::pin(async move {
            self.effects
                .lock()
                .unwrap()
                .push((ctx.execution_id, ctx.seq, method.to_owned()));
            if *self.fail_after_effect.lock().unwrap() {
                self.refuse_writes(true);
            }
            Ok(Some(json!({"done": true})))
        })
    }
}

async fn sink_runtime() -> (Arc<Sink>, Runtime) {
    let sink = Arc::new(Sink::default());
    let db = std::env::temp_dir()
        .join(format!("codemode-faults-{}", uuid::Uuid::new_v4()))
        .join("codemode.db");
    let options = RuntimeOptions {
        worker: Some(support::worker_path()),
        ..RuntimeOptions::default()
    };
    let connector: Arc<dyn Connector> = sink.clone();
    let store = support::store_at(&db);
    let runtime = Runtime::open(store.clone(), options, vec![connector])
        .await
        .expect("runtime");
    let _ = sink.runtime.set(runtime.clone());
    let _ = sink.store.set(store);
    (sink, runtime)
}

/// The store takes writes again; the run of the first effect, once its failed pass has been let go.
async fn healed_and_let_go(sink: &Sink, runtime: &Runtime) -> codemode::ExecutionState {
    sink.refuse_writes(false);
    let id = sink.effects.lock().unwrap()[0].0.clone();
    assert!(interrupted(runtime, &id).await, "the pass was let go");
    runtime.execution(&id).unwrap().unwrap()
}

/// Once the store takes writes again: the pass was let go, and its log holds the one call in doubt, nothing
/// recorded behind it.
async fn only_the_call_in_doubt(sink: &Sink, runtime: &Runtime) {
    let run = healed_and_let_go(sink, runtime).await;
    assert_eq!(
        run.log.len(),
        1,
        "nothing recorded behind it: {:?}",
        run.log
    );
    assert_eq!(run.log[0].state, EntryState::Executing, "in doubt");
}

/// Waits (bounded) for the background release of the pass to reach the store once it takes writes again.
async fn interrupted(runtime: &Runtime, id: &str) -> bool {
    for _ in 0..200 {
        if runtime
            .execution(id)
            .ok()
            .flatten()
            .is_some_and(|run| run.interrupted)
        {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    false
}

#[tokio::test(flavor = "multi_thread")]
async fn an_approved_call_whose_outcome_could_not_be_recorded_is_in_doubt_never_replayed_as_not_run()
 {
    let (sink, runtime) = sink_runtime().await;
    let paused = runtime
        .execute("async () => { await sink.act(); return 'after'; }")
        .await
        .unwrap();
    let id = paused.execution_id().to_owned();
    *sink.fail_after_effect.lock().unwrap() = true;
    let error = runtime
        .approve(&id, Actor::Console, None)
        .await
        .expect_err("the outcome could not be recorded");
    assert!(matches!(error, RuntimeError::Interrupted(_)), "{error:?}");
    let message = error.to_string();
    assert!(
        message.contains("the outcome of sink.act (call 0) could not be recorded after it ran")
            && message.contains("in doubt"),
        "{message}"
    );
    assert_eq!(sink.effects.lock().unwrap().len(), 1);

    // The store takes writes again: the run is interrupted, its call still executing (in doubt).
    *sink.fail_after_effect.lock().unwrap() = false;
    sink.refuse_writes(false);
    assert!(interrupted(&runtime, &id).await, "the pass was let go");
    let run = runtime.execution(&id).unwrap().unwrap();
    assert_eq!(run.log[0].state, EntryState::Executing, "{:?}", run.log);

    // Recovering asks a person again rather than replaying the call as if it had not run.
    let recovered = serde_json::to_value(runtime.recover(&id).await.unwrap()).unwrap();
    assert_eq!(recovered["status"], "paused", "{recovered}");
    assert_eq!(recovered["pending"][0]["interrupted"], true, "{recovered}");
    assert_eq!(sink.effects.lock().unwrap().len(), 1, "nothing ran again");
}

#[tokio::test(flavor = "multi_thread")]
async fn an_ungated_call_whose_outcome_could_not_be_recorded_stops_the_pass() {
    let (sink, runtime) = sink_runtime().await;
    *sink.fail_after_effect.lock().unwrap() = true;
    let error = runtime
        .execute(
            "async () => { try { await sink.note(); } catch (e) { return 'caught'; } await sink.note(); return 'went on'; }",
        )
        .await
        .expect_err("the pass stops");
    assert!(matches!(error, RuntimeError::Interrupted(_)), "{error:?}");
    assert_eq!(
        sink.effects.lock().unwrap().len(),
        1,
        "the program did not go on past the unrecorded call"
    );
    let run = healed_and_let_go(&sink, &runtime).await;
    assert_eq!(run.log[0].state, EntryState::Executing, "in doubt");
}

/// A runtime on PostgreSQL whose store refuses only a call's outcome (updates of the log's rows), while new
/// records are still taken.
async fn refusing_outcomes() -> (Arc<Sink>, Runtime) {
    let (sink, runtime) = sink_runtime().await;
    let StoreLocation::Postgres(url) = sink.store.get().expect("the store").clone() else {
        unreachable!("on PostgreSQL");
    };
    let refuse_outcomes = "
        CREATE FUNCTION cm_test_refuse() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN
          RAISE EXCEPTION 'outcomes refused' USING ERRCODE = 'read_only_sql_transaction';
        END $$;
        CREATE TRIGGER cm_test_refuse_log BEFORE UPDATE ON cm_log
          FOR EACH ROW EXECUTE FUNCTION cm_test_refuse();";
    support::store::psql(&url, refuse_outcomes, false);
    (sink, runtime)
}

/// Only a call's outcome is refused (updates of the log's rows), while new records would still be taken: on
/// PostgreSQL, where the outcome is sent ahead, the next call is then not recorded at all — nothing is written
/// behind an outcome that did not land (docs/semantics.md §3.6).
#[tokio::test(flavor = "multi_thread")]
async fn no_call_is_recorded_behind_an_outcome_that_did_not_land() {
    if !support::on_postgres() {
        return; // SQLite records an outcome before the program goes on: nothing is sent ahead.
    }
    let (sink, runtime) = refusing_outcomes().await;
    let error = runtime
        .execute("async () => { await sink.note(); await sink.note(); return 'went on'; }")
        .await
        .expect_err("the pass stops");
    assert!(matches!(error, RuntimeError::Interrupted(_)), "{error:?}");
    assert_eq!(
        sink.effects.lock().unwrap().len(),
        1,
        "the second call never ran"
    );
    only_the_call_in_doubt(&sink, &runtime).await;
}

/// A program that ends right after a call whose outcome was refused does not complete: on PostgreSQL its
/// completion travels behind that outcome, in the same flight, and commits only if the outcome did
/// (docs/semantics.md §3.6) — the run is interrupted with the call in doubt, not completed over it.
#[tokio::test(flavor = "multi_thread")]
async fn a_run_does_not_complete_behind_an_outcome_that_did_not_land() {
    if !support::on_postgres() {
        return; // SQLite records an outcome before the program goes on: nothing is sent ahead.
    }
    let (sink, runtime) = refusing_outcomes().await;
    let error = runtime
        .execute("async () => { await sink.note(); return 'done'; }")
        .await
        .expect_err("the pass stops");
    assert!(matches!(error, RuntimeError::Interrupted(_)), "{error:?}");
    assert!(
        error
            .to_string()
            .contains("the outcome of sink.note (call 0) could not be recorded after it ran"),
        "{error}"
    );
    only_the_call_in_doubt(&sink, &runtime).await;
}

/// A step told after a call whose outcome could not be recorded does not hide it: the pass ends interrupted
/// with that call in doubt, whatever the step's own record met.
#[tokio::test(flavor = "multi_thread")]
async fn a_step_after_an_unrecorded_outcome_leaves_the_call_in_doubt() {
    let (sink, runtime) = sink_runtime().await;
    *sink.fail_after_effect.lock().unwrap() = true;
    let error = runtime
        .execute(
            "async () => { await sink.note(); await codemode.step('after', () => 1); return 'went on'; }",
        )
        .await
        .expect_err("the pass stops");
    assert!(matches!(error, RuntimeError::Interrupted(_)), "{error:?}");
    assert!(
        error
            .to_string()
            .contains("the outcome of sink.note (call 0) could not be recorded after it ran"),
        "{error}"
    );
    only_the_call_in_doubt(&sink, &runtime).await;
}
