//! The shared store itself (docs/shared-store.md): what a host says when the server cannot be reached or holds
//! a newer schema (and that nothing is written then), and a run whose server restarts under it — the pass
//! goes on over new connections, and the approved call is applied once.

mod support;

use codemode::{
    Actor, BoxFuture, CallContext, Connector, Runtime, RuntimeOptions, StoreLocation,
    ToolDescriptor,
};
use serde_json::{Value, json};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use support::store::{fresh_postgres, psql_output};

/// These tests restart or inspect the one test server: one at a time.
static SERVER: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

fn options() -> RuntimeOptions {
    RuntimeOptions {
        worker: Some(support::worker_path()),
        ..RuntimeOptions::default()
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn an_unreachable_server_is_named_without_its_password() {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let url = format!("postgres://ann:s3cret@127.0.0.1:{port}/codemode");
    let error = Runtime::open(StoreLocation::Postgres(url), options(), vec![])
        .await
        .err()
        .expect("nothing listens there")
        .to_string();
    assert!(
        error.starts_with(&format!(
            "cannot reach the shared store postgres://ann:***@127.0.0.1:{port}/codemode: "
        )),
        "{error}"
    );
    assert!(error.contains("Connection refused"), "{error}");
    assert!(!error.contains("s3cret"), "{error}");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_newer_schema_is_refused_and_nothing_is_written() {
    let _server = SERVER.lock().await;
    let Some(url) = fresh_postgres("newer") else {
        return;
    };
    let store = StoreLocation::Postgres(url.clone());
    let runtime = Runtime::open(store.clone(), options(), vec![])
        .await
        .unwrap();
    runtime.execute("async () => 1").await.unwrap();
    drop(runtime);
    psql_output(&url, "UPDATE cm_schema SET version = 99", false);
    let contents = || {
        psql_output(
            &url,
            "SELECT (SELECT version FROM cm_schema), id, status, updated_at FROM cm_executions",
            false,
        )
    };
    let before = contents();
    let error = Runtime::open(store, options(), vec![])
        .await
        .err()
        .expect("refused")
        .to_string();
    assert!(
        error.contains(&format!(
            "the database {url} was written by a newer version of Codemode (schema 99; this build reads up to {})",
            codemode::store::SCHEMA_VERSION
        )),
        "{error}"
    );
    assert_eq!(contents(), before, "nothing was written");
}

/// `bounce` (no approval) and `count` (gated) count their executions, and each starts a restart of the test
/// server and returns once the server is down: the store records their results while it starts again.
struct Chaos {
    restart: String,
    port: u16,
    restarts: std::sync::Mutex<Vec<std::process::Child>>,
    bounces: AtomicUsize,
    counts: AtomicUsize,
}

impl Chaos {
    fn take_server_down(&self) -> Result<(), String> {
        // One restart at a time: pg_ctl fails when the server it is starting is stopped under it.
        self.wait_for_restarts();
        let child = std::process::Command::new(&self.restart)
            .spawn()
            .map_err(|e| e.to_string())?;
        self.restarts.lock().unwrap().push(child);
        let address = std::net::SocketAddr::from(([127, 0, 0, 1], self.port));
        for _ in 0..500 {
            if std::net::TcpStream::connect_timeout(&address, std::time::Duration::from_millis(100))
                .is_err()
            {
                return Ok(());
            }
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
        Err("the server did not go down".into())
    }

    fn wait_for_restarts(&self) {
        for mut child in self.restarts.lock().unwrap().drain(..) {
            assert!(child.wait().unwrap().success(), "the server restarted");
        }
    }
}

impl Connector for Chaos {
    fn name(&self) -> &str {
        "chaos"
    }
    fn tools(&self) -> BoxFuture<'_, Result<Vec<ToolDescriptor>, String>> {
        Box::pin(async {
            Ok(vec![
                ToolDescriptor {
                    name: "bounce".into(),
                    ..Default::default()
                },
                ToolDescriptor {
                    name: "count".into(),
                    requires_approval: true,
                    ..Default::default()
                },
            ])
        })
    }
    fn execute<'a>(
        &'a self,
        method: &'a str,
        _: Option<Value>,
        _: CallContext,
    ) -> BoxFuture<'a, Result<Option<Value>, String>> {
        Box::pin(async move {
            let counter = match method {
                "bounce" => &self.bounces,
                _ => &self.counts,
            };
            let n = counter.fetch_add(1, Ordering::SeqCst) + 1;
            tokio::task::block_in_place(|| self.take_server_down())?;
            Ok(Some(json!(n)))
        })
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_run_goes_on_when_the_server_restarts_under_it_and_applies_its_approved_call_once() {
    let _server = SERVER.lock().await;
    let Some(url) = fresh_postgres("restart") else {
        return;
    };
    let restart = std::env::var("CODEMODE_TEST_POSTGRES_RESTART")
        .expect("scripts/lib/postgres.sh says how to restart the test server");
    let port = url
        .rsplit_once(':')
        .and_then(|(_, rest)| rest.split('/').next()?.parse().ok())
        .expect("the test server's port");
    let chaos = Arc::new(Chaos {
        restart,
        port,
        restarts: std::sync::Mutex::new(Vec::new()),
        bounces: AtomicUsize::new(0),
        counts: AtomicUsize::new(0),
    });
    let runtime = Runtime::open(
        StoreLocation::Postgres(url),
        options(),
        vec![chaos.clone() as Arc<dyn Connector>],
    )
    .await
    .unwrap();
    let paused = runtime
        .execute("async () => { const b = await chaos.bounce(); const c = await chaos.count({}); return [b, c] }")
        .await
        .unwrap();
    assert_eq!(paused.status(), "paused", "{paused:?}");
    let done = runtime
        .approve(paused.execution_id(), Actor::Console, None)
        .await
        .unwrap();
    assert_eq!(done.status(), "completed", "{done:?}");
    let run = runtime.execution(done.execution_id()).unwrap().unwrap();
    assert_eq!(run.result, Some(json!([1, 1])));
    assert_eq!(
        chaos.bounces.load(Ordering::SeqCst),
        1,
        "replayed, not run again"
    );
    assert_eq!(chaos.counts.load(Ordering::SeqCst), 1, "applied once");
    chaos.wait_for_restarts();
    // The server is back and the store is usable as before.
    assert_eq!(
        runtime.execute("async () => 2").await.unwrap().status(),
        "completed"
    );
}
