//! Rule evaluation figures (issue 20): the verdict for one call with 0, 100 and 1,000 literal/glob rules and
//! with 100 regex rules, and a 100-call pass with 1,000 rules beside the same pass with none. Prints medians
//! and the ratio; never asserts a time.
//!
//! `cargo bench -p codemode --bench rules`

use codemode::rules::{Call, CompiledRule, Rule, RuleIndex};
use codemode::{Runtime, RuntimeOptions};
use serde_json::{Value, json};
use std::sync::Arc;
use std::time::{Duration, Instant};

fn rule(value: Value) -> CompiledRule {
    let rule: Rule = serde_json::from_value(value).expect("a rule");
    CompiledRule::new(rule).expect("valid")
}

/// `count` rules spread over 200 methods of 20 connectors, half literal conditions, half globs; none matches
/// the benchmarked call's arguments, so every candidate is checked.
fn literal_and_glob(count: usize) -> Vec<CompiledRule> {
    (0..count)
        .map(|i| {
            let call = format!("c{}.m{}", i % 20, i % 200);
            if i % 2 == 0 {
                rule(json!({"id": format!("r{i}"), "effect": "allow", "call": call, "when": {"path": format!("p{i}")}}))
            } else {
                rule(json!({"id": format!("r{i}"), "effect": "allow", "call": call, "when": {"path": {"glob": format!("dir{i}/**")}}}))
            }
        })
        .collect()
}

fn regexes(count: usize) -> Vec<CompiledRule> {
    (0..count)
        .map(|i| rule(json!({"id": format!("x{i}"), "effect": "ask", "call": "*", "when": {"query": {"regex": format!("\\s*mutation{i}\\b[\\s\\S]*")}}})))
        .collect()
}

fn per_call(index: &RuleIndex, args: &Value) -> Duration {
    let call = Call {
        path: "c0.m0",
        args: Some(args),
        source: Some("Claude Code"),
        now: 0,
    };
    let reps = 20_000;
    let mut samples = Vec::with_capacity(15);
    for _ in 0..15 {
        let started = Instant::now();
        for _ in 0..reps {
            std::hint::black_box(index.evaluate(std::hint::black_box(&call), true));
        }
        samples.push(started.elapsed() / reps);
    }
    median(samples)
}

mod support;
use support::{Echo, median};

const C0: Echo = Echo {
    name: "c0",
    methods: &[("m0", false)],
};

const PASS: &str =
    "async () => { for (let i = 0; i < 100; i++) await c0.m0({ path: 'data/' + i }); return 1; }";

/// A warm runtime holding `rules` rules, one in ten of them on the benchmarked method itself.
async fn runtime_with(rules: usize) -> Runtime {
    let db = std::env::temp_dir()
        .join(format!("codemode-bench-rules-{}", uuid::Uuid::new_v4()))
        .join("codemode.db");
    let runtime = Runtime::open(
        &db,
        RuntimeOptions {
            worker: Some(support::worker()),
            keep_warm: true,
            max_executions: 1_000,
            ..RuntimeOptions::default()
        },
        vec![Arc::new(C0)],
    )
    .await
    .expect("opens");
    for (i, compiled) in literal_and_glob(rules).into_iter().enumerate() {
        let mut rule = compiled.rule;
        if i % 10 == 0 {
            rule.call = "c0.m0".to_owned();
        }
        runtime.add_rule(rule, "bench").expect("added");
    }
    for _ in 0..3 {
        runtime.execute(PASS).await.expect("warm-up");
    }
    runtime
}

async fn time_pass(runtime: &Runtime) -> Duration {
    tokio::time::sleep(Duration::from_millis(50)).await;
    let started = Instant::now();
    let outcome = runtime.execute(PASS).await.expect("runs");
    let elapsed = started.elapsed();
    assert_eq!(outcome.status(), "completed");
    elapsed
}

/// Both passes, alternating, so a slow moment of the machine lands on both sides alike.
async fn passes(reps: usize) -> (Duration, Duration) {
    let (none, many) = (runtime_with(0).await, runtime_with(1_000).await);
    let (mut a, mut b) = (Vec::new(), Vec::new());
    for _ in 0..reps {
        a.push(time_pass(&none).await);
        b.push(time_pass(&many).await);
    }
    (median(a), median(b))
}

fn main() {
    let args = json!({"path": "notes/today.md", "content": "x", "query": "query { a }"});
    println!("rule evaluation, one call (median of 15 × 20,000):");
    for count in [0, 100, 1_000] {
        let index = RuleIndex::new(literal_and_glob(count));
        println!(
            "  {count:>5} literal/glob rules: {:>8.2?}",
            per_call(&index, &args)
        );
    }
    let index = RuleIndex::new(regexes(100));
    println!(
        "    100 regex rules (every call):  {:>8.2?}",
        per_call(&index, &args)
    );

    let tokio = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .expect("tokio");
    let (none, many) = tokio.block_on(passes(41));
    println!("a 100-call pass (median of 41, alternating):");
    println!("  no rules:     {none:>8.2?}");
    println!(
        "  1,000 rules:  {many:>8.2?}  ({:+.1}%)",
        (many.as_secs_f64() / none.as_secs_f64() - 1.0) * 100.0
    );
}
