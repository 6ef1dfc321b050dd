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

/// The requests a test host does not answer itself, answered by the `ItemsHost` it wraps (`self.inner`).
macro_rules! answers_the_rest_as_items_host {
    () => {
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
    };
}

/// A host whose connector call takes longer than the pass may.
struct SlowHost {
    inner: ItemsHost,
    finished_calls: usize,
}

impl codemode::PassHost for SlowHost {
    answers_the_rest_as_items_host!();
    fn call(&mut self, call: ConnectorCall) -> CallAnswer {
        std::thread::sleep(Duration::from_millis(600));
        self.finished_calls += 1;
        self.inner.call(call)
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

/// A host that holds the steps the worker tells it and records them in groups, as the runtime's does;
/// `refuse` makes every group fail to record (a run no longer running, a store that failed).
#[derive(Default)]
struct GroupingHost {
    inner: ItemsHost,
    held: Vec<u64>,
    /// What happened, in order: `told 3`, `recorded [0, 1]`, `call 5`.
    events: Vec<String>,
    refuse: bool,
}

impl codemode::PassHost for GroupingHost {
    answers_the_rest_as_items_host!();
    fn call(&mut self, call: ConnectorCall) -> CallAnswer {
        self.events.push(format!("call {}", call.seq));
        self.inner.call(call)
    }
    fn step_told(
        &mut self,
        seq: u64,
        _name: &str,
        _value: Option<Box<serde_json::value::RawValue>>,
    ) -> bool {
        self.events.push(format!("told {seq}"));
        self.held.push(seq);
        true
    }
    fn flush_steps(&mut self) -> bool {
        if self.held.is_empty() {
            return true;
        }
        let group = std::mem::take(&mut self.held);
        if self.refuse {
            self.events.push(format!("refused {group:?}"));
            return false;
        }
        self.events.push(format!("recorded {group:?}"));
        true
    }
    fn steps_unrecorded(&self) -> bool {
        !self.held.is_empty()
    }
}

fn fresh_steps_then_a_call() -> PassRequest {
    PassRequest {
        code:
            "let t = 0; for (let i = 0; i < 50; i++) t += await codemode.step('s' + i, () => i); \
               return [t, await items.echo(t)]"
                .to_owned(),
        connectors: vec!["items".to_owned()],
        log: Vec::new(),
        // Nothing is recorded: every step is new, run without asking and told.
        log_end: Some(0),
    }
}

#[test]
fn steps_told_are_all_recorded_before_the_next_call_reaches_the_host() {
    let executor = executor(Duration::from_secs(10), 512);
    let mut host = GroupingHost::default();
    let outcome = executor
        .run(&fresh_steps_then_a_call(), &mut host)
        .expect("runs");
    assert!(
        matches!(&outcome.end, PassEnd::Completed { .. }),
        "{:?}",
        outcome.end
    );
    let call = host
        .events
        .iter()
        .position(|event| event == "call 50")
        .expect("the call reached the host");
    let recorded: Vec<u64> = host.events[..call]
        .iter()
        .filter_map(|event| event.strip_prefix("recorded "))
        .flat_map(|group| serde_json::from_str::<Vec<u64>>(group).expect("a group"))
        .collect();
    assert_eq!(recorded, (0..50).collect::<Vec<u64>>(), "{:?}", host.events);
    assert!(host.events[call..].iter().all(|e| !e.starts_with("told")));
}

#[test]
fn a_step_that_could_not_be_recorded_stops_the_program_before_its_next_call() {
    let executor = executor(Duration::from_secs(10), 512);
    let mut host = GroupingHost {
        refuse: true,
        ..GroupingHost::default()
    };
    let outcome = executor
        .run(&fresh_steps_then_a_call(), &mut host)
        .expect("runs");
    assert!(
        matches!(&outcome.end, PassEnd::Stopped),
        "{:?}",
        outcome.end
    );
    assert!(
        host.events.iter().all(|event| !event.starts_with("call")),
        "{:?}",
        host.events
    );
}

#[test]
fn steps_told_before_a_pass_times_out_are_recorded() {
    let executor = executor(Duration::from_millis(500), 512);
    let mut host = GroupingHost::default();
    let request = PassRequest {
        code: "await codemode.step('before', () => 1); while (true) {}".to_owned(),
        connectors: Vec::new(),
        log: Vec::new(),
        log_end: Some(0),
    };
    let outcome = executor.run(&request, &mut host).expect("runs");
    assert!(
        matches!(&outcome.end, PassEnd::Failed { error } if error == "Code execution failed: Execution timed out"),
        "{:?}",
        outcome.end
    );
    assert_eq!(host.events, ["told 0", "recorded [0]"]);
}
