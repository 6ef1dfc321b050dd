//! The approval queue's reads with a long queue, printed and never asserted (docs/performance.md, "Lean reads"):
//! N paused runs of M calls each on one SQLite data directory; then what the window reads on every change of
//! the database, the whole queue with every run's code and log (as it did before) against the queue's rows
//! plus the one card shown (as it does now), each turned into the JSON the window receives; then the CPU a
//! `codemode_wait` held on one of those runs costs `codemode mcp` (its process's user + system time).

use super::{Agent, Samples, timed, toys};
use codemode_api::Api;
use connectors::{Home, HomeOptions};
use serde_json::json;
use std::path::Path;

/// `codemode-bench queue [--runs N] [--calls M] [--reps R] [--wait S] [--keep DIR]`: with `--keep`, the data
/// directory is made there and left for bench/app-cpu.
pub fn run(
    runs: usize,
    calls: usize,
    reps: usize,
    wait_seconds: u64,
    keep: Option<&Path>,
) -> Result<(), String> {
    let calls = calls.max(1);
    let dir = match keep {
        Some(dir) => dir.to_path_buf(),
        None => std::env::temp_dir().join(format!("codemode-bench-queue-{}", std::process::id())),
    };
    std::fs::create_dir_all(&dir).map_err(|e| e.to_string())?;
    // Every paused run stays (the count-based retention would otherwise keep the newest 50); a files
    // workspace lets bench/app-cpu play the agent with the `codemode` CLI.
    std::fs::write(
        dir.join("connectors.json"),
        json!({"runtime": {"maxExecutions": runs + 1000},
               "connectors": {"files": {"type": "files", "root": "workspace"}}})
        .to_string(),
    )
    .map_err(|e| e.to_string())?;
    let result = measure(&dir, runs, calls, reps.max(1), wait_seconds);
    if keep.is_none() {
        let _ = std::fs::remove_dir_all(&dir);
    }
    result
}

fn measure(
    dir: &Path,
    runs: usize,
    calls: usize,
    reps: usize,
    wait_seconds: u64,
) -> Result<(), String> {
    let tokio = tokio::runtime::Runtime::new().map_err(|e| e.to_string())?;
    let options = HomeOptions {
        extra_connectors: toys(),
        ..HomeOptions::default()
    };
    let api = tokio
        .block_on(Api::open(dir, options.clone()))
        .map_err(|e| e.message)?;
    // The runtime below the API, for the read the window made before (the API no longer offers it).
    let home = tokio
        .block_on(Home::open(dir, options))
        .map_err(|e| e.to_string())?;
    // calls - 1 answered calls, then one that waits for a person.
    let code = format!(
        "async () => {{ for (let i = 0; i < {}; i++) await kb.echo({{i, note: 'call ' + i}}); \
         return await crm.create_ticket({{title: 'bench'}}); }}",
        calls - 1
    );
    println!("\nthe approval queue: {runs} paused runs of {calls} calls each (SQLite)");
    let (_, made) = timed(|| {
        for n in 0..runs {
            let outcome = tokio
                .block_on(api.run(&code, "bench"))
                .map_err(|e| e.message)?;
            if outcome.status() != "paused" {
                return Err(format!("run {n} ended {}", outcome.status()));
            }
        }
        Ok(())
    })?;
    println!("  made in {:.1} s", made / 1e3);

    let mut whole = Vec::new();
    let mut lean = Vec::new();
    let mut live = Vec::new();
    let mut sizes = (0, 0);
    for _ in 0..reps {
        // Before: every paused run with its code and whole log, a card each, sent as JSON.
        let (bytes, ms) = timed(|| {
            let paused = home
                .runtime
                .paused_executions()
                .map_err(|e| e.to_string())?;
            serde_json::to_string(&paused)
                .map(|s| s.len())
                .map_err(|e| e.to_string())
        })?;
        whole.push(ms);
        sizes.0 = bytes;
        // Now: the queue's rows, and the whole card of the one call shown.
        let (bytes, ms) = timed(|| {
            let queue = api.approval_queue().map_err(|e| e.message)?;
            let first = queue.first().ok_or("the queue is empty")?;
            let card = api
                .approval_card(&first.action.execution_id, first.action.seq)
                .map_err(|e| e.message)?;
            let rows = serde_json::to_string(&queue).map_err(|e| e.to_string())?;
            let card = serde_json::to_string(&card).map_err(|e| e.to_string())?;
            Ok(rows.len() + card.len())
        })?;
        lean.push(ms);
        sizes.1 = bytes;
        // The app's change loop: the pending calls, for the tray and notifications.
        let (_, ms) = timed(|| api.pending(None).map_err(|e| e.message))?;
        live.push(ms);
    }
    let (whole, lean, live) = (Samples::new(whole), Samples::new(lean), Samples::new(live));
    println!(
        "  one refresh, whole queue with every run's code and log (before): {:>9.1} ms  {:>6.1} MB of JSON",
        whole.median(),
        sizes.0 as f64 / 1e6
    );
    println!(
        "  one refresh, queue rows + the card shown (now):                   {:>9.1} ms  {:>6.1} MB of JSON  ({:.0}x less time)",
        lean.median(),
        sizes.1 as f64 / 1e6,
        whole.median() / lean.median()
    );
    println!(
        "  the change loop's pending calls (tray, notifications):            {:>9.1} ms",
        live.median()
    );
    println!("  (medians of {reps}; JSON as the window receives it, not counting its parsing)");

    // The old wait read the run with its whole log on every 100 ms poll.
    let id = api
        .approval_queue()
        .map_err(|e| e.message)?
        .first()
        .map(|c| c.action.execution_id.clone())
        .ok_or("the queue is empty")?;
    let mut reads = Vec::new();
    for _ in 0..reps {
        reads.push(timed(|| api.execution(&id).map_err(|e| e.message))?.1);
    }
    let read = Samples::new(reads).median();
    drop(api);
    drop(home);
    drop(tokio);

    if wait_seconds > 0 {
        let mut agent = Agent::start(dir)?;
        let pid = agent.child.id();
        let before = cpu_seconds(pid)?;
        let (answer, ms) = timed(|| {
            agent.request(
                "tools/call",
                json!({"name": "codemode_wait",
                       "arguments": {"executionId": id, "timeoutSeconds": wait_seconds}}),
            )
        })?;
        let used = cpu_seconds(pid)? - before;
        let status = answer["structuredContent"]["status"].clone();
        println!(
            "\ncodemode_wait held {:.1} s on a paused run of {calls} calls (answered {status}): {used:.3} CPU s in \
             `codemode mcp` (user + system); the old loop read the whole run every 100 ms: {read:.2} ms a read, \
             {:.2} CPU s a minute in reads alone",
            ms / 1e3,
            read * 600.0 / 1e3
        );
    }
    Ok(())
}

/// A process's user + system CPU time so far, from /proc (Linux).
fn cpu_seconds(pid: u32) -> Result<f64, String> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).map_err(|e| e.to_string())?;
    // Fields after the command name, which is in parentheses and may hold spaces.
    let after = stat.rsplit_once(')').map(|(_, rest)| rest).unwrap_or("");
    let fields: Vec<&str> = after.split_whitespace().collect();
    let ticks = |i: usize| {
        fields
            .get(i)
            .and_then(|f| f.parse::<f64>().ok())
            .unwrap_or(0.0)
    };
    // utime and stime are fields 14 and 15 of the line (11 and 12 after the name), in USER_HZ ticks,
    // which Linux fixes at 100 a second for what it reports to user space.
    Ok((ticks(11) + ticks(12)) / 100.0)
}
