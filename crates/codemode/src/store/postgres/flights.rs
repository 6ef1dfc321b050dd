//! How statements reach PostgreSQL: a transaction's requests queued and sent in one flight with the next
//! statement that needs an answer, parameters typed as the server inferred them, and rows decoded.

use super::driven::Driven;
use super::pool::Pooled;
use crate::store::sql::{Cell, DbError, Dialect, Param, Row, Sql, postgres_placeholders};
use std::future::Future;
use std::sync::atomic::Ordering;
use tokio_postgres::types::{ToSql, Type};

/// One pooled connection, for one transaction or read. Statements are prepared once per connection.
pub(crate) struct Connection {
    pub(super) pooled: Pooled,
    /// What this transaction has not sent yet — its BEGIN, then writes whose answer nobody needs — to leave
    /// in one flight with the next statement that needs an answer, or with COMMIT: tokio-postgres pipelines
    /// requests whose futures are polled together, so a recorded call's transaction is two round trips.
    pub(super) queued: std::sync::Mutex<Vec<Queued>>,
    /// The transaction only records a running run's progress ([`Sql::quiet`]).
    pub(super) quiet: std::sync::atomic::AtomicBool,
}

/// A request waiting for the next flight.
pub(super) enum Queued {
    Simple(String),
    Prepared(tokio_postgres::Statement, Vec<Typed>),
}

/// Which part of a flight failed: a request sent before the last one (the transaction is aborted from there
/// on), or the last.
pub(super) enum Flight {
    Earlier(DbError),
    Last(DbError),
}

impl Flight {
    pub(super) fn error(self) -> DbError {
        match self {
            Flight::Earlier(error) | Flight::Last(error) => error,
        }
    }
}

/// What the last request of a flight is.
pub(super) enum Last {
    Execute(tokio_postgres::Statement, Vec<Typed>),
    Query(tokio_postgres::Statement, Vec<Typed>),
}

/// A transaction sent whole — BEGIN, its statement and COMMIT — owning what it sends, so it can be waited
/// for after its sender returned (a parked flight, `Postgres::send_one`).
pub(super) type Committing = std::pin::Pin<Box<dyn Future<Output = Result<Answer, Flight>> + Send>>;

/// What the last request answered.
pub(super) enum Answer {
    Changed(u64),
    Rows(Vec<tokio_postgres::Row>),
    Done,
}

impl Connection {
    pub(super) fn queue(&self, request: Queued) {
        self.queued
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .push(request);
    }

    /// Forgets what was not sent; true when something was sent already (BEGIN among it).
    pub(super) fn drop_queue(&self) -> bool {
        let mut queued = self.queued.lock().unwrap_or_else(|p| p.into_inner());
        let begun = !matches!(queued.first(), Some(Queued::Simple(_)));
        queued.clear();
        begun
    }

    /// Sends everything queued, then `last` (or the simple statements `simple` when `last` is `None`), all in
    /// one flight, and waits for the answers: the first failure is what the caller hears.
    pub(super) fn flight(&self, last: Option<Last>, simple: &str) -> Result<Answer, Flight> {
        let driven = self.driven().map_err(Flight::Earlier)?;
        let client = &driven.client;
        let queued = std::mem::take(&mut *self.queued.lock().unwrap_or_else(|p| p.into_inner()));
        let earlier = futures_util::future::join_all(queued.iter().map(|q| send(client, q)));
        let last = async {
            match last {
                Some(last) => answer(client, &last).await,
                None => client.batch_execute(simple).await.map(|()| Answer::Done),
            }
        };
        let (earlier, last) = driven.wait(futures_util::future::join(earlier, last));
        if let Some(error) = earlier.into_iter().find_map(Result::err) {
            return Err(Flight::Earlier(error.into()));
        }
        last.map_err(|e| Flight::Last(e.into()))
    }

    /// Sends everything queued, then `last` and the simple statements `commit` (which end the transaction),
    /// in one flight; what `last` answered.
    pub(super) fn committing(&self, last: Last, commit: String) -> Result<Answer, Flight> {
        let flight = self.committing_flight(last, commit)?;
        self.driven().map_err(Flight::Earlier)?.wait(flight)
    }

    /// The flight of [`Connection::committing`], not sent until it is polled (`Driven::send`, `Driven::wait`).
    pub(super) fn committing_flight(
        &self,
        last: Last,
        commit: String,
    ) -> Result<Committing, Flight> {
        let client = self.driven().map_err(Flight::Earlier)?.client.clone();
        let queued = std::mem::take(&mut *self.queued.lock().unwrap_or_else(|p| p.into_inner()));
        Ok(Box::pin(async move {
            let earlier = futures_util::future::join_all(queued.iter().map(|q| send(&client, q)));
            let (earlier, answer, committed) = futures_util::future::join3(
                earlier,
                answer(&client, &last),
                client.batch_execute(&commit),
            )
            .await;
            if let Some(error) = earlier.into_iter().find_map(Result::err) {
                return Err(Flight::Earlier(error.into()));
            }
            let answer = answer.map_err(|e| Flight::Earlier(e.into()))?;
            committed.map_err(|e| Flight::Last(e.into()))?;
            Ok(answer)
        }))
    }

    /// Sends the queued requests now, if any (a read outside a transaction never queues).
    pub(super) fn flush(&self) -> Result<(), DbError> {
        if self
            .queued
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .is_empty()
        {
            return Ok(());
        }
        self.flight(None, "").map(|_| ()).map_err(Flight::error)
    }

    pub(super) fn driven(&self) -> Result<&Driven, DbError> {
        self.pooled.driven()
    }

    /// Runs statements without parameters (the simple query protocol), in one flight after what is queued:
    /// in a transaction, its BEGIN and locks come first (a migration's first statement must not run before
    /// the schema lock is held).
    pub(crate) fn batch(&self, sql: &str) -> Result<(), DbError> {
        self.flight(None, sql).map(|_| ()).map_err(Flight::error)
    }

    /// Takes the connection out of the pool for good: it may be inside a transaction that could not be
    /// ended, and closing it makes the server roll that back.
    pub(super) fn discard(&mut self) {
        self.pooled.discard();
    }

    pub(super) fn prepared(
        &self,
        sql: &str,
        params: &[Param<'_>],
    ) -> Result<(tokio_postgres::Statement, Vec<Typed>), DbError> {
        let statement = self.driven()?.prepared(&postgres_placeholders(sql))?;
        let values = self.typed(&statement, params)?;
        Ok((statement, values))
    }

    /// `params` as the types `statement`'s placeholders were inferred to have.
    pub(super) fn typed(
        &self,
        statement: &tokio_postgres::Statement,
        params: &[Param<'_>],
    ) -> Result<Vec<Typed>, DbError> {
        statement
            .params()
            .iter()
            .zip(params)
            .map(|(ty, param)| typed(ty, param))
            .collect()
    }
}

impl Sql for Connection {
    fn dialect(&self) -> Dialect {
        Dialect::Postgres
    }

    fn execute(&self, sql: &str, params: &[Param<'_>]) -> Result<usize, DbError> {
        let (statement, values) = self.prepared(sql, params)?;
        match self.flight(Some(Last::Execute(statement, values)), "") {
            Ok(Answer::Changed(changed)) => Ok(changed as usize),
            Ok(_) => Ok(0),
            Err(failed) => Err(failed.error()),
        }
    }

    fn quiet(&self) {
        self.quiet.store(true, Ordering::SeqCst);
    }

    fn execute_later(&self, sql: &str, params: &[Param<'_>]) -> Result<(), DbError> {
        let (statement, values) = self.prepared(sql, params)?;
        self.queue(Queued::Prepared(statement, values));
        Ok(())
    }

    fn query(&self, sql: &str, params: &[Param<'_>]) -> Result<Vec<Row>, DbError> {
        let (statement, values) = self.prepared(sql, params)?;
        match self.flight(Some(Last::Query(statement, values)), "") {
            Ok(Answer::Rows(rows)) => rows.iter().map(row).collect(),
            Ok(_) => Ok(Vec::new()),
            Err(failed) => Err(failed.error()),
        }
    }

    fn query_together(&self, queries: &[(&str, &[Param<'_>])]) -> Result<Vec<Vec<Row>>, DbError> {
        let requests = queries
            .iter()
            .map(|(sql, params)| {
                let (statement, values) = self.prepared(sql, params)?;
                Ok(Last::Query(statement, values))
            })
            .collect::<Result<Vec<_>, DbError>>()?;
        let driven = self.driven()?;
        let client = &driven.client;
        let queued = std::mem::take(&mut *self.queued.lock().unwrap_or_else(|p| p.into_inner()));
        // Requests are sent in the order their futures are first polled: what was queued, then the queries.
        let earlier = futures_util::future::join_all(queued.iter().map(|q| send(client, q)));
        let answers = futures_util::future::join_all(requests.iter().map(|r| answer(client, r)));
        let (earlier, answers) = driven.wait(futures_util::future::join(earlier, answers));
        if let Some(error) = earlier.into_iter().find_map(Result::err) {
            return Err(error.into());
        }
        answers
            .into_iter()
            .map(|answer| match answer? {
                Answer::Rows(rows) => rows.iter().map(row).collect(),
                _ => Ok(Vec::new()),
            })
            .collect()
    }
}

/// Sends the request that ends a flight and reads its answer.
async fn answer(
    client: &tokio_postgres::Client,
    last: &Last,
) -> Result<Answer, tokio_postgres::Error> {
    match last {
        Last::Execute(statement, values) => {
            let refs: Vec<&(dyn ToSql + Sync)> = values.iter().map(Typed::as_sql).collect();
            client.execute(statement, &refs).await.map(Answer::Changed)
        }
        Last::Query(statement, values) => {
            let refs: Vec<&(dyn ToSql + Sync)> = values.iter().map(Typed::as_sql).collect();
            client.query(statement, &refs).await.map(Answer::Rows)
        }
    }
}

/// Sends one queued request and waits for its answer.
async fn send(
    client: &tokio_postgres::Client,
    request: &Queued,
) -> Result<(), tokio_postgres::Error> {
    match request {
        Queued::Simple(sql) => client.batch_execute(sql).await,
        Queued::Prepared(statement, values) => {
            let refs: Vec<&(dyn ToSql + Sync)> = values.iter().map(Typed::as_sql).collect();
            client.execute(statement, &refs).await.map(|_| ())
        }
    }
}

/// A parameter as the type PostgreSQL inferred for its placeholder.
pub(super) enum Typed {
    Small(Option<i16>),
    Int(Option<i32>),
    Big(Option<i64>),
    Bool(Option<bool>),
    Text(Option<String>),
}

impl Typed {
    fn as_sql(&self) -> &(dyn ToSql + Sync) {
        match self {
            Typed::Small(v) => v,
            Typed::Int(v) => v,
            Typed::Big(v) => v,
            Typed::Bool(v) => v,
            Typed::Text(v) => v,
        }
    }
}

fn typed(ty: &Type, param: &Param<'_>) -> Result<Typed, DbError> {
    let int = match param {
        Param::Int(v) => Some(*v),
        _ => None,
    };
    let out_of_range = || DbError::Pool(format!("{int:?} does not fit a {ty} parameter"));
    Ok(match *ty {
        Type::INT8 => Typed::Big(int),
        Type::INT4 => Typed::Int(
            int.map(i32::try_from)
                .transpose()
                .map_err(|_| out_of_range())?,
        ),
        Type::INT2 => Typed::Small(
            int.map(i16::try_from)
                .transpose()
                .map_err(|_| out_of_range())?,
        ),
        Type::BOOL => Typed::Bool(int.map(|v| v != 0)),
        _ => Typed::Text(match param {
            Param::Null => None,
            Param::Int(v) => Some(v.to_string()),
            // PostgreSQL's text cannot hold NUL (SQLite's can): it becomes U+FFFD rather than fail the write
            // (a connector's error message, a reason). A program holding one is refused before it starts
            // (`Runtime::execute_from`), so what replays is always what ran (docs/shared-store.md).
            Param::Text(text) if text.contains('\0') => Some(text.replace('\0', "\u{FFFD}")),
            Param::Text(text) => Some(text.to_string()),
        }),
    })
}

pub(super) fn row(row: &tokio_postgres::Row) -> Result<Row, DbError> {
    let mut cells = Vec::with_capacity(row.len());
    for (index, column) in row.columns().iter().enumerate() {
        let cell = match *column.type_() {
            Type::INT8 => row.try_get::<_, Option<i64>>(index)?.map(Cell::Int),
            Type::INT4 => row
                .try_get::<_, Option<i32>>(index)?
                .map(|v| Cell::Int(i64::from(v))),
            Type::INT2 => row
                .try_get::<_, Option<i16>>(index)?
                .map(|v| Cell::Int(i64::from(v))),
            Type::BOOL => row
                .try_get::<_, Option<bool>>(index)?
                .map(|v| Cell::Int(i64::from(v))),
            _ => row.try_get::<_, Option<String>>(index)?.map(Cell::Text),
        };
        cells.push(cell.unwrap_or(Cell::Null));
    }
    Ok(Row(cells))
}
