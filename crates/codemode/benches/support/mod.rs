//! What the benchmarks share: an echo connector, the sandbox worker's path, and medians.
#![allow(dead_code)] // each benchmark uses its own part of this module

use codemode::{BoxFuture, CallContext, Connector, ToolDescriptor};
use serde_json::Value;
use std::path::PathBuf;
use std::time::{Duration, Instant};

/// A connector whose every method answers its arguments; `(name, requires_approval)` per method.
pub struct Echo {
    pub name: &'static str,
    pub methods: &'static [(&'static str, bool)],
}

impl Connector for Echo {
    fn name(&self) -> &str {
        self.name
    }
    fn tools(&self) -> BoxFuture<'_, Result<Vec<ToolDescriptor>, String>> {
        Box::pin(async move {
            Ok(self
                .methods
                .iter()
                .map(|&(name, requires_approval)| ToolDescriptor {
                    name: name.into(),
                    requires_approval,
                    ..Default::default()
                })
                .collect())
        })
    }
    fn execute<'a>(
        &'a self,
        _: &'a str,
        args: Option<Value>,
        _: CallContext,
    ) -> BoxFuture<'a, Result<Option<Value>, String>> {
        Box::pin(async move { Ok(args) })
    }
}

/// The sandbox worker built beside the benchmark (`CODEMODE_WORKER` overrides it).
pub fn worker() -> PathBuf {
    std::env::var_os("CODEMODE_WORKER")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_BIN_EXE_codemode-worker")))
}

pub fn median(mut samples: Vec<Duration>) -> Duration {
    samples.sort();
    samples[samples.len() / 2]
}

/// The median time of `reps` runs of `f`.
pub fn median_of(reps: usize, mut f: impl FnMut()) -> Duration {
    median(
        (0..reps)
            .map(|_| {
                let started = Instant::now();
                f();
                started.elapsed()
            })
            .collect(),
    )
}

pub fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}
