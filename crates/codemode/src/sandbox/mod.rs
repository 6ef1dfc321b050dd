//! The worker side of a pass: a fresh boa context per pass whose connector namespaces and `codemode` SDK talk
//! to the host over the pipe protocol, with recorded results served locally.
//!
//! Everything that decides how a pass ends lives in host-side state, never in the JS promise: boa drops engine
//! errors raised after an `await`, so a stop (pause or durable failure) is a flag checked first, enforced by an
//! uncatchable error at the call site so that no program code runs past it.

mod jobs;

use crate::normalize::{LineColumn, Normalized, normalize_code};
use crate::protocol::{
    DoneStatus, HostMessage, OpenStep, ReplayEntry, WorkerMessage, read_message, write_message,
};
use boa_engine::{
    Context, JsError, JsNativeError, JsObject, JsResult, JsString, JsValue, NativeFunction, Source,
    builtins::promise::PromiseState,
    context::{ContextBuilder, HostHooks},
    error::{EngineError, PanicError, RuntimeLimitError},
    js_string,
    module::IdleModuleLoader,
    object::{
        ObjectInitializer,
        builtins::{JsArray, JsFunction, JsPromise, JsUint8Array},
    },
    property::Attribute,
    realm::Realm,
};
use boa_gc::{Finalize, Trace};
use serde_json::value::RawValue;
use std::cell::{Cell, RefCell};
use std::collections::HashMap;
use std::io::{BufRead, Write};
use std::rc::Rc;
use std::time::Instant;

const PRELUDE: &str = include_str!("prelude.js");

/// The message of a pass whose promise can no longer settle.
pub const NEVER_SETTLES: &str = "the program is waiting for a promise that can never settle";

/// How long after a pass the worker leaves the CPU to its host before it cleans up and builds the next
/// context (a few milliseconds of CPU): the host is recording the outcome and answering its caller then.
pub const TIDY_DELAY: std::time::Duration = std::time::Duration::from_millis(3);

/// The pipe to the host, shared by every native function of a pass.
pub struct Channel {
    input: RefCell<Box<dyn BufRead>>,
    output: RefCell<Box<dyn Write>>,
    line: RefCell<String>,
    /// The descriptor under `input`, to wait on without reading.
    input_fd: Option<i32>,
}

impl Channel {
    pub fn new(input: Box<dyn BufRead>, output: Box<dyn Write>) -> Rc<Self> {
        Self::with_fd(input, output, None)
    }

    /// A channel whose input reads from `fd`, so that the worker can wait for the host without reading.
    pub fn over_fd(input: Box<dyn BufRead>, output: Box<dyn Write>, fd: i32) -> Rc<Self> {
        Self::with_fd(input, output, Some(fd))
    }

    fn with_fd(input: Box<dyn BufRead>, output: Box<dyn Write>, input_fd: Option<i32>) -> Rc<Self> {
        Rc::new(Channel {
            input: RefCell::new(input),
            output: RefCell::new(output),
            line: RefCell::new(String::new()),
            input_fd,
        })
    }

    /// Whether the host writes something within `timeout`. Only asked between passes, when nothing the host
    /// sent is left unread in the buffer.
    fn input_within(&self, timeout: std::time::Duration) -> bool {
        let Some(fd) = self.input_fd else {
            return false;
        };
        let mut poll = libc::pollfd {
            fd,
            events: libc::POLLIN,
            revents: 0,
        };
        let millis = timeout.as_millis().min(i32::MAX as u128) as i32;
        // SAFETY: one valid pollfd.
        unsafe { libc::poll(&mut poll, 1, millis) > 0 }
    }

    /// Sends a message. A host that went away leaves nothing to work for, so the worker exits.
    pub fn send(&self, message: &WorkerMessage) {
        if write_message(&mut *self.output.borrow_mut(), message).is_err() {
            std::process::exit(0);
        }
    }

    /// Waits for the next host message; exits when the host closed the pipe.
    pub fn receive(&self) -> HostMessage {
        match read_message(&mut *self.input.borrow_mut(), &mut self.line.borrow_mut()) {
            Ok(Some(message)) => message,
            _ => std::process::exit(0),
        }
    }

    fn request(&self, message: &WorkerMessage) -> HostMessage {
        self.send(message);
        self.receive()
    }
}

/// Serves passes until the host closes stdin.
pub fn serve(channel: &Rc<Channel>) {
    channel.send(&WorkerMessage::Ready {
        version: crate::protocol::PROTOCOL_VERSION,
    });
    // The connectors of the last pass: the next one almost always has the same, so they are installed while
    // the worker waits.
    let mut connectors_seen: Vec<String> = Vec::new();
    // The next pass's context is built while the worker waits for it, so the pass does not pay for it.
    let mut prepared = Some(prepare(channel, &connectors_seen));
    loop {
        // Anything but `run` outside a pass is a host bug; skip it rather than die mid-protocol.
        let HostMessage::Run {
            code,
            connectors,
            log,
            log_end,
        } = channel.receive()
        else {
            continue;
        };
        let ready = match prepared.take() {
            Some(ready) => ready,
            // The host came back before the clean-up: do it now.
            None => {
                release_memory();
                prepare(channel, &connectors)
            }
        };
        let done = run_pass(ready, &code, &connectors, log, log_end);
        connectors_seen = connectors;
        channel.send(&done);
        if !channel.input_within(TIDY_DELAY) {
            release_memory();
            prepared = Some(prepare(channel, &connectors_seen));
        }
    }
}

type Prepared = (Rc<PassState>, Result<Sandbox, String>);

fn prepare(channel: &Rc<Channel>, connectors: &[String]) -> Prepared {
    let state = PassState::new(channel);
    let sandbox = build_sandbox(&state, true).and_then(|mut sandbox| {
        sandbox.install_connectors(connectors)?;
        Ok(sandbox)
    });
    (state, sandbox.map_err(|e| e.to_string()))
}

/// Runs a trivial pass so that boa's one-time initialisation is paid before the first real one.
pub fn prewarm() {
    let channel = Channel::new(Box::new(std::io::empty()), Box::new(std::io::sink()));
    let _ = run_pass(
        prepare(&channel, &[]),
        "async () => [1].map((x) => x + 1)",
        &[],
        Vec::new(),
        None,
    );
    release_memory();
}

/// Garbage from one pass must not count against the next pass's memory limit.
fn release_memory() {
    boa_gc::force_collect();
    #[cfg(target_os = "linux")]
    // SAFETY: malloc_trim only returns free heap pages to the kernel.
    unsafe {
        libc::malloc_trim(0);
    }
}

/// Host-side state of one pass, shared by every native function (and by nested snippet contexts).
struct PassState {
    channel: Rc<Channel>,
    connectors: RefCell<Vec<String>>,
    next_seq: Cell<u64>,
    replay: RefCell<HashMap<u64, ReplayEntry>>,
    /// Seqs from here on have nothing recorded (when the host said so).
    log_end: Cell<Option<u64>>,
    /// Steps run without asking the host and not recorded yet, by seq: their names, and whether the host has
    /// been told they started (a call made inside one tells it; then the record is a plain one).
    fresh_steps: RefCell<HashMap<u64, (String, bool)>>,
    stopped: Cell<bool>,
    replayed: Cell<u64>,
}

impl PassState {
    fn new(channel: &Rc<Channel>) -> Rc<Self> {
        Rc::new(PassState {
            channel: channel.clone(),
            connectors: RefCell::new(Vec::new()),
            next_seq: Cell::new(0),
            replay: RefCell::new(HashMap::new()),
            log_end: Cell::new(None),
            fresh_steps: RefCell::new(HashMap::new()),
            stopped: Cell::new(false),
            replayed: Cell::new(0),
        })
    }

    fn take_seq(&self) -> u64 {
        let seq = self.next_seq.get();
        self.next_seq.set(seq + 1);
        seq
    }

    /// The steps started without asking that the host has not heard of yet (still running, or their closure
    /// threw), now marked as told. Every call and the end of the pass carry them, so whatever the host records
    /// next shows them executing, as decided steps would be (docs/semantics.md §3.6).
    fn announce_steps(&self) -> Vec<OpenStep> {
        let mut steps: Vec<OpenStep> = self
            .fresh_steps
            .borrow_mut()
            .iter_mut()
            .filter(|(_, (_, told))| !*told)
            .map(|(seq, (name, told))| {
                *told = true;
                OpenStep {
                    seq: *seq,
                    name: name.clone(),
                }
            })
            .collect();
        steps.sort_by_key(|step| step.seq);
        steps
    }

    /// Ends the pass: from here on, nothing in the program may run.
    fn stop(&self) -> JsError {
        self.stopped.set(true);
        PanicError::new("__CODEMODE_PAUSE__").into()
    }
}

#[derive(Clone, Trace, Finalize)]
#[boa_gc(unsafe_empty_trace)]
struct Shared(Rc<PassState>);

/// Refuses `eval` and every Function constructor on strings, as the reference's isolate does.
struct NoStringCompilation;

impl HostHooks for NoStringCompilation {
    fn ensure_can_compile_strings(
        &self,
        _realm: Realm,
        _parameters: &[JsString],
        _body: &JsString,
        _direct: bool,
        _context: &mut Context,
    ) -> JsResult<()> {
        Err(JsNativeError::eval()
            .with_message("Code generation from strings disallowed for this context")
            .into())
    }
}

/// A context with the sandbox globals installed, and the prelude's helpers.
struct Sandbox {
    context: Context,
    encode: JsFunction,
    message_of: JsFunction,
    install_connectors: JsFunction,
    jobs: Rc<jobs::PassJobs>,
    /// The connector globals defined so far (they cannot be removed again).
    installed: Vec<String>,
}

impl Sandbox {
    /// Defines one global namespace per connector (done per pass: the prepared context knows none yet).
    fn install_connectors(&mut self, connectors: &[String]) -> JsResult<()> {
        if connectors.is_empty() {
            return Ok(());
        }
        let names = JsArray::from_iter(
            connectors
                .iter()
                .map(|name| JsValue::from(JsString::from(name.as_str()))),
            &mut self.context,
        );
        self.install_connectors
            .call(&JsValue::undefined(), &[names.into()], &mut self.context)?;
        self.installed.extend_from_slice(connectors);
        Ok(())
    }
}

fn build_sandbox(state: &Rc<PassState>, capture_console: bool) -> JsResult<Sandbox> {
    let jobs = Rc::new(jobs::PassJobs::default());
    let mut context = ContextBuilder::new()
        .host_hooks(Rc::new(NoStringCompilation))
        .module_loader(Rc::new(IdleModuleLoader))
        .job_executor(jobs.clone())
        .build()?;
    context.runtime_limits_mut().set_recursion_limit(4096);
    context.runtime_limits_mut().set_stack_size_limit(1 << 20);

    let shared = Shared(state.clone());
    let natives = ObjectInitializer::new(&mut context)
        .function(native(native_call, &shared), js_string!("call"), 4)
        .function(
            native(native_step_decide, &shared),
            js_string!("stepDecide"),
            1,
        )
        .function(
            native(native_step_record, &shared),
            js_string!("stepRecord"),
            3,
        )
        .function(native(native_search, &shared), js_string!("search"), 1)
        .function(native(native_describe, &shared), js_string!("describe"), 1)
        .function(native(native_snippet, &shared), js_string!("snippet"), 2)
        .function(native(native_log, &shared), js_string!("log"), 1)
        .function(
            NativeFunction::from_fn_ptr(native_b64),
            js_string!("b64"),
            1,
        )
        .build();
    let install = context.eval(Source::from_bytes(PRELUDE))?;
    let install = install
        .as_callable()
        .ok_or_else(|| JsNativeError::typ().with_message("sandbox prelude is not a function"))?;
    let helpers = install.call(
        &JsValue::undefined(),
        &[natives.into(), JsValue::from(capture_console)],
        &mut context,
    )?;
    let helpers = helpers
        .as_object()
        .ok_or_else(|| JsNativeError::typ().with_message("sandbox prelude returned no helpers"))?;
    let encode = helper(&helpers, "encode", &mut context)?;
    let message_of = helper(&helpers, "messageOf", &mut context)?;
    let install_connectors = helper(&helpers, "installConnectors", &mut context)?;
    Ok(Sandbox {
        context,
        encode,
        message_of,
        install_connectors,
        jobs,
        installed: Vec::new(),
    })
}

fn helper(helpers: &JsObject, name: &str, context: &mut Context) -> JsResult<JsFunction> {
    helpers
        .get(JsString::from(name), context)?
        .as_object()
        .and_then(JsFunction::from_object)
        .ok_or_else(|| {
            JsNativeError::typ()
                .with_message("sandbox prelude helper missing")
                .into()
        })
}

type NativeFn = fn(&JsValue, &[JsValue], &Shared, &mut Context) -> JsResult<JsValue>;

fn native(f: NativeFn, shared: &Shared) -> NativeFunction {
    NativeFunction::from_copy_closure_with_captures(f, shared.clone())
}

fn arg_string(args: &[JsValue], index: usize) -> Option<String> {
    args.get(index)
        .and_then(JsValue::as_string)
        .map(|s| s.to_std_string_lossy())
}

fn arg_raw(args: &[JsValue], index: usize) -> Option<Box<RawValue>> {
    arg_string(args, index).and_then(|text| RawValue::from_string(text).ok())
}

/// Decodes a storage-codec value for the program: binary envelopes become `Uint8Array` (or `ArrayBuffer`),
/// bigint envelopes `BigInt`; `None` is `undefined`.
fn raw_to_js(value: Option<Box<RawValue>>, context: &mut Context) -> JsResult<JsValue> {
    let Some(raw) = value else {
        return Ok(JsValue::undefined());
    };
    let value: serde_json::Value = serde_json::from_str(raw.get()).map_err(|e| {
        JsNativeError::typ().with_message(format!("unreadable value from the host: {e}"))
    })?;
    json_to_js(&value, context)
}

fn json_to_js(value: &serde_json::Value, context: &mut Context) -> JsResult<JsValue> {
    use serde_json::Value;
    Ok(match value {
        Value::Null => JsValue::null(),
        Value::Bool(b) => JsValue::from(*b),
        Value::Number(n) => match n.as_i64().and_then(|i| i32::try_from(i).ok()) {
            Some(i) => JsValue::from(i),
            None => JsValue::from(n.as_f64().unwrap_or(f64::NAN)),
        },
        Value::String(s) => JsValue::from(JsString::from(s.as_str())),
        Value::Array(items) => {
            let values = items
                .iter()
                .map(|item| json_to_js(item, context))
                .collect::<JsResult<Vec<_>>>()?;
            JsArray::from_iter(values, context).into()
        }
        Value::Object(map) => {
            if let (Some(Value::String(kind)), Some(Value::String(data))) =
                (map.get(crate::codec::BINARY_ENVELOPE), map.get("data"))
            {
                use base64::Engine as _;
                let bytes = base64::engine::general_purpose::STANDARD
                    .decode(data.as_bytes())
                    .map_err(|e| {
                        JsNativeError::typ().with_message(format!("invalid binary envelope: {e}"))
                    })?;
                let array = JsUint8Array::from_iter(bytes, context)?;
                return if kind == "ArrayBuffer" {
                    array.get(js_string!("buffer"), context)
                } else {
                    Ok(array.into())
                };
            }
            if let Some(Value::String(digits)) = map.get(crate::codec::BIGINT_ENVELOPE)
                && let Some(big) = boa_engine::JsBigInt::from_string(digits)
            {
                return Ok(big.into());
            }
            let object = JsObject::with_object_proto(context.intrinsics());
            for (key, item) in map {
                let item = json_to_js(item, context)?;
                object.create_data_property_or_throw(
                    JsString::from(key.as_str()),
                    item,
                    context,
                )?;
            }
            object.into()
        }
    })
}

fn connector_error(message: String) -> JsError {
    JsNativeError::error().with_message(message).into()
}

/// `natives.call(connector, method, argsJson, argsError)` → a promise of the call's result (from the replay
/// log or the host), rejected with the connector's error; or stops the pass.
fn native_call(
    _: &JsValue,
    args: &[JsValue],
    shared: &Shared,
    context: &mut Context,
) -> JsResult<JsValue> {
    let state = &shared.0;
    if state.stopped.get() {
        return Err(state.stop());
    }
    let connector = arg_string(args, 0).unwrap_or_default();
    let method = arg_string(args, 1).unwrap_or_default();
    let call_args = arg_raw(args, 2);
    let args_error = arg_string(args, 3);
    let seq = state.take_seq();
    if args_error.is_none()
        && let Some(result) = state.replay.borrow().get(&seq).and_then(|entry| {
            (entry.connector == connector
                && entry.method == method
                && crate::codec::same_arguments(entry.args.as_deref(), call_args.as_deref()))
            .then(|| entry.result.clone())
        })
    {
        state.replayed.set(state.replayed.get() + 1);
        return settled(raw_to_js(result, context), context);
    }
    let answer = state.channel.request(&WorkerMessage::Call {
        seq,
        connector,
        method,
        args: call_args,
        args_error,
        steps: state.announce_steps(),
    });
    let value = match answer {
        HostMessage::Ok { value } => raw_to_js(value, context),
        HostMessage::Error { message } => Err(connector_error(message)),
        _ => return Err(state.stop()),
    };
    settled(value, context)
}

/// A promise already settled with `value` (rejected with the error), as an async method would return.
fn settled(value: JsResult<JsValue>, context: &mut Context) -> JsResult<JsValue> {
    let promise = match value {
        Ok(value) => JsPromise::resolve(value, context)?,
        Err(error) => JsPromise::reject(error, context)?,
    };
    Ok(promise.into())
}

/// `natives.stepDecide(name)` → `{seq, replay, value}`.
fn native_step_decide(
    _: &JsValue,
    args: &[JsValue],
    shared: &Shared,
    context: &mut Context,
) -> JsResult<JsValue> {
    let state = &shared.0;
    if state.stopped.get() {
        return Err(state.stop());
    }
    let name = arg_string(args, 0).unwrap_or_default();
    let seq = state.take_seq();
    let recorded = state.replay.borrow().get(&seq).and_then(|entry| {
        (entry.connector == crate::STEP_CONNECTOR && entry.method == name)
            .then(|| entry.result.clone())
    });
    let (replay, value) = match recorded {
        Some(result) => {
            state.replayed.set(state.replayed.get() + 1);
            (true, result)
        }
        // Nothing is recorded this far: the step runs, and its record says what it was.
        None if state.log_end.get().is_some_and(|end| seq >= end) => {
            state.fresh_steps.borrow_mut().insert(seq, (name, false));
            (false, None)
        }
        None => match state
            .channel
            .request(&WorkerMessage::StepDecide { seq, name })
        {
            HostMessage::Execute => (false, None),
            HostMessage::Ok { value } => (true, value),
            _ => return Err(state.stop()),
        },
    };
    let value = raw_to_js(value, context)?;
    let decision = ObjectInitializer::new(context)
        .property(js_string!("seq"), seq as f64, Attribute::all())
        .property(js_string!("replay"), replay, Attribute::all())
        .property(js_string!("value"), value, Attribute::all())
        .build();
    Ok(decision.into())
}

/// `natives.stepRecord(seq, valueJson, valueError)` → the value as recorded (what every replay returns).
fn native_step_record(
    _: &JsValue,
    args: &[JsValue],
    shared: &Shared,
    context: &mut Context,
) -> JsResult<JsValue> {
    let state = &shared.0;
    if state.stopped.get() {
        return Err(state.stop());
    }
    let seq = args.first().and_then(JsValue::as_number).unwrap_or(-1.0);
    let seq = if seq >= 0.0 { seq as u64 } else { u64::MAX };
    // A step the host has not heard of is recorded whole, with its name.
    let name = match state.fresh_steps.borrow_mut().remove(&seq) {
        Some((name, false)) => Some(name),
        _ => None,
    };
    let value = arg_raw(args, 1);
    let answer = state.channel.request(&WorkerMessage::StepRecord {
        seq,
        value: value.clone(),
        value_error: arg_string(args, 2),
        name,
    });
    match answer {
        HostMessage::Ok { .. } => raw_to_js(value, context),
        _ => Err(state.stop()),
    }
}

fn native_search(
    _: &JsValue,
    args: &[JsValue],
    shared: &Shared,
    context: &mut Context,
) -> JsResult<JsValue> {
    let query = arg_string(args, 0).unwrap_or_default();
    lookup(shared, &WorkerMessage::Search { query }, context)
}

fn native_describe(
    _: &JsValue,
    args: &[JsValue],
    shared: &Shared,
    context: &mut Context,
) -> JsResult<JsValue> {
    let target = arg_string(args, 0).unwrap_or_default();
    lookup(shared, &WorkerMessage::Describe { target }, context)
}

fn lookup(shared: &Shared, message: &WorkerMessage, context: &mut Context) -> JsResult<JsValue> {
    let state = &shared.0;
    if state.stopped.get() {
        return Err(state.stop());
    }
    match state.channel.request(message) {
        HostMessage::Ok { value } => raw_to_js(value, context),
        HostMessage::Error { message } => Err(connector_error(message)),
        _ => Err(state.stop()),
    }
}

fn native_log(
    _: &JsValue,
    args: &[JsValue],
    shared: &Shared,
    _: &mut Context,
) -> JsResult<JsValue> {
    let line = arg_string(args, 0).unwrap_or_default();
    shared.0.channel.send(&WorkerMessage::Console { line });
    Ok(JsValue::undefined())
}

/// `natives.snippet(name, inputJson)` → the snippet's result (or the host's `{error}`), run nested in a
/// fresh realm; throws `Code execution failed: …` when the snippet fails.
fn native_snippet(
    _: &JsValue,
    args: &[JsValue],
    shared: &Shared,
    context: &mut Context,
) -> JsResult<JsValue> {
    let state = &shared.0;
    if state.stopped.get() {
        return Err(state.stop());
    }
    let name = arg_string(args, 0).unwrap_or_default();
    let input = arg_string(args, 1).unwrap_or_else(|| "undefined".to_owned());
    let code = match state.channel.request(&WorkerMessage::Snippet { name }) {
        HostMessage::Snippet { code } => code,
        HostMessage::Ok { value } => return raw_to_js(value, context),
        HostMessage::Error { message } => return Err(connector_error(message)),
        _ => return Err(state.stop()),
    };
    let normalized = normalize_code(&code);
    let expression = normalized
        .code
        .trim_end_matches(|c: char| c == ';' || c.is_whitespace());
    let wrapped =
        format!("async () => {{ const snippet = ({expression}); return await snippet({input}); }}");
    let nested = Normalized::verbatim(wrapped);
    // The nested run sees the same connectors as the outer one, in a realm of its own.
    let connectors = state.connectors.borrow().clone();
    let mut sandbox = build_sandbox(state, false)?;
    sandbox.install_connectors(&connectors)?;
    match evaluate(&mut sandbox, state, &nested) {
        Evaluated::Stopped => Err(state.stop()),
        Evaluated::Completed {
            result,
            result_error,
        } => match (result, result_error) {
            (_, Some(error)) => Err(connector_error(format!("Code execution failed: {error}"))),
            (result, None) => raw_to_js(result, context),
        },
        Evaluated::Failed(message) => {
            Err(connector_error(format!("Code execution failed: {message}")))
        }
    }
}

fn native_b64(_: &JsValue, args: &[JsValue], context: &mut Context) -> JsResult<JsValue> {
    use base64::Engine as _;
    let bytes = args
        .first()
        .and_then(JsValue::as_object)
        .map(|object| JsUint8Array::from_object(object.clone()))
        .transpose()?
        .map(|array| array.to_vec(context))
        .transpose()?
        .unwrap_or_default();
    Ok(JsString::from(base64::engine::general_purpose::STANDARD.encode(bytes)).into())
}

enum Evaluated {
    Completed {
        result: Option<Box<RawValue>>,
        result_error: Option<String>,
    },
    Failed(String),
    /// The host stopped the pass (pause or durable failure).
    Stopped,
}

/// The prepared sandbox with exactly `connectors` defined: as prepared when the list did not change, else
/// completed, or built afresh when it holds others.
fn with_connectors(
    mut sandbox: Sandbox,
    state: &Rc<PassState>,
    connectors: &[String],
) -> JsResult<Sandbox> {
    if sandbox.installed == connectors {
        return Ok(sandbox);
    }
    if !sandbox.installed.is_empty() {
        sandbox = build_sandbox(state, true)?;
    }
    sandbox.install_connectors(connectors)?;
    Ok(sandbox)
}

fn run_pass(
    prepared: Prepared,
    code: &str,
    connectors: &[String],
    log: Vec<ReplayEntry>,
    log_end: Option<u64>,
) -> WorkerMessage {
    let started = Instant::now();
    let (state, sandbox) = prepared;
    state.log_end.set(log_end);
    *state.connectors.borrow_mut() = connectors.to_vec();
    *state.replay.borrow_mut() = log.into_iter().map(|entry| (entry.seq, entry)).collect();
    let normalized = normalize_code(code);
    let sandbox = sandbox.and_then(|sandbox| {
        with_connectors(sandbox, &state, connectors).map_err(|e| e.to_string())
    });
    let outcome = match sandbox {
        Ok(mut sandbox) => evaluate(&mut sandbox, &state, &normalized),
        Err(e) => Evaluated::Failed(format!("the sandbox could not start: {e}")),
    };
    let (status, result, result_error, error) = match outcome {
        Evaluated::Completed {
            result,
            result_error,
        } => (DoneStatus::Completed, result, result_error, None),
        Evaluated::Failed(message) => (DoneStatus::Failed, None, None, Some(message)),
        Evaluated::Stopped => (DoneStatus::Stopped, None, None, None),
    };
    WorkerMessage::Done {
        status,
        result,
        result_error,
        error,
        replayed: state.replayed.get(),
        worker_micros: started.elapsed().as_micros() as u64,
        steps: state.announce_steps(),
    }
}

/// Evaluates normalised code to completion in `sandbox`.
fn evaluate(sandbox: &mut Sandbox, state: &PassState, normalized: &Normalized) -> Evaluated {
    let context = &mut sandbox.context;
    let function = match context.eval(Source::from_bytes(normalized.code.as_bytes())) {
        Ok(function) => function,
        Err(_) if state.stopped.get() => return Evaluated::Stopped,
        Err(error) => {
            return Evaluated::Failed(failure_message(
                error,
                normalized,
                &sandbox.message_of,
                context,
            ));
        }
    };
    let Some(callable) = function.as_callable() else {
        return Evaluated::Failed("the program is not a function".to_owned());
    };
    let value = match callable.call(&JsValue::undefined(), &[], context) {
        Ok(value) => value,
        Err(_) if state.stopped.get() => return Evaluated::Stopped,
        Err(error) => {
            return Evaluated::Failed(failure_message(
                error,
                normalized,
                &sandbox.message_of,
                context,
            ));
        }
    };
    let promise = value
        .as_object()
        .and_then(|o| JsPromise::from_object(o.clone()).ok());
    if let Some(promise) = &promise {
        sandbox.jobs.stop_when_settled(promise.clone());
    }
    let drained = sandbox.jobs.clone().run(context);
    if state.stopped.get() {
        return Evaluated::Stopped;
    }
    if let Err(error) = drained {
        return Evaluated::Failed(failure_message(
            error,
            normalized,
            &sandbox.message_of,
            context,
        ));
    }
    let value = match promise {
        None => value,
        Some(promise) => match promise.state() {
            PromiseState::Fulfilled(value) => value,
            PromiseState::Rejected(reason) => {
                return Evaluated::Failed(message_of(&sandbox.message_of, &reason, context));
            }
            PromiseState::Pending => return Evaluated::Failed(NEVER_SETTLES.to_owned()),
        },
    };
    match sandbox
        .encode
        .call(&JsValue::undefined(), &[value], context)
    {
        Ok(text) => Evaluated::Completed {
            result: text
                .as_string()
                .and_then(|s| RawValue::from_string(s.to_std_string_lossy()).ok()),
            result_error: None,
        },
        Err(error) => Evaluated::Completed {
            result: None,
            result_error: Some(failure_message(
                error,
                normalized,
                &sandbox.message_of,
                context,
            )),
        },
    }
}

fn message_of(message_of: &JsFunction, value: &JsValue, context: &mut Context) -> String {
    match message_of.call(&JsValue::undefined(), std::slice::from_ref(value), context) {
        Ok(text) => text
            .as_string()
            .map(|s| s.to_std_string_lossy())
            .unwrap_or_default(),
        Err(_) => "the thrown value could not be converted to a string".to_owned(),
    }
}

/// The message a program failure shows: JS errors by their `message`, engine limits in V8's words, syntax
/// errors with the position in the text the user sent.
fn failure_message(
    error: JsError,
    normalized: &Normalized,
    message_of_fn: &JsFunction,
    context: &mut Context,
) -> String {
    if let Some(engine) = error.as_engine() {
        return match engine {
            EngineError::RuntimeLimit(
                RuntimeLimitError::Recursion | RuntimeLimitError::StackSize,
            ) => "Maximum call stack size exceeded".to_owned(),
            other => other.to_string(),
        };
    }
    if let Ok(native) = error.try_native(context)
        && matches!(native.kind(), boa_engine::JsNativeErrorKind::Syntax)
        && let Some(syntax) = syntax_error(normalized)
    {
        return syntax;
    }
    match error.into_opaque(context) {
        Ok(value) => message_of(message_of_fn, &value, context),
        Err(e) => e.to_string(),
    }
}

/// `SyntaxError: <message> (line L, column C)` when the normalised code does not parse, else None.
fn syntax_error(normalized: &Normalized) -> Option<String> {
    use boa_engine::{ast::scope::Scope, interner::Interner, parser::Parser};
    let mut interner = Interner::default();
    let error = Parser::new(Source::from_bytes(normalized.code.as_bytes()))
        .parse_script(&Scope::new_global(), &mut interner)
        .err()?;
    let text = error.to_string();
    let (message, position) = match &error {
        boa_engine::parser::Error::Expected { span, .. }
        | boa_engine::parser::Error::Unexpected { span, .. } => {
            (strip_position(&text), Some(LineColumn::from(span.start())))
        }
        boa_engine::parser::Error::General { position, .. } => {
            (strip_position(&text), Some((*position).into()))
        }
        boa_engine::parser::Error::Lex { err } => match err {
            boa_engine::parser::lexer::Error::Syntax(_, position) => {
                (strip_position(&text), Some((*position).into()))
            }
            boa_engine::parser::lexer::Error::IO(_) => (text.clone(), None),
        },
        boa_engine::parser::Error::AbruptEnd => (
            "unexpected end of input".to_owned(),
            Some(normalized.end_position()),
        ),
        boa_engine::parser::Error::ScopeAnalysis { .. } => (text.clone(), None),
    };
    Some(match position {
        Some(at) => {
            let at = normalized.original_position(at);
            format!(
                "SyntaxError: {message} (line {}, column {})",
                at.line, at.column
            )
        }
        None => format!("SyntaxError: {message}"),
    })
}

fn strip_position(text: &str) -> String {
    match text.rfind(" at line ") {
        Some(i) => text[..i].to_owned(),
        None => text.to_owned(),
    }
}
