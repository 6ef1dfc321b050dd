//! Scale figures: `search` over 2,000 connector methods and 500 snippets; `executions(50)`, `pending()` and
//! `list_executions` with 10,000 stored executions; database size per 1,000 executions of 10 calls; 32
//! concurrent executions of 100 calls on two runtimes sharing one database (throughput, busy errors).
//! Prints medians; never asserts a time.
//!
//! `cargo bench -p codemode --bench scale`

use codemode::connector::{Replay, ToolDescriptor};
use codemode::discovery::{Catalog, SearchIndex, search};
use codemode::{ExecutionQuery, Runtime, RuntimeOptions, Snippet};
use serde_json::json;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

mod support;
use support::{Echo, median_of};

const KB: Echo = Echo {
    name: "kb",
    methods: &[("echo", false), ("write", true)],
};

fn ms(d: Duration) -> String {
    format!("{:.3} ms", support::ms(d))
}

#[tokio::main(flavor = "multi_thread")]
async fn main() {
    // search: 40 connectors × 50 methods, 500 snippets.
    let words = [
        "issue", "pull", "request", "file", "user", "team", "deploy", "build", "ticket", "note",
        "event", "payment", "invoice", "customer", "order", "report", "label", "comment", "branch",
        "release",
    ];
    let tools: Vec<Vec<ToolDescriptor>> = (0..40)
        .map(|c| {
            (0..50)
                .map(|m| ToolDescriptor {
                    name: format!(
                        "{}_{}_{m}",
                        ["get", "list", "create", "update", "delete"][m % 5],
                        words[(c + m) % words.len()]
                    ),
                    description: Some(format!(
                        "{} the {} of a {} in service {c}",
                        ["Get", "List", "Create", "Update", "Delete"][m % 5],
                        words[(m * 7) % words.len()],
                        words[(c * 3 + m) % words.len()]
                    )),
                    replay: Replay::Log,
                    requires_approval: m % 5 >= 2,
                    ..Default::default()
                })
                .collect()
        })
        .collect();
    let names: Vec<String> = (0..40).map(|c| format!("service{c}")).collect();
    let catalogs: Vec<Catalog<'_>> = names
        .iter()
        .zip(&tools)
        .map(|(name, tools)| Catalog {
            name,
            instructions: None,
            tools: tools.iter().collect(),
        })
        .collect();
    let snippets: Vec<Snippet> = (0..500)
        .map(|i| Snippet {
            name: format!("recipe-{}-{i}", words[i % words.len()]),
            description: format!(
                "Recipe that handles a {} for a {}",
                words[(i * 3) % words.len()],
                words[(i * 5) % words.len()]
            ),
            code: "async () => 1".into(),
            saved_at: i as i64,
            input_schema: None,
            connectors: None,
        })
        .collect();
    let queries = [
        "create issue",
        "list pull requests",
        "customer invoice payment",
        "delete",
        "recipe report",
    ];
    let mut index = SearchIndex::new(&catalogs);
    index.add_snippets(&snippets);
    let search_time = median_of(50, || {
        for q in queries {
            std::hint::black_box(index.search(q));
        }
    }) / queries.len() as u32;
    let cold_search = median_of(20, || {
        std::hint::black_box(search(queries[0], &catalogs, &snippets));
    });

    // 10,000 stored executions (every 100th paused), each with 10 calls.
    let dir = std::env::temp_dir().join(format!("codemode-scale-{}", uuid::Uuid::new_v4()));
    let db = dir.join("codemode.db");
    let worker = support::worker();
    let options = RuntimeOptions {
        worker: Some(worker.clone()),
        keep_warm: true,
        max_executions: 100_000,
        ..RuntimeOptions::default()
    };
    let runtime = Runtime::open(&db, options, vec![Arc::new(KB)])
        .await
        .expect("runtime");
    let filling = Instant::now();
    for i in 0..10_000 {
        let code = if i % 100 == 0 {
            "async () => { for (let i = 0; i < 9; i++) await kb.echo({ i, text: 'some text ' + i }); await kb.write({ n: 1 }); }"
        } else {
            "async () => { for (let i = 0; i < 10; i++) await kb.echo({ i, text: 'some text ' + i }); return 'done'; }"
        };
        runtime.execute(code).await.expect("execute");
        if i == 999 {
            let mib = |path: PathBuf| {
                std::fs::metadata(path).map_or(0.0, |m| m.len() as f64 / (1 << 20) as f64)
            };
            println!(
                "database size after 1,000 executions of 10 calls: {:.2} MiB (+ {:.2} MiB of WAL not yet checkpointed)",
                mib(db.clone()),
                mib(dir.join("codemode.db-wal"))
            );
        }
    }
    let fill = filling.elapsed();
    let executions = median_of(30, || {
        std::hint::black_box(runtime.executions(Some(50)).expect("executions"));
    });
    let pending = median_of(30, || {
        std::hint::black_box(runtime.pending(None).expect("pending"));
    });
    let page = median_of(30, || {
        std::hint::black_box(
            runtime
                .list_executions(&ExecutionQuery {
                    limit: Some(100),
                    ..Default::default()
                })
                .expect("page"),
        );
    });
    let text = median_of(10, || {
        std::hint::black_box(
            runtime
                .list_executions(&ExecutionQuery {
                    text: Some("kb.write".into()),
                    limit: Some(100),
                    ..Default::default()
                })
                .expect("search"),
        );
    });
    println!(
        "filled 10,000 executions of 10 calls in {:.1} s ({:.2} ms each)",
        fill.as_secs_f64(),
        fill.as_secs_f64() * 1e3 / 10_000.0
    );
    println!("{:<58} {:>12} {:>8}", "measure", "median", "target");
    println!(
        "{:<58} {:>12} {:>8}",
        "search, 2,000 methods + 500 snippets (per query)",
        ms(search_time),
        "≤ 2 ms"
    );
    println!(
        "{:<58} {:>12} {:>8}",
        "executions(50) of 10,000 (with logs)",
        ms(executions),
        "≤ 5 ms"
    );
    println!(
        "{:<58} {:>12} {:>8}",
        "pending() with 100 paused of 10,000",
        ms(pending),
        "≤ 5 ms"
    );
    println!(
        "{:<58} {:>12} {:>8}",
        "search building its index on the spot (one query)",
        ms(cold_search),
        ""
    );
    println!(
        "{:<58} {:>12} {:>8}",
        "list_executions, first page of 100",
        ms(page),
        ""
    );
    println!(
        "{:<58} {:>12} {:>8}",
        "list_executions, text \"kb.write\", page of 100",
        ms(text),
        ""
    );
    let report = json!({"searchMs": search_time.as_secs_f64() * 1e3, "executions50Ms": executions.as_secs_f64() * 1e3,
        "pendingMs": pending.as_secs_f64() * 1e3, "listPageMs": page.as_secs_f64() * 1e3, "listTextMs": text.as_secs_f64() * 1e3});
    let _ = std::fs::remove_dir_all(&dir);

    let (concurrent, busy) = concurrency(&worker).await;
    println!(
        "{:<58} {:>12} {:>8}",
        "32 concurrent executions × 100 calls, two runtimes, one db",
        format!("{:.0} calls/s", concurrent.calls_per_second),
        ""
    );
    println!(
        "{:<58} {:>12} {:>8}",
        "  wall time for all 32 (median of 3 rounds)",
        ms(concurrent.wall),
        ""
    );
    println!(
        "{:<58} {:>12} {:>8}",
        "  SQLITE_BUSY / locked errors reaching callers", busy, "0"
    );
    let mut report = report;
    report["concurrentCallsPerSecond"] = json!(concurrent.calls_per_second);
    report["concurrentWallMs"] = json!(concurrent.wall.as_secs_f64() * 1e3);
    report["busyErrors"] = json!(busy);
    let out = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../target/bench");
    if std::fs::create_dir_all(&out).is_ok() {
        let _ = std::fs::write(out.join("scale.json"), report.to_string());
    }
}

struct Throughput {
    wall: Duration,
    calls_per_second: f64,
}

/// 32 executions of 100 calls at once, half on each of two runtimes over one database — the app and a
/// `codemode mcp` process sharing it. Returns the median round and how many callers saw a busy database.
async fn concurrency(worker: &std::path::Path) -> (Throughput, usize) {
    let dir = std::env::temp_dir().join(format!("codemode-concurrency-{}", uuid::Uuid::new_v4()));
    let db = dir.join("codemode.db");
    let open = || async {
        let options = RuntimeOptions {
            worker: Some(worker.to_path_buf()),
            keep_warm: true,
            ..RuntimeOptions::default()
        };
        Runtime::open(&db, options, vec![Arc::new(KB)])
            .await
            .expect("runtime")
    };
    let runtimes = [open().await, open().await];
    let code = "async () => { let n = 0; for (let i = 0; i < 100; i++) n += (await kb.echo({ i })).i; return n; }";
    let mut busy = 0;
    let mut rounds = Vec::new();
    for _ in 0..4 {
        let started = Instant::now();
        let tasks: Vec<_> = (0..32)
            .map(|i| {
                let runtime = runtimes[i % 2].clone();
                tokio::spawn(async move { runtime.execute(code).await })
            })
            .collect();
        for task in tasks {
            let text = match task.await.expect("task") {
                Ok(outcome) => {
                    let value = serde_json::to_value(&outcome).unwrap_or_default();
                    assert_eq!(value["result"], json!(4950), "{value}");
                    value["error"].as_str().unwrap_or_default().to_owned()
                }
                Err(error) => error.to_string(),
            };
            if text.contains("locked") || text.contains("busy") {
                busy += 1;
            }
        }
        rounds.push(started.elapsed());
    }
    // The first round also starts the workers.
    rounds.remove(0);
    rounds.sort();
    let wall = rounds[rounds.len() / 2];
    let _ = std::fs::remove_dir_all(&dir);
    (
        Throughput {
            wall,
            calls_per_second: 3200.0 / wall.as_secs_f64(),
        },
        busy,
    )
}
