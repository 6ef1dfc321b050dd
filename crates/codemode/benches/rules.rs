//! Rule evaluation figures (issue 20): the verdict for one call with 0, 100 and 1,000 literal/glob rules and
//! with 100 regex rules, and a 100-call pass with 1,000 rules beside the same pass with none. Prints medians
//! and the ratio; never asserts a time.
//!
//! `cargo bench -p codemode --bench rules`

use codemode::rules::{Call, CompiledRule, Rule, RuleIndex};
use codemode::{BoxFuture, CallContext, Connector, Runtime, RuntimeOptions, ToolDescriptor};
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
    samples.sort();
    samples[samples.len() / 2]
}

struct Echo;

impl Connector for Echo {
    fn name(&self) -> &str {
        "c0"
    }
    fn tools(&self) -> BoxFuture<'_, Result<Vec<ToolDescriptor>, String>> {
        Box::pin(async {
            Ok(vec![ToolDescriptor {
                name: "m0".into(),
                ..Default::default()
            }])
        })
    }
    fn execute<'a>(
        &'a self,
        _: &'a str,
        args: Option<Value>,
        _: CallContext,
    ) -> BoxFuture<'a, Result<Option<Value>, String>> {
        Box::pin(async move { Ok(args) })
    }
}

fn worker() -> std::path::PathBuf {
    let exe = std::env::current_exe().expect("bench binary");
    let dir = exe.parent().and_then(|d| d.parent()).expect("target dir");
    dir.join("codemode-worker")
}

async fn pass_with(rules: usize) -> Duration {
    let db = std::env::temp_dir()
        .join(format!("codemode-bench-rules-{}", uuid::Uuid::new_v4()))
        .join("codemode.db");
    let runtime = Runtime::open(
        &db,
        RuntimeOptions {
            worker: Some(worker()),
            keep_warm: true,
            max_executions: 1_000,
            ..RuntimeOptions::default()
        },
        vec![Arc::new(Echo)],
    )
    .await
    .expect("opens");
    for (i, compiled) in literal_and_glob(rules).into_iter().enumerate() {
        let mut rule = compiled.rule;
        // Some aim at the benchmarked method itself.
        if i % 10 == 0 {
            rule.call = "c0.m0".to_owned();
        }
        runtime.add_rule(rule, "bench").expect("added");
    }
    let code = "async () => { for (let i = 0; i < 100; i++) await c0.m0({ path: 'data/' + i }); return 1; }";
    for _ in 0..3 {
        runtime.execute(code).await.expect("warm-up");
    }
    let mut samples = Vec::new();
    for _ in 0..15 {
        tokio::time::sleep(Duration::from_millis(50)).await;
        let started = Instant::now();
        let outcome = runtime.execute(code).await.expect("runs");
        samples.push(started.elapsed());
        assert_eq!(outcome.status(), "completed");
    }
    samples.sort();
    samples[samples.len() / 2]
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
    let none = tokio.block_on(pass_with(0));
    let many = tokio.block_on(pass_with(1_000));
    println!("a 100-call pass (median of 15):");
    println!("  no rules:     {none:>8.2?}");
    println!(
        "  1,000 rules:  {many:>8.2?}  ({:+.1}%)",
        (many.as_secs_f64() / none.as_secs_f64() - 1.0) * 100.0
    );
}
