//! Several hosts on one store, printed and never asserted (docs/shared-store.md, "Figures"): N host processes,
//! each running the same loop for S seconds: a run of 10 calls whose last call waits for approval, approved at
//! once by the host itself. On PostgreSQL each process is its own host (its own data directory); on SQLite they
//! share one data directory, as processes on one machine do. Then the latency of an approval handed to another
//! host: B approves A's run, A resumes it with its own connectors, B gets the outcome.

use super::{Samples, gated, toys};
use codemode::Actor;
use connectors::{Home, HomeOptions};
use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const CALLS: usize = 10;

/// `codemode-bench hosts --store URL [--hosts N] [--seconds S] [--reps R]`: `reps` hand-offs are timed (and
/// as many approvals on the run's own host), after one that warms both hosts up.
pub fn run(store: &str, hosts: usize, seconds: u64, reps: usize) -> Result<(), String> {
    let hosts = hosts.max(1);
    println!(
        "\nconcurrent throughput: each process loops {seconds} s over a run of {CALLS} calls whose last waits for \
         approval, approved at once by the same process (runs/s; {} cores)\n",
        std::thread::available_parallelism().map_or(0, |n| n.get())
    );
    println!(
        "{:<40} {:>9} {:>8} {:>10} {:>14}",
        "store", "processes", "runs", "runs/s", "per process"
    );
    let mut counts = [1, hosts].to_vec();
    counts.dedup();
    let mut table = Vec::new();
    for (label, url) in [
        ("SQLite (one data directory)", None),
        ("PostgreSQL (one host each)", Some(store)),
    ] {
        for &n in &counts {
            let runs = load_in_processes(url, n, seconds)?;
            let rate = runs as f64 / seconds as f64;
            println!(
                "{:<40} {:>9} {:>8} {:>10.1} {:>14.1}",
                label,
                n,
                runs,
                rate,
                rate / n as f64
            );
            table
                .push(json!({"store": label, "processes": n, "runs": runs, "runsPerSecond": rate}));
        }
    }
    let (handed, local) = hand_off_latency(store, reps.max(1))?;
    println!(
        "\napprove→resume of another host's run (B approves, A resumes, B gets the outcome): median {:.2} ms \
         (p25–p75 {:.2}–{:.2}, {} samples); the same approval on A itself: {:.2} ms",
        handed.median(),
        handed.quartiles().0,
        handed.quartiles().1,
        handed.0.len(),
        local.median()
    );
    let out = PathBuf::from("target/bench/hosts.json");
    if let Some(parent) = out.parent() {
        std::fs::create_dir_all(parent).map_err(|e| e.to_string())?;
    }
    let document = json!({
        "seconds": seconds, "calls": CALLS, "throughput": table,
        "handOffMs": handed.0, "localApproveMs": local.0,
    });
    std::fs::write(&out, format!("{document:#}\n")).map_err(|e| e.to_string())?;
    println!("written to {}", out.display());
    Ok(())
}

/// Starts `n` load processes at once and adds up their runs.
fn load_in_processes(store: Option<&str>, n: usize, seconds: u64) -> Result<u64, String> {
    let exe = std::env::current_exe().map_err(|e| e.to_string())?;
    let base = std::env::temp_dir().join(format!(
        "codemode-bench-hosts-{}-{}",
        std::process::id(),
        Instant::now().elapsed().as_nanos()
    ));
    let mut children = Vec::new();
    let mut dirs = Vec::new();
    for i in 0..n {
        // SQLite: one data directory for all, as processes of one machine share it.
        let dir = match store {
            Some(_) => base.join(format!("host-{i}")),
            None => base.join("shared"),
        };
        dirs.push(dir.clone());
        children.push(
            Command::new(&exe)
                .arg("host-load")
                .arg(&dir)
                .arg(store.unwrap_or("sqlite"))
                .arg(seconds.to_string())
                .stdout(Stdio::piped())
                .stderr(Stdio::inherit())
                .spawn()
                .map_err(|e| e.to_string())?,
        );
    }
    let mut runs = 0;
    for child in children {
        let output = child.wait_with_output().map_err(|e| e.to_string())?;
        let report: Value = serde_json::from_slice(&output.stdout).map_err(|e| {
            format!(
                "host-load: {e}: {}",
                String::from_utf8_lossy(&output.stdout)
            )
        })?;
        runs += report["runs"].as_u64().unwrap_or(0);
    }
    let _ = std::fs::remove_dir_all(&base);
    Ok(runs)
}

/// The data directory `dir` on `store` (a PostgreSQL URL, or `sqlite` for its own file).
fn prepare(dir: &Path, store: &str) -> Result<(), String> {
    std::fs::create_dir_all(dir).map_err(|e| e.to_string())?;
    let config = match store {
        "sqlite" => json!({"runtime": {"maxExecutions": 200}, "connectors": {}}),
        url => json!({"runtime": {"maxExecutions": 200, "store": url}, "connectors": {}}),
    };
    std::fs::write(dir.join("connectors.json"), config.to_string()).map_err(|e| e.to_string())
}

async fn open(dir: &Path) -> Result<Home, String> {
    Home::open(
        dir,
        HomeOptions {
            keep_warm: true,
            serve_host: true,
            extra_connectors: toys(),
            ..HomeOptions::default()
        },
    )
    .await
    .map_err(|e| e.to_string())
}

/// `codemode-bench host-load DIR STORE SECONDS`: one host's loop; prints `{"runs": N}`.
pub fn load(dir: &Path, store: &str, seconds: &str) -> Result<(), String> {
    let seconds: u64 = seconds
        .parse()
        .map_err(|_| "seconds: a number".to_owned())?;
    if !dir.join("connectors.json").exists() {
        prepare(dir, store)?;
    }
    let tokio = codemode_cli::async_runtime().map_err(|e| e.to_string())?;
    let runs = tokio.block_on(async {
        let home = open(dir).await?;
        let deadline = Instant::now() + Duration::from_secs(seconds);
        let mut runs = 0u64;
        while Instant::now() < deadline {
            let paused = home
                .runtime
                .execute(&gated(CALLS - 1))
                .await
                .map_err(|e| e.to_string())?;
            let done = home
                .runtime
                .approve(paused.execution_id(), Actor::Console, None)
                .await
                .map_err(|e| e.to_string())?;
            if done.status() != "completed" {
                return Err(format!("a run ended {}", done.status()));
            }
            runs += 1;
        }
        Ok::<_, String>(runs)
    })?;
    println!("{}", json!({"runs": runs}));
    Ok(())
}

/// Median time for host B to approve a run paused on host A (A resumes it), beside A approving its own.
fn hand_off_latency(store: &str, reps: usize) -> Result<(Samples, Samples), String> {
    let base = std::env::temp_dir().join(format!("codemode-bench-handoff-{}", std::process::id()));
    let (a_dir, b_dir) = (base.join("a"), base.join("b"));
    prepare(&a_dir, store)?;
    prepare(&b_dir, store)?;
    let tokio = codemode_cli::async_runtime().map_err(|e| e.to_string())?;
    let result = tokio.block_on(async {
        let a = open(&a_dir).await?;
        let b = open(&b_dir).await?;
        let (mut handed, mut local) = (Vec::new(), Vec::new());
        for rep in 0..=reps {
            for (approver, times) in [(&b, &mut handed), (&a, &mut local)] {
                let paused = a
                    .runtime
                    .execute(&gated(0))
                    .await
                    .map_err(|e| e.to_string())?;
                tokio::time::sleep(Duration::from_millis(50)).await;
                let started = Instant::now();
                let done = approver
                    .runtime
                    .approve(paused.execution_id(), Actor::Console, None)
                    .await
                    .map_err(|e| e.to_string())?;
                if done.status() != "completed" {
                    return Err(format!("a handed run ended {}", done.status()));
                }
                // The first round warms both up.
                if rep > 0 {
                    times.push(started.elapsed().as_secs_f64() * 1e3);
                }
            }
        }
        Ok((Samples::new(handed), Samples::new(local)))
    });
    let _ = std::fs::remove_dir_all(&base);
    result
}
