//! The durable runtime: runs executions pass by pass, records every connector call, pauses at approval-gated
//! calls and resumes them by deterministic replay (docs/design.md). This file holds the `Runtime` handle and
//! its opening; each other job has a room of its own (docs/design.md, "Where things live"):
//! `options` (what it is opened with), `error` (its failures), `catalog` (connectors, their methods and
//! discovery), `policy` (rules), `decisions` (approve, edit, reject), `hosts` (shared-store duties), `pass`
//! (driving a pass, recovery), `pass_host` (what the sandbox asks during a pass), `preview`, `rerun`,
//! `retention`, `rollback`, `snippets` and `reads` (what front ends read).

use crate::codec::{MAX_DURABLE_VALUE, too_large_message, utf16_len};
use crate::connector::{CallContext, Connector, Replay, ToolDescriptor};
use crate::discovery::{self, Catalog, DescribeOutput, SearchIndex, SearchOutput};
use crate::executor::{
    CallAnswer, ConnectorCall, Executor, ExecutorError, ExecutorOptions, PassEnd, PassHost,
    PassRequest, SnippetAnswer, StepAnswer,
};
use crate::model::{
    Actor, Answerer, CallRef, ExecutionPage, ExecutionQuery, ExecutionState, ExecutionStatus,
    FailedRevert, Outcome, PendingAction, RevertedCall, RollbackReport, RunHost, SkippedCall,
    ToolLogEntry,
};
use crate::model::{Decision, DecisionKind, EntryState, Preview, SHOWN_PREVIEW_LIMIT, Shown};
use crate::model::{SaveSnippet, Snippet};
use crate::names::check_connector_names;
use crate::protocol::raw;
use crate::refusal::{Operation, Refusal};
use crate::rules::{CompiledRule, Rule, RuleError, Verdict};
use crate::store::{
    Adoption, CallPlan, Claim, Deletion, HEARTBEAT_EVERY, HOST_TIMEOUT_MS, HostIdentity, Recover,
    Rejection, Resume, RollbackClaim, Store, StoreError, StoreLocation, Tally, unserialisable,
};
use serde_json::Value;
use serde_json::value::RawValue;
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::runtime::Handle;

mod catalog;
mod decisions;
mod devices;
mod error;
mod hosts;
mod options;
mod pass;
mod pass_host;
mod policy;
mod preview;
mod reads;
mod rerun;
mod retention;
mod rollback;
mod snippets;

// Each room's items, for the others (every room imports `super::*`).
use catalog::*;
use error::*;
use hosts::*;
use pass::*;
use pass_host::*;
use policy::*;

pub use crate::clock::{Clock, SystemClock};
pub use crate::model::MAX_REASON;
pub use catalog::ConnectorListing;
pub use error::RuntimeError;
pub use options::{RuntimeOptions, TransformResult};
pub use policy::{RuleListing, RuleOrigin};

/// A poisoned lock only means another thread panicked while holding it; the cached value is still usable.
fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

struct Inner {
    /// The rules in force, reloaded when another process changes them.
    rules: Mutex<RuleCache>,
    /// Read-only rules from `connectors.json`, after the database's.
    file_rules: Vec<CompiledRule>,
    /// The search index of connector methods and the tools generations it was built from.
    methods: Mutex<Option<(Vec<u64>, Arc<SearchIndex>)>>,
    options: RuntimeOptions,
    store: Store,
    executor: Executor,
    connectors: Vec<Registered>,
}

impl Inner {
    fn now(&self) -> i64 {
        self.options.clock.now_ms()
    }
}

/// The durable Code Mode runtime over one database file.
#[derive(Clone)]
pub struct Runtime {
    inner: Arc<Inner>,
}

impl Runtime {
    /// Opens the runtime: validates the name and connectors, describes every connector once, and opens (or
    /// creates and migrates) the store: an SQLite file (a path) or a shared PostgreSQL database.
    pub async fn open(
        store: impl Into<StoreLocation>,
        options: RuntimeOptions,
        connectors: Vec<Arc<dyn Connector>>,
    ) -> Result<Self, RuntimeError> {
        if !crate::names::is_runtime_name(&options.name) {
            return Err(RuntimeError::Configuration(format!(
                "Invalid codemode runtime name \"{}\" — use letters, digits, \"_\", \"-\" or \".\"",
                options.name
            )));
        }
        check_connector_names(connectors.iter().map(|c| c.name()))
            .map_err(RuntimeError::Configuration)?;
        let mut registered = Vec::with_capacity(connectors.len());
        for connector in connectors {
            let entry = Registered {
                connector,
                loaded: Mutex::new(None),
            };
            if !entry.connector.lazy() {
                entry.methods().await.map_err(RuntimeError::Unavailable)?;
            }
            registered.push(entry);
        }
        let mut file_rules = Vec::with_capacity(options.rules.len());
        for rule in &options.rules {
            let compiled = CompiledRule::new(rule.clone())
                .map_err(|e| RuntimeError::Configuration(e.to_string()))?;
            if file_rules
                .iter()
                .any(|r: &CompiledRule| r.rule.id == rule.id)
            {
                return Err(RuntimeError::Configuration(format!(
                    "rule {}: id: used twice",
                    rule.id
                )));
            }
            file_rules.push(compiled);
        }
        let store = Store::open(
            &store.into(),
            &options.name,
            options.host.clone(),
            options.clock.clone(),
        )?;
        if store.is_shared() {
            let names: Vec<String> = registered
                .iter()
                .map(|r| r.connector.name().to_owned())
                .collect();
            store.register_host(&names, options.serve_host)?;
        }
        let hand_offs = if options.serve_host {
            store.take_hand_offs()
        } else {
            None
        };
        let executor = Executor::new(ExecutorOptions {
            worker: options.worker.clone(),
            timeout: options.timeout,
            memory_limit_mb: options.memory_limit_mb,
            keep_warm: options.keep_warm,
        });
        let runtime = Runtime {
            inner: Arc::new(Inner {
                rules: Mutex::new(RuleCache {
                    checked: None,
                    set: Arc::new(RuleSet::default()),
                }),
                file_rules,
                methods: Mutex::new(None),
                options,
                store,
                executor,
                connectors: registered,
            }),
        };
        if let Some(hand_offs) = hand_offs {
            tokio::spawn(serve_host(Arc::downgrade(&runtime.inner), hand_offs));
        }
        Ok(runtime)
    }

    /// Now, on the runtime's clock (epoch ms).
    pub fn now_ms(&self) -> i64 {
        self.inner.now()
    }
}
