//! One small SQL interface over the two databases the store runs on (docs/shared-store.md): statements are
//! written once, with `?N` placeholders, and run on SQLite as written and on PostgreSQL as `$N`; values are
//! integers, text and NULL, and rows come back owned, so the store's transitions read the same on both.

use std::borrow::Cow;

/// Which database a connection talks to, for the few statements written differently on each.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Dialect {
    Sqlite,
    Postgres,
}

/// A parameter: the store keeps integers (booleans as 0/1), text (JSON included) and NULL.
#[derive(Debug, Clone)]
pub(crate) enum Param<'a> {
    Null,
    Int(i64),
    Text(Cow<'a, str>),
}

/// A value that can be a statement's parameter, borrowed for the statement's length.
pub(crate) trait ToParam {
    fn to_param(&self) -> Param<'_>;
}

impl ToParam for str {
    fn to_param(&self) -> Param<'_> {
        Param::Text(Cow::Borrowed(self))
    }
}

impl ToParam for String {
    fn to_param(&self) -> Param<'_> {
        Param::Text(Cow::Borrowed(self))
    }
}

impl ToParam for i64 {
    fn to_param(&self) -> Param<'_> {
        Param::Int(*self)
    }
}

impl ToParam for u32 {
    fn to_param(&self) -> Param<'_> {
        Param::Int(i64::from(*self))
    }
}

impl ToParam for bool {
    fn to_param(&self) -> Param<'_> {
        Param::Int(i64::from(*self))
    }
}

impl<T: ToParam + ?Sized> ToParam for &T {
    fn to_param(&self) -> Param<'_> {
        (**self).to_param()
    }
}

impl<T: ToParam> ToParam for Option<T> {
    fn to_param(&self) -> Param<'_> {
        self.as_ref().map_or(Param::Null, ToParam::to_param)
    }
}

/// The parameters of one statement, each borrowed: `args![a, b]` is `&[a.to_param(), b.to_param()]`.
macro_rules! args {
    ($($value:expr),* $(,)?) => {
        &[$($crate::store::sql::ToParam::to_param(&$value)),*][..]
    };
}
pub(crate) use args;

/// One value of a result row.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Cell {
    Null,
    Int(i64),
    Text(String),
}

/// A result row, read whole.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Row(pub(crate) Vec<Cell>);

impl Row {
    /// Column `index` as `T`; a NULL, a type or an index the caller did not expect is an error.
    pub(crate) fn get<T: FromCell>(&self, index: usize) -> Result<T, DbError> {
        let cell = self.0.get(index).ok_or(DbError::Column {
            index,
            expected: T::EXPECTED,
        })?;
        T::from_cell(cell).ok_or(DbError::Column {
            index,
            expected: T::EXPECTED,
        })
    }
}

/// A Rust value a cell converts to.
pub(crate) trait FromCell: Sized {
    const EXPECTED: &'static str;
    fn from_cell(cell: &Cell) -> Option<Self>;
}

impl FromCell for i64 {
    const EXPECTED: &'static str = "an integer";
    fn from_cell(cell: &Cell) -> Option<Self> {
        match cell {
            Cell::Int(value) => Some(*value),
            _ => None,
        }
    }
}

impl FromCell for u64 {
    const EXPECTED: &'static str = "a non-negative integer";
    fn from_cell(cell: &Cell) -> Option<Self> {
        i64::from_cell(cell).map(|v| v.max(0) as u64)
    }
}

impl FromCell for u32 {
    const EXPECTED: &'static str = "a process id";
    fn from_cell(cell: &Cell) -> Option<Self> {
        i64::from_cell(cell).and_then(|v| u32::try_from(v).ok())
    }
}

impl FromCell for bool {
    const EXPECTED: &'static str = "a boolean";
    fn from_cell(cell: &Cell) -> Option<Self> {
        i64::from_cell(cell).map(|v| v != 0)
    }
}

impl FromCell for String {
    const EXPECTED: &'static str = "text";
    fn from_cell(cell: &Cell) -> Option<Self> {
        match cell {
            Cell::Text(text) => Some(text.clone()),
            _ => None,
        }
    }
}

impl<T: FromCell> FromCell for Option<T> {
    const EXPECTED: &'static str = T::EXPECTED;
    fn from_cell(cell: &Cell) -> Option<Self> {
        match cell {
            Cell::Null => Some(None),
            other => T::from_cell(other).map(Some),
        }
    }
}

/// A database failure, from either database or from reading a row.
#[derive(Debug, thiserror::Error)]
pub enum DbError {
    #[error("{0}")]
    Sqlite(#[from] rusqlite::Error),
    #[error("{}", postgres_message(.0))]
    Postgres(#[from] tokio_postgres::Error),
    #[error("{0}")]
    Pool(String),
    /// No session could be started with the server: the socket did not connect, or the start timed out.
    #[error("error connecting to server: {0}")]
    Connect(String),
    /// A query that always returns a row (an aggregate) returned none.
    #[error("a query that returns a row returned none")]
    NoRow,
    #[error("column {index} is not {expected}")]
    Column {
        index: usize,
        expected: &'static str,
    },
}

impl DbError {
    /// The server refused the statement for the role that sent it (SQLSTATE 42501): a grant it lacks, or a
    /// decision by someone who is not an approver (docs/shared-store.md, "People and permissions").
    pub(crate) fn is_permission_denied(&self) -> bool {
        matches!(self, DbError::Postgres(error)
            if error.code() == Some(&tokio_postgres::error::SqlState::INSUFFICIENT_PRIVILEGE))
    }

    /// The connection to the server was lost, or the server is not taking connections (restarting, shutting
    /// down, unreachable): what may succeed a moment later on a new connection.
    pub(crate) fn is_connection_lost(&self) -> bool {
        use tokio_postgres::error::SqlState;
        if matches!(self, DbError::Connect(_)) {
            return true;
        }
        let DbError::Postgres(error) = self else {
            return false;
        };
        if error.is_closed() {
            return true;
        }
        if let Some(code) = error.code() {
            return [
                SqlState::ADMIN_SHUTDOWN,
                SqlState::CRASH_SHUTDOWN,
                SqlState::CANNOT_CONNECT_NOW,
            ]
            .contains(code);
        }
        let mut source = std::error::Error::source(error);
        while let Some(cause) = source {
            if cause.downcast_ref::<std::io::Error>().is_some() {
                return true;
            }
            source = cause.source();
        }
        false
    }
}

/// The server's own message where there is one (tokio-postgres' Display says only "db error").
fn postgres_message(error: &tokio_postgres::Error) -> String {
    match error.as_db_error() {
        Some(db) => match db.detail() {
            Some(detail) => format!("{}: {detail}", db.message()),
            None => db.message().to_owned(),
        },
        None => {
            let mut message = error.to_string();
            let mut source = std::error::Error::source(error);
            while let Some(cause) = source {
                message = format!("{message}: {cause}");
                source = cause.source();
            }
            message
        }
    }
}

/// A connection, or a transaction on one: what the store's statements run on.
pub(crate) trait Sql {
    fn dialect(&self) -> Dialect;
    /// Runs a statement; returns how many rows it changed.
    fn execute(&self, sql: &str, params: &[Param<'_>]) -> Result<usize, DbError>;
    /// Runs a write whose answer nobody needs: on PostgreSQL it is sent with the transaction's next statement
    /// or its COMMIT, in one flight, and a failure fails the transaction there (docs/shared-store.md,
    /// "Transactions"). Elsewhere it is [`Sql::execute`].
    fn execute_later(&self, sql: &str, params: &[Param<'_>]) -> Result<(), DbError> {
        self.execute(sql, params).map(|_| ())
    }
    /// Marks the transaction as a running run's progress only (a call that runs, a result): on PostgreSQL
    /// other processes hear of it within 100 ms rather than at its commit (docs/shared-store.md, "Live
    /// updates"). A change of status is never quiet.
    fn quiet(&self) {}
    /// Runs a query; returns its rows.
    fn query(&self, sql: &str, params: &[Param<'_>]) -> Result<Vec<Row>, DbError>;

    /// Runs several queries, in order; returns each one's rows. On PostgreSQL they leave in one flight (with
    /// what the transaction queued before them), so reading what a transition needs costs one round trip
    /// however many tables it reads (docs/shared-store.md, "Fewer round trips").
    fn query_together(&self, queries: &[(&str, &[Param<'_>])]) -> Result<Vec<Vec<Row>>, DbError> {
        queries
            .iter()
            .map(|(sql, params)| self.query(sql, params))
            .collect()
    }

    /// The first row of a query, if any.
    fn query_opt(&self, sql: &str, params: &[Param<'_>]) -> Result<Option<Row>, DbError> {
        Ok(self.query(sql, params)?.into_iter().next())
    }

    /// The first row of a query, which must have one.
    fn query_one(&self, sql: &str, params: &[Param<'_>]) -> Result<Row, DbError> {
        self.query_opt(sql, params)?.ok_or(DbError::NoRow)
    }
}

/// Row-reading conveniences over any connection, in the shape of rusqlite's.
impl dyn Sql + '_ {
    /// The first row of a query read by `f`, if there is one.
    pub(crate) fn query_row_opt<T>(
        &self,
        sql: &str,
        params: &[Param<'_>],
        f: impl FnOnce(&Row) -> Result<T, DbError>,
    ) -> Result<Option<T>, DbError> {
        self.query_opt(sql, params)?.as_ref().map(f).transpose()
    }

    /// The first row of a query read by `f`; the query must return one.
    pub(crate) fn query_row<T>(
        &self,
        sql: &str,
        params: &[Param<'_>],
        f: impl FnOnce(&Row) -> Result<T, DbError>,
    ) -> Result<T, DbError> {
        f(&self.query_one(sql, params)?)
    }

    /// Every row of a query, each read by `f`.
    pub(crate) fn query_map<T>(
        &self,
        sql: &str,
        params: &[Param<'_>],
        f: impl FnMut(&Row) -> Result<T, DbError>,
    ) -> Result<Vec<T>, DbError> {
        self.query(sql, params)?.iter().map(f).collect()
    }
}

impl rusqlite::ToSql for Param<'_> {
    fn to_sql(&self) -> rusqlite::Result<rusqlite::types::ToSqlOutput<'_>> {
        use rusqlite::types::{ToSqlOutput, Value, ValueRef};
        Ok(match self {
            Param::Null => ToSqlOutput::Owned(Value::Null),
            Param::Int(value) => ToSqlOutput::Owned(Value::Integer(*value)),
            Param::Text(text) => ToSqlOutput::Borrowed(ValueRef::Text(text.as_bytes())),
        })
    }
}

/// Every statement goes through the connection's statement cache: preparing SQL costs more than running
/// these small statements, and a pass runs several of them.
impl Sql for rusqlite::Connection {
    fn dialect(&self) -> Dialect {
        Dialect::Sqlite
    }

    fn execute(&self, sql: &str, params: &[Param<'_>]) -> Result<usize, DbError> {
        Ok(self
            .prepare_cached(sql)?
            .execute(rusqlite::params_from_iter(params))?)
    }

    fn query(&self, sql: &str, params: &[Param<'_>]) -> Result<Vec<Row>, DbError> {
        use rusqlite::types::ValueRef;
        let mut statement = self.prepare_cached(sql)?;
        let columns = statement.column_count();
        let mut rows = statement.query(rusqlite::params_from_iter(params))?;
        let mut read = Vec::new();
        while let Some(row) = rows.next()? {
            let mut cells = Vec::with_capacity(columns);
            for index in 0..columns {
                cells.push(match row.get_ref(index)? {
                    ValueRef::Null => Cell::Null,
                    ValueRef::Integer(value) => Cell::Int(value),
                    ValueRef::Real(value) => Cell::Int(value as i64),
                    ValueRef::Text(bytes) | ValueRef::Blob(bytes) => {
                        Cell::Text(String::from_utf8_lossy(bytes).into_owned())
                    }
                });
            }
            read.push(Row(cells));
        }
        Ok(read)
    }
}

/// `?N` placeholders as PostgreSQL's `$N`, outside quoted text.
pub(crate) fn postgres_placeholders(sql: &str) -> String {
    let mut out = String::with_capacity(sql.len());
    let mut quote: Option<char> = None;
    let mut chars = sql.chars().peekable();
    while let Some(c) = chars.next() {
        match quote {
            Some(q) if c == q => quote = None,
            Some(_) => {}
            None if c == '\'' || c == '"' => quote = Some(c),
            None if c == '?' && chars.peek().is_some_and(char::is_ascii_digit) => {
                out.push('$');
                continue;
            }
            None => {}
        }
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn placeholders_become_dollars_outside_quotes() {
        assert_eq!(
            postgres_placeholders(
                "SELECT a FROM t WHERE b = ?1 AND c = '?2' AND d IS NOT DISTINCT FROM ?12"
            ),
            "SELECT a FROM t WHERE b = $1 AND c = '?2' AND d IS NOT DISTINCT FROM $12"
        );
        assert_eq!(postgres_placeholders("x ? y"), "x ? y");
    }

    #[test]
    fn cells_convert_as_the_store_reads_them() {
        let row = Row(vec![Cell::Int(1), Cell::Null, Cell::Text("t".into())]);
        assert!(row.get::<bool>(0).unwrap());
        assert_eq!(row.get::<Option<String>>(1).unwrap(), None);
        assert_eq!(row.get::<String>(2).unwrap(), "t");
        assert!(row.get::<i64>(1).is_err());
        assert!(row.get::<i64>(2).is_err());
        assert!(row.get::<i64>(3).is_err());
    }
}
