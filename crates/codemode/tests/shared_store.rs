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

/// These tests restart the one test server or need it up throughout: one at a time.
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

/// Hosts that start together on an empty database create its schema one at a time: each opens, none fails on
/// the tables another is creating (docs/shared-store.md, "Transactions": the schema lock).
#[tokio::test(flavor = "multi_thread")]
async fn hosts_opening_an_empty_database_at_once_all_open_it() {
    let _server = SERVER.lock().await;
    for round in 0..8 {
        let Some(url) = fresh_postgres(&format!("together{round}")) else {
            return;
        };
        let start = Arc::new(std::sync::Barrier::new(4));
        let openers: Vec<_> = (0..4)
            .map(|_| {
                let (url, start) = (url.clone(), start.clone());
                std::thread::spawn(move || {
                    let tokio = tokio::runtime::Runtime::new().unwrap();
                    start.wait();
                    tokio
                        .block_on(Runtime::open(
                            StoreLocation::Postgres(url),
                            options(),
                            vec![],
                        ))
                        .map(drop)
                        .map_err(|e| e.to_string())
                })
            })
            .collect();
        for opener in openers {
            opener.join().unwrap().unwrap();
        }
        assert_eq!(
            psql_output(&url, "SELECT version FROM cm_schema", false).trim(),
            codemode::SCHEMA_VERSION.to_string()
        );
    }
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
            codemode::SCHEMA_VERSION
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

/// A connector `name` whose `act` needs approval; it keeps the arguments of every execution.
struct Station {
    name: String,
    acts: std::sync::Mutex<Vec<Value>>,
}

impl Station {
    fn new(name: &str) -> Arc<Station> {
        Arc::new(Station {
            name: name.to_owned(),
            acts: std::sync::Mutex::new(Vec::new()),
        })
    }

    fn acts(&self) -> Vec<Value> {
        self.acts.lock().unwrap().clone()
    }
}

impl Connector for Station {
    fn name(&self) -> &str {
        &self.name
    }
    fn tools(&self) -> BoxFuture<'_, Result<Vec<ToolDescriptor>, String>> {
        Box::pin(async {
            Ok(vec![ToolDescriptor {
                name: "act".into(),
                requires_approval: true,
                input_schema: Some(json!({
                    "type": "object",
                    "properties": {"n": {"type": "integer"}},
                    "required": ["n"]
                })),
                ..Default::default()
            }])
        })
    }
    fn execute<'a>(
        &'a self,
        _: &'a str,
        args: Option<Value>,
        _: CallContext,
    ) -> BoxFuture<'a, Result<Option<Value>, String>> {
        Box::pin(async move {
            let args = args.unwrap_or(Value::Null);
            self.acts.lock().unwrap().push(args.clone());
            Ok(Some(json!({"by": self.name, "args": args})))
        })
    }
}

/// A host of the shared store `url`, with its own connectors and clock.
async fn host(
    url: &str,
    id: &str,
    connectors: Vec<Arc<dyn Connector>>,
    clock: Arc<dyn codemode::Clock>,
) -> Runtime {
    Runtime::open(
        StoreLocation::Postgres(url.to_owned()),
        RuntimeOptions {
            host: Some(codemode::HostIdentity {
                id: id.to_owned(),
                name: format!("{id}.example"),
            }),
            serve_host: true,
            clock,
            ..options()
        },
        connectors,
    )
    .await
    .expect("the host opens")
}

#[tokio::test(flavor = "multi_thread")]
async fn a_run_paused_on_one_host_and_approved_on_another_runs_on_its_own_host() {
    let _server = SERVER.lock().await;
    let Some(url) = fresh_postgres("hosts") else {
        return;
    };
    let clock = support::TestClock::at(1_800_000_000_000);
    let (alpha, beta) = (Station::new("alpha"), Station::new("beta"));
    let a = host(&url, "a", vec![alpha.clone()], clock.clone()).await;
    let b = host(&url, "b", vec![beta.clone()], clock.clone()).await;

    let paused = a.execute("async () => alpha.act({ n: 1 })").await.unwrap();
    assert_eq!(paused.status(), "paused", "{paused:?}");
    let id = paused.execution_id().to_owned();
    let seen = b.execution(&id).unwrap().expect("B sees A's run");
    assert_eq!(
        seen.host,
        Some(codemode::RunHost {
            id: "a".into(),
            name: "a.example".into(),
            alive: true,
            here: false
        })
    );
    assert_eq!(b.pending(None).unwrap().len(), 1, "one queue");

    // B has no `alpha`: its approval (with edited arguments) is handed to A, which checks and runs them.
    let done = b
        .approve(&id, codemode::Actor::Console, Some(json!({"n": 2})))
        .await
        .unwrap();
    assert_eq!(done.status(), "completed", "{done:?}");
    assert_eq!(
        alpha.acts(),
        vec![json!({"n": 2})],
        "run by A, once, as edited"
    );
    assert!(beta.acts().is_empty());
    let run = a.execution(&id).unwrap().unwrap();
    assert_eq!(run.result, Some(json!({"by": "alpha", "args": {"n": 2}})));
    assert_eq!(run.handed, None);
    let decision = run.log[0]
        .decision
        .clone()
        .expect("the decision is recorded");
    assert_eq!(decision.args, Some(json!({"n": 2})));
    // A rollback runs the connectors that ran the calls: on A, not on B.
    let elsewhere = b.rollback(&id).await.unwrap_err().to_string();
    assert!(
        elsewhere.contains("belongs to host a.example: it can be rolled back there"),
        "{elsewhere}"
    );
    assert!(b.rollback_plan(&id).await.unwrap().is_empty());
    let again = b.approve(&id, codemode::Actor::Console, None).await;
    assert!(
        matches!(&again, Err(e) if e.refusal() == Some(codemode::RefusalKind::Stale)),
        "{again:?}"
    );

    // Edited arguments A's tool refuses: nothing runs, and the run waits for a decision again.
    let paused = a.execute("async () => alpha.act({ n: 3 })").await.unwrap();
    let preview = b.preview(paused.execution_id(), 0).await.unwrap();
    assert!(
        matches!(&preview, Some(codemode::Preview::Unavailable { message }) if message.contains("runs on host a.example")),
        "{preview:?}"
    );
    let refused = b
        .approve(
            paused.execution_id(),
            codemode::Actor::Console,
            Some(json!({"n": "three"})),
        )
        .await;
    let refused = refused.unwrap_err().to_string();
    assert!(
        refused.contains("Host a.example did not accept the decision"),
        "{refused}"
    );
    // The approver reads the owner's own reason, not a guess.
    assert!(refused.contains("\"three\""), "{refused}");
    let waiting = a.execution(paused.execution_id()).unwrap().unwrap();
    assert_eq!(waiting.status, codemode::ExecutionStatus::Paused);
    assert_eq!(waiting.handed, None);
    assert_eq!(alpha.acts().len(), 1);
    a.reject(paused.execution_id(), 0, codemode::Actor::Console, None)
        .await
        .unwrap();
}

#[tokio::test(flavor = "multi_thread")]
async fn a_run_whose_host_is_gone_waits_for_it_or_is_adopted_by_a_host_with_its_connectors() {
    let _server = SERVER.lock().await;
    let Some(url) = fresh_postgres("gone") else {
        return;
    };
    let then = support::TestClock::at(1_800_000_000_000);
    let alpha = Station::new("alpha");
    let a = host(&url, "a", vec![alpha.clone()], then.clone()).await;
    let paused = a.execute("async () => alpha.act({ n: 1 })").await.unwrap();
    let id = paused.execution_id().to_owned();
    drop(a);

    // A minute later: A's last heartbeat is a minute old by the server's clock, whatever the hosts' clocks say
    // (heartbeats are written and judged in the server's time: another clock alone makes nobody look gone).
    psql_output(
        &url,
        "UPDATE cm_hosts SET heartbeat_at = heartbeat_at - 60000 WHERE id = 'a'",
        false,
    );
    let now = support::TestClock::at(1_800_000_060_000);
    let (alpha_c, beta) = (Station::new("alpha"), Station::new("beta"));
    let b = host(&url, "b", vec![beta.clone()], now.clone()).await;
    let c = host(&url, "c", vec![alpha_c.clone()], now.clone()).await;
    let run = b.execution(&id).unwrap().unwrap();
    assert!(!run.host.as_ref().unwrap().alive, "{run:?}");
    let refused = b.approve(&id, codemode::Actor::Console, None).await;
    let message = refused.unwrap_err().to_string();
    assert!(
        message.contains("belongs to host a.example, which is gone"),
        "{message}"
    );
    let adopt = b.adopt(&id).unwrap_err().to_string();
    assert!(adopt.contains("requires connector(s) \"alpha\""), "{adopt}");

    c.adopt(&id).unwrap();
    assert!(c.execution(&id).unwrap().unwrap().host.unwrap().here);
    let done = c
        .approve(&id, codemode::Actor::Console, None)
        .await
        .unwrap();
    assert_eq!(done.status(), "completed", "{done:?}");
    assert_eq!(alpha_c.acts(), vec![json!({"n": 1})], "run by C");
    assert!(alpha.acts().is_empty() && beta.acts().is_empty());
}

/// `nul.fail` answers an error whose message holds a NUL character.
struct Nul;

impl Connector for Nul {
    fn name(&self) -> &str {
        "nul"
    }
    fn tools(&self) -> BoxFuture<'_, Result<Vec<ToolDescriptor>, String>> {
        Box::pin(async {
            Ok(vec![ToolDescriptor {
                name: "fail".into(),
                ..Default::default()
            }])
        })
    }
    fn execute<'a>(
        &'a self,
        _: &'a str,
        _: Option<Value>,
        _: CallContext,
    ) -> BoxFuture<'a, Result<Option<Value>, String>> {
        Box::pin(async { Err("before\0after".to_owned()) })
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_nul_character_is_refused_in_a_program_and_replaced_in_what_a_connector_answers() {
    let _server = SERVER.lock().await;
    let Some(url) = fresh_postgres("nul") else {
        return;
    };
    let runtime = Runtime::open(StoreLocation::Postgres(url), options(), vec![Arc::new(Nul)])
        .await
        .unwrap();
    let refused = runtime.execute("async () => 'a\0b'").await.unwrap();
    assert_eq!(refused.status(), "error");
    assert!(
        serde_json::to_string(&refused)
            .unwrap()
            .contains("NUL character"),
        "{refused:?}"
    );
    let done = runtime
        .execute("async () => { try { await nul.fail() } catch (e) { return e.message } }")
        .await
        .unwrap();
    assert_eq!(done.status(), "completed", "{done:?}");
    let run = runtime.execution(done.execution_id()).unwrap().unwrap();
    assert_eq!(run.log[0].error.as_deref(), Some("before\u{FFFD}after"));
}

/// Runs belong to their runtime (docs/shared-store.md, "Runs belong to their runtime"): two runtimes of
/// different names on one PostgreSQL database. Runtime B neither sees, approves, rejects, previews, rolls back,
/// recovers nor deletes runtime A's runs by id, nor reads their rollback plan; A's runs are untouched.
#[tokio::test(flavor = "multi_thread")]
async fn a_runtime_of_another_name_on_the_same_database_can_neither_read_decide_nor_undo_a_run() {
    use support::isolation;
    use support::items::Items;
    let _server = SERVER.lock().await;
    let Some(url) = fresh_postgres("runtimes") else {
        return;
    };
    let store = StoreLocation::Postgres(url.clone());
    let open = |name: &str, host: &str, items: Arc<Items>| {
        let options = RuntimeOptions {
            name: name.to_owned(),
            host: Some(codemode::HostIdentity {
                id: host.to_owned(),
                name: format!("{host}.example"),
            }),
            serve_host: true,
            ..options()
        };
        let connectors: Vec<Arc<dyn Connector>> = vec![items];
        Runtime::open(store.clone(), options, connectors)
    };
    let (mine, theirs) = (Items::new(), Items::new());
    let a = open("team-a", "a", mine.clone()).await.expect("A opens");
    let b = open("team-b", "b", theirs.clone()).await.expect("B opens");
    let b_store = codemode::Store::open(
        &store,
        "team-b",
        Some(codemode::HostIdentity {
            id: "b".into(),
            name: "b.example".into(),
        }),
        Arc::new(codemode::SystemClock),
    )
    .expect("B's store opens");
    let (paused, done) = isolation::paused_and_done(&a).await;
    let before = isolation::snapshot(&a, [&paused, &done]);

    isolation::another_runtime_cannot_touch(&b, &b_store, &paused, &done).await;

    assert_eq!(isolation::snapshot(&a, [&paused, &done]), before);
    assert_eq!(
        mine.with(|s| s.items.len()),
        1,
        "only A's approved call ran"
    );
    assert!(
        theirs.with(|s| s.items.is_empty()),
        "B's connector never ran"
    );
    let approved = a.approve(&paused, Actor::Console, None).await.unwrap();
    assert_eq!(approved.status(), "completed", "{approved:?}");
    assert_eq!(a.rollback(&done).await.unwrap().reverted.len(), 1);
}

/// The test server's certificate authority (scripts/lib/postgres.sh makes it), if the server speaks TLS.
fn server_ca() -> Option<String> {
    std::env::var("CODEMODE_TEST_POSTGRES_CA")
        .ok()
        .filter(|ca| !ca.is_empty())
}

/// Whether the store's own connections to database `url` are encrypted, as the server sees them.
fn encrypted_sessions(url: &str) -> String {
    let database = url.rsplit('/').next().unwrap_or_default();
    psql_output(
        url,
        &format!(
            "SELECT DISTINCT s.ssl FROM pg_stat_ssl s JOIN pg_stat_activity a USING (pid)
             WHERE a.application_name = 'codemode' AND a.datname = '{database}'"
        ),
        false,
    )
    .trim()
    .to_owned()
}

#[tokio::test(flavor = "multi_thread")]
async fn verify_full_trusts_the_servers_authority_and_refuses_another() {
    let _server = SERVER.lock().await;
    let (Some(url), Some(ca)) = (fresh_postgres("tls"), server_ca()) else {
        eprintln!("skipped: the test server has no TLS authority");
        return;
    };
    let verified = format!("{url}?sslmode=verify-full&sslrootcert={ca}");
    let runtime = Runtime::open(StoreLocation::Postgres(verified), options(), vec![])
        .await
        .expect("verify-full against the server's own authority");
    runtime.execute("async () => 1").await.unwrap();
    assert_eq!(
        encrypted_sessions(&url),
        "t",
        "every connection is encrypted"
    );
    drop(runtime);

    // An authority the server's certificate does not come from: refused, with the server and the reason.
    let other = std::env::temp_dir().join(format!("codemode-other-ca-{}", std::process::id()));
    std::fs::create_dir_all(&other).unwrap();
    let status = std::process::Command::new("openssl")
        .args([
            "req",
            "-x509",
            "-newkey",
            "ec",
            "-pkeyopt",
            "ec_paramgen_curve:P-256",
            "-nodes",
        ])
        .args(["-days", "1", "-subj", "/CN=someone else"])
        .arg("-keyout")
        .arg(other.join("ca.key"))
        .arg("-out")
        .arg(other.join("ca.pem"))
        .stderr(std::process::Stdio::null())
        .status()
        .expect("openssl");
    assert!(status.success());
    let wrong = format!(
        "{}?sslmode=verify-full&sslrootcert={}&password=s3cret",
        url,
        other.join("ca.pem").display()
    );
    let error = Runtime::open(StoreLocation::Postgres(wrong), options(), vec![])
        .await
        .err()
        .expect("another authority is refused")
        .to_string();
    assert!(error.contains("cannot reach the shared store"), "{error}");
    assert!(error.contains("127.0.0.1"), "{error}");
    assert!(error.to_lowercase().contains("certificate"), "{error}");
    assert!(!error.contains("s3cret"), "{error}");

    // verify-full without roots says how to give them; sslmode=disable still connects in clear.
    let error = Runtime::open(
        StoreLocation::Postgres(format!("{url}?sslmode=verify-full")),
        options(),
        vec![],
    )
    .await
    .err()
    .expect("no roots")
    .to_string();
    assert!(error.contains("sslrootcert=FILE"), "{error}");
    let clear = Runtime::open(
        StoreLocation::Postgres(format!("{url}?sslmode=disable")),
        options(),
        vec![],
    )
    .await
    .expect("sslmode=disable");
    clear.execute("async () => 2").await.unwrap();
    assert_eq!(encrypted_sessions(&url), "f");
}

#[tokio::test(flavor = "multi_thread")]
async fn hosts_silent_for_a_week_are_forgotten_unless_a_run_names_them() {
    let _server = SERVER.lock().await;
    let Some(url) = fresh_postgres("forgotten") else {
        return;
    };
    let store = StoreLocation::Postgres(url.clone());
    let runtime = Runtime::open(store.clone(), options(), vec![])
        .await
        .unwrap();
    let run = runtime.execute("async () => 1").await.unwrap();
    drop(runtime);
    let week_ago =
        codemode::clock::Clock::now_ms(&codemode::clock::SystemClock) - 8 * 24 * 3600 * 1000;
    let runtime_name = psql_output(&url, "SELECT DISTINCT runtime FROM cm_hosts", false);
    for (id, began) in [
        ("gone-laptop", week_ago),
        ("old-owner", week_ago),
        ("yesterday", week_ago + 7 * 24 * 3600 * 1000),
    ] {
        psql_output(
            &url,
            &format!(
                "INSERT INTO cm_hosts (id, runtime, name, connectors, machine, pid, began_at, heartbeat_at)
                 VALUES ('{id}', '{}', '{id}', '[]', 'elsewhere', 1, {began}, {began})",
                runtime_name.trim()
            ),
            false,
        );
    }
    psql_output(
        &url,
        &format!(
            "UPDATE cm_executions SET owner_host = 'old-owner' WHERE id = '{}'",
            run.execution_id()
        ),
        false,
    );
    // The next host to start forgets what nobody needs.
    drop(Runtime::open(store, options(), vec![]).await.unwrap());
    let left = psql_output(
        &url,
        "SELECT id FROM cm_hosts WHERE machine = 'elsewhere' ORDER BY id",
        false,
    );
    assert_eq!(
        left.split_whitespace().collect::<Vec<_>>(),
        ["old-owner", "yesterday"]
    );
}

/// `url` as another PostgreSQL role would connect (the test server trusts every local role).
fn as_role(url: &str, role: &str) -> String {
    url.replacen("postgres://postgres@", &format!("postgres://{role}@"), 1)
}

#[tokio::test(flavor = "multi_thread")]
async fn who_decided_is_the_role_the_server_authenticated_whatever_a_client_says() {
    let _server = SERVER.lock().await;
    let Some(url) = fresh_postgres("people") else {
        return;
    };
    let clock = support::TestClock::at(1_800_000_000_000);
    let alpha = Station::new("alpha");
    let agent_host = host(&url, "agent", vec![alpha.clone()], clock.clone()).await;
    psql_output(&url, "CREATE ROLE alice LOGIN", true);
    psql_output(
        &url,
        "GRANT ALL ON ALL TABLES IN SCHEMA public TO alice; GRANT ALL ON ALL SEQUENCES IN SCHEMA public TO alice",
        false,
    );
    let alices = host(
        &as_role(&url, "alice"),
        "alices-laptop",
        vec![],
        clock.clone(),
    )
    .await;

    // Alice approves on her laptop; the agent's host runs the call. The log names alice, not the agent's role.
    let paused = agent_host
        .execute("async () => alpha.act({ n: 1 })")
        .await
        .unwrap();
    let id = paused.execution_id().to_owned();
    let done = alices
        .approve(&id, codemode::Actor::Console, None)
        .await
        .unwrap();
    assert_eq!(done.status(), "completed", "{done:?}");
    let decision = agent_host.execution(&id).unwrap().unwrap().log[0]
        .decision
        .clone()
        .unwrap();
    assert_eq!(decision.person.as_deref(), Some("alice"));
    assert_eq!(decision.by, codemode::Actor::Console);

    // The agent's host rejects one itself: it is named as what it authenticated as.
    let paused = agent_host
        .execute("async () => alpha.act({ n: 2 })")
        .await
        .unwrap();
    let id = paused.execution_id().to_owned();
    agent_host
        .reject(&id, 0, codemode::Actor::Cli, None)
        .await
        .unwrap();
    let decision = agent_host.execution(&id).unwrap().unwrap().log[0]
        .decision
        .clone()
        .unwrap();
    assert_eq!(decision.person.as_deref(), Some("postgres"));

    // A client that writes a decision naming someone else is overruled by the server.
    psql_output(
        &url,
        &format!(
            "UPDATE cm_log SET decision = '{{\"kind\":\"approved\",\"by\":\"cli\",\"at\":1,\"person\":\"bob\"}}'
             WHERE execution_id = '{id}'"
        ),
        false,
    );
    let forged = psql_output(
        &url,
        &format!("SELECT decision::jsonb ->> 'person' FROM cm_log WHERE execution_id = '{id}'"),
        false,
    );
    assert_eq!(forged.trim(), "postgres");
}

/// Runs `sql` with psql as `url`'s role: what the server said when it refused, if it did.
fn psql_refusal(url: &str, sql: &str) -> Option<String> {
    let output = std::process::Command::new("psql")
        .args([url, "-v", "ON_ERROR_STOP=1", "-Aqtc", sql])
        .output()
        .expect("psql runs");
    (!output.status.success()).then(|| String::from_utf8_lossy(&output.stderr).into_owned())
}

/// The tables' owner's host, which opened the store first and made the login `robot` an agent and `carol` an
/// approver.
async fn owner_with_people(url: &str, clock: Arc<dyn codemode::Clock>) -> Runtime {
    let owner = host(url, "owner", vec![], clock).await;
    psql_output(url, "CREATE ROLE robot LOGIN", true);
    psql_output(url, "CREATE ROLE carol LOGIN", true);
    owner.grant(codemode::StoreRole::Agent, "robot").unwrap();
    owner.grant(codemode::StoreRole::Approver, "carol").unwrap();
    owner
}

#[tokio::test(flavor = "multi_thread")]
async fn once_permissions_are_enforced_only_an_approver_decides_even_in_raw_sql() {
    let _server = SERVER.lock().await;
    let Some(url) = fresh_postgres("roles") else {
        return;
    };
    let clock = support::TestClock::at(1_800_000_000_000);
    let owner = owner_with_people(&url, clock.clone()).await;
    let refused = owner
        .grant(codemode::StoreRole::Agent, "x\"; DROP TABLE cm_log; --")
        .unwrap_err()
        .to_string();
    assert!(refused.contains("not a PostgreSQL login"), "{refused}");

    // The agent's host runs a program; its call waits. Its own approval is refused by the server.
    let alpha = Station::new("alpha");
    let robot_url = as_role(&url, "robot");
    let agent = host(&robot_url, "robot-host", vec![alpha.clone()], clock.clone()).await;
    let paused = agent
        .execute("async () => alpha.act({ n: 1 })")
        .await
        .unwrap();
    let id = paused.execution_id().to_owned();
    let refusal = agent
        .approve(&id, codemode::Actor::Cli, None)
        .await
        .unwrap_err();
    // Typed as the server's refusal of this role, which front ends answer as `unauthorized`.
    assert!(
        matches!(&refusal, codemode::RuntimeError::Store(e) if e.is_permission_denied()),
        "{refusal}"
    );
    let refusal = refusal.to_string();
    assert!(
        refusal.contains("robot may not decide calls: deciding needs the role codemode_approver"),
        "{refusal}"
    );
    assert!(
        agent
            .reject(&id, 0, codemode::Actor::Cli, None)
            .await
            .is_err()
    );
    // Nor can it approve from another machine: handing the decision to the run's host is refused alike.
    let elsewhere = host(
        &robot_url,
        "robot-elsewhere",
        vec![alpha.clone()],
        clock.clone(),
    )
    .await;
    let handed = elsewhere
        .approve(&id, codemode::Actor::Cli, None)
        .await
        .unwrap_err();
    assert!(
        matches!(&handed, codemode::RuntimeError::Store(e) if e.is_permission_denied()),
        "{handed}"
    );
    assert!(
        handed
            .to_string()
            .contains("robot may not decide calls: deciding needs the role codemode_approver"),
        "{handed}"
    );
    drop(elsewhere);
    // A patched binary writing the decision itself fares no better, nor one writing the rules.
    let raw = psql_refusal(
        &robot_url,
        &format!(
            "UPDATE cm_log SET decision = '{{\"kind\":\"approved\",\"by\":\"cli\",\"at\":1}}' WHERE execution_id = '{id}'"
        ),
    )
    .expect("refused");
    assert!(raw.contains("may not decide calls"), "{raw}");
    let rules = psql_refusal(&robot_url, "DELETE FROM cm_rules").expect("refused");
    assert!(rules.contains("permission denied"), "{rules}");
    assert!(alpha.acts().is_empty(), "nothing ran");
    assert_eq!(agent.pending(None).unwrap().len(), 1, "still waiting");

    // Carol, an approver, approves from her laptop: it runs on the agent's host, once, named as hers.
    let carol = host(
        &as_role(&url, "carol"),
        "carol-laptop",
        vec![],
        clock.clone(),
    )
    .await;
    let done = carol
        .approve(&id, codemode::Actor::Console, None)
        .await
        .unwrap();
    assert_eq!(done.status(), "completed", "{done:?}");
    assert_eq!(alpha.acts().len(), 1);
    let decision = agent.execution(&id).unwrap().unwrap().log[0]
        .decision
        .clone()
        .unwrap();
    assert_eq!(decision.person.as_deref(), Some("carol"));

    // A decision handed to the agent's host is Carol's for the call it was handed for only: copied onto
    // another call it is the agent's own, and refused (the handing is written by hand here, as Carol, so
    // that no host resumes the run meanwhile).
    let paused = agent
        .execute("async () => alpha.act({ n: 2 })")
        .await
        .unwrap();
    let id = paused.execution_id().to_owned();
    let carol_url = as_role(&url, "carol");
    let hand = |seq: u64| {
        psql_output(
            &carol_url,
            &format!(
                "UPDATE cm_executions SET handed = '{{\"kind\":\"approved\",\"by\":\"console\",\"at\":1}}',
                   handed_seq = {seq} WHERE id = '{id}'"
            ),
            false,
        )
    };
    let copy = format!(
        "UPDATE cm_log SET decision = '{{\"kind\":\"approved\",\"by\":\"console\",\"at\":1}}'
         WHERE execution_id = '{id}' AND seq = 0"
    );
    hand(5);
    let refused = psql_refusal(&robot_url, &copy).expect("refused");
    assert!(refused.contains("robot may not decide calls"), "{refused}");
    hand(0);
    assert_eq!(
        psql_refusal(&robot_url, &copy),
        None,
        "copied onto the call it was handed for"
    );
    let person = psql_output(
        &url,
        &format!(
            "SELECT decision::jsonb ->> 'person' FROM cm_log WHERE execution_id = '{id}' AND seq = 0"
        ),
        false,
    );
    assert_eq!(person.trim(), "carol");
}

/// Retention is the admins' once permissions are enforced (docs/shared-store.md, "People and permissions"):
/// an agent's or an approver's host begins runs without pruning, and `prune` or `delete` from them is refused
/// with the role it needs — also in raw SQL; the tables' owner (an admin) prunes. A host that learns it may no
/// longer delete from a refusal still begins its run.
#[tokio::test(flavor = "multi_thread")]
async fn once_permissions_are_enforced_only_an_admin_deletes_runs() {
    let _server = SERVER.lock().await;
    let Some(url) = fresh_postgres("retention_roles") else {
        return;
    };
    let clock = support::TestClock::at(1_800_000_000_000);
    let owner = owner_with_people(&url, clock.clone()).await;
    // For the last part: the agent role may delete when its host opens, and loses that while it runs.
    psql_output(
        &url,
        "GRANT DELETE ON cm_executions, cm_log, cm_approvals TO codemode_agent",
        false,
    );
    let robot_url = as_role(&url, "robot");
    let keep_one = |url: &str, id: &str| {
        let url = url.to_owned();
        let id = id.to_owned();
        let clock = clock.clone();
        async move {
            Runtime::open(
                StoreLocation::Postgres(url),
                RuntimeOptions {
                    host: Some(codemode::HostIdentity {
                        id: id.clone(),
                        name: format!("{id}.example"),
                    }),
                    max_executions: 1,
                    keep_decided_for: std::time::Duration::ZERO,
                    clock,
                    ..options()
                },
                vec![],
            )
            .await
            .expect("the host opens")
        }
    };
    let agent = keep_one(&robot_url, "robot-host").await;
    psql_output(
        &url,
        "REVOKE DELETE ON cm_executions, cm_log, cm_approvals FROM codemode_agent",
        false,
    );
    let count = || {
        psql_output(&url, "SELECT count(*) FROM cm_executions", false)
            .trim()
            .to_owned()
    };
    for n in 0..3 {
        let outcome = agent.execute(&format!("async () => {n}")).await.unwrap();
        assert_eq!(outcome.status(), "completed", "{outcome:?}");
    }
    assert_eq!(
        count(),
        "3",
        "the agent's host kept every run, pruning none"
    );

    let refused = agent.prune_executions(0).await.unwrap_err();
    assert!(
        matches!(&refused, codemode::RuntimeError::Store(e) if e.is_permission_denied()),
        "{refused}"
    );
    assert_eq!(
        refused.to_string(),
        "robot may not delete runs: Pruning runs needs the role codemode_admin (an admin runs: codemode store grant admin robot)"
    );
    let carol = keep_one(&as_role(&url, "carol"), "carol-laptop").await;
    let newest = carol
        .list_executions(&Default::default())
        .unwrap()
        .executions[0]
        .id
        .clone();
    let refused = carol
        .delete_execution(&newest)
        .await
        .unwrap_err()
        .to_string();
    assert_eq!(
        refused,
        "carol may not delete runs: Deleting a run needs the role codemode_admin (an admin runs: codemode store grant admin carol)"
    );
    let raw = psql_refusal(&robot_url, "DELETE FROM cm_log").expect("refused");
    assert!(raw.contains("permission denied"), "{raw}");
    assert_eq!(count(), "3");

    // The owner prunes.
    assert_eq!(owner.prune_executions(1).await.unwrap(), 2);
    assert_eq!(count(), "1");
}

/// Four eyes by the database (docs/design.md, "Four eyes"): a rule's `quorum: 2` runs the call once two
/// different people — two PostgreSQL roles — approved it; the same person twice, or one person claiming
/// another's name in raw SQL, counts once; two people approving at once run it exactly once.
#[tokio::test(flavor = "multi_thread")]
async fn a_quorum_of_two_runs_the_call_once_two_different_people_approved() {
    let _server = SERVER.lock().await;
    let Some(url) = fresh_postgres("quorum") else {
        return;
    };
    let clock = support::TestClock::at(1_800_000_000_000);
    let alpha = Station::new("alpha");
    let agent = host(&url, "agent", vec![alpha.clone()], clock.clone()).await;
    for person in ["ann", "ben", "cat"] {
        psql_output(&url, &format!("CREATE ROLE {person} LOGIN"), true);
        agent.grant(codemode::StoreRole::Approver, person).unwrap();
    }
    let rule = json!({"id": "four-eyes", "effect": "ask", "call": "alpha.act", "quorum": 2});
    agent
        .add_rule(codemode::Rule::from_value(rule).unwrap(), "test")
        .unwrap();
    let mut people = Vec::new();
    for person in ["ann", "ben", "cat"] {
        let url = as_role(&url, person);
        people.push(host(&url, &format!("{person}-laptop"), vec![], clock.clone()).await);
    }
    let (ann, ben, cat) = (&people[0], &people[1], &people[2]);
    let approve = |runtime: &Runtime, id: &str| {
        let (runtime, id) = (runtime.clone(), id.to_owned());
        async move { runtime.approve(&id, codemode::Actor::Console, None).await }
    };

    // Ann approves: counted, the call still waits, and says so.
    let paused = agent
        .execute("async () => alpha.act({ n: 1 })")
        .await
        .unwrap();
    let id = paused.execution_id().to_owned();
    let outcome = approve(ann, &id).await.unwrap();
    assert_eq!(outcome.status(), "paused", "{outcome:?}");
    let pending = agent.pending(Some(&id)).unwrap().remove(0);
    assert_eq!(
        pending.quorum_line().as_deref(),
        Some("1 of 2 — approved by ann via console")
    );
    assert!(alpha.acts().is_empty(), "nothing ran after one approval");

    // Ann again, through another front end: refused, naming her. Ann in raw SQL claiming to be ben: the
    // server writes ann, which is already counted.
    let again = ann
        .approve(&id, codemode::Actor::Cli, None)
        .await
        .unwrap_err()
        .to_string();
    assert!(again.starts_with("ann already approved"), "{again}");
    let digest = pending.digest.clone();
    let forged = psql_refusal(
        &as_role(&url, "ann"),
        &format!(
            "INSERT INTO cm_approvals (execution_id, seq, digest, person, decision, at)
             VALUES ('{id}', 0, '{digest}', 'ben', '{{\"kind\":\"approved\",\"by\":\"cli\",\"at\":1}}', 1)"
        ),
    )
    .expect("refused");
    assert!(forged.contains("duplicate key"), "{forged}");
    // A vote dressed as a rule's is no vote at all.
    let as_rule = psql_refusal(
        &as_role(&url, "cat"),
        &format!(
            "INSERT INTO cm_approvals (execution_id, seq, digest, person, decision, at)
             VALUES ('{id}', 0, '{digest}', 'x', '{{\"kind\":\"allowed\",\"by\":\"rule\",\"at\":1}}', 1)"
        ),
    )
    .expect("refused");
    assert!(
        as_rule.contains("an approval is given by a person"),
        "{as_rule}"
    );
    assert_eq!(agent.pending(Some(&id)).unwrap()[0].approvals.len(), 1);

    // Ben approves: the agent's host runs the call once; the decision names both.
    let done = approve(ben, &id).await.unwrap();
    assert_eq!(done.status(), "completed", "{done:?}");
    assert_eq!(alpha.acts().len(), 1);
    let decision = agent.execution(&id).unwrap().unwrap().log[0]
        .decision
        .clone()
        .unwrap();
    let who: Vec<_> = decision
        .approvals
        .iter()
        .map(|v| v.person.clone().unwrap_or_default())
        .collect();
    assert_eq!(who, ["ann", "ben"]);
    assert_eq!(decision.person.as_deref(), Some("ben"));
    assert_eq!(decision.who(), "ann via console and ben via console");

    // Two people at once on a fresh call: one is counted first, the other makes the quorum; one effect.
    let paused = agent
        .execute("async () => alpha.act({ n: 2 })")
        .await
        .unwrap();
    let id = paused.execution_id().to_owned();
    let (a, b) = tokio::join!(approve(ann, &id), approve(ben, &id));
    let mut statuses = [a.unwrap().status(), b.unwrap().status()];
    statuses.sort();
    assert_eq!(statuses, ["completed", "paused"]);
    assert_eq!(alpha.acts().len(), 2);

    // After ann, ben and cat at once: one of them makes it, the other finds it decided; one effect.
    let paused = agent
        .execute("async () => alpha.act({ n: 3 })")
        .await
        .unwrap();
    let id = paused.execution_id().to_owned();
    approve(ann, &id).await.unwrap();
    let (b, c) = tokio::join!(approve(ben, &id), approve(cat, &id));
    let completed = [&b, &c]
        .iter()
        .filter(|r| r.as_ref().is_ok_and(|o| o.status() == "completed"))
        .count();
    assert_eq!(completed, 1, "{b:?} {c:?}");
    assert_eq!(alpha.acts().len(), 3);

    // A rejection by anyone ends it, approvals or not.
    let paused = agent
        .execute("async () => alpha.act({ n: 4 })")
        .await
        .unwrap();
    let id = paused.execution_id().to_owned();
    approve(ann, &id).await.unwrap();
    cat.reject(&id, 0, codemode::Actor::Console, Some("no"))
        .await
        .unwrap();
    assert_eq!(
        agent.execution(&id).unwrap().unwrap().status,
        codemode::ExecutionStatus::Rejected
    );
    assert_eq!(alpha.acts().len(), 3);
}

/// Heartbeats are judged by the database server's clock (docs/shared-store.md, "Hosts"): a host whose clock
/// runs 45 s ahead of the run's host still sees it alive, and its approval is handed over as usual.
#[tokio::test(flavor = "multi_thread")]
async fn hosts_whose_clocks_disagree_still_see_each_other_alive() {
    let _server = SERVER.lock().await;
    let Some(url) = fresh_postgres("skew") else {
        return;
    };
    let alpha = Station::new("alpha");
    let a = host(
        &url,
        "a",
        vec![alpha.clone()],
        support::TestClock::at(1_800_000_000_000),
    )
    .await;
    let ahead = support::TestClock::at(1_800_000_045_000);
    let b = host(&url, "b", vec![], ahead.clone()).await;
    let paused = a.execute("async () => alpha.act({ n: 1 })").await.unwrap();
    let id = paused.execution_id().to_owned();
    let run = b.execution(&id).unwrap().unwrap();
    assert!(run.host.as_ref().unwrap().alive, "{run:?}");
    let done = b
        .approve(&id, codemode::Actor::Console, None)
        .await
        .unwrap();
    assert_eq!(done.status(), "completed", "{done:?}");
    assert_eq!(alpha.acts().len(), 1);
}
