//! How the executor manages worker processes: reuse without leaks between passes, replacement after a kill,
//! concurrency, deadlines that include slow host calls, and a clear error when the worker is missing.

mod support;

use codemode::{CallAnswer, ConnectorCall, Executor, ExecutorOptions, PassEnd, PassRequest};
use std::time::{Duration, Instant};
use support::{ItemsHost, executor, run};

#[test]
fn a_reused_worker_starts_every_pass_from_a_fresh_realm() {
    let executor = executor(Duration::from_secs(10), 512);
    let mut host = ItemsHost::default();
    let (first, _) = run(
        &executor,
        "globalThis.leak = 1; Object.prototype.polluted = 1; Array.prototype.push = null; Math.random = () => 4; return 'dirty'",
        Vec::new(),
        &mut host,
    );
    assert_eq!(first["result"], "dirty");
    let (second, _) = run(
        &executor,
        "return [typeof leak, ({}).polluted === undefined, typeof [].push, Math.random() < 1]",
        Vec::new(),
        &mut host,
    );
    assert_eq!(
        second["result"],
        serde_json::json!(["undefined", true, "function", true])
    );
}

#[test]
fn a_killed_worker_is_replaced_and_the_next_pass_runs() {
    let executor = executor(Duration::from_millis(500), 512);
    let mut host = ItemsHost::default();
    let (spin, _) = run(&executor, "while (true) {}", Vec::new(), &mut host);
    assert_eq!(spin["error"], "Code execution failed: Execution timed out");
    let (next, _) = run(&executor, "return 'alive'", Vec::new(), &mut host);
    assert_eq!(next["result"], "alive");
}

#[test]
fn passes_run_concurrently_on_separate_workers() {
    let executor = executor(Duration::from_secs(20), 512);
    let handles: Vec<_> = (0..8)
        .map(|i| {
            let executor = executor.clone();
            std::thread::spawn(move || {
                let mut host = ItemsHost::default();
                let code = format!("let t = 0; for (let j = 0; j < 20; j++) t += (await items.echo({{j}})).j; return [{i}, t]");
                run(&executor, &code, Vec::new(), &mut host).0
            })
        })
        .collect();
    for (i, handle) in handles.into_iter().enumerate() {
        let outcome = handle.join().expect("thread");
        assert_eq!(outcome["result"], serde_json::json!([i, 190]), "{outcome}");
    }
}

/// A host whose connector call takes longer than the pass may.
struct SlowHost {
    inner: ItemsHost,
    finished_calls: usize,
}

impl codemode::PassHost for SlowHost {
    fn call(&mut self, call: ConnectorCall) -> CallAnswer {
        std::thread::sleep(Duration::from_millis(600));
        self.finished_calls += 1;
        self.inner.call(call)
    }
    fn step_decide(&mut self, seq: u64, name: &str) -> codemode::StepAnswer {
        self.inner.step_decide(seq, name)
    }
    fn step_record(
        &mut self,
        seq: u64,
        value: Result<Option<Box<serde_json::value::RawValue>>, String>,
    ) -> bool {
        self.inner.step_record(seq, value)
    }
    fn search(&mut self, query: &str) -> Result<Box<serde_json::value::RawValue>, String> {
        self.inner.search(query)
    }
    fn describe(&mut self, target: &str) -> Result<Box<serde_json::value::RawValue>, String> {
        self.inner.describe(target)
    }
    fn snippet(&mut self, name: &str) -> codemode::SnippetAnswer {
        self.inner.snippet(name)
    }
}

#[test]
fn the_deadline_covers_host_calls_but_never_cuts_one_short() {
    let executor = executor(Duration::from_millis(300), 512);
    let mut host = SlowHost {
        inner: ItemsHost::default(),
        finished_calls: 0,
    };
    let request = PassRequest {
        code: "await items.echo(1); await items.echo(2)".to_owned(),
        connectors: vec!["items".to_owned()],
        log: Vec::new(),
        log_end: None,
    };
    let started = Instant::now();
    let outcome = executor.run(&request, &mut host).expect("runs");
    assert!(
        matches!(&outcome.end, PassEnd::Failed { error } if error == "Code execution failed: Execution timed out")
    );
    // The call that was in flight finished; the second one never started.
    assert_eq!(host.finished_calls, 1);
    assert!(started.elapsed() < Duration::from_secs(5));
}

#[test]
fn a_missing_worker_binary_is_a_clear_error() {
    let executor = Executor::new(ExecutorOptions {
        worker: Some("/nonexistent/codemode-worker".into()),
        ..ExecutorOptions::default()
    });
    let error = executor
        .run(&PassRequest::default(), &mut ItemsHost::default())
        .expect_err("cannot start");
    assert!(
        error.to_string().contains("/nonexistent/codemode-worker"),
        "{error}"
    );
}

#[test]
fn a_warm_executor_has_a_worker_ready() {
    let executor = Executor::new(ExecutorOptions {
        worker: Some(support::worker_path()),
        keep_warm: true,
        ..ExecutorOptions::default()
    });
    let mut host = ItemsHost::default();
    for _ in 0..3 {
        let (outcome, _) = run(&executor, "return 1", Vec::new(), &mut host);
        assert_eq!(outcome["result"], 1);
    }
}
