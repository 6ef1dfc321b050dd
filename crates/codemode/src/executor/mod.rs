//! The host side of a pass: runs code in a `codemode-worker` process under a memory limit and a deadline,
//! answers its requests through a [`PassHost`], and turns whatever happens — including the worker dying —
//! into a [`PassOutcome`]. Failures are data; nothing a program does can take the host down.

mod pass;
mod worker;

pub use pass::{
    CallAnswer, ConnectorCall, PassEnd, PassHost, PassOutcome, PassRequest, SnippetAnswer,
    StepAnswer,
};

use crate::protocol::PROTOCOL_VERSION;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use worker::WorkerProcess;

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

#[cfg(test)]
mod tests;
