//! The native functions the prelude wraps into the program's globals: connector calls, `codemode.step`,
//! search, describe, snippets, console lines and base64.

use super::evaluation::{Evaluated, evaluate};
use super::globals::build_sandbox;
use super::pass_state::Shared;
use super::values::{arg_raw, arg_string, connector_error, raw_to_js, settled};
use crate::normalize::{Normalized, normalize_code};
use crate::protocol::{HostMessage, WorkerMessage};
use boa_engine::{
    Context, JsResult, JsString, JsValue, js_string,
    object::{ObjectInitializer, builtins::JsUint8Array},
    property::Attribute,
};

/// `natives.call(connector, method, argsJson, argsError)` → a promise of the call's result (from the replay
/// log or the host), rejected with the connector's error; or stops the pass.
pub(super) fn native_call(
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

/// `natives.stepDecide(name)` → `{seq, replay, value}`.
pub(super) fn native_step_decide(
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
pub(super) fn native_step_record(
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
    let value_error = arg_string(args, 2);
    // A new step whose value can be recorded is told, not asked: the program goes on while the host records
    // it, before anything of the program's leaves the sandbox (docs/semantics.md §3.6). A value that cannot be
    // recorded is asked, so the program stops at the step that failed the run.
    let fits = value
        .as_deref()
        .is_none_or(|raw| crate::codec::utf16_len(raw.get()) <= crate::codec::MAX_DURABLE_VALUE);
    if let Some(name) = name.as_ref()
        && value_error.is_none()
        && fits
    {
        state.channel.send(&WorkerMessage::StepValue {
            seq,
            name: name.clone(),
            value: value.clone(),
        });
        return raw_to_js(value, context);
    }
    let answer = state.channel.request(&WorkerMessage::StepRecord {
        seq,
        value: value.clone(),
        value_error,
        name,
    });
    match answer {
        HostMessage::Ok { .. } => raw_to_js(value, context),
        _ => Err(state.stop()),
    }
}

pub(super) fn native_search(
    _: &JsValue,
    args: &[JsValue],
    shared: &Shared,
    context: &mut Context,
) -> JsResult<JsValue> {
    let query = arg_string(args, 0).unwrap_or_default();
    lookup(shared, &WorkerMessage::Search { query }, context)
}

pub(super) fn native_describe(
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

pub(super) fn native_log(
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
pub(super) fn native_snippet(
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

pub(super) fn native_b64(
    _: &JsValue,
    args: &[JsValue],
    context: &mut Context,
) -> JsResult<JsValue> {
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
