//! Running normalised code to its end in a sandbox, and the words a failure is told in (engine limits in V8's
//! words, syntax errors at their place in the text sent).

use super::NEVER_SETTLES;
use super::globals::Sandbox;
use super::pass_state::PassState;
use crate::normalize::{LineColumn, Normalized};
use boa_engine::{
    Context, JsError, JsValue, Source,
    builtins::promise::PromiseState,
    error::{EngineError, RuntimeLimitError},
    object::builtins::{JsFunction, JsPromise},
};
use serde_json::value::RawValue;

pub(super) enum Evaluated {
    Completed {
        result: Option<Box<RawValue>>,
        result_error: Option<String>,
    },
    Failed(String),
    /// The host stopped the pass (pause or durable failure).
    Stopped,
}

/// Evaluates normalised code to completion in `sandbox`.
pub(super) fn evaluate(
    sandbox: &mut Sandbox,
    state: &PassState,
    normalized: &Normalized,
) -> Evaluated {
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
