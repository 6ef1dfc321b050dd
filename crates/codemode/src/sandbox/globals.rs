//! A fresh boa context with the sandbox's globals: the natives the prelude wraps, no compiling of strings, and
//! the connector namespaces of the pass.

use super::jobs;
use super::natives::{
    native_b64, native_call, native_describe, native_log, native_search, native_snippet,
    native_step_decide, native_step_record,
};
use super::pass_state::{PassState, Shared};
use boa_engine::{
    Context, JsNativeError, JsObject, JsResult, JsString, JsValue, NativeFunction, Source,
    context::{ContextBuilder, HostHooks},
    js_string,
    module::IdleModuleLoader,
    object::{
        ObjectInitializer,
        builtins::{JsArray, JsFunction},
    },
    realm::Realm,
};
use std::rc::Rc;

const PRELUDE: &str = include_str!("prelude.js");

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
pub(super) struct Sandbox {
    pub(super) context: Context,
    pub(super) encode: JsFunction,
    pub(super) message_of: JsFunction,
    pub(super) install_connectors: JsFunction,
    pub(super) jobs: Rc<jobs::PassJobs>,
    /// The connector globals defined so far (they cannot be removed again).
    pub(super) installed: Vec<String>,
}

impl Sandbox {
    /// Defines one global namespace per connector (done per pass: the prepared context knows none yet).
    pub(super) fn install_connectors(&mut self, connectors: &[String]) -> JsResult<()> {
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

pub(super) fn build_sandbox(state: &Rc<PassState>, capture_console: bool) -> JsResult<Sandbox> {
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
