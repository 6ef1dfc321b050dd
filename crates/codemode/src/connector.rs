//! The connector contract: what a namespace in the sandbox is backed by on the host (docs/semantics.md §10,
//! docs/design.md).

use crate::model::ExecutionStatus;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::future::Future;
use std::pin::Pin;

/// A boxed future, so connectors can be used as trait objects.
pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// Whether a call's result is recorded and replayed (`log`) or the call runs again on every pass.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub enum Replay {
    #[default]
    Log,
    Reexecute,
}

/// One method of a connector.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ToolDescriptor {
    pub name: String,
    pub description: Option<String>,
    pub input_schema: Option<Value>,
    pub output_schema: Option<Value>,
    pub requires_approval: bool,
    pub replay: Replay,
    /// Invisible and uncallable in the sandbox; still usable as a revert target.
    pub hidden: bool,
    /// The method has a `revert`.
    pub revertible: bool,
    /// A call of it that pauses is also asked in the agent's MCP client (the connector's `askInClient`).
    pub ask_in_client: bool,
    /// How long a paused call of it may wait for a person, in ms (the connector's `decideWithin`).
    pub decide_within_ms: Option<i64>,
    /// What its server declares (MCP tool annotations `readOnlyHint`, `destructiveHint`), when it does.
    pub read_only_hint: Option<bool>,
    pub destructive_hint: Option<bool>,
    /// Why `requires_approval` is what it is, for listings (`approval "writes": readOnlyHint: true`).
    pub gate: Option<String>,
    /// The gate it had before its server's annotations changed it, for a while after they did.
    pub gate_changed: Option<GateChange>,
}

/// A gate that moved because a server declares a tool differently than it did (a new version of the server).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct GateChange {
    /// Whether calls of it were asked about before.
    pub asked: bool,
    /// Why, then.
    pub gate: String,
    /// When the change was first seen (epoch ms).
    #[cfg_attr(feature = "ts", ts(type = "number"))]
    pub at: i64,
}

/// What a call knows about where it runs: the stable execution id and its sequence number, so a connector
/// can key resources per execution and make effects idempotent per `(execution id, seq)`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CallContext {
    pub execution_id: String,
    pub seq: u64,
}

/// A host-side provider of methods. Values are in the storage codec (binary and bigint as envelopes); `None`
/// is `undefined`. Errors are messages the program sees as `Error(message)`.
pub trait Connector: Send + Sync + 'static {
    fn name(&self) -> &str;

    fn instructions(&self) -> Option<String> {
        None
    }

    /// The connector's methods, in order.
    fn tools(&self) -> BoxFuture<'_, Result<Vec<ToolDescriptor>, String>>;

    /// `true` when the methods are known only once something has started (an MCP server): the runtime then
    /// asks [`tools`](Self::tools) on first use rather than when it opens, and a failure is the error of the
    /// call (or search) that needed them instead of a configuration error.
    fn lazy(&self) -> bool {
        false
    }

    /// Changes whenever the methods may have changed (a restarted server), so the runtime asks again.
    fn tools_generation(&self) -> u64 {
        0
    }

    fn execute<'a>(
        &'a self,
        method: &'a str,
        args: Option<Value>,
        ctx: CallContext,
    ) -> BoxFuture<'a, Result<Option<Value>, String>>;

    /// How the connector reads a call's arguments, for everything that judges or shows the call before it runs
    /// (rules, previews, remembered decisions, displays; docs/design.md, "What a call means"): `Ok(None)` when
    /// it reads them as sent, `Ok(Some(form))` when it reads them otherwise (a `files` path through `..` or a
    /// symlink, base64 content), `Err(message)` when it would refuse the call whatever anyone decides (a path
    /// that ends outside the workspace): the call then fails with that message and no rule or person is asked.
    /// Must not change anything.
    fn canonical(&self, _method: &str, _args: Option<&Value>) -> Result<Option<Value>, String> {
        Ok(None)
    }

    /// What the call would change, shown to a person before they decide (docs/design.md, "Previews"). Must
    /// not change anything; `Ok(None)` when there is nothing to show. The runtime bounds its size and time.
    fn preview<'a>(
        &'a self,
        _method: &'a str,
        _args: Option<Value>,
        _ctx: CallContext,
    ) -> BoxFuture<'a, Result<Option<crate::model::Preview>, String>> {
        Box::pin(async { Ok(None) })
    }

    /// Compensates an applied call; `Ok(false)` when the method has no revert.
    fn revert<'a>(
        &'a self,
        _method: &'a str,
        _args: Option<Value>,
        _result: Option<Value>,
        _ctx: CallContext,
    ) -> BoxFuture<'a, Result<bool, String>> {
        Box::pin(async { Ok(false) })
    }

    /// After every pass (`paused` included), for every connector; must not fail.
    fn on_pass_end<'a>(
        &'a self,
        _execution_id: &'a str,
        _status: ExecutionStatus,
    ) -> BoxFuture<'a, ()> {
        Box::pin(async {})
    }

    /// When an execution reaches a terminal status (possibly more than once); must be idempotent.
    fn dispose_execution<'a>(
        &'a self,
        _execution_id: &'a str,
        _status: ExecutionStatus,
    ) -> BoxFuture<'a, ()> {
        Box::pin(async {})
    }

    /// When an execution is pruned or deleted: drop whatever was kept for a later rollback.
    fn forget_execution<'a>(&'a self, _execution_id: &'a str) -> BoxFuture<'a, ()> {
        Box::pin(async {})
    }
}
