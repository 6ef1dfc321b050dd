//! The side-by-side benchmark: the same workloads on the reference runtime (an HTTP round trip to its warm
//! `wrangler dev` server, bench/reference) and on ours as an agent sees it (a `codemode` tool call to a warm
//! MCP server, the very server `codemode mcp` runs) and, for approve→resume, as the app sees it (an
//! in-process `approve` on a warm runtime) with a cold process beside it. Alternates A/B, prints medians and
//! ratios, writes them as JSON; never asserts a time. Started by `bench/run`, which serves the reference.

mod hosts;
mod paths;
mod queue;

use codemode::{Actor, BoxFuture, CallContext, Connector, ToolDescriptor};
use connectors::{Home, HomeOptions};
use serde_json::{Value, json};
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, ChildStdout, Command, ExitCode, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// `kb.echo(args)` answers its arguments; `crm.create_ticket({title})` needs approval and answers a ticket —
/// the reference Worker's two connectors, in process as there.
struct Toy {
    name: &'static str,
    tickets: AtomicU64,
}

fn toys() -> Vec<Arc<dyn Connector>> {
    ["kb", "crm"]
        .into_iter()
        .map(|name| {
            Arc::new(Toy {
                name,
                tickets: AtomicU64::new(0),
            }) as Arc<dyn Connector>
        })
        .collect()
}

impl Connector for Toy {
    fn name(&self) -> &str {
        self.name
    }

    fn tools(&self) -> BoxFuture<'_, Result<Vec<ToolDescriptor>, String>> {
        let gated = self.name == "crm";
        Box::pin(async move {
            Ok(vec![ToolDescriptor {
                name: if gated { "create_ticket" } else { "echo" }.into(),
                description: Some(
                    if gated {
                        "Create a support ticket."
                    } else {
                        "Return the arguments unchanged."
                    }
                    .into(),
                ),
                requires_approval: gated,
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
        Box::pin(async move {
            if self.name == "crm" {
                let id = self.tickets.fetch_add(1, Ordering::Relaxed) + 1;
                let title = args.as_ref().and_then(|a| a.get("title")).cloned();
                return Ok(Some(json!({"id": id, "title": title})));
            }
            Ok(args)
        })
    }
}

fn open_home(dir: &Path, keep_warm: bool) -> Result<Home, String> {
    let runtime = tokio::runtime::Runtime::new().map_err(|e| e.to_string())?;
    runtime
        .block_on(Home::open(
            dir,
            HomeOptions {
                keep_warm,
                extra_connectors: toys(),
                ..HomeOptions::default()
            },
        ))
        .map_err(|e| e.to_string())
}

/// The child: `codemode mcp`'s server over a data directory with the toy connectors.
fn serve_mcp(dir: &Path) -> Result<(), String> {
    let runtime = codemode_cli::async_runtime().map_err(|e| e.to_string())?;
    runtime.block_on(async {
        let options = HomeOptions {
            keep_warm: true,
            extra_connectors: toys(),
            ..HomeOptions::default()
        };
        let home = Home::open(dir, options.clone())
            .await
            .map_err(|e| e.to_string())?;
        codemode_cli::mcp_server::serve_home(home, options).await
    })
}

/// The cold path: open the data directory, approve, exit — what `codemode approve ID` does.
fn approve_once(dir: &Path, id: &str) -> Result<(), String> {
    let runtime = codemode_cli::async_runtime().map_err(|e| e.to_string())?;
    runtime.block_on(async {
        let home = Home::open(
            dir,
            HomeOptions {
                extra_connectors: toys(),
                ..HomeOptions::default()
            },
        )
        .await
        .map_err(|e| e.to_string())?;
        let outcome = home
            .runtime
            .approve(id, Actor::Cli, None)
            .await
            .map_err(|e| e.to_string())?;
        let status = serde_json::to_value(&outcome).map_err(|e| e.to_string())?["status"].clone();
        if status != "completed" {
            return Err(format!("approve ended {status}"));
        }
        Ok(())
    })
}

/// A newline-delimited JSON-RPC client on the child's stdio, as an agent's MCP client talks to `codemode mcp`.
struct Agent {
    child: Child,
    input: ChildStdin,
    output: BufReader<ChildStdout>,
    next_id: u64,
}

impl Agent {
    fn start(dir: &Path) -> Result<Agent, String> {
        let exe = std::env::current_exe().map_err(|e| e.to_string())?;
        let mut child = Command::new(exe)
            .arg("serve-mcp")
            .arg(dir)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .map_err(|e| format!("cannot start the MCP server: {e}"))?;
        let input = child.stdin.take().ok_or("no stdin")?;
        let output = BufReader::new(child.stdout.take().ok_or("no stdout")?);
        let mut agent = Agent {
            child,
            input,
            output,
            next_id: 0,
        };
        agent.request(
            "initialize",
            json!({"protocolVersion": "2025-06-18", "capabilities": {},
                   "clientInfo": {"name": "codemode-bench", "version": "0"}}),
        )?;
        agent.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))?;
        Ok(agent)
    }

    fn send(&mut self, message: &Value) -> Result<(), String> {
        writeln!(self.input, "{message}")
            .and_then(|_| self.input.flush())
            .map_err(|e| format!("MCP server went away: {e}"))
    }

    fn request(&mut self, method: &str, params: Value) -> Result<Value, String> {
        self.next_id += 1;
        let id = self.next_id;
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}))?;
        let mut line = String::new();
        loop {
            line.clear();
            if self
                .output
                .read_line(&mut line)
                .map_err(|e| e.to_string())?
                == 0
            {
                return Err("MCP server closed its output".into());
            }
            let message: Value = serde_json::from_str(&line).map_err(|e| e.to_string())?;
            if message["id"] == id {
                if let Some(error) = message.get("error") {
                    return Err(format!("{method}: {error}"));
                }
                return Ok(message["result"].clone());
            }
        }
    }

    /// The `codemode` tool's Outcome for `code`.
    fn codemode(&mut self, code: &str) -> Result<Value, String> {
        let result = self.request(
            "tools/call",
            json!({"name": "codemode", "arguments": {"code": code}}),
        )?;
        if result["isError"] == true {
            return Err(format!("codemode tool: {result}"));
        }
        Ok(result["structuredContent"].clone())
    }
}

impl Drop for Agent {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// One POST to the reference Worker; `Connection: close`, so the answer is everything until EOF.
fn reference_call(addr: &str, room: &str, body: &Value) -> Result<Value, String> {
    let mut stream = TcpStream::connect(addr).map_err(|e| format!("reference at {addr}: {e}"))?;
    let body = body.to_string();
    write!(
        stream,
        "POST /?room={room} HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    )
    .map_err(|e| e.to_string())?;
    let mut answer = Vec::new();
    stream.read_to_end(&mut answer).map_err(|e| e.to_string())?;
    let split = answer
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .ok_or("reference answered without headers")?;
    let head = String::from_utf8_lossy(&answer[..split]).to_ascii_lowercase();
    let mut payload = answer[split + 4..].to_vec();
    if head.contains("transfer-encoding: chunked") {
        payload = dechunk(&payload)?;
    }
    let value: Value = serde_json::from_slice(&payload).map_err(|e| {
        format!(
            "reference answered non-JSON ({e}): {}",
            head.lines().next().unwrap_or("")
        )
    })?;
    if let Some(error) = value.get("error") {
        return Err(format!("reference: {error}"));
    }
    Ok(value)
}

fn dechunk(mut data: &[u8]) -> Result<Vec<u8>, String> {
    let mut out = Vec::new();
    loop {
        let line_end = data
            .windows(2)
            .position(|w| w == b"\r\n")
            .ok_or("bad chunked body")?;
        let size_text = String::from_utf8_lossy(&data[..line_end]);
        let size = usize::from_str_radix(size_text.split(';').next().unwrap_or("").trim(), 16)
            .map_err(|_| "bad chunk size")?;
        data = &data[line_end + 2..];
        if size == 0 {
            return Ok(out);
        }
        out.extend_from_slice(data.get(..size).ok_or("short chunk")?);
        data = data.get(size + 2..).ok_or("short chunk")?;
    }
}

fn expect_status(outcome: &Value, status: &str, what: &str) -> Result<(), String> {
    if outcome["status"] == status {
        Ok(())
    } else {
        Err(format!("{what}: expected {status}, got {}", brief(outcome)))
    }
}

fn brief(value: &Value) -> String {
    let text = value.to_string();
    text.chars().take(300).collect()
}

fn sequential(n: usize) -> String {
    if n == 0 {
        return "async () => 1".into();
    }
    format!("async () => {{ for (let i = 0; i < {n}; i++) await kb.echo({{ i }}); return {n}; }}")
}

fn gated(k: usize) -> String {
    format!(
        "async () => {{ for (let i = 0; i < {k}; i++) await kb.echo({{ i }}); return await crm.create_ticket({{ title: 't' }}); }}"
    )
}

/// The pause before every timed call, on both sides.
const SETTLE: Duration = Duration::from_millis(100);

const STEPS: &str = "async () => { let s = 0; for (let i = 0; i < 100; i++) s += await codemode.step('s' + i, () => i); return s; }";

fn median(samples: &mut [f64]) -> f64 {
    samples.sort_by(f64::total_cmp);
    let m = samples.len() / 2;
    if samples.len() % 2 == 1 {
        samples[m]
    } else {
        (samples[m - 1] + samples[m]) / 2.0
    }
}

fn timed<T>(f: impl FnOnce() -> Result<T, String>) -> Result<(T, f64), String> {
    let started = Instant::now();
    let value = f()?;
    Ok((value, started.elapsed().as_secs_f64() * 1e3))
}

/// One side's timings of a workload, sorted, in ms.
#[derive(Clone, Default)]
struct Samples(Vec<f64>);

impl Samples {
    fn new(mut samples: Vec<f64>) -> Self {
        samples.sort_by(f64::total_cmp);
        Samples(samples)
    }

    fn median(&self) -> f64 {
        median(&mut self.0.clone())
    }

    /// The first and third quartiles (nearest rank): how far the median can move between runs.
    fn quartiles(&self) -> (f64, f64) {
        let at = |q: f64| {
            let rank = ((self.0.len() as f64 * q).ceil() as usize).clamp(1, self.0.len().max(1));
            self.0.get(rank - 1).copied().unwrap_or(f64::NAN)
        };
        (at(0.25), at(0.75))
    }
}

struct Row {
    workload: String,
    reference: Samples,
    /// Each store's timings: SQLite first, then every `--store`.
    ours: Vec<Samples>,
    how: &'static str,
    goal: Option<f64>,
}

/// Our runtime over one store: a data directory (its connectors.json names the store), the agent's warm MCP
/// server on it, and the app's warm runtime.
struct Side {
    label: String,
    dir: PathBuf,
    agent: Agent,
    app: Home,
}

impl Side {
    /// `store`: a PostgreSQL URL, or `None` for the data directory's SQLite file.
    fn open(label: &str, store: Option<&str>) -> Result<Side, String> {
        let dir =
            std::env::temp_dir().join(format!("codemode-bench-{}-{label}", std::process::id()));
        std::fs::create_dir_all(&dir).map_err(|e| e.to_string())?;
        // Both sides keep their default retention (50 runs, pruned on each new run).
        let config = match store {
            None => json!({"connectors": {}}),
            Some(url) => json!({"runtime": {"store": url}, "connectors": {}}),
        };
        std::fs::write(dir.join("connectors.json"), config.to_string())
            .map_err(|e| e.to_string())?;
        let agent = Agent::start(&dir)?;
        let app = open_home(&dir, true)?;
        Ok(Side {
            label: label.to_owned(),
            dir,
            agent,
            app,
        })
    }
}

struct Bench {
    /// None with `--ours-only`: our side alone, for profiling.
    reference: Option<String>,
    sides: Vec<Side>,
    tokio: tokio::runtime::Runtime,
    reps: usize,
    rooms: u64,
}

enum Workload {
    Fresh(usize),
    Resume(usize),
    Steps,
}

impl Bench {
    fn room(&mut self) -> String {
        self.rooms += 1;
        format!("bench-{}-{}", std::process::id(), self.rooms)
    }

    fn reference_rep(&mut self, room: &str, workload: &Workload) -> Result<f64, String> {
        let Some(addr) = self.reference.clone() else {
            // The gap a reference run would leave between two of ours.
            std::thread::sleep(Duration::from_millis(20));
            return Ok(f64::NAN);
        };
        match workload {
            Workload::Fresh(_) | Workload::Steps => {
                let code = match workload {
                    Workload::Fresh(n) => sequential(*n),
                    _ => STEPS.to_owned(),
                };
                let (outcome, ms) =
                    timed(|| reference_call(&addr, room, &json!({"op": "run", "code": code})))?;
                expect_status(&outcome, "completed", "reference run")?;
                Ok(ms)
            }
            Workload::Resume(k) => {
                let paused = reference_call(&addr, room, &json!({"op": "run", "code": gated(*k)}))?;
                expect_status(&paused, "paused", "reference run")?;
                let id = paused["executionId"].clone();
                let (done, ms) = timed(|| {
                    reference_call(&addr, room, &json!({"op": "approve", "executionId": id}))
                })?;
                expect_status(&done, "completed", "reference approve")?;
                Ok(ms)
            }
        }
    }

    /// Ours on the store `side` as the agent sees it, and for a resume also (in-process, cold process).
    fn our_rep(&mut self, side: usize, workload: &Workload) -> Result<(f64, Option<f64>), String> {
        let tokio = &self.tokio;
        let side = &mut self.sides[side];
        match workload {
            Workload::Fresh(_) | Workload::Steps => {
                let code = match workload {
                    Workload::Fresh(n) => sequential(*n),
                    _ => STEPS.to_owned(),
                };
                let (outcome, ms) = timed(|| side.agent.codemode(&code))?;
                expect_status(&outcome, "completed", "codemode tool")?;
                Ok((ms, None))
            }
            Workload::Resume(k) => {
                let paused = side.agent.codemode(&gated(*k))?;
                expect_status(&paused, "paused", "codemode tool")?;
                let id = paused["executionId"]
                    .as_str()
                    .unwrap_or_default()
                    .to_owned();
                let (done, in_process) = timed(|| {
                    tokio
                        .block_on(side.app.runtime.approve(&id, Actor::Console, None))
                        .map_err(|e| e.to_string())
                })?;
                let done = serde_json::to_value(&done).map_err(|e| e.to_string())?;
                expect_status(&done, "completed", "approve")?;
                let paused = side.agent.codemode(&gated(*k))?;
                let id = paused["executionId"]
                    .as_str()
                    .unwrap_or_default()
                    .to_owned();
                let exe = std::env::current_exe().map_err(|e| e.to_string())?;
                let (_, cold) = timed(|| {
                    let status = Command::new(&exe)
                        .arg("approve")
                        .arg(&side.dir)
                        .arg(&id)
                        .status()
                        .map_err(|e| e.to_string())?;
                    if status.success() {
                        Ok(())
                    } else {
                        Err(format!("cold approve failed: {status}"))
                    }
                })?;
                Ok((in_process, Some(cold)))
            }
        }
    }

    /// Warm-up, then `reps` alternating rounds (the reference first or last, by turns), every store each round.
    #[allow(clippy::type_complexity)]
    fn measure(
        &mut self,
        workload: &Workload,
    ) -> Result<(Samples, Vec<Samples>, Option<Vec<Samples>>), String> {
        let room = self.room();
        self.reference_rep(&room, workload)?;
        for side in 0..self.sides.len() {
            self.our_rep(side, workload)?;
        }
        let stores = self.sides.len();
        let mut theirs = Vec::new();
        let (mut ours, mut cold) = (vec![Vec::new(); stores], vec![Vec::new(); stores]);
        for rep in 0..self.reps {
            // Each timed call starts on a settled machine: wrangler and workerd keep working for a while after
            // they answer, and on two cores that work would otherwise land in our timing (or ours in theirs).
            let reference = |bench: &mut Bench| {
                std::thread::sleep(SETTLE);
                bench.reference_rep(&room, workload)
            };
            if rep % 2 == 0 {
                theirs.push(reference(self)?);
            }
            for side in 0..stores {
                std::thread::sleep(SETTLE);
                let (warm, cold_ms) = self.our_rep(side, workload)?;
                ours[side].push(warm);
                cold[side].extend(cold_ms);
            }
            if rep % 2 == 1 {
                theirs.push(reference(self)?);
            }
        }
        let cold = (!cold[0].is_empty()).then(|| cold.into_iter().map(Samples::new).collect());
        Ok((
            Samples::new(theirs),
            ours.into_iter().map(Samples::new).collect(),
            cold,
        ))
    }
}

fn compare(
    reference: Option<String>,
    reps: usize,
    out: PathBuf,
    stores: Vec<String>,
) -> Result<(), String> {
    if let Some(reference) = &reference {
        reference_call(reference, "ping", &json!({"op": "ping"}))?;
    }
    let mut sides = vec![Side::open("SQLite", None)?];
    for (n, url) in stores.iter().enumerate() {
        let label = if stores.len() == 1 {
            "PostgreSQL".to_owned()
        } else {
            format!("PostgreSQL {}", n + 1)
        };
        sides.push(Side::open(&label, Some(url))?);
    }
    let labels: Vec<String> = sides.iter().map(|s| s.label.clone()).collect();
    let dirs: Vec<PathBuf> = sides.iter().map(|s| s.dir.clone()).collect();
    let tokio = tokio::runtime::Runtime::new().map_err(|e| e.to_string())?;
    let mut bench = Bench {
        reference,
        sides,
        tokio,
        reps,
        rooms: 0,
    };
    let workloads = [
        ("empty run", Workload::Fresh(0), Some(20.0)),
        ("fresh pass, 1 call", Workload::Fresh(1), Some(20.0)),
        ("fresh pass, 100 calls", Workload::Fresh(100), Some(20.0)),
        ("fresh pass, 1,000 calls", Workload::Fresh(1000), Some(20.0)),
        (
            "approve→resume, 0 recorded",
            Workload::Resume(0),
            Some(10.0),
        ),
        ("approve→resume, 100 recorded", Workload::Resume(100), None),
        (
            "approve→resume, 1,000 recorded",
            Workload::Resume(1000),
            Some(50.0),
        ),
        ("100 codemode.step calls", Workload::Steps, Some(20.0)),
    ];
    let mut rows = Vec::new();
    for (name, workload, goal) in workloads {
        eprintln!("bench: {name} …");
        let (reference, ours, cold) = bench.measure(&workload)?;
        let how = if cold.is_some() {
            "in-process approve"
        } else {
            "codemode tool call"
        };
        rows.push(Row {
            workload: name.into(),
            reference: reference.clone(),
            ours,
            how,
            goal,
        });
        if let Some(cold) = cold {
            rows.push(Row {
                workload: format!("{name} (cold process)"),
                reference,
                ours: cold,
                how: "process: open, approve, exit",
                goal: None,
            });
        }
    }
    drop(bench);
    for dir in dirs {
        let _ = std::fs::remove_dir_all(&dir);
    }
    print_and_save(&rows, &labels, reps, &out)
}

fn print_and_save(rows: &[Row], labels: &[String], reps: usize, out: &Path) -> Result<(), String> {
    println!(
        "\nreference (@cloudflare/codemode 0.5.6 on wrangler dev, HTTP round trip) vs ours (medians of {reps} alternating reps, ms)"
    );
    if labels.len() > 1 {
        println!(
            "ours on each store: {}; goals are for the embedded SQLite store, PostgreSQL runs over loopback",
            labels.join(", ")
        );
    }
    println!();
    let mut head = format!("{:<46} {:>11}", "workload", "reference");
    for label in labels {
        head.push_str(&format!(" {:>12} {:>15} {:>8}", label, "p25–p75", "ratio"));
    }
    println!("{head} {:>6}  ours measured as", "goal");
    let mut report = Vec::new();
    let mut missed = 0;
    for row in rows {
        let reference = row.reference.median();
        let mut line = format!("{:<46} {:>11.1}", row.workload, reference);
        let mut stores = Vec::new();
        for (label, ours) in labels.iter().zip(&row.ours) {
            let median = ours.median();
            let (low, high) = ours.quartiles();
            let ratio = reference / median;
            line.push_str(&format!(
                " {:>12.2} {:>15} {:>7.1}×",
                median,
                format!("{low:.2}–{high:.2}"),
                ratio
            ));
            stores.push(
                json!({"store": label, "oursMs": median, "ratio": ratio, "oursSamplesMs": ours.0}),
            );
        }
        let ratio = reference / row.ours[0].median();
        let goal = match row.goal {
            // --ours-only: there is no reference to hold a ratio against.
            _ if ratio.is_nan() => "—".into(),
            Some(goal) if ratio >= goal => format!("{goal:.0}× ✓"),
            Some(goal) => {
                missed += 1;
                format!("{goal:.0}× ✗")
            }
            None => "—".into(),
        };
        println!("{line} {goal:>6}  {}", row.how);
        report.push(json!({
            "workload": row.workload, "referenceMs": reference, "oursMs": row.ours[0].median(),
            "ratio": ratio, "goal": row.goal,
            "met": row.goal.filter(|_| !ratio.is_nan()).map(|g| ratio >= g), "ours": row.how,
            "referenceSamplesMs": row.reference.0, "oursSamplesMs": row.ours[0].0,
            "stores": stores,
        }));
    }
    println!(
        "\n{}",
        if rows.iter().all(|row| row.reference.median().is_nan()) {
            "our side only: no ratios".to_owned()
        } else if missed == 0 {
            "every ratio is at or above its goal".to_owned()
        } else {
            format!("{missed} ratio(s) below goal")
        }
    );
    if let Some(parent) = out.parent() {
        std::fs::create_dir_all(parent).map_err(|e| e.to_string())?;
    }
    let cores = std::thread::available_parallelism().map_or(0, |n| n.get());
    let document = json!({"reps": reps, "cores": cores, "stores": labels, "rows": report});
    std::fs::write(out, format!("{document:#}\n")).map_err(|e| e.to_string())?;
    println!("written to {}", out.display());
    Ok(())
}

fn usage() -> String {
    "usage: codemode-bench compare (--reference HOST:PORT | --ours-only) [--store URL]… [--reps N] [--out FILE]\n       \
     codemode-bench hosts --store URL [--hosts N] [--seconds S] [--reps R]\n       \
     codemode-bench queue [--runs N] [--calls M] [--reps R] [--wait SECONDS] [--keep DIR]\n       \
     codemode-bench paths [--calls N]\n       \
     (bench/run starts the reference server and a throwaway PostgreSQL and calls both; --ours-only times our\n       \
     side alone; each --store adds a column: the same workloads on that PostgreSQL store)"
        .into()
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let result = match args.first().map(String::as_str) {
        Some("serve-mcp") if args.len() == 2 => serve_mcp(Path::new(&args[1])),
        Some("approve") if args.len() == 3 => approve_once(Path::new(&args[1]), &args[2]),
        Some("host-load") if args.len() == 4 => {
            hosts::load(Path::new(&args[1]), &args[2], &args[3])
        }
        Some("hosts") => {
            let flag = |name: &str| {
                args.iter()
                    .position(|a| a == name)
                    .and_then(|i| args.get(i + 1))
                    .cloned()
            };
            match flag("--store") {
                None => Err(usage()),
                Some(store) => hosts::run(
                    &store,
                    flag("--hosts").and_then(|n| n.parse().ok()).unwrap_or(4),
                    flag("--seconds").and_then(|n| n.parse().ok()).unwrap_or(10),
                    flag("--reps").and_then(|n| n.parse().ok()).unwrap_or(15),
                ),
            }
        }
        Some("paths") => paths::run(
            args.iter()
                .position(|a| a == "--calls")
                .and_then(|i| args.get(i + 1))
                .and_then(|n| n.parse().ok())
                .unwrap_or(20_000),
        ),
        Some("queue") => {
            let flag = |name: &str, default: u64| {
                args.iter()
                    .position(|a| a == name)
                    .and_then(|i| args.get(i + 1))
                    .and_then(|n| n.parse().ok())
                    .unwrap_or(default)
            };
            queue::run(
                flag("--runs", 1000) as usize,
                flag("--calls", 100) as usize,
                flag("--reps", 9) as usize,
                flag("--wait", 60),
                args.iter()
                    .position(|a| a == "--keep")
                    .and_then(|i| args.get(i + 1))
                    .map(Path::new),
            )
        }
        Some("compare") => {
            let flag = |name: &str| {
                args.iter()
                    .position(|a| a == name)
                    .and_then(|i| args.get(i + 1))
                    .cloned()
            };
            let ours_only = args.iter().any(|a| a == "--ours-only");
            match flag("--reference") {
                None if !ours_only => Err(usage()),
                reference => {
                    let reps = flag("--reps").and_then(|r| r.parse().ok()).unwrap_or(7);
                    let out = flag("--out")
                        .map(PathBuf::from)
                        .unwrap_or_else(|| PathBuf::from("target/bench/compare.json"));
                    let stores = args
                        .iter()
                        .zip(args.iter().skip(1))
                        .filter(|(flag, _)| *flag == "--store")
                        .map(|(_, url)| url.clone())
                        .collect();
                    compare(reference, reps.max(1), out, stores)
                }
            }
        }
        _ => Err(usage()),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("codemode-bench: {message}");
            ExitCode::FAILURE
        }
    }
}
