//! Executor benchmark: per-pass time for N sequential awaited calls to an in-memory echo connector — fresh
//! (each call answered by the host over the pipe) and replayed (each call served from the log inside the
//! worker) — beside `node` running the same program with an in-process echo, plus the host round trip and a
//! short pass on a warm worker. Prints a table; never asserts a time.
//!
//! `cargo bench -p codemode --bench executor` (builds the worker in release first).

use codemode::protocol::{ReplayEntry, raw};
use codemode::{
    CallAnswer, ConnectorCall, Executor, ExecutorOptions, PassEnd, PassHost, PassRequest,
    SnippetAnswer, StepAnswer,
};
use serde_json::json;
use serde_json::value::RawValue;
use std::path::PathBuf;
use std::process::Command;
use std::time::{Duration, Instant};

/// Between passes the worker builds its next context, as it does between an agent's calls.
const IDLE: Duration = Duration::from_millis(5);

struct Echo;

impl PassHost for Echo {
    fn call(&mut self, call: ConnectorCall) -> CallAnswer {
        CallAnswer::Value(call.args)
    }
    fn step_decide(&mut self, _: u64, _: &str) -> StepAnswer {
        StepAnswer::Execute
    }
    fn step_record(&mut self, _: u64, _: Result<Option<Box<RawValue>>, String>) -> bool {
        true
    }
    fn search(&mut self, _: &str) -> Result<Box<RawValue>, String> {
        Ok(raw(&json!({"results": []})))
    }
    fn describe(&mut self, _: &str) -> Result<Box<RawValue>, String> {
        Ok(raw(&json!({})))
    }
    fn snippet(&mut self, _: &str) -> SnippetAnswer {
        SnippetAnswer::Stop
    }
}

fn program(n: usize) -> String {
    format!(
        "async () => {{ let t = 0; for (let i = 0; i < {n}; i++) t += (await echo.call({{i}})).i; return t; }}"
    )
}

/// `idle` leaves the worker time to prepare its next context, as it has between an agent's calls.
fn time_pass(executor: &Executor, request: &PassRequest, reps: usize, idle: Duration) -> Duration {
    let mut samples = Vec::with_capacity(reps);
    for _ in 0..reps + 1 {
        std::thread::sleep(idle);
        let started = Instant::now();
        let outcome = executor.run(request, &mut Echo).expect("worker starts");
        samples.push(started.elapsed());
        assert!(
            matches!(outcome.end, PassEnd::Completed { .. }),
            "{:?}",
            outcome.end
        );
    }
    samples.remove(0); // warm-up
    median(samples)
}

/// The same program under node, timed inside node (no process start): its first run, cold as an agent's
/// one-off program is, and the median of later runs once the JIT has warmed up.
fn node_pass(n: usize, reps: usize) -> Option<(Duration, Duration)> {
    let script = format!(
        "const echo = {{ call: async (a) => a }};\nconst run = {};\nconst s = [];\n(async () => {{ for (let r = 0; r < {}; r++) {{ const t = process.hrtime.bigint(); await run(); s.push(Number(process.hrtime.bigint() - t)); }} const first = s.shift(); s.sort((a, b) => a - b); console.log(first, s[Math.floor(s.length / 2)]); }})();",
        program(n),
        reps + 1
    );
    let output = Command::new("node").arg("-e").arg(script).output().ok()?;
    let text = String::from_utf8_lossy(&output.stdout).into_owned();
    let mut numbers = text.split_whitespace().map(|n| n.parse::<u64>().ok());
    let first = numbers.next()??;
    let warm = numbers.next()??;
    Some((Duration::from_nanos(first), Duration::from_nanos(warm)))
}

fn ms(d: Duration) -> String {
    format!("{:.3}", support::ms(d))
}

mod support;
use support::median;

fn main() {
    let worker = support::worker();
    let executor = Executor::new(ExecutorOptions {
        worker: Some(worker),
        timeout: Duration::from_secs(120),
        keep_warm: true,
        ..ExecutorOptions::default()
    });
    let connectors = vec!["echo".to_owned()];
    let short = PassRequest {
        code: "async () => 1".to_owned(),
        connectors: connectors.clone(),
        log: Vec::new(),
        log_end: Some(0),
    };
    let warm_short = time_pass(&executor, &short, 200, IDLE);
    let busy_short = time_pass(&executor, &short, 200, Duration::ZERO);

    println!(
        "executor benchmark (median per pass, ms; ratios = ours / node's first run, ours / node warm)"
    );
    println!(
        "{:<7} {:>9} {:>9} {:>10} {:>10} {:>9} {:>9} {:>9} {:>9}",
        "N",
        "fresh",
        "replayed",
        "node 1st",
        "node warm",
        "fresh/1st",
        "repl/1st",
        "fresh/w",
        "repl/w"
    );
    let mut rows = Vec::new();
    let mut fresh_1000 = Duration::ZERO;
    let mut replay_1000 = Duration::ZERO;
    for (n, reps) in [(1usize, 100usize), (100, 30), (1000, 9), (10_000, 3)] {
        let fresh_request = PassRequest {
            code: program(n),
            connectors: connectors.clone(),
            log: Vec::new(),
            log_end: Some(0),
        };
        let replay_request = PassRequest {
            code: program(n),
            connectors: connectors.clone(),
            log: (0..n as u64)
                .map(|i| ReplayEntry {
                    seq: i,
                    connector: "echo".to_owned(),
                    method: "call".to_owned(),
                    args: Some(raw(&json!({"i": i}))),
                    result: Some(raw(&json!({"i": i}))),
                })
                .collect(),
            log_end: Some(n as u64),
        };
        let fresh = time_pass(&executor, &fresh_request, reps, IDLE);
        let replayed = time_pass(&executor, &replay_request, reps, IDLE);
        let node = node_pass(n, reps.max(5));
        if n == 1000 {
            fresh_1000 = fresh;
            replay_1000 = replayed;
        }
        let ratio = |ours: Duration, node: Option<Duration>| match node {
            Some(node) if !node.is_zero() => {
                format!("{:.1}", ours.as_secs_f64() / node.as_secs_f64())
            }
            _ => "n/a".to_owned(),
        };
        let (first, warm) = (node.map(|n| n.0), node.map(|n| n.1));
        let show = |d: Option<Duration>| d.map(ms).unwrap_or_else(|| "n/a".to_owned());
        println!(
            "{:<7} {:>9} {:>9} {:>10} {:>10} {:>9} {:>9} {:>9} {:>9}",
            n,
            ms(fresh),
            ms(replayed),
            show(first),
            show(warm),
            ratio(fresh, first),
            ratio(replayed, first),
            ratio(fresh, warm),
            ratio(replayed, warm)
        );
        rows.push(json!({"n": n, "freshMs": fresh.as_secs_f64() * 1e3, "replayedMs": replayed.as_secs_f64() * 1e3,
            "nodeFirstMs": first.map(|d| d.as_secs_f64() * 1e3),
            "nodeWarmMs": warm.map(|d| d.as_secs_f64() * 1e3)}));
    }
    let round_trip = fresh_1000.saturating_sub(replay_1000) / 1000;
    println!();
    println!(
        "host round trip per fresh call (fresh − replayed at N=1000): {:.1} µs",
        round_trip.as_secs_f64() * 1e6
    );
    println!(
        "short pass (async () => 1) on a warm, idle worker: {} ms",
        ms(warm_short)
    );
    println!(
        "short pass back to back (worker still preparing): {} ms",
        ms(busy_short)
    );
    let report = json!({"rows": rows, "roundTripMicros": round_trip.as_secs_f64() * 1e6, "warmShortPassMs": warm_short.as_secs_f64() * 1e3, "backToBackShortPassMs": busy_short.as_secs_f64() * 1e3});
    let out = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../target/bench");
    if std::fs::create_dir_all(&out).is_ok() {
        let _ = std::fs::write(out.join("executor.json"), report.to_string());
    }
}
