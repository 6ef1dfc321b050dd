//! The host side of a pass: runs code in a `codemode-worker` process under a memory limit and a deadline,
//! answers its requests through a [`PassHost`], and turns whatever happens — including the worker dying —
//! into a [`PassOutcome`]. Failures are data; nothing a program does can take the host down.

use crate::protocol::{
    DoneStatus, HostMessage, OpenStep, PROTOCOL_VERSION, ReplayEntry, RunMessage, WorkerMessage,
    write_message,
};
use serde_json::value::RawValue;
use std::io::{self, BufRead, BufReader, Read};
use std::os::fd::AsRawFd;
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStderr, ChildStdin, ChildStdout, Command, ExitStatus, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// Idle workers kept for reuse; more concurrent passes than this start workers of their own.
const MAX_IDLE_WORKERS: usize = 4;

/// How long after a pass a worker has surely built its next context: it waits
/// [`TIDY_DELAY`](crate::sandbox::TIDY_DELAY), then spends a few milliseconds.
const SETTLED: Duration = Duration::from_millis(10);

/// The worker binary's file name.
pub const WORKER_BINARY: &str = "codemode-worker";

/// How passes are run.
#[derive(Debug, Clone)]
pub struct ExecutorOptions {
    /// The worker binary; `None` looks next to the current executable (or at `$CODEMODE_WORKER`).
    pub worker: Option<PathBuf>,
    /// Wall-clock limit for one pass, time spent in connector calls included.
    pub timeout: Duration,
    /// The worker's data-segment limit.
    pub memory_limit_mb: u64,
    /// Keep a started, pre-warmed worker ready so a pass pays no process start (long-lived hosts).
    pub keep_warm: bool,
}

impl Default for ExecutorOptions {
    fn default() -> Self {
        ExecutorOptions {
            worker: None,
            timeout: Duration::from_secs(60),
            memory_limit_mb: 512,
            keep_warm: false,
        }
    }
}

/// One pass to run.
#[derive(Debug, Clone, Default)]
pub struct PassRequest {
    pub code: String,
    /// Connector namespaces to install, in the order the globals hint lists them.
    pub connectors: Vec<String>,
    /// Recorded results the worker may serve without asking the host.
    pub log: Vec<ReplayEntry>,
    /// One past the highest recorded seq, if the host knows it: steps from there on are new, and the worker
    /// runs them without asking first ([`PassHost::step_fresh`]). `None` asks about every step.
    pub log_end: Option<u64>,
}

/// A connector call that reached the host.
#[derive(Debug)]
pub struct ConnectorCall {
    pub seq: u64,
    pub connector: String,
    pub method: String,
    /// Arguments in the storage codec; `None` when the program passed none (or `undefined`).
    pub args: Option<Box<RawValue>>,
    /// Why the arguments could not be serialised, if they could not.
    pub args_error: Option<String>,
}

/// The host's answer to a connector call.
#[derive(Debug)]
pub enum CallAnswer {
    /// The call's result (storage codec); `None` is `undefined`.
    Value(Option<Box<RawValue>>),
    /// The call failed; the program sees `Error(message)` and may catch it.
    Error(String),
    /// End the pass here (the run paused, or failed durably).
    Stop,
}

/// The host's answer to `codemode.step`'s decision request.
#[derive(Debug)]
pub enum StepAnswer {
    Execute,
    Replay(Option<Box<RawValue>>),
    Stop,
}

/// The host's answer to `codemode.run(name)`.
#[derive(Debug)]
pub enum SnippetAnswer {
    /// Run this stored code nested in the pass.
    Code(String),
    /// Resolve `codemode.run` with this value without running anything (e.g. `{error: …}`).
    Value(Box<RawValue>),
    Stop,
}

/// What the host provides to a running pass. Each method is called on the thread running the pass, in the
/// order the program makes its requests.
pub trait PassHost {
    /// Called once the worker has the program, before any of its requests is read, so that the host's own
    /// start-up (recording a new run) can overlap the worker's parse and compile.
    fn started(&mut self) {}
    fn call(&mut self, call: ConnectorCall) -> CallAnswer;
    fn step_decide(&mut self, seq: u64, name: &str) -> StepAnswer;
    /// Records a step's value (`Err` when it could not be serialised). `false` ends the pass.
    fn step_record(&mut self, seq: u64, value: Result<Option<Box<RawValue>>, String>) -> bool;
    /// Records a step at or beyond [`PassRequest::log_end`], which the worker ran without asking: its
    /// decision and its value in one. `false` ends the pass.
    fn step_fresh(
        &mut self,
        seq: u64,
        name: &str,
        value: Result<Option<Box<RawValue>>, String>,
    ) -> bool {
        matches!(self.step_decide(seq, name), StepAnswer::Execute) && self.step_record(seq, value)
    }
    /// Steps the worker started without asking and that are still running when the program makes a call
    /// from inside them: they are recorded as decided before the call. `false` ends the pass.
    fn steps_opened(&mut self, steps: &[OpenStep]) -> bool {
        steps
            .iter()
            .all(|step| matches!(self.step_decide(step.seq, &step.name), StepAnswer::Execute))
    }
    fn search(&mut self, query: &str) -> Result<Box<RawValue>, String>;
    fn describe(&mut self, target: &str) -> Result<Box<RawValue>, String>;
    fn snippet(&mut self, name: &str) -> SnippetAnswer;
    /// A console line, as it is printed.
    fn console(&mut self, _line: &str) {}
}

/// How a pass ended.
#[derive(Debug)]
pub enum PassEnd {
    /// The program returned. `result` is `None` for `undefined`; `result_error` says why the value could
    /// not be serialised, if it could not.
    Completed {
        result: Option<Box<RawValue>>,
        result_error: Option<String>,
    },
    /// The program failed; `error` is the full model-facing text (`Code execution failed: …`).
    Failed { error: String },
    /// The host stopped the pass (pause or durable failure).
    Stopped,
}

/// A finished pass.
#[derive(Debug)]
pub struct PassOutcome {
    pub end: PassEnd,
    /// Console lines, with the reference's prefixes.
    pub logs: Vec<String>,
    /// Calls and steps answered from the replay log inside the worker.
    pub replayed: u64,
    /// Time inside the worker, as it measured it (zero when it died).
    pub worker_micros: u64,
}

/// Errors that stop the executor itself from running passes (not program failures).
#[derive(Debug, thiserror::Error)]
pub enum ExecutorError {
    #[error("the sandbox worker could not be started ({path}): {source}")]
    Spawn { path: PathBuf, source: io::Error },
    #[error(
        "the sandbox worker {path} speaks protocol {found}, this host speaks {PROTOCOL_VERSION}"
    )]
    Version { path: PathBuf, found: u32 },
    #[error("the sandbox worker {path} did not start: {detail}")]
    Handshake { path: PathBuf, detail: String },
}

/// Runs passes in worker processes.
#[derive(Clone)]
pub struct Executor {
    inner: Arc<Inner>,
}

struct Inner {
    options: ExecutorOptions,
    worker: PathBuf,
    idle: Mutex<Vec<WorkerProcess>>,
    /// Keep a worker ready now: `options.keep_warm`, until a host stands by ([`Executor::set_warm`]).
    warm: std::sync::atomic::AtomicBool,
}

impl Executor {
    pub fn new(options: ExecutorOptions) -> Self {
        let worker = options.worker.clone().unwrap_or_else(default_worker_path);
        let options_keep_warm = options.keep_warm;
        let executor = Executor {
            inner: Arc::new(Inner {
                options,
                worker,
                idle: Mutex::new(Vec::new()),
                warm: std::sync::atomic::AtomicBool::new(options_keep_warm),
            }),
        };
        if executor.inner.options.keep_warm {
            executor.refill_in_background();
        }
        executor
    }

    pub fn options(&self) -> &ExecutorOptions {
        &self.inner.options
    }

    /// The worker binary this executor starts.
    pub fn worker_path(&self) -> &Path {
        &self.inner.worker
    }

    /// Runs one pass to its end. Program failures, timeouts and a dying worker are outcomes; only a worker
    /// that cannot be started at all is an error.
    pub fn run(
        &self,
        request: &PassRequest,
        host: &mut dyn PassHost,
    ) -> Result<PassOutcome, ExecutorError> {
        let mut worker = self.take_worker()?;
        let deadline = Instant::now() + self.inner.options.timeout;
        let result = worker.run(request, host, deadline);
        let outcome = match result {
            Ok(outcome) => {
                self.give_back(worker);
                outcome
            }
            Err(died) => {
                let end = worker.classify_death(died, self.inner.options.memory_limit_mb);
                PassOutcome {
                    end: PassEnd::Failed { error: end.message },
                    logs: end.logs,
                    replayed: 0,
                    worker_micros: 0,
                }
            }
        };
        Ok(finish(outcome, &request.connectors))
    }

    /// An idle worker that has had time to build its next context (the most recently used of those, its
    /// memory the warmest), else the one idle longest, else a new one.
    fn take_worker(&self) -> Result<WorkerProcess, ExecutorError> {
        let taken = {
            let mut idle = lock(&self.inner.idle);
            let settled = idle
                .iter()
                .rposition(|worker| worker.returned.elapsed() >= SETTLED);
            settled
                .or((!idle.is_empty()).then_some(0))
                .map(|index| idle.remove(index))
        };
        match taken {
            Some(worker) => {
                if self.is_warm() && lock(&self.inner.idle).is_empty() {
                    self.refill_in_background();
                }
                Ok(worker)
            }
            None => WorkerProcess::spawn(&self.inner.worker, &self.inner.options),
        }
    }

    fn give_back(&self, mut worker: WorkerProcess) {
        worker.returned = Instant::now();
        let mut idle = lock(&self.inner.idle);
        if idle.len() < MAX_IDLE_WORKERS && self.is_warm() {
            idle.push(worker);
        }
    }

    fn is_warm(&self) -> bool {
        self.inner.warm.load(std::sync::atomic::Ordering::Relaxed)
    }

    /// A long-lived host going quiet (the app closed to the tray) lets its idle workers go, and starts one
    /// per pass until it is warm again; warming starts a worker ahead of the next pass. A no-op for an
    /// executor not built with `keep_warm`.
    pub fn set_warm(&self, warm: bool) {
        if !self.inner.options.keep_warm {
            return;
        }
        let was = self
            .inner
            .warm
            .swap(warm, std::sync::atomic::Ordering::Relaxed);
        if !warm {
            // Dropping a worker ends its process (outside the lock: it waits for the process).
            let idle = std::mem::take(&mut *lock(&self.inner.idle));
            drop(idle);
        } else if !was && lock(&self.inner.idle).is_empty() {
            self.refill_in_background();
        }
    }

    fn refill_in_background(&self) {
        let inner = self.inner.clone();
        std::thread::spawn(move || {
            if let Ok(worker) = WorkerProcess::spawn(&inner.worker, &inner.options)
                && inner.warm.load(std::sync::atomic::Ordering::Relaxed)
            {
                lock(&inner.idle).push(worker);
            }
        });
    }
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// `$CODEMODE_WORKER`, else `codemode-worker` next to the running executable (or one level up, for test
/// binaries in `target/*/deps`).
pub fn default_worker_path() -> PathBuf {
    if let Some(path) = std::env::var_os("CODEMODE_WORKER") {
        return PathBuf::from(path);
    }
    let exe = std::env::current_exe().unwrap_or_default();
    let dir = exe.parent().map(Path::to_path_buf).unwrap_or_default();
    let beside = dir.join(WORKER_BINARY);
    if beside.exists() {
        return beside;
    }
    match dir.parent() {
        Some(up) if up.join(WORKER_BINARY).exists() => up.join(WORKER_BINARY),
        _ => beside,
    }
}

/// Applies the reference's `runCode` wording to a failure and the globals hint (docs/semantics.md §9.3).
fn finish(mut outcome: PassOutcome, connectors: &[String]) -> PassOutcome {
    if let PassEnd::Failed { error } = &mut outcome.end {
        let mut text = format!("Code execution failed: {error}");
        if !outcome.logs.is_empty() {
            text.push_str("\n\nConsole output:\n");
            text.push_str(&outcome.logs.join("\n"));
        }
        if mentions_not_defined(&text) {
            let mut names: Vec<&str> = connectors.iter().map(String::as_str).collect();
            names.push("codemode");
            text.push_str(&format!(
                " (the only globals available in the sandbox are: {})",
                names.join(", ")
            ));
        }
        *error = text;
    }
    outcome
}

/// `/\bis not defined\b/`
fn mentions_not_defined(text: &str) -> bool {
    let word = |c: Option<char>| c.is_some_and(|c| c.is_alphanumeric() || c == '_');
    text.match_indices("is not defined").any(|(i, m)| {
        !word(text[..i].chars().next_back()) && !word(text[i + m.len()..].chars().next())
    })
}

/// Why a worker stopped answering mid-pass.
#[derive(Debug)]
enum Died {
    Timeout,
    Gone,
    Protocol(String),
}

struct DeathReport {
    message: String,
    logs: Vec<String>,
}

struct WorkerProcess {
    child: Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
    stderr: ChildStderr,
    line: String,
    logs: Vec<String>,
    /// When it last came back from a pass (or was started).
    returned: Instant,
}

impl WorkerProcess {
    fn spawn(path: &Path, options: &ExecutorOptions) -> Result<Self, ExecutorError> {
        let limit = options.memory_limit_mb.saturating_mul(1024 * 1024);
        let mut command = Command::new(path);
        command
            .arg("--prewarm")
            .env_clear()
            .env("MALLOC_ARENA_MAX", "1")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        // SAFETY: only async-signal-safe calls (setrlimit) run between fork and exec.
        unsafe {
            command.pre_exec(move || {
                set_limit(libc::RLIMIT_CORE, 0)?;
                set_limit(libc::RLIMIT_DATA, limit)?;
                set_limit(libc::RLIMIT_STACK, 256 << 20)
            });
        }
        let spawn_error = |source| ExecutorError::Spawn {
            path: path.to_path_buf(),
            source,
        };
        let mut child = command.spawn().map_err(spawn_error)?;
        let (Some(stdin), Some(stdout), Some(stderr)) =
            (child.stdin.take(), child.stdout.take(), child.stderr.take())
        else {
            let _ = child.kill();
            let _ = child.wait();
            return Err(spawn_error(io::Error::other("pipes missing")));
        };
        let mut worker = WorkerProcess {
            child,
            stdin,
            stdout: BufReader::with_capacity(1 << 16, stdout),
            stderr,
            line: String::new(),
            logs: Vec::new(),
            returned: Instant::now(),
        };
        let handshake = worker.read(Instant::now() + Duration::from_secs(30));
        match handshake {
            Ok(WorkerMessage::Ready { version }) if version == PROTOCOL_VERSION => Ok(worker),
            Ok(WorkerMessage::Ready { version }) => Err(ExecutorError::Version {
                path: path.to_path_buf(),
                found: version,
            }),
            Ok(other) => Err(ExecutorError::Handshake {
                path: path.to_path_buf(),
                detail: format!("unexpected first message {other:?}"),
            }),
            Err(died) => Err(ExecutorError::Handshake {
                path: path.to_path_buf(),
                detail: format!("{died:?}: {}", worker.stderr_text()),
            }),
        }
    }

    fn send<M: serde::Serialize>(&mut self, message: &M) -> Result<(), Died> {
        write_message(&mut self.stdin, message).map_err(|_| Died::Gone)
    }

    /// Reads the next message, killing the worker at the deadline.
    fn read(&mut self, deadline: Instant) -> Result<WorkerMessage, Died> {
        if self.stdout.buffer().is_empty() {
            wait_readable(self.stdout.get_ref().as_raw_fd(), deadline).map_err(|_| {
                let _ = self.child.kill();
                Died::Timeout
            })?;
        }
        self.line.clear();
        match self.stdout.read_line(&mut self.line) {
            Ok(0) | Err(_) => Err(Died::Gone),
            Ok(_) => serde_json::from_str(&self.line).map_err(|e| Died::Protocol(e.to_string())),
        }
    }

    fn run(
        &mut self,
        request: &PassRequest,
        host: &mut dyn PassHost,
        deadline: Instant,
    ) -> Result<PassOutcome, Died> {
        self.logs.clear();
        self.send(&RunMessage {
            code: &request.code,
            connectors: &request.connectors,
            log: &request.log,
            log_end: request.log_end,
        })?;
        host.started();
        loop {
            let message = self.read(deadline)?;
            let answer = match message {
                WorkerMessage::Console { line } => {
                    host.console(&line);
                    self.logs.push(line);
                    continue;
                }
                WorkerMessage::Done {
                    status,
                    result,
                    result_error,
                    error,
                    replayed,
                    worker_micros,
                    steps,
                } => {
                    if !steps.is_empty() {
                        host.steps_opened(&steps);
                    }
                    let end = match status {
                        DoneStatus::Completed => PassEnd::Completed {
                            result,
                            result_error,
                        },
                        DoneStatus::Failed => PassEnd::Failed {
                            error: error.unwrap_or_default(),
                        },
                        DoneStatus::Stopped => PassEnd::Stopped,
                    };
                    return Ok(PassOutcome {
                        end,
                        logs: std::mem::take(&mut self.logs),
                        replayed,
                        worker_micros,
                    });
                }
                WorkerMessage::Call {
                    seq,
                    connector,
                    method,
                    args,
                    args_error,
                    steps,
                } => {
                    let call = ConnectorCall {
                        seq,
                        connector,
                        method,
                        args,
                        args_error,
                    };
                    if !steps.is_empty() && !host.steps_opened(&steps) {
                        HostMessage::Stop
                    } else {
                        match host.call(call) {
                            CallAnswer::Value(value) => HostMessage::Ok { value },
                            CallAnswer::Error(message) => HostMessage::Error { message },
                            CallAnswer::Stop => HostMessage::Stop,
                        }
                    }
                }
                WorkerMessage::StepDecide { seq, name } => match host.step_decide(seq, &name) {
                    StepAnswer::Execute => HostMessage::Execute,
                    StepAnswer::Replay(value) => HostMessage::Ok { value },
                    StepAnswer::Stop => HostMessage::Stop,
                },
                WorkerMessage::StepRecord {
                    seq,
                    value,
                    value_error,
                    name,
                } => {
                    let value = match value_error {
                        Some(error) => Err(error),
                        None => Ok(value),
                    };
                    let recorded = match name {
                        Some(name) => host.step_fresh(seq, &name, value),
                        None => host.step_record(seq, value),
                    };
                    if recorded {
                        HostMessage::Ok { value: None }
                    } else {
                        HostMessage::Stop
                    }
                }
                WorkerMessage::Search { query } => lookup_answer(host.search(&query)),
                WorkerMessage::Describe { target } => lookup_answer(host.describe(&target)),
                WorkerMessage::Snippet { name } => match host.snippet(&name) {
                    SnippetAnswer::Code(code) => HostMessage::Snippet { code },
                    SnippetAnswer::Value(value) => HostMessage::Ok { value: Some(value) },
                    SnippetAnswer::Stop => HostMessage::Stop,
                },
                WorkerMessage::Ready { .. } => {
                    return Err(Died::Protocol("unexpected ready".to_owned()));
                }
            };
            // A connector call may have outlived the deadline; its result is recorded, the pass is not.
            if Instant::now() >= deadline {
                let _ = self.child.kill();
                return Err(Died::Timeout);
            }
            self.send(&answer)?;
        }
    }

    fn classify_death(&mut self, died: Died, memory_limit_mb: u64) -> DeathReport {
        let _ = self.child.kill();
        let status = self.child.wait().ok();
        let stderr = self.stderr_text();
        let message = match died {
            Died::Timeout => "Execution timed out".to_owned(),
            Died::Protocol(detail) => format!("the sandbox worker broke the protocol ({detail})"),
            Died::Gone => describe_exit(status, &stderr, memory_limit_mb),
        };
        DeathReport {
            message,
            logs: std::mem::take(&mut self.logs),
        }
    }

    fn stderr_text(&mut self) -> String {
        set_nonblocking(self.stderr.as_raw_fd());
        let mut buffer = Vec::new();
        let mut chunk = [0u8; 8192];
        while buffer.len() < 1 << 20 {
            match self.stderr.read(&mut chunk) {
                Ok(0) | Err(_) => break,
                Ok(n) => buffer.extend_from_slice(&chunk[..n]),
            }
        }
        String::from_utf8_lossy(&buffer).into_owned()
    }
}

impl Drop for WorkerProcess {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn lookup_answer(answer: Result<Box<RawValue>, String>) -> HostMessage {
    match answer {
        Ok(value) => HostMessage::Ok { value: Some(value) },
        Err(message) => HostMessage::Error { message },
    }
}

fn describe_exit(status: Option<ExitStatus>, stderr: &str, memory_limit_mb: u64) -> String {
    if stderr.contains("memory allocation of") || stderr.contains("out of memory") {
        return format!("Execution exceeded its memory limit ({memory_limit_mb} MiB)");
    }
    if stderr.contains("has overflowed its stack") {
        return "Maximum call stack size exceeded".to_owned();
    }
    match status.and_then(|s| s.signal()) {
        Some(libc::SIGKILL) => {
            // The kernel's OOM killer, or someone else, ended the worker.
            format!(
                "the sandbox worker was killed (possibly out of memory; limit {memory_limit_mb} MiB)"
            )
        }
        Some(signal) => format!("the sandbox worker crashed (signal {signal})"),
        None => match status.and_then(|s| s.code()) {
            Some(code) => format!("the sandbox worker exited unexpectedly (code {code})"),
            None => "the sandbox worker stopped unexpectedly".to_owned(),
        },
    }
}

fn set_limit(resource: libc::__rlimit_resource_t, value: u64) -> io::Result<()> {
    let limit = libc::rlimit {
        rlim_cur: value,
        rlim_max: value,
    };
    // SAFETY: setrlimit reads a valid rlimit struct.
    if unsafe { libc::setrlimit(resource, &limit) } != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

fn set_nonblocking(fd: i32) {
    // SAFETY: fcntl on a descriptor we own.
    unsafe {
        let flags = libc::fcntl(fd, libc::F_GETFL);
        if flags >= 0 {
            libc::fcntl(fd, libc::F_SETFL, flags | libc::O_NONBLOCK);
        }
    }
}

/// Waits until `fd` has data (or EOF), or the deadline passes (`Err`).
///
/// No spinning first: host and worker usually share a CPU (a pipe write wakes the reader where the writer
/// runs), and a reader spinning there only keeps the writer it waits for off that CPU.
fn wait_readable(fd: i32, deadline: Instant) -> Result<(), ()> {
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Err(());
        }
        let mut poll = libc::pollfd {
            fd,
            events: libc::POLLIN,
            revents: 0,
        };
        let millis = left.as_millis().clamp(1, i32::MAX as u128) as i32;
        // SAFETY: one valid pollfd.
        let ready = unsafe { libc::poll(&mut poll, 1, millis) };
        if ready > 0 {
            return Ok(());
        }
        if ready < 0 && io::Error::last_os_error().kind() != io::ErrorKind::Interrupted {
            return Ok(());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn not_defined_is_a_whole_phrase() {
        assert!(mentions_not_defined(
            "Code execution failed: host is not defined"
        ));
        assert!(!mentions_not_defined("this is not definedness"));
    }
}
