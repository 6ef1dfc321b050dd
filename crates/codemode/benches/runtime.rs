//! Runtime benchmark: the workloads `bench/run` times on the reference runtime (docs/performance.md), timed
//! in-process on a warm runtime with its store on disk, beside the reference's medians measured once on a
//! quiet machine (the figures below). Prints a table and writes `target/bench/runtime.json`; never asserts a
//! time.
//!
//! `cargo bench -p codemode --bench runtime`

use codemode::{Actor, Connector, Outcome, Runtime, RuntimeOptions};
use serde_json::{Value, json};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

mod support;
use support::{Echo, median, ms};

/// `kb.echo(args)` answers its arguments; `crm.create` needs approval.
const KB: Echo = Echo {
    name: "kb",
    methods: &[("echo", false)],
};
const CRM: Echo = Echo {
    name: "crm",
    methods: &[("create", true)],
};

fn sequential(n: usize) -> String {
    format!("async () => {{ for (let i = 0; i < {n}; i++) await kb.echo({{ i }}); return {n}; }}")
}

#[tokio::main(flavor = "multi_thread")]
async fn main() {
    let dir = std::env::temp_dir().join(format!("codemode-bench-{}", uuid::Uuid::new_v4()));
    let worker = support::worker();
    let options = RuntimeOptions {
        worker: Some(worker),
        keep_warm: true,
        max_executions: 1000,
        ..RuntimeOptions::default()
    };
    let connectors: Vec<Arc<dyn Connector>> = vec![Arc::new(KB), Arc::new(CRM)];
    let runtime = Runtime::open(&dir.join("codemode.db"), options, connectors)
        .await
        .expect("runtime");
    let idle = Duration::from_millis(5);

    // (workload, reference median ms, reps, how to run one rep)
    let mut rows: Vec<(String, f64, Duration)> = Vec::new();
    let fresh = [
        ("empty run", 16.6, 0usize, 30usize),
        ("fresh pass, 1 call", 20.7, 1, 30),
        ("fresh pass, 100 calls", 316.8, 100, 15),
        ("fresh pass, 1,000 calls", 3694.0, 1000, 5),
    ];
    for (name, reference, n, reps) in fresh {
        let code = if n == 0 {
            "async () => 1".to_owned()
        } else {
            sequential(n)
        };
        let mut samples = Vec::new();
        for _ in 0..=reps {
            tokio::time::sleep(idle).await;
            let started = Instant::now();
            let outcome = runtime.execute(&code).await.expect("execute");
            samples.push(started.elapsed());
            assert!(matches!(outcome, Outcome::Completed { .. }), "{outcome:?}");
        }
        samples.remove(0);
        rows.push((name.to_owned(), reference, median(samples)));
    }
    for (name, reference, k, reps) in [
        ("approve→resume, 0 recorded", 27.6, 0usize, 30usize),
        ("approve→resume, 100 recorded", 190.0, 100, 15),
        ("approve→resume, 1,000 recorded", 1490.0, 1000, 5),
    ] {
        let code = format!(
            "async () => {{ for (let i = 0; i < {k}; i++) await kb.echo({{ i }}); return await crm.create({{ title: 't' }}); }}"
        );
        let mut samples = Vec::new();
        for _ in 0..=reps {
            let paused = runtime.execute(&code).await.expect("execute");
            assert!(matches!(paused, Outcome::Paused { .. }), "{paused:?}");
            tokio::time::sleep(idle).await;
            let started = Instant::now();
            let done = runtime
                .approve(paused.execution_id(), Actor::Api, None)
                .await
                .expect("approve");
            samples.push(started.elapsed());
            assert!(matches!(done, Outcome::Completed { .. }), "{done:?}");
        }
        samples.remove(0);
        rows.push((name.to_owned(), reference, median(samples)));
    }
    let steps = "async () => { let t = 0; for (let i = 0; i < 100; i++) t += await codemode.step('s' + i, () => i); return t; }";
    let mut samples = Vec::new();
    for _ in 0..=15 {
        tokio::time::sleep(idle).await;
        let started = Instant::now();
        runtime.execute(steps).await.expect("steps");
        samples.push(started.elapsed());
    }
    samples.remove(0);
    rows.push(("100 codemode.step calls".to_owned(), 391.0, median(samples)));

    println!("runtime benchmark: in-process on a warm runtime, store on disk (median ms)");
    println!(
        "{:<34} {:>12} {:>10} {:>9}",
        "workload", "reference", "ours", "ratio"
    );
    let mut report = Vec::new();
    for (name, reference, ours) in &rows {
        let ratio = reference / ms(*ours);
        println!(
            "{name:<34} {reference:>12.1} {:>10.2} {:>8.0}×",
            ms(*ours),
            ratio
        );
        report.push(json!({"workload": name, "referenceMs": reference, "oursMs": ms(*ours), "ratio": ratio}));
    }
    let out = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../target/bench");
    if std::fs::create_dir_all(&out).is_ok() {
        let _ = std::fs::write(out.join("runtime.json"), Value::Array(report).to_string());
    }
    let _ = std::fs::remove_dir_all(&dir);
}
