//! The versioned message protocol between a host and its sandbox worker: one JSON object per line over the
//! worker's stdin (host → worker) and stdout (worker → host).
//!
//! A pass is one `run` message answered by one `done` message. In between, the worker sends requests that the
//! host answers in order (`call`, `stepDecide`, `stepRecord`, `search`, `describe`, `snippet`), and messages
//! that need no answer: `console` lines, and `stepValue`, a new step's value the worker goes on past (the host
//! records those before it answers the next request or ends the pass: docs/semantics.md §3.6). Values travel as raw JSON in the storage codec (binary and bigint envelopes), so
//! neither side re-encodes what it only forwards.

use serde::{Deserialize, Deserializer, Serialize};
use serde_json::value::RawValue;
use std::io::{self, BufRead, Write};

/// Bumped whenever a message changes shape; the host refuses a worker that speaks another version.
pub const PROTOCOL_VERSION: u32 = 3;

/// One recorded result the worker may serve without asking the host (an `applied`, non-ephemeral entry).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ReplayEntry {
    pub seq: u64,
    pub connector: String,
    pub method: String,
    #[serde(
        default,
        deserialize_with = "keep_null",
        skip_serializing_if = "Option::is_none"
    )]
    pub args: Option<Box<RawValue>>,
    #[serde(
        default,
        deserialize_with = "keep_null",
        skip_serializing_if = "Option::is_none"
    )]
    pub result: Option<Box<RawValue>>,
}

/// Messages from the host to the worker.
#[derive(Debug, Serialize, Deserialize)]
#[serde(tag = "t", rename_all = "camelCase", try_from = "Wire")]
pub enum HostMessage {
    /// Start a pass.
    Run {
        code: String,
        connectors: Vec<String>,
        #[serde(default)]
        log: Vec<ReplayEntry>,
        /// Every recorded seq is below this, when the host knows it: a step at or beyond it is new, so the
        /// worker runs it without asking and sends its value with its name (`stepRecord` with `name`).
        #[serde(default, rename = "logEnd", skip_serializing_if = "Option::is_none")]
        log_end: Option<u64>,
    },
    /// A value for the pending request (a call's result, a step's recorded value, search output…).
    Ok {
        #[serde(
            default,
            deserialize_with = "keep_null",
            skip_serializing_if = "Option::is_none"
        )]
        value: Option<Box<RawValue>>,
    },
    /// The pending call failed; the program sees `Error(message)`.
    Error { message: String },
    /// The pass must end now (the run paused or failed durably); nothing after this point may run.
    Stop,
    /// Step decision: run the closure and record its value under `seq`.
    Execute,
    /// A snippet's stored code, to run nested in this pass.
    Snippet { code: String },
}

/// A step started without asking the host and not recorded yet.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct OpenStep {
    pub seq: u64,
    pub name: String,
}

/// [`HostMessage::Run`] as the host writes it: borrowed, so a pass does not copy its replay log to send it.
#[derive(Debug, Serialize)]
#[serde(tag = "t", rename = "run")]
pub struct RunMessage<'a> {
    pub code: &'a str,
    pub connectors: &'a [String],
    pub log: &'a [ReplayEntry],
    #[serde(rename = "logEnd", skip_serializing_if = "Option::is_none")]
    pub log_end: Option<u64>,
}

/// How a pass ended, as the worker saw it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum DoneStatus {
    Completed,
    Failed,
    Stopped,
}

/// Messages from the worker to the host.
#[derive(Debug, Serialize, Deserialize)]
#[serde(tag = "t", rename_all = "camelCase", try_from = "Wire")]
pub enum WorkerMessage {
    Ready {
        version: u32,
    },
    Call {
        seq: u64,
        connector: String,
        method: String,
        #[serde(
            default,
            deserialize_with = "keep_null",
            skip_serializing_if = "Option::is_none"
        )]
        args: Option<Box<RawValue>>,
        /// Set when the arguments could not be serialised (cycle, throwing getter or toJSON…).
        #[serde(default, rename = "argsError", skip_serializing_if = "Option::is_none")]
        args_error: Option<String>,
        /// Steps the worker ran without asking (see `logEnd`) that are still running around this call: the
        /// host records them as executing first, as if they had been decided.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        steps: Vec<OpenStep>,
    },
    StepDecide {
        seq: u64,
        name: String,
    },
    StepRecord {
        seq: u64,
        #[serde(
            default,
            deserialize_with = "keep_null",
            skip_serializing_if = "Option::is_none"
        )]
        value: Option<Box<RawValue>>,
        #[serde(
            default,
            rename = "valueError",
            skip_serializing_if = "Option::is_none"
        )]
        value_error: Option<String>,
        /// Set for a step the worker ran without asking (see `logEnd`): the host records it whole.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        name: Option<String>,
    },
    /// A step the worker ran without asking (see `logEnd`) whose value can be recorded: not answered. The
    /// worker goes on at once; the host records the value, with any others that arrived meanwhile, before it
    /// answers the next request or ends the pass, and stops that request when the value could not be recorded.
    StepValue {
        seq: u64,
        name: String,
        #[serde(
            default,
            deserialize_with = "keep_null",
            skip_serializing_if = "Option::is_none"
        )]
        value: Option<Box<RawValue>>,
    },
    Search {
        query: String,
    },
    Describe {
        target: String,
    },
    Snippet {
        name: String,
    },
    Console {
        line: String,
    },
    Done {
        status: DoneStatus,
        #[serde(
            default,
            deserialize_with = "keep_null",
            skip_serializing_if = "Option::is_none"
        )]
        result: Option<Box<RawValue>>,
        /// Set when the final value could not be serialised.
        #[serde(
            default,
            rename = "resultError",
            skip_serializing_if = "Option::is_none"
        )]
        result_error: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        error: Option<String>,
        /// Calls served from the replay log inside the worker.
        #[serde(default)]
        replayed: u64,
        /// Time spent in the pass, measured by the worker.
        #[serde(default, rename = "workerMicros")]
        worker_micros: u64,
        /// Steps started without asking whose closures had not finished (see `Call`'s `steps`).
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        steps: Vec<OpenStep>,
    },
}

/// Every field of every message, flat: serde cannot buffer raw JSON through an internally tagged enum, so
/// both enums deserialise through this.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Wire {
    t: String,
    code: Option<String>,
    connectors: Option<Vec<String>>,
    log: Option<Vec<ReplayEntry>>,
    log_end: Option<u64>,
    steps: Option<Vec<OpenStep>>,
    #[serde(default, deserialize_with = "keep_null")]
    value: Option<Box<RawValue>>,
    message: Option<String>,
    version: Option<u32>,
    seq: Option<u64>,
    connector: Option<String>,
    method: Option<String>,
    #[serde(default, deserialize_with = "keep_null")]
    args: Option<Box<RawValue>>,
    args_error: Option<String>,
    value_error: Option<String>,
    name: Option<String>,
    query: Option<String>,
    target: Option<String>,
    line: Option<String>,
    status: Option<DoneStatus>,
    #[serde(default, deserialize_with = "keep_null")]
    result: Option<Box<RawValue>>,
    result_error: Option<String>,
    error: Option<String>,
    replayed: Option<u64>,
    worker_micros: Option<u64>,
}

fn field<T>(value: Option<T>, t: &str, name: &str) -> Result<T, String> {
    value.ok_or_else(|| format!("message {t:?} lacks {name:?}"))
}

impl TryFrom<Wire> for HostMessage {
    type Error = String;
    fn try_from(w: Wire) -> Result<Self, String> {
        let t = w.t.as_str();
        Ok(match t {
            "run" => HostMessage::Run {
                code: field(w.code, t, "code")?,
                connectors: w.connectors.unwrap_or_default(),
                log: w.log.unwrap_or_default(),
                log_end: w.log_end,
            },
            "ok" => HostMessage::Ok { value: w.value },
            "error" => HostMessage::Error {
                message: field(w.message, t, "message")?,
            },
            "stop" => HostMessage::Stop,
            "execute" => HostMessage::Execute,
            "snippet" => HostMessage::Snippet {
                code: field(w.code, t, "code")?,
            },
            other => return Err(format!("unknown host message {other:?}")),
        })
    }
}

impl TryFrom<Wire> for WorkerMessage {
    type Error = String;
    fn try_from(w: Wire) -> Result<Self, String> {
        let t = w.t.as_str();
        Ok(match t {
            "ready" => WorkerMessage::Ready {
                version: field(w.version, t, "version")?,
            },
            "call" => WorkerMessage::Call {
                seq: field(w.seq, t, "seq")?,
                connector: field(w.connector, t, "connector")?,
                method: field(w.method, t, "method")?,
                args: w.args,
                args_error: w.args_error,
                steps: w.steps.unwrap_or_default(),
            },
            "stepDecide" => WorkerMessage::StepDecide {
                seq: field(w.seq, t, "seq")?,
                name: field(w.name, t, "name")?,
            },
            "stepRecord" => WorkerMessage::StepRecord {
                seq: field(w.seq, t, "seq")?,
                value: w.value,
                value_error: w.value_error,
                name: w.name,
            },
            "stepValue" => WorkerMessage::StepValue {
                seq: field(w.seq, t, "seq")?,
                name: field(w.name, t, "name")?,
                value: w.value,
            },
            "search" => WorkerMessage::Search {
                query: field(w.query, t, "query")?,
            },
            "describe" => WorkerMessage::Describe {
                target: field(w.target, t, "target")?,
            },
            "snippet" => WorkerMessage::Snippet {
                name: field(w.name, t, "name")?,
            },
            "console" => WorkerMessage::Console {
                line: field(w.line, t, "line")?,
            },
            "done" => WorkerMessage::Done {
                status: field(w.status, t, "status")?,
                result: w.result,
                result_error: w.result_error,
                error: w.error,
                replayed: w.replayed.unwrap_or(0),
                worker_micros: w.worker_micros.unwrap_or(0),
                steps: w.steps.unwrap_or_default(),
            },
            other => return Err(format!("unknown worker message {other:?}")),
        })
    }
}

/// Writes one message as a line and flushes it.
pub fn write_message<W: Write, M: Serialize>(out: &mut W, message: &M) -> io::Result<()> {
    let mut line = serde_json::to_vec(message).map_err(io::Error::other)?;
    line.push(b'\n');
    out.write_all(&line)?;
    out.flush()
}

/// Reads one message; `Ok(None)` at end of input.
pub fn read_message<R: BufRead, M: for<'de> Deserialize<'de>>(
    input: &mut R,
    line: &mut String,
) -> io::Result<Option<M>> {
    line.clear();
    if input.read_line(line)? == 0 {
        return Ok(None);
    }
    serde_json::from_str(line)
        .map(Some)
        .map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e))
}

/// Raw JSON for a serialisable value.
pub fn raw<T: Serialize + ?Sized>(value: &T) -> Box<RawValue> {
    serde_json::value::to_raw_value(value).unwrap_or_else(|_| raw_null())
}

/// A present `null` is a value (`Some(null)`); only an absent field is `None`: JavaScript's `null` and
/// `undefined` differ, and a replay must hand the program the one the first pass saw.
fn keep_null<'de, D: Deserializer<'de>>(
    deserializer: D,
) -> Result<Option<Box<RawValue>>, D::Error> {
    Box::<RawValue>::deserialize(deserializer).map(Some)
}

fn raw_null() -> Box<RawValue> {
    RawValue::from_string("null".to_owned()).unwrap_or_else(|_| unreachable!("null is valid JSON"))
}

/// Whether the pipe `fd` has something to read within `millis` (0: only look). Interrupted by a signal, it
/// says nothing has come; the caller's loop asks again.
pub(crate) fn readable_within(fd: i32, millis: i32) -> io::Result<bool> {
    let mut poll = libc::pollfd {
        fd,
        events: libc::POLLIN,
        revents: 0,
    };
    // SAFETY: one valid pollfd.
    match unsafe { libc::poll(&mut poll, 1, millis) } {
        ready if ready > 0 => Ok(true),
        0 => Ok(false),
        _ => match io::Error::last_os_error() {
            error if error.kind() == io::ErrorKind::Interrupted => Ok(false),
            error => Err(error),
        },
    }
}
