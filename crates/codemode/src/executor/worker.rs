//! One `codemode-worker` process: started under its limits, driven through a pass message by message, and
//! read for why it died when it did.

use super::{
    CallAnswer, ConnectorCall, ExecutorError, ExecutorOptions, PassEnd, PassHost, PassOutcome,
    PassRequest, SnippetAnswer, StepAnswer,
};
use crate::protocol::{
    DoneStatus, HostMessage, PROTOCOL_VERSION, RunMessage, WorkerMessage, readable_within,
    write_message,
};
use serde_json::value::RawValue;
use std::io::{self, BufRead, BufReader, Read};
use std::os::fd::AsRawFd;
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::Path;
use std::process::{Child, ChildStderr, ChildStdin, ChildStdout, Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

/// Why a worker stopped answering mid-pass.
#[derive(Debug)]
pub(super) enum Died {
    Timeout,
    Gone,
    Protocol(String),
}

pub(super) struct DeathReport {
    pub(super) message: String,
    pub(super) logs: Vec<String>,
}

pub(super) struct WorkerProcess {
    child: Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
    stderr: ChildStderr,
    line: String,
    logs: Vec<String>,
    /// When it last came back from a pass (or was started).
    pub(super) returned: Instant,
}

impl WorkerProcess {
    pub(super) fn spawn(path: &Path, options: &ExecutorOptions) -> Result<Self, ExecutorError> {
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

    /// Whether the worker has already written another message (buffered, or waiting in the pipe).
    fn more_to_read(&self) -> bool {
        // A pipe that cannot be polled is read at once, which says what is wrong with it.
        !self.stdout.buffer().is_empty()
            || readable_within(self.stdout.get_ref().as_raw_fd(), 0).unwrap_or(true)
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

    pub(super) fn run(
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
        // A step told that could not be recorded: the program's next request is stopped, and a pass that
        // ends meanwhile ends stopped (docs/semantics.md §3.6).
        let mut unrecorded = false;
        loop {
            // Steps told are recorded together once the worker has nothing more to say for the moment, so one
            // commit holds as many as arrived while the last one was written.
            if host.steps_unrecorded() && !self.more_to_read() {
                unrecorded |= !host.flush_steps();
            }
            let message = match self.read(deadline) {
                Ok(message) => message,
                Err(died) => {
                    // The step values the program went on with are recorded even when its pass dies.
                    host.settle();
                    return Err(died);
                }
            };
            let message = match message {
                WorkerMessage::Console { line } => {
                    host.console(&line);
                    self.logs.push(line);
                    continue;
                }
                WorkerMessage::StepValue { seq, name, value } => {
                    if !unrecorded {
                        unrecorded = !host.step_told(seq, &name, value);
                    }
                    continue;
                }
                message => message,
            };
            // Nothing the program asks for is answered, and its end is not taken, before the step values it
            // went on with are recorded; a call settles the rest itself, so its record can travel with it,
            // and so does the end (a completion travels behind the last outcome: `RuntimeHost::complete`).
            unrecorded |= !match message {
                WorkerMessage::Call { .. } | WorkerMessage::Done { .. } => host.flush_steps(),
                _ => host.settle(),
            };
            if unrecorded {
                if let WorkerMessage::Done {
                    replayed,
                    worker_micros,
                    ..
                } = message
                {
                    return Ok(PassOutcome {
                        end: PassEnd::Stopped,
                        logs: std::mem::take(&mut self.logs),
                        replayed,
                        worker_micros,
                    });
                }
                self.send(&HostMessage::Stop)?;
                continue;
            }
            let answer = match message {
                WorkerMessage::Console { .. } | WorkerMessage::StepValue { .. } => continue,
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

    pub(super) fn classify_death(&mut self, died: Died, memory_limit_mb: u64) -> DeathReport {
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
        let millis = left.as_millis().clamp(1, i32::MAX as u128) as i32;
        // A pipe that cannot be polled is read at once, which says what is wrong with it.
        if readable_within(fd, millis).unwrap_or(true) {
            return Ok(());
        }
    }
}
