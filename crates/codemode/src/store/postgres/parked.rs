//! Transactions sent whole without waiting for their answer, parked on their connection under a key (a run's
//! id) until the sender reads what they came to, or sends the next one behind them in the same flight
//! (docs/shared-store.md, "A call's outcome is sent, not waited for").

use super::flights::{Answer, Committing, Connection, Flight, Last, Queued};
use super::{Failed, Lock, Postgres, begin_sql};
use crate::store::sql::{DbError, Param, Row, postgres_placeholders};
use std::collections::HashMap;
use std::sync::MutexGuard;

/// A transaction sent without waiting: in flight on its connection (only the thread that sent it waits for
/// it: another writing to the same run need not, the server commits it whether or not it is read), or what
/// it came to.
pub(super) enum Parked {
    Flying(std::thread::ThreadId, Connection, Committing),
    Landed(Result<u64, DbError>),
}

impl Postgres {
    fn parked(&self) -> MutexGuard<'_, HashMap<String, Parked>> {
        self.parked.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// [`Postgres::commit_at_once`] without waiting: the transaction is sent whole and parked under `key`, and
    /// what it came to is read by [`Postgres::landed`], or with the next [`Postgres::commit_one_after`] under
    /// the same key, which goes in the same flight behind it. An error means nothing was sent.
    pub(crate) fn send_one(
        &self,
        key: &str,
        locks: &[Lock],
        announce: &str,
        quiet: bool,
        sql: &str,
        params: &[Param<'_>],
    ) -> Result<(), DbError> {
        self.land(key);
        if self.parked().contains_key(key) {
            // What the last one came to has not been read: this one is not sent, so it cannot be lost.
            return Err(DbError::Pool(format!(
                "an answer for {key} is still unread"
            )));
        }
        let connection = self.connection()?;
        let (statement, values) = connection.prepared(sql, params)?;
        connection.queue(Queued::Simple(begin_sql(locks)));
        let flight = connection.committing_flight(
            Last::Execute(statement, values),
            self.commit_sql(quiet, announce),
        );
        let mut flight = match flight {
            Ok(flight) => flight,
            Err(failed) => return Err(failed.error()),
        };
        let parked = match connection.driven()?.send(&mut flight) {
            None => {
                let mut connection = connection;
                connection.pooled.park();
                Parked::Flying(std::thread::current().id(), connection, flight)
            }
            Some(answer) => {
                let mut connection = connection;
                Parked::Landed(self.came_to(&mut connection, answer))
            }
        };
        self.parked().insert(key.to_owned(), parked);
        Ok(())
    }

    /// How many rows a whole transaction's statement changed, or why it did not commit.
    fn came_to(
        &self,
        connection: &mut Connection,
        answer: Result<Answer, Flight>,
    ) -> Result<u64, DbError> {
        match self.concluded(connection, answer) {
            Ok(Answer::Changed(changed)) => Ok(changed),
            Ok(_) => Ok(0),
            Err(Failed::BeforeCommit(error) | Failed::AtCommit(error)) => Err(error),
        }
    }

    /// The flight this thread parked under `key`, when it is still in the air.
    fn flying(&self, key: &str) -> Option<(Connection, Committing)> {
        let mut parked = self.parked();
        match parked.remove(key) {
            Some(Parked::Flying(sender, connection, flight))
                if sender == std::thread::current().id() =>
            {
                Some((connection, flight))
            }
            Some(other) => {
                parked.insert(key.to_owned(), other);
                None
            }
            None => None,
        }
    }

    /// Waits for the flight parked under `key`, if one is in the air, keeping what it came to for
    /// [`Postgres::landed`].
    pub(crate) fn land(&self, key: &str) {
        let Some((mut connection, mut flight)) = self.flying(key) else {
            return;
        };
        let answer = match connection.driven() {
            Ok(driven) => driven.wait(&mut flight),
            Err(error) => Err(Flight::Earlier(error)),
        };
        let landed = self.came_to(&mut connection, answer);
        self.parked().insert(key.to_owned(), Parked::Landed(landed));
    }

    /// What the transaction sent under `key` came to (how many rows its statement changed), once; `None`
    /// when nothing was sent.
    pub(crate) fn landed(&self, key: &str) -> Option<Result<u64, DbError>> {
        self.land(key);
        let mut parked = self.parked();
        match parked.remove(key) {
            Some(Parked::Landed(landed)) => Some(landed),
            Some(flying) => {
                parked.insert(key.to_owned(), flying);
                None
            }
            None => None,
        }
    }

    /// Whether the transaction this thread sent under `key` did not commit, and nobody has read so yet.
    pub(crate) fn failed_to_land(&self, key: &str) -> bool {
        self.land(key);
        matches!(self.parked().get(key), Some(Parked::Landed(Err(_))))
    }

    /// [`Postgres::commit_at_once`], sent in one flight behind the transaction parked under `key` when one is in
    /// the air (on its connection, the statement prepared there already): one wait for both. What the parked
    /// one came to is kept for [`Postgres::landed`].
    pub(crate) fn commit_one_after(
        &self,
        key: &str,
        locks: &[Lock],
        announce: &str,
        quiet: bool,
        sql: &str,
        params: &[Param<'_>],
    ) -> Result<u64, DbError> {
        match self.commit_after(key, locks, announce, quiet, sql, params, false)? {
            Answer::Changed(changed) => Ok(changed),
            _ => Ok(0),
        }
    }

    /// [`Postgres::commit_one_after`] for a statement that returns rows.
    pub(crate) fn commit_query_after(
        &self,
        key: &str,
        locks: &[Lock],
        announce: &str,
        quiet: bool,
        sql: &str,
        params: &[Param<'_>],
    ) -> Result<Vec<Row>, DbError> {
        match self.commit_after(key, locks, announce, quiet, sql, params, true)? {
            Answer::Rows(rows) => rows.iter().map(super::flights::row).collect(),
            _ => Ok(Vec::new()),
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn commit_after(
        &self,
        key: &str,
        locks: &[Lock],
        announce: &str,
        quiet: bool,
        sql: &str,
        params: &[Param<'_>],
        query: bool,
    ) -> Result<Answer, DbError> {
        let alone = || self.commit_at_once(locks, announce, quiet, sql, params, query);
        let Some((mut connection, mut parked)) = self.flying(key) else {
            return alone();
        };
        let next = connection
            .driven()
            .ok()
            .and_then(|driven| driven.cached(&postgres_placeholders(sql)))
            .map(|statement| {
                connection
                    .typed(&statement, params)
                    .map(|values| (statement, values))
            });
        let Some(Ok((statement, values))) = next else {
            // Preparing would wait behind the parked flight anyway: it lands first.
            self.parked().insert(
                key.to_owned(),
                Parked::Flying(std::thread::current().id(), connection, parked),
            );
            self.land(key);
            return alone();
        };
        connection.queue(Queued::Simple(begin_sql(locks)));
        let last = if query {
            Last::Query(statement, values)
        } else {
            Last::Execute(statement, values)
        };
        let flight = connection.committing_flight(last, self.commit_sql(quiet, announce));
        // A flying connection is never discarded, so it is there to drive.
        let (landed, answer) = match (flight, connection.driven()) {
            (Ok(flight), Ok(driven)) => {
                driven.wait(futures_util::future::join(&mut parked, flight))
            }
            (Err(failed), Ok(driven)) => (driven.wait(&mut parked), Err(failed)),
            (_, Err(error)) => {
                let lost = || DbError::Pool(error.to_string());
                (Err(Flight::Earlier(lost())), Err(Flight::Earlier(lost())))
            }
        };
        // Both answers are in: the parked one first, as the server took them.
        let landed = self.came_to(&mut connection, landed);
        let parked_failed = landed.is_err();
        self.parked().insert(key.to_owned(), Parked::Landed(landed));
        match self.concluded(&mut connection, answer) {
            Ok(answer) => Ok(answer),
            // Failed behind a parked transaction that failed, or on a connection lost before its COMMIT
            // was sent: nothing of it committed, so it runs again on its own, as every transaction does.
            Err(Failed::BeforeCommit(_)) if !parked_failed => alone(),
            Err(Failed::BeforeCommit(error) | Failed::AtCommit(error)) => Err(error),
        }
    }
}
