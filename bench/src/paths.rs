//! What reading a `files` call the way the connector will cost per call, printed and never asserted
//! (docs/performance.md, "Rules read resolved paths"): `FilesConnector::canonical` on paths of 1, 3 and 8
//! components, a new file, one with `..`, one through a symlink, and base64 content; then a whole program of
//! 100 gated-by-rule writes through the runtime, with a path rule and without any rule, so the share of
//! resolution in a real call shows.

use super::Samples;
use codemode::Connector;
use codemode_api::Api;
use connectors::{FilesConnector, HomeOptions};
use serde_json::{Value, json};
use std::path::Path;
use std::time::Instant;

/// `codemode-bench paths [--calls N]`: N resolutions of each shape (default 20,000).
pub fn run(calls: usize) -> Result<(), String> {
    let calls = calls.max(1);
    let dir = std::env::temp_dir().join(format!("codemode-bench-paths-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let root = dir.join("workspace");
    let deep = root.join("a/b/c/d/e/f/g");
    std::fs::create_dir_all(&deep).map_err(|e| e.to_string())?;
    std::fs::create_dir_all(root.join("notes/2026")).map_err(|e| e.to_string())?;
    std::fs::write(root.join("one.txt"), "x").map_err(|e| e.to_string())?;
    std::fs::write(root.join("notes/2026/day.txt"), "x").map_err(|e| e.to_string())?;
    std::fs::write(deep.join("leaf.txt"), "x").map_err(|e| e.to_string())?;
    #[cfg(unix)]
    std::os::unix::fs::symlink("notes/2026", root.join("current")).map_err(|e| e.to_string())?;
    let files =
        FilesConnector::new("files", &root, &dir.join("state"), None).map_err(|e| e.to_string())?;

    let shapes: Vec<(&str, &str, Value)> = vec![
        (
            "1 component",
            "write_file",
            json!({"path": "one.txt", "content": "x"}),
        ),
        (
            "3 components",
            "write_file",
            json!({"path": "notes/2026/day.txt", "content": "x"}),
        ),
        (
            "8 components",
            "write_file",
            json!({"path": "a/b/c/d/e/f/g/leaf.txt", "content": "x"}),
        ),
        (
            "new file, 3",
            "write_file",
            json!({"path": "notes/2026/new.txt", "content": "x"}),
        ),
        (
            "with ..",
            "write_file",
            json!({"path": "notes/../notes/2026/day.txt", "content": "x"}),
        ),
        (
            "via symlink",
            "write_file",
            json!({"path": "current/day.txt", "content": "x"}),
        ),
        (
            "base64, 1 KiB",
            "write_file",
            json!({"path": "one.txt", "content": base64_kib(), "encoding": "base64"}),
        ),
        (
            "move, 2 paths",
            "move_file",
            json!({"from": "one.txt", "to": "notes/2026/two.txt"}),
        ),
    ];
    println!("== files: the connector's reading of a call ({calls} calls each)");
    println!("{:<16} {:>12} {:>12}", "shape", "µs / call", "p25–p75");
    let mut shapes_3 = 0.0;
    for (label, method, args) in &shapes {
        let mut batches = Vec::new();
        // 20 batches, so the quartiles say how steady the figure is.
        let per_batch = (calls / 20).max(1);
        for _ in 0..20 {
            let started = Instant::now();
            for _ in 0..per_batch {
                let read = files.canonical(method, Some(args))?;
                std::hint::black_box(read);
            }
            batches.push(started.elapsed().as_secs_f64() * 1e6 / per_batch as f64);
        }
        let samples = Samples::new(batches);
        let (low, high) = samples.quartiles();
        println!(
            "{label:<16} {:>12.2} {:>6.2}–{:<6.2}",
            samples.median(),
            low,
            high
        );
        if *label == "3 components" {
            shapes_3 = samples.median();
        }
    }

    println!(
        "\n== a program of 100 writes under notes/2026/ through the runtime, let through by a path rule (median of 9)"
    );
    let program = "async () => { for (let i = 0; i < 100; i++) { await files.write_file({ path: `notes/2026/n${i % 10}.txt`, content: `v${i}` }); } return 100; }";
    let home_dir = dir.join("home");
    let workspace = home_dir.join("workspace");
    std::fs::create_dir_all(workspace.join("notes/2026")).map_err(|e| e.to_string())?;
    let config = json!({
        "connectors": {"files": {"type": "files", "root": workspace, "approval": ["delete_file"]}},
        "runtime": {"maxExecutions": 1000},
        "rules": [{"id": "notes", "effect": "allow", "call": "files.write_file", "when": {"path": {"glob": "notes/**"}}}],
    });
    std::fs::write(home_dir.join("connectors.json"), config.to_string())
        .map_err(|e| e.to_string())?;
    let samples = timed_runs(&home_dir, program)?;
    let (low, high) = samples.quartiles();
    let per_call = samples.median() * 1e3 / 100.0;
    println!(
        "{:.2} ms a run ({low:.2}–{high:.2}), {per_call:.0} µs a call, of which resolving its 3-component path is ~{:.0} µs ({:.0}%)",
        samples.median(),
        shapes_3,
        shapes_3 / per_call * 100.0
    );
    let _ = std::fs::remove_dir_all(&dir);
    Ok(())
}

fn timed_runs(home_dir: &Path, program: &str) -> Result<Samples, String> {
    let runtime = tokio::runtime::Runtime::new().map_err(|e| e.to_string())?;
    runtime.block_on(async {
        let api = Api::open(home_dir, HomeOptions::default())
            .await
            .map_err(|e| e.message)?;
        let mut samples = Vec::new();
        for _ in 0..10 {
            let started = Instant::now();
            let outcome = api.run(program, "bench").await.map_err(|e| e.message)?;
            let ms = started.elapsed().as_secs_f64() * 1e3;
            if outcome.status() != "completed" {
                return Err(format!("the program ended {}", outcome.status()));
            }
            samples.push(ms);
        }
        // The first run warms the sandbox and the database: left out.
        samples.remove(0);
        Ok(Samples::new(samples))
    })
}

fn base64_kib() -> String {
    use std::fmt::Write;
    let mut text = String::new();
    for i in 0..768 {
        let _ = write!(text, "{}", (b'a' + (i % 26) as u8) as char);
    }
    // 768 bytes of text → 1,024 base64 characters; written by hand to keep the bench free of another crate.
    let table = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let bytes = text.as_bytes();
    let mut out = String::new();
    for chunk in bytes.chunks(3) {
        let n = (u32::from(chunk[0]) << 16)
            | (u32::from(*chunk.get(1).unwrap_or(&0)) << 8)
            | u32::from(*chunk.get(2).unwrap_or(&0));
        for i in 0..4 {
            out.push(table[((n >> (18 - 6 * i)) & 63) as usize] as char);
        }
    }
    out
}
