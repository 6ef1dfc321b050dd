//! A process that dies inside a connector call (`abort()`, as `kill -9` would) must lose nothing: paused runs
//! stay approvable, its own run shows as interrupted, and `recover` takes it over — re-running a pass whose
//! in-flight call needed no approval, and asking a human again for an approved call that may already have
//! been applied, instead of silently applying it twice; and a rollback undoes such a call whatever was decided
//! about it since.

mod support;

use codemode::RefusalKind;
use codemode::{
    Actor, BoxFuture, CallContext, Connector, ExecutionStatus, Runtime, RuntimeOptions,
    ToolDescriptor,
};
use serde_json::{Value, json};
use std::io::Write;
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

/// `read` is a logged read; `explode` (no approval) and `launch` (approval) append their effect to a file and,
/// in the crashing process, abort right after.
struct Bomb {
    effects: PathBuf,
    abort: bool,
    reads: AtomicUsize,
}

impl Bomb {
    /// Appends `<what> <execution id> <seq>` to the effects file.
    fn record(&self, what: &str, ctx: &CallContext) -> Result<(), String> {
        let mut file = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&self.effects)
            .map_err(|e| e.to_string())?;
        writeln!(file, "{what} {} {}", ctx.execution_id, ctx.seq).map_err(|e| e.to_string())
    }
}

impl Connector for Bomb {
    fn name(&self) -> &str {
        "bomb"
    }
    fn tools(&self) -> BoxFuture<'_, Result<Vec<ToolDescriptor>, String>> {
        Box::pin(async {
            Ok(vec![
                ToolDescriptor {
                    name: "read".into(),
                    ..Default::default()
                },
                ToolDescriptor {
                    name: "explode".into(),
                    revertible: true,
                    ..Default::default()
                },
                ToolDescriptor {
                    name: "launch".into(),
                    revertible: true,
                    requires_approval: true,
                    ..Default::default()
                },
                ToolDescriptor {
                    name: "note".into(),
                    revertible: true,
                    requires_approval: true,
                    ..Default::default()
                },
            ])
        })
    }
    fn execute<'a>(
        &'a self,
        method: &'a str,
        _: Option<Value>,
        ctx: CallContext,
    ) -> BoxFuture<'a, Result<Option<Value>, String>> {
        Box::pin(async move {
            if method == "read" {
                self.reads.fetch_add(1, Ordering::SeqCst);
                return Ok(Some(json!("read")));
            }
            self.record(method, &ctx)?;
            if self.abort && method != "note" {
                std::process::abort();
            }
            Ok(Some(json!({"applied": method})))
        })
    }
    fn revert<'a>(
        &'a self,
        method: &'a str,
        _: Option<Value>,
        _: Option<Value>,
        ctx: CallContext,
    ) -> BoxFuture<'a, Result<bool, String>> {
        Box::pin(async move {
            if method == "read" {
                return Ok(false);
            }
            self.record(&format!("undo-{method}"), &ctx)?;
            Ok(true)
        })
    }
}

async fn open(db: &Path, effects: &Path, abort: bool) -> (Runtime, Arc<Bomb>) {
    let bomb = Arc::new(Bomb {
        effects: effects.to_owned(),
        abort,
        reads: AtomicUsize::new(0),
    });
    let options = RuntimeOptions {
        worker: Some(support::worker_path()),
        ..RuntimeOptions::default()
    };
    let connector: Arc<dyn Connector> = bomb.clone();
    (
        Runtime::open(support::store_at(db), options, vec![connector])
            .await
            .expect("runtime opens"),
        bomb,
    )
}

/// The crashing process.
#[test]
#[ignore = "helper process for the crash tests, started by them"]
fn crash_peer() {
    let (Some(db), Some(effects), Ok(scenario)) = (
        std::env::var_os("CRASH_DB"),
        std::env::var_os("CRASH_EFFECTS"),
        std::env::var("CRASH_SCENARIO"),
    ) else {
        return;
    };
    let tokio = tokio::runtime::Runtime::new().expect("tokio");
    tokio.block_on(async {
        let (runtime, _) = open(Path::new(&db), Path::new(&effects), true).await;
        let paused = runtime.execute("async () => bomb.launch({ target: 'p' })").await.expect("execute");
        assert_eq!(paused.status(), "paused");
        match scenario.as_str() {
            "acknowledged" => {
                let paused = runtime.execute("async () => bomb.note({})").await.expect("execute");
                let done = runtime.approve(paused.execution_id(), Actor::Console, None).await.expect("approve");
                assert_eq!(done.status(), "completed", "{done:?}");
                // The approval was acknowledged; the process dies before anything else happens.
                std::process::abort();
            }
            "explode" => {
                runtime.execute("async () => { await bomb.read(); await bomb.explode({}); return 'done' }").await.expect("never returns");
            }
            _ => {
                let gated = runtime.execute("async () => { await bomb.read(); return await bomb.launch({ target: 'g' }) }").await.expect("execute");
                runtime.approve(gated.execution_id(), Actor::Console, None).await.expect("never returns");
            }
        }
    });
    unreachable!("the connector aborts the process");
}

fn crash(scenario: &str) -> (PathBuf, PathBuf) {
    let dir = std::env::temp_dir().join(format!("codemode-crash-{}", uuid::Uuid::new_v4()));
    let (db, effects) = (dir.join("codemode.db"), dir.join("effects.log"));
    let status = Command::new(std::env::current_exe().expect("test binary"))
        .args([
            "--exact",
            "crash_peer",
            "--ignored",
            "--nocapture",
            "--test-threads=1",
        ])
        .env("CRASH_DB", &db)
        .env("CRASH_EFFECTS", &effects)
        .env("CRASH_SCENARIO", scenario)
        .status()
        .expect("peer runs");
    assert_eq!(
        status.signal(),
        Some(libc::SIGABRT),
        "the peer died inside the connector call: {status:?}"
    );
    (db, effects)
}

fn effects(path: &Path, method: &str) -> usize {
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .filter(|l| l.starts_with(&format!("{method} ")))
        .count()
}

#[tokio::test(flavor = "multi_thread")]
async fn a_crash_in_an_unapproved_call_is_recovered_by_running_the_pass_again() {
    let (db, effect_log) = crash("explode");
    let (runtime, bomb) = open(&db, &effect_log, false).await;
    let executions = runtime.executions(None).unwrap();
    let interrupted = executions
        .iter()
        .find(|e| e.status == ExecutionStatus::Running)
        .expect("the crashed run");
    assert!(interrupted.interrupted, "{interrupted:?}");
    assert_eq!(interrupted.log[1].method, "explode");

    // Paused runs are untouched and still approvable.
    let pending = runtime.pending(None).unwrap();
    assert_eq!(pending.len(), 1);
    let approved = runtime
        .approve(&pending[0].execution_id, Actor::Api, None)
        .await
        .unwrap();
    assert_eq!(approved.status(), "completed");

    let recovered = serde_json::to_value(runtime.recover(&interrupted.id).await.unwrap()).unwrap();
    assert_eq!(recovered["status"], "completed", "{recovered}");
    assert_eq!(recovered["result"], "done");
    assert_eq!(
        bomb.reads.load(Ordering::SeqCst),
        0,
        "the recorded read was replayed"
    );
    assert_eq!(
        effects(&effect_log, "explode"),
        2,
        "a call without approval is at-least-once"
    );
    let again = runtime.recover(&interrupted.id).await.unwrap_err();
    assert_eq!(
        again.to_string(),
        format!(
            "Execution \"{}\" is not interrupted (status: completed); only an interrupted run can be recovered.",
            interrupted.id
        )
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_crash_in_an_approved_call_asks_a_human_again() {
    let (db, effect_log) = crash("launch");
    assert_eq!(
        effects(&effect_log, "launch"),
        1,
        "the approved call ran once before the crash"
    );
    let (runtime, _) = open(&db, &effect_log, false).await;
    let interrupted = runtime
        .executions(None)
        .unwrap()
        .into_iter()
        .find(|e| e.status == ExecutionStatus::Running)
        .expect("the crashed run");
    assert!(interrupted.interrupted);
    assert_eq!(interrupted.log[1].decided_by.as_deref(), Some("console"));

    let recovered = serde_json::to_value(runtime.recover(&interrupted.id).await.unwrap()).unwrap();
    assert_eq!(recovered["status"], "paused", "{recovered}");
    assert_eq!(recovered["pending"][0]["interrupted"], true);
    assert_eq!(recovered["pending"][0]["method"], "launch");
    assert_eq!(
        effects(&effect_log, "launch"),
        1,
        "not applied again without a new decision"
    );
    assert!(runtime.execution(&interrupted.id).unwrap().unwrap().log[1].interrupted);

    let decided = serde_json::to_value(
        runtime
            .approve(&interrupted.id, Actor::Cli, None)
            .await
            .unwrap(),
    )
    .unwrap();
    assert_eq!(decided["status"], "completed", "{decided}");
    assert_eq!(decided["result"], json!({"applied": "launch"}));
    assert_eq!(decided["calls"][1]["decidedBy"], "cli");
    assert_eq!(effects(&effect_log, "launch"), 2);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_live_run_cannot_be_recovered() {
    let dir = std::env::temp_dir().join(format!("codemode-crash-{}", uuid::Uuid::new_v4()));
    let (runtime, _) = open(&dir.join("codemode.db"), &dir.join("effects.log"), false).await;
    let done = runtime.execute("async () => 1").await.unwrap();
    let refused = runtime.recover(done.execution_id()).await.unwrap_err();
    assert_eq!(refused.refusal(), Some(RefusalKind::Stale));
    assert!(
        refused
            .to_string()
            .contains("is not interrupted (status: completed)")
    );
    let unknown = runtime.recover("exec_nope").await.unwrap_err();
    assert_eq!(unknown.refusal(), Some(RefusalKind::NotFound));
    assert_eq!(
        unknown.to_string(),
        "No execution \"exec_nope\" to recover."
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn an_acknowledged_approval_survives_the_process_dying_right_after() {
    let (db, effect_log) = crash("acknowledged");
    let (runtime, _) = open(&db, &effect_log, false).await;
    let noted = runtime
        .executions(None)
        .unwrap()
        .into_iter()
        .find(|e| e.code.contains("bomb.note"))
        .expect("the approved run");
    assert_eq!(noted.status, ExecutionStatus::Completed);
    assert_eq!(noted.result, Some(json!({"applied": "note"})));
    assert_eq!(effects(&effect_log, "note"), 1);
}

#[tokio::test(flavor = "multi_thread")]
async fn expiry_still_reclaims_an_interrupted_run() {
    let (db, effect_log) = crash("explode");
    let (runtime, _) = open(&db, &effect_log, false).await;
    tokio::time::sleep(Duration::from_millis(5)).await;
    let expired = runtime.expire_paused(Duration::ZERO).await.unwrap();
    assert_eq!(expired.len(), 2, "the paused run and the interrupted one");
    let executions = runtime.executions(None).unwrap();
    let statuses: Vec<(ExecutionStatus, Option<String>)> = executions
        .iter()
        .map(|e| (e.status, e.error.clone()))
        .collect();
    assert!(
        statuses.contains(&(
            ExecutionStatus::Error,
            Some("Expired while running — the host never completed the pass".into())
        )),
        "{statuses:?}"
    );
    assert!(
        statuses.contains(&(
            ExecutionStatus::Rejected,
            Some("Expired awaiting approval".into())
        )),
        "{statuses:?}"
    );
}

/// The crashed gated run, as the next process finds it.
async fn interrupted_launch() -> (Runtime, PathBuf, String) {
    let (db, effect_log) = crash("launch");
    let (runtime, _) = open(&db, &effect_log, false).await;
    let id = runtime
        .executions(None)
        .unwrap()
        .into_iter()
        .find(|e| e.status == ExecutionStatus::Running)
        .expect("the crashed run")
        .id;
    (runtime, effect_log, id)
}

#[tokio::test(flavor = "multi_thread")]
async fn a_rollback_undoes_an_approved_call_that_may_have_been_applied() {
    // Straight after the crash, with the call still `executing`.
    let (runtime, effect_log, id) = interrupted_launch().await;
    let report = runtime.rollback(&id).await.unwrap();
    assert_eq!(
        report.status,
        Some(ExecutionStatus::RolledBack),
        "{report:?}"
    );
    assert_eq!(
        report.reverted.iter().map(|r| r.seq).collect::<Vec<_>>(),
        [1]
    );
    assert_eq!(effects(&effect_log, "undo-launch"), 1);
    let again = runtime.rollback(&id).await.unwrap();
    assert!(again.reverted.is_empty(), "undone once: {again:?}");
    assert_eq!(effects(&effect_log, "undo-launch"), 1);

    // The run's other paused call was never approved: it has nothing to undo.
    let paused = runtime.pending(None).unwrap()[0].execution_id.clone();
    let untouched = runtime.rollback(&paused).await.unwrap();
    assert!(untouched.reverted.is_empty(), "{untouched:?}");
    assert_eq!(untouched.status, Some(ExecutionStatus::Paused));

    // Paused again for a human, then rolled back instead of decided: no longer approvable.
    let (runtime, effect_log, id) = interrupted_launch().await;
    runtime.recover(&id).await.unwrap();
    let plan = runtime.rollback_plan(&id).await.unwrap();
    assert_eq!(
        plan.iter().map(|e| e.seq).collect::<Vec<_>>(),
        [1],
        "the console's rollback plan shows it"
    );
    let report = runtime.rollback(&id).await.unwrap();
    assert_eq!(
        report.status,
        Some(ExecutionStatus::RolledBack),
        "{report:?}"
    );
    assert_eq!(effects(&effect_log, "undo-launch"), 1);
    let stale = runtime.approve(&id, Actor::Cli, None).await.unwrap_err();
    assert_eq!(
        stale.to_string(),
        format!(
            "Execution \"{id}\" is not paused (status: rolled_back); only a paused run can be approved."
        )
    );
    assert_eq!(effects(&effect_log, "launch"), 1, "not applied again");

    // Paused again, rejected (which cannot undo what may have happened), then rolled back.
    let (runtime, effect_log, id) = interrupted_launch().await;
    runtime.recover(&id).await.unwrap();
    runtime.reject(&id, 1, Actor::Console, None).await.unwrap();
    let report = runtime.rollback(&id).await.unwrap();
    assert_eq!(
        report.status,
        Some(ExecutionStatus::RolledBack),
        "{report:?}"
    );
    assert_eq!(effects(&effect_log, "undo-launch"), 1);
    assert!(runtime.rollback(&id).await.unwrap().reverted.is_empty());
    assert_eq!(effects(&effect_log, "undo-launch"), 1);
}
