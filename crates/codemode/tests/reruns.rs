//! Rerun from a step (docs/history.md, "Rerun from a step"), counted by a connector's own ledger: nothing before
//! the step runs again, what follows runs once under today's rules, a program that leaves the old run's calls
//! runs fresh from there and says where, reruns of reruns, and the links both ways. On both stores
//! (`CODEMODE_TEST_STORE=postgres`).

mod support;

use codemode::{
    Actor, Departure, EntryState, ExecutionStatus, ForkedFrom, Outcome, Runtime, RuntimeError,
};
use serde_json::json;
use support::ledger::Ledger;

/// Creates two entities (which cannot be created twice: a second `create` fails), then writes — a call a
/// person approves.
const PROGRAM: &str = "async () => {
  const a = await ledger.create({ name: 'one' });
  const b = await ledger.create({ name: 'two' });
  await ledger.write({ path: 'notes.txt', content: a.name + '+' + b.name });
  return a.name + '+' + b.name;
}";

async fn approved_run(runtime: &Runtime, code: &str) -> String {
    let outcome = runtime.execute(code).await.expect("runs");
    let id = outcome.execution_id().to_owned();
    assert!(matches!(outcome, Outcome::Paused { .. }), "{outcome:?}");
    let outcome = runtime.approve(&id, Actor::Console, None).await.unwrap();
    assert!(matches!(outcome, Outcome::Completed { .. }), "{outcome:?}");
    id
}

fn methods_received(ledger: &Ledger, id: &str) -> Vec<(u64, String)> {
    ledger
        .received_by(id)
        .into_iter()
        .map(|r| (r.seq, r.method))
        .collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn a_rerun_is_served_the_calls_before_its_step_and_runs_the_rest_once() {
    let ledger = Ledger::new();
    let runtime = ledger.runtime().await;
    let old = approved_run(&runtime, PROGRAM).await;
    assert_eq!(ledger.with(|s| s.received.len()), 3);

    // From the write: both creates are served (run again, they would fail: the names exist), the write
    // asks a person again, as today's rules say.
    let outcome = runtime.rerun(&old, Some(2), None).await.unwrap();
    let rerun = outcome.execution_id().to_owned();
    assert!(
        matches!(outcome, Outcome::Paused { ref pending, .. } if pending[0].seq == 2),
        "{outcome:?}"
    );
    assert_eq!(
        methods_received(&ledger, &rerun),
        vec![],
        "nothing before the step ran"
    );
    let outcome = runtime.approve(&rerun, Actor::Console, None).await.unwrap();
    match &outcome {
        Outcome::Completed { result, .. } => assert_eq!(result, &Some(json!("one+two"))),
        other => panic!("{other:?}"),
    }
    assert_eq!(
        methods_received(&ledger, &rerun),
        vec![(2, "write".to_owned())],
        "the step ran once, after its approval"
    );
    assert_eq!(
        ledger.with(|s| s.received.len()),
        4,
        "the old run's calls ran once"
    );

    let stored = runtime.execution(&rerun).unwrap().unwrap();
    assert_eq!(
        stored.forked_from,
        Some(ForkedFrom {
            execution_id: old.clone(),
            seq: 2,
            diverged: None
        })
    );
    let inherited: Vec<(u64, bool, EntryState)> = stored
        .log
        .iter()
        .map(|e| (e.seq, e.inherited, e.state))
        .collect();
    assert_eq!(
        inherited,
        vec![
            (0, true, EntryState::Applied),
            (1, true, EntryState::Applied),
            (2, false, EntryState::Applied)
        ]
    );
    assert_eq!(stored.log[0].result, Some(json!({"name": "one"})));
    assert!(
        stored.log[0].decision.is_none(),
        "the old run's decisions stay on the old run"
    );
    let old_run = runtime.execution(&old).unwrap().unwrap();
    assert_eq!(old_run.reruns, vec![rerun.clone()]);
    assert_eq!(old_run.forked_from, None);

    // Rolling the rerun back undoes its own write only: the served creates are the old run's effects.
    let report = runtime.rollback(&rerun).await.unwrap();
    assert_eq!(
        report.reverted.iter().map(|r| r.seq).collect::<Vec<_>>(),
        vec![2]
    );
    assert_eq!(
        ledger.with(|s| s.reverted.clone()),
        vec![(rerun.clone(), 2, "write".to_owned())]
    );
    assert_eq!(ledger.with(|s| s.entities.len()), 2);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_program_that_leaves_the_old_calls_before_the_step_runs_fresh_from_there_and_says_so() {
    let ledger = Ledger::new();
    let runtime = ledger.runtime().await;
    let old = approved_run(&runtime, PROGRAM).await;

    let edited = PROGRAM.replace("name: 'two'", "name: 'three'");
    let outcome = runtime.rerun(&old, Some(2), Some(&edited)).await.unwrap();
    let rerun = outcome.execution_id().to_owned();
    assert!(matches!(outcome, Outcome::Paused { .. }), "{outcome:?}");
    assert_eq!(
        methods_received(&ledger, &rerun),
        vec![(1, "create".to_owned())],
        "the first create was served; the other one ran fresh"
    );
    let stored = runtime.execution(&rerun).unwrap().unwrap();
    let diverged = stored.forked_from.and_then(|f| f.diverged);
    assert_eq!(
        diverged,
        Some(Departure {
            seq: 1,
            detail: "ledger.create was called with other arguments".to_owned()
        })
    );
    assert_eq!(stored.code, edited, "the rerun keeps the program it ran");
    assert_eq!(
        stored.log.iter().map(|e| e.inherited).collect::<Vec<_>>(),
        vec![true, false, false]
    );
    runtime.approve(&rerun, Actor::Console, None).await.unwrap();
    assert_eq!(
        methods_received(&ledger, &rerun),
        vec![(1, "create".to_owned()), (2, "write".to_owned())]
    );

    // Another call entirely, before the step: the same, with the call named.
    let other = PROGRAM.replace("ledger.create({ name: 'two' })", "ledger.read()");
    let outcome = runtime.rerun(&old, Some(2), Some(&other)).await.unwrap();
    let stored = runtime.execution(outcome.execution_id()).unwrap().unwrap();
    assert_eq!(
        stored
            .forked_from
            .and_then(|f| f.diverged)
            .map(|d| d.sentence()),
        Some(
            "The program diverged from the old run at call 1 (expected ledger.create, got ledger.read); it ran fresh from there."
                .to_owned()
        )
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_rerun_of_a_rerun_links_all_three_and_serves_recorded_errors_and_steps() {
    let ledger = Ledger::new();
    let runtime = ledger.runtime().await;
    // A step's value (different on every run were it run again), and a connector error the program
    // catches: both are served back as recorded.
    let code = "async () => {
      const token = await codemode.step('token', () => Math.random());
      await ledger.create({ name: 'one' });
      let second;
      try { await ledger.create({ name: 'one' }); } catch (e) { second = e.message; }
      await ledger.write({ path: 'log.txt', content: String(token) });
      return { token, second };
    }";
    let old = approved_run(&runtime, code).await;
    let old_result = match runtime.execution(&old).unwrap().unwrap().result {
        Some(result) => result,
        None => panic!("a result"),
    };
    assert_eq!(
        old_result["second"],
        json!("Entity with name one already exists")
    );

    // From the end: everything is served, nothing runs, the same result.
    let first = runtime.rerun(&old, Some(4), None).await.unwrap();
    match &first {
        Outcome::Completed { result, .. } => assert_eq!(result.as_ref(), Some(&old_result)),
        other => panic!("{other:?}"),
    }
    let first = first.execution_id().to_owned();
    assert_eq!(methods_received(&ledger, &first), vec![]);

    // A rerun of the rerun, from the write: served from the first rerun's record.
    let second = runtime.rerun(&first, Some(3), None).await.unwrap();
    let second_id = second.execution_id().to_owned();
    runtime
        .approve(&second_id, Actor::Console, None)
        .await
        .unwrap();
    let stored = runtime.execution(&second_id).unwrap().unwrap();
    assert_eq!(stored.result, Some(old_result));
    assert_eq!(
        methods_received(&ledger, &second_id),
        vec![(3, "write".to_owned())]
    );
    assert_eq!(
        stored.forked_from.map(|f| f.execution_id),
        Some(first.clone())
    );
    let middle = runtime.execution(&first).unwrap().unwrap();
    assert_eq!(
        middle.forked_from.map(|f| f.execution_id),
        Some(old.clone())
    );
    assert_eq!(middle.reruns, vec![second_id]);
    assert_eq!(
        runtime.execution(&old).unwrap().unwrap().reruns,
        vec![first]
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_rerun_cannot_begin_past_a_call_without_an_outcome_and_changes_nothing() {
    let ledger = Ledger::new();
    let runtime = ledger.runtime().await;
    let rejected = runtime.execute(PROGRAM).await.unwrap();
    let rejected = rejected.execution_id().to_owned();
    runtime
        .reject(&rejected, 2, Actor::Console, None)
        .await
        .unwrap();
    let before = runtime.list_executions(&Default::default()).unwrap();

    let refused = runtime.rerun(&rejected, Some(3), None).await.unwrap_err();
    assert!(matches!(refused, RuntimeError::InvalidArgs(_)));
    assert_eq!(
        refused.to_string(),
        format!(
            "Call 2 (ledger.write) of execution \"{rejected}\" was rejected or rolled back: its outcome cannot be served. Rerun from 2 or earlier."
        )
    );
    let past = runtime.rerun(&rejected, Some(9), None).await.unwrap_err();
    assert!(
        past.to_string()
            .contains("a rerun can begin at 3 at the latest"),
        "{past}"
    );
    let missing = runtime.rerun("exec_nope", None, None).await.unwrap_err();
    assert_eq!(missing.to_string(), "No execution \"exec_nope\" to rerun.");
    assert_eq!(
        runtime.list_executions(&Default::default()).unwrap(),
        before,
        "no run was begun"
    );

    // From the rejected call itself: a fresh attempt at it, asked again.
    let outcome = runtime.rerun(&rejected, Some(2), None).await.unwrap();
    assert!(matches!(outcome, Outcome::Paused { .. }));
    assert_eq!(
        runtime
            .execution(outcome.execution_id())
            .unwrap()
            .unwrap()
            .status,
        ExecutionStatus::Paused
    );
    assert_eq!(methods_received(&ledger, outcome.execution_id()), vec![]);
}
