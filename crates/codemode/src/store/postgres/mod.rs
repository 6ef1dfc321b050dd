//! The store on PostgreSQL (docs/shared-store.md): a pool of tokio-postgres connections, each driven by the
//! thread that waits on it (so the store's synchronous calls work from any thread, a tokio worker included),
//! plus one connection on a small runtime of the store's own that only LISTENs: every host's commits move a
//! change counter, and the decisions handed to this host arrive on a channel.

mod driven;
mod flights;
mod listener;
mod parked;
mod pool;

use super::postgres_tls;
use super::sql::{DbError, Param};
use driven::Target;
use flights::{Answer, Connection, Flight, Last, Queued};
use listener::{Listening, listen};
use pool::Pool;
use std::collections::HashMap;
use std::future::Future;
use std::str::FromStr;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

/// The channel every write transaction notifies on commit, with its runtime's name as the payload; a decision
/// handed to a host is `<runtime>\thand-off\t<host id>\t<run id>`.
pub(crate) const CHANNEL: &str = "codemode";

/// What tells the host `host` that its run `id` was decided: heard by its listener, and counted as a change
/// by every host of the runtime.
pub(crate) fn hand_off_payload(runtime: &str, host: &str, id: &str) -> String {
    format!("{runtime}\thand-off\t{host}\t{id}")
}

/// What the listener tells this host about runs other hosts approved for it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Handed {
    /// This run was handed to this host.
    Run(String),
    /// The listener (re)connected: notifications may have been missed, so look for every handed run.
    Rescan,
}

/// How long connecting may take before the store says the server is unreachable.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

/// How long a statement keeps being retried on new connections while the server is unreachable (a restart,
/// a failover) before the store gives up (docs/shared-store.md, "When the server goes away").
const RECONNECT_FOR: Duration = Duration::from_secs(20);

/// An advisory lock a write transaction holds until it ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Lock {
    Exclusive(i64),
    Shared(i64),
}

/// Why an attempt failed: before its commit was sent (the server rolled it back, so it may be run again), or
/// while committing (it may have committed: it is not run again).
enum Failed {
    BeforeCommit(DbError),
    AtCommit(DbError),
}

/// A pool of connections to one PostgreSQL database, and the counter of the changes announced on it.
pub(crate) struct Postgres {
    /// Runs the listener; taken on drop, to shut down without blocking (the store may be dropped on an
    /// async worker).
    runtime: Option<tokio::runtime::Runtime>,
    pool: Arc<Pool>,
    /// Notifications received, and reconnections of the listener (which may have missed some).
    announced: Arc<AtomicU64>,
    /// The same count, for those who wait for a change.
    changes: tokio::sync::watch::Receiver<u64>,
    /// Runs handed to this host, until the runtime takes the receiver.
    hand_offs: std::sync::Mutex<Option<tokio::sync::mpsc::UnboundedReceiver<Handed>>>,
    runtime_name: String,
    /// Transactions this store committed.
    commits: AtomicU64,
    /// When this store last announced a change (ms since it opened), and whether a quiet commit since then
    /// still owes one (docs/shared-store.md, "Live updates").
    announced_at: Arc<AtomicU64>,
    owed: Arc<std::sync::atomic::AtomicBool>,
    opened: std::time::Instant,
    /// Transactions sent whole and not yet waited for, by the key their sender gave (a run's id): the next
    /// commit under that key goes in the same flight behind it (docs/shared-store.md, "A call's outcome is
    /// sent, not waited for").
    parked: std::sync::Mutex<HashMap<String, parked::Parked>>,
}

/// How often a running run's progress is announced to other processes, at most.
const PROGRESS_EVERY: Duration = Duration::from_millis(100);

impl Postgres {
    /// Connects to `url` (a `postgres://` URL or a `key=value` string) as the host `host`, checking the
    /// server answers.
    pub(crate) fn connect(url: &str, runtime_name: &str, host: &str) -> Result<Self, DbError> {
        let (url, tls) = postgres_tls::split_url(url)?;
        let connector = postgres_tls::connector(&tls)?;
        let mut config = tokio_postgres::Config::from_str(&url)
            .map_err(|e| DbError::Pool(format!("not a PostgreSQL address: {}", e)))?;
        config.connect_timeout(CONNECT_TIMEOUT);
        if config.get_application_name().is_none() {
            config.application_name("codemode");
        }
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .thread_name("codemode-postgres")
            .enable_all()
            .build()
            .map_err(|e| DbError::Pool(format!("cannot start the database runtime: {e}")))?;
        let pool = Arc::new(Pool::new(Target {
            config: config.clone(),
            connector: connector.clone(),
            connect_timeout: CONNECT_TIMEOUT,
        }));
        let announced = Arc::new(AtomicU64::new(0));
        let (changed, changes) = tokio::sync::watch::channel(0);
        let (handed, hand_offs) = tokio::sync::mpsc::unbounded_channel();
        let postgres = Postgres {
            runtime: Some(runtime),
            pool,
            announced: announced.clone(),
            changes,
            hand_offs: std::sync::Mutex::new(Some(hand_offs)),
            runtime_name: runtime_name.to_owned(),
            commits: AtomicU64::new(0),
            announced_at: Arc::new(AtomicU64::new(0)),
            owed: Arc::new(std::sync::atomic::AtomicBool::new(false)),
            opened: std::time::Instant::now(),
            parked: std::sync::Mutex::new(HashMap::new()),
        };
        // The first connection is made now, so an unreachable server is said at once.
        drop(postgres.connection()?);
        postgres.spawn(listen(
            config,
            connector,
            Listening {
                runtime: runtime_name.to_owned(),
                host: host.to_owned(),
                announced,
                changed,
                handed,
            },
        ));
        Ok(postgres)
    }

    fn spawn<F: Future<Output = ()> + Send + 'static>(&self, future: F) {
        if let Some(runtime) = &self.runtime {
            runtime.spawn(future);
        }
    }

    /// A pooled connection.
    pub(crate) fn connection(&self) -> Result<Connection, DbError> {
        Ok(Connection {
            pooled: self.pool.get()?,
            queued: std::sync::Mutex::new(Vec::new()),
            quiet: std::sync::atomic::AtomicBool::new(false),
        })
    }

    /// Runs `f` on a pooled connection, outside a transaction (reads).
    pub(crate) fn read<T>(
        &self,
        mut f: impl FnMut(&Connection) -> Result<T, DbError>,
    ) -> Result<T, DbError> {
        self.retrying(|| {
            let connection = self.connection().map_err(Failed::BeforeCommit)?;
            let value = f(&connection).map_err(Failed::BeforeCommit)?;
            connection.flush().map_err(Failed::BeforeCommit)?;
            Ok(value)
        })
    }

    /// Runs `f` in one transaction holding the advisory `locks` for its length (docs/shared-store.md,
    /// "Transactions"), and announces the change on commit.
    pub(crate) fn transaction<T>(
        &self,
        locks: &[Lock],
        announce: &str,
        mut f: impl FnMut(&Connection) -> Result<T, DbError>,
    ) -> Result<T, DbError> {
        let begin = begin_sql(locks);
        self.retrying(|| {
            let mut connection = self.connection().map_err(Failed::BeforeCommit)?;
            // BEGIN leaves with the transaction's first statement, in one flight (docs/shared-store.md,
            // "Transactions").
            connection.queue(Queued::Simple(begin.clone()));
            let value = match f(&connection) {
                Ok(value) => value,
                Err(error) => {
                    let begun = connection.drop_queue();
                    if begun && connection.batch("ROLLBACK").is_err() {
                        connection.discard();
                    }
                    return Err(Failed::BeforeCommit(error));
                }
            };
            let commit = self.commit_sql(connection.quiet.load(Ordering::SeqCst), announce);
            match connection.flight(None, &commit) {
                Ok(_) => {}
                // A write sent with COMMIT failed: the transaction is aborted and COMMIT never ran (the
                // statements after a failed one in a simple query are skipped), so end it here.
                Err(Flight::Earlier(error)) if !error.is_connection_lost() => {
                    if connection.batch("ROLLBACK").is_err() {
                        connection.discard();
                    }
                    return Err(Failed::BeforeCommit(error));
                }
                Err(Flight::Earlier(error) | Flight::Last(error)) => {
                    connection.discard();
                    return Err(Failed::AtCommit(error));
                }
            }
            self.commits.fetch_add(1, Ordering::SeqCst);
            Ok(value)
        })
    }

    /// One statement in a transaction of its own, sent in one flight with BEGIN, the `locks` and COMMIT; what
    /// it answered (how many rows it changed, or its rows when `query`: a write with `RETURNING`, a CTE that
    /// writes and reads). For a write whose conditions are in its SQL, so nothing is read first
    /// (docs/shared-store.md, "Fewer round trips"). `quiet` as [`super::sql::Sql::quiet`].
    fn commit_at_once(
        &self,
        locks: &[Lock],
        announce: &str,
        quiet: bool,
        sql: &str,
        params: &[Param<'_>],
        query: bool,
    ) -> Result<Answer, DbError> {
        let begin = begin_sql(locks);
        self.retrying(|| {
            let mut connection = self.connection().map_err(Failed::BeforeCommit)?;
            let (statement, values) = connection
                .prepared(sql, params)
                .map_err(Failed::BeforeCommit)?;
            connection.queue(Queued::Simple(begin.clone()));
            let last = if query {
                Last::Query(statement, values)
            } else {
                Last::Execute(statement, values)
            };
            let answer = connection.committing(last, self.commit_sql(quiet, announce));
            self.concluded(&mut connection, answer)
        })
    }

    /// What a transaction sent whole in one flight came to, its connection left outside any transaction.
    fn concluded(
        &self,
        connection: &mut Connection,
        answer: Result<Answer, Flight>,
    ) -> Result<Answer, Failed> {
        match answer {
            Ok(answer) => {
                self.commits.fetch_add(1, Ordering::SeqCst);
                Ok(answer)
            }
            // BEGIN or the statement failed: the transaction is aborted, and a NOTIFY before COMMIT failed
            // with it, so COMMIT never ran (as in `transaction`): end it here.
            Err(Flight::Earlier(error)) if !error.is_connection_lost() => {
                if connection.batch("ROLLBACK").is_err() {
                    connection.discard();
                }
                Err(Failed::BeforeCommit(error))
            }
            Err(Flight::Earlier(error) | Flight::Last(error)) => {
                connection.discard();
                Err(Failed::AtCommit(error))
            }
        }
    }

    /// What ends a write transaction: COMMIT, after a NOTIFY unless the transaction is `quiet` and may go
    /// unannounced ([`Postgres::announce_later`]).
    fn commit_sql(&self, quiet: bool, announce: &str) -> String {
        if quiet && self.announce_later() {
            return "COMMIT".to_owned();
        }
        self.announced_at.store(self.since_open(), Ordering::SeqCst);
        // NOTIFY takes only a literal; runtime names are letters, digits, '_', '-' and '.'.
        let payload = announce.replace('\'', "''");
        format!("NOTIFY {CHANNEL}, '{payload}'; COMMIT")
    }

    fn since_open(&self) -> u64 {
        self.opened.elapsed().as_millis() as u64
    }

    /// Whether a quiet commit (a running run's progress) may go without its NOTIFY: when another was
    /// announced less than [`PROGRESS_EVERY`] ago. Then one announcement is owed, and sent that long after the
    /// last, so other processes see the progress within [`PROGRESS_EVERY`] however the run goes on.
    fn announce_later(&self) -> bool {
        let last = self.announced_at.load(Ordering::SeqCst);
        if self.since_open().saturating_sub(last) >= PROGRESS_EVERY.as_millis() as u64 {
            return false;
        }
        if !self.owed.swap(true, Ordering::SeqCst) {
            let (pool, owed, announced_at, opened) = (
                self.pool.clone(),
                self.owed.clone(),
                self.announced_at.clone(),
                self.opened,
            );
            let runtime = self.runtime_name.clone();
            self.spawn(async move {
                tokio::time::sleep(PROGRESS_EVERY).await;
                owed.store(false, Ordering::SeqCst);
                announced_at.store(opened.elapsed().as_millis() as u64, Ordering::SeqCst);
                // A pooled connection is driven by the thread that waits on it: not this runtime's worker.
                let _ = tokio::task::spawn_blocking(move || {
                    if let Ok(pooled) = pool.get()
                        && let Ok(driven) = pooled.driven()
                    {
                        let _ = driven.wait(
                            driven
                                .client
                                .execute("SELECT pg_notify($1, $2)", &[&CHANNEL, &runtime]),
                        );
                    }
                })
                .await;
            });
        }
        true
    }

    /// Runs `attempt` again on a new connection while the server is unreachable, for up to
    /// [`RECONNECT_FOR`]; a transaction that may have committed is never run again.
    fn retrying<T>(&self, mut attempt: impl FnMut() -> Result<T, Failed>) -> Result<T, DbError> {
        let deadline = std::time::Instant::now() + RECONNECT_FOR;
        let mut pause = Duration::from_millis(25);
        loop {
            match attempt() {
                Ok(value) => return Ok(value),
                Err(Failed::AtCommit(error)) => return Err(error),
                Err(Failed::BeforeCommit(error)) => {
                    if !error.is_connection_lost() || std::time::Instant::now() + pause > deadline {
                        return Err(error);
                    }
                    std::thread::sleep(pause);
                    pause = (pause * 2).min(Duration::from_secs(1));
                }
            }
        }
    }

    /// How many changes were announced to this store since it opened (moves on every commit anywhere).
    pub(crate) fn announced(&self) -> u64 {
        self.announced.load(Ordering::SeqCst)
    }

    /// Waits until the change count differs from `seen`, or `timeout` passes.
    pub(crate) async fn changed(&self, seen: u64, timeout: Duration) {
        let mut changes = self.changes.clone();
        let _ = tokio::time::timeout(timeout, changes.wait_for(|count| *count != seen)).await;
    }

    /// The runs handed to this host, as the listener hears of them; only the first caller gets them.
    pub(crate) fn take_hand_offs(&self) -> Option<tokio::sync::mpsc::UnboundedReceiver<Handed>> {
        self.hand_offs
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .take()
    }

    /// How many transactions this store committed.
    pub(crate) fn commits(&self) -> u64 {
        self.commits.load(Ordering::SeqCst)
    }
}

impl Drop for Postgres {
    fn drop(&mut self) {
        if let Some(runtime) = self.runtime.take() {
            runtime.shutdown_background();
        }
    }
}

/// BEGIN and the advisory locks, to go in one flight (they are integers: nothing to quote).
fn begin_sql(locks: &[Lock]) -> String {
    let mut begin = "BEGIN".to_owned();
    for lock in locks {
        begin.push_str(&match lock {
            Lock::Exclusive(key) => format!("; SELECT pg_advisory_xact_lock({key})"),
            Lock::Shared(key) => format!("; SELECT pg_advisory_xact_lock_shared({key})"),
        });
    }
    begin
}

/// `url` with its password replaced, for messages.
pub fn masked(url: &str) -> String {
    let Some(scheme_end) = url.find("://") else {
        return url
            .split_whitespace()
            .map(|pair| match pair.split_once('=') {
                Some(("password", _)) => "password=***".to_owned(),
                _ => pair.to_owned(),
            })
            .collect::<Vec<_>>()
            .join(" ");
    };
    // A password may also come as a query parameter (`?password=…`).
    let (url, query) = match url.split_once('?') {
        Some((base, query)) => (base, Some(query)),
        None => (url, None),
    };
    let query = query.map(|query| {
        query
            .split('&')
            .map(|pair| match pair.split_once('=') {
                Some(("password", _)) => "password=***",
                _ => pair,
            })
            .collect::<Vec<_>>()
            .join("&")
    });
    let masked_base = masked_authority(url, scheme_end);
    match query {
        Some(query) => format!("{masked_base}?{query}"),
        None => masked_base,
    }
}

/// `url` (without its query) with the password of its authority replaced.
fn masked_authority(url: &str, scheme_end: usize) -> String {
    let rest = &url[scheme_end + 3..];
    let authority_end = rest.find(['/', '?']).unwrap_or(rest.len());
    let authority = &rest[..authority_end];
    match authority.rfind('@') {
        Some(at) => match authority[..at].split_once(':') {
            Some((user, _)) => format!(
                "{}{user}:***{}",
                &url[..scheme_end + 3],
                &url[scheme_end + 3 + at..]
            ),
            None => url.to_owned(),
        },
        None => url.to_owned(),
    }
}

#[cfg(test)]
mod tests;
