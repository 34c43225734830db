//! The one query layer under the store: its statements are written once, in the SQL
//! that SQLite and PostgreSQL share (`INSERT ... ON CONFLICT DO NOTHING RETURNING`,
//! `?N` parameters, which PostgreSQL spells `$N`), and run on either backend. What
//! differs is said here and nowhere else: how a write transaction keeps other writers
//! out, how the layout number is kept, and the tables' DDL.

use rusqlite::types::Value;
use std::collections::HashMap;

/// A connection to either backend.
pub(super) enum Db {
    /// An SQLite file (or, for a store read from elsewhere, a copy in memory).
    Sqlite(rusqlite::Connection),
    /// A PostgreSQL database, with the statements it has prepared by their SQL.
    Postgres {
        client: Box<postgres::Client>,
        prepared: HashMap<&'static str, postgres::Statement>,
    },
}

impl std::fmt::Debug for Db {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Db::Sqlite(_) => "Db::Sqlite",
            Db::Postgres { .. } => "Db::Postgres",
        })
    }
}

/// What either backend said when a statement failed.
#[derive(Debug, thiserror::Error)]
pub enum DbError {
    /// SQLite's error.
    #[error(transparent)]
    Sqlite(#[from] rusqlite::Error),
    /// PostgreSQL's error.
    #[error(transparent)]
    Postgres(#[from] postgres::Error),
    /// A value of a type the store never writes.
    #[error("column {column} holds a {found}, not a {expected}")]
    Type {
        /// The column's position.
        column: usize,
        /// What it holds.
        found: String,
        /// What the store reads there.
        expected: &'static str,
    },
}

/// A row as read: its values by column.
pub(super) struct Row(Vec<Value>);

impl Row {
    /// The integer at `column`, `None` when NULL.
    pub(super) fn int(&self, column: usize) -> Result<Option<i64>, DbError> {
        match &self.0[column] {
            Value::Null => Ok(None),
            Value::Integer(value) => Ok(Some(*value)),
            other => Err(mismatch(column, other, "integer")),
        }
    }

    /// The real number at `column`, `None` when NULL (an integer is read as one).
    pub(super) fn real(&self, column: usize) -> Result<Option<f64>, DbError> {
        match &self.0[column] {
            Value::Null => Ok(None),
            Value::Real(value) => Ok(Some(*value)),
            Value::Integer(value) => Ok(Some(*value as f64)),
            other => Err(mismatch(column, other, "real number")),
        }
    }

    /// The text at `column`, `None` when NULL.
    pub(super) fn text(&self, column: usize) -> Result<Option<String>, DbError> {
        match &self.0[column] {
            Value::Null => Ok(None),
            Value::Text(value) => Ok(Some(value.clone())),
            other => Err(mismatch(column, other, "text")),
        }
    }
}

fn mismatch(column: usize, found: &Value, expected: &'static str) -> DbError {
    DbError::Type {
        column,
        found: format!("{:?}", found.data_type()),
        expected,
    }
}

/// A parameter to bind: the values the store writes.
pub(super) fn int(value: impl Into<i64>) -> Value {
    Value::Integer(value.into())
}

/// An optional parameter: NULL when `None`.
pub(super) fn opt<T: Into<Value>>(value: Option<T>) -> Value {
    value.map_or(Value::Null, Into::into)
}

/// The statement in PostgreSQL's spelling: `?N` becomes `$N`.
fn postgres_sql(sql: &str) -> String {
    let mut out = String::with_capacity(sql.len());
    let mut chars = sql.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '?' && chars.peek().is_some_and(char::is_ascii_digit) {
            out.push('$');
        } else {
            out.push(c);
        }
    }
    out
}

/// A parameter as PostgreSQL binds it. NULL is accepted for any column type, since the
/// store binds NULL only where the column allows it.
#[derive(Debug)]
struct PgParam<'a>(&'a Value);

impl postgres::types::ToSql for PgParam<'_> {
    fn to_sql(
        &self,
        ty: &postgres::types::Type,
        out: &mut bytes::BytesMut,
    ) -> Result<postgres::types::IsNull, Box<dyn std::error::Error + Sync + Send>> {
        match self.0 {
            Value::Null => Ok(postgres::types::IsNull::Yes),
            Value::Integer(value) => value.to_sql(ty, out),
            Value::Real(value) => value.to_sql(ty, out),
            Value::Text(value) => value.to_sql(ty, out),
            Value::Blob(value) => value.to_sql(ty, out),
        }
    }

    fn accepts(_: &postgres::types::Type) -> bool {
        true
    }

    postgres::types::to_sql_checked!();
}

/// A PostgreSQL row's value at `column`, as the SQLite value it stands for.
fn pg_value(row: &postgres::Row, column: usize) -> Result<Value, DbError> {
    use postgres::types::Type;
    let ty = row.columns()[column].type_();
    let value = if *ty == Type::BOOL {
        row.try_get::<_, Option<bool>>(column)?
            .map(|value| Value::Integer(value.into()))
    } else if *ty == Type::INT8 {
        row.try_get::<_, Option<i64>>(column)?.map(Value::Integer)
    } else if *ty == Type::INT4 {
        row.try_get::<_, Option<i32>>(column)?
            .map(|value| Value::Integer(value.into()))
    } else if *ty == Type::FLOAT8 {
        row.try_get::<_, Option<f64>>(column)?.map(Value::Real)
    } else if *ty == Type::TEXT || *ty == Type::VARCHAR {
        row.try_get::<_, Option<String>>(column)?.map(Value::Text)
    } else {
        return Err(DbError::Type {
            column,
            found: ty.name().to_owned(),
            expected: "integer, real number or text",
        });
    };
    Ok(value.unwrap_or(Value::Null))
}

impl Db {
    /// Runs `sql` (written with `?N` parameters) with `params`; returns the rows changed.
    pub(super) fn execute(&mut self, sql: &'static str, params: &[Value]) -> Result<u64, DbError> {
        match self {
            Db::Sqlite(connection) => {
                let mut statement = connection.prepare_cached(sql)?;
                Ok(statement.execute(rusqlite::params_from_iter(params))? as u64)
            }
            Db::Postgres { client, prepared } => {
                let statement = pg_prepared(client, prepared, sql)?;
                let bound: Vec<PgParam<'_>> = params.iter().map(PgParam).collect();
                let refs: Vec<&(dyn postgres::types::ToSql + Sync)> = bound
                    .iter()
                    .map(|param| param as &(dyn postgres::types::ToSql + Sync))
                    .collect();
                Ok(client.execute(&statement, &refs)?)
            }
        }
    }

    /// Runs the query `sql` with `params` and hands each row to `each`, in order.
    pub(super) fn query(
        &mut self,
        sql: &'static str,
        params: &[Value],
        mut each: impl FnMut(Row) -> Result<(), DbError>,
    ) -> Result<(), DbError> {
        match self {
            Db::Sqlite(connection) => {
                let mut statement = connection.prepare_cached(sql)?;
                let columns = statement.column_count();
                let mut rows = statement.query(rusqlite::params_from_iter(params))?;
                while let Some(row) = rows.next()? {
                    let values = (0..columns)
                        .map(|column| row.get::<_, Value>(column))
                        .collect::<Result<_, _>>()?;
                    each(Row(values))?;
                }
                Ok(())
            }
            Db::Postgres { client, prepared } => {
                let statement = pg_prepared(client, prepared, sql)?;
                let bound: Vec<PgParam<'_>> = params.iter().map(PgParam).collect();
                let mut rows = client.query_raw(&statement, bound.iter())?;
                while let Some(row) =
                    postgres::fallible_iterator::FallibleIterator::next(&mut rows)?
                {
                    let values = (0..row.len())
                        .map(|column| pg_value(&row, column))
                        .collect::<Result<_, _>>()?;
                    each(Row(values))?;
                }
                Ok(())
            }
        }
    }

    /// The first row of `sql`, if any.
    pub(super) fn query_one(
        &mut self,
        sql: &'static str,
        params: &[Value],
    ) -> Result<Option<Row>, DbError> {
        let mut first = None;
        self.query(sql, params, |row| {
            if first.is_none() {
                first = Some(row);
            }
            Ok(())
        })?;
        Ok(first)
    }

    /// Runs statements with no parameters and no rows (DDL, transaction control).
    pub(super) fn batch(&mut self, sql: &str) -> Result<(), DbError> {
        match self {
            Db::Sqlite(connection) => Ok(connection.execute_batch(sql)?),
            Db::Postgres { client, .. } => Ok(client.batch_execute(sql)?),
        }
    }

    /// Starts the one write transaction the store allows at a time: SQLite's `BEGIN
    /// IMMEDIATE` takes the file's write lock; PostgreSQL's transaction takes an advisory
    /// lock of clibench's own for the same effect, so that the check of what a store
    /// already holds and the insert that follows are not split by another writer.
    pub(super) fn begin_write(&mut self) -> Result<(), DbError> {
        match self {
            Db::Sqlite(_) => self.batch("BEGIN IMMEDIATE"),
            Db::Postgres { .. } => {
                self.batch("BEGIN")?;
                // 0x636c6962656e6368: "clibench".
                self.batch("SELECT pg_advisory_xact_lock(7164793191406609256)")
            }
        }
    }

    /// Commits the write transaction.
    pub(super) fn commit(&mut self) -> Result<(), DbError> {
        self.batch("COMMIT")
    }

    /// Rolls the write transaction back (after an error; a second error is not news).
    pub(super) fn rollback(&mut self) {
        let _ = self.batch("ROLLBACK");
    }

    /// Runs `work` in a write transaction ([`Db::begin_write`]), committed when it
    /// succeeds and rolled back when it fails.
    pub(super) fn write<T, E: From<DbError>>(
        &mut self,
        work: impl FnOnce(&mut Db) -> Result<T, E>,
    ) -> Result<T, E> {
        self.begin_write()?;
        match work(self) {
            Ok(value) => {
                self.commit()?;
                Ok(value)
            }
            Err(error) => {
                self.rollback();
                Err(error)
            }
        }
    }

    /// The store's layout number: SQLite's `user_version`, PostgreSQL's
    /// `clibench_layout` table; 0 for a database with neither.
    pub(super) fn layout(&mut self) -> Result<i64, DbError> {
        match self {
            Db::Sqlite(connection) => {
                Ok(connection.query_row("PRAGMA user_version", [], |row| row.get(0))?)
            }
            Db::Postgres { .. } => {
                let exists =
                    self.query_one("SELECT to_regclass('clibench_layout') IS NOT NULL", &[])?;
                let exists = match exists {
                    Some(row) => matches!(row.0.first(), Some(Value::Integer(1))),
                    None => false,
                };
                if !exists {
                    return Ok(0);
                }
                let row = self.query_one("SELECT max(layout) FROM clibench_layout", &[])?;
                Ok(row
                    .map(|row| row.int(0))
                    .transpose()?
                    .flatten()
                    .unwrap_or(0))
            }
        }
    }

    /// How many tables the database holds besides a store's (to tell a store from
    /// another database).
    pub(super) fn tables(&mut self) -> Result<i64, DbError> {
        let sql = match self {
            Db::Sqlite(_) => "SELECT count(*) FROM sqlite_master",
            Db::Postgres { .. } => {
                "SELECT count(*) FROM pg_catalog.pg_tables WHERE schemaname = current_schema()"
            }
        };
        let row = self.query_one(sql, &[])?;
        Ok(row
            .map(|row| row.int(0))
            .transpose()?
            .flatten()
            .unwrap_or(0))
    }

    /// Creates the tables of layout `layout` and records it.
    pub(super) fn create_tables(&mut self, layout: i64) -> Result<(), DbError> {
        match self {
            Db::Sqlite(_) => {
                self.batch(SQLITE_TABLES)?;
                self.batch(&format!("PRAGMA user_version = {layout};"))
            }
            Db::Postgres { .. } => {
                self.batch(POSTGRES_TABLES)?;
                self.batch(&format!(
                    "INSERT INTO clibench_layout (layout) VALUES ({layout})"
                ))
            }
        }
    }

    /// Records that the store now has layout `layout` (after an upgrade).
    pub(super) fn set_layout(&mut self, layout: i64) -> Result<(), DbError> {
        match self {
            Db::Sqlite(_) => self.batch(&format!("PRAGMA user_version = {layout};")),
            Db::Postgres { .. } => {
                self.batch(&format!("UPDATE clibench_layout SET layout = {layout}"))
            }
        }
    }

    /// The SQLite connection, for what only a file store has (its schema check).
    pub(super) fn sqlite(&self) -> Option<&rusqlite::Connection> {
        match self {
            Db::Sqlite(connection) => Some(connection),
            Db::Postgres { .. } => None,
        }
    }
}

/// `sql`'s prepared statement on this PostgreSQL connection, prepared once.
fn pg_prepared(
    client: &mut postgres::Client,
    prepared: &mut HashMap<&'static str, postgres::Statement>,
    sql: &'static str,
) -> Result<postgres::Statement, DbError> {
    if let Some(statement) = prepared.get(sql) {
        return Ok(statement.clone());
    }
    let statement = client.prepare(&postgres_sql(sql))?;
    prepared.insert(sql, statement.clone());
    Ok(statement)
}

/// The tables of a store in SQLite (layout 3).
pub(super) const SQLITE_TABLES: &str = "
CREATE TABLE results (
    id INTEGER PRIMARY KEY,
    content_sha256 TEXT NOT NULL UNIQUE,
    target TEXT NOT NULL,
    branch TEXT NOT NULL,
    revision TEXT NOT NULL,
    version TEXT,
    testbed TEXT NOT NULL,
    cpu TEXT NOT NULL,
    cores INTEGER NOT NULL,
    memory_bytes INTEGER NOT NULL,
    kernel TEXT NOT NULL,
    load_average REAL,
    started_unix_ms INTEGER,
    added_unix_ms INTEGER NOT NULL,
    run TEXT,
    duet_phases TEXT
);
CREATE INDEX results_series ON results (target, branch, testbed, started_unix_ms);
CREATE TABLE samples (
    result_id INTEGER NOT NULL REFERENCES results (id),
    metric TEXT NOT NULL,
    trial INTEGER NOT NULL,
    value REAL NOT NULL,
    PRIMARY KEY (result_id, metric, trial)
) WITHOUT ROWID;
";

/// The same tables in PostgreSQL: 64-bit integers and doubles, the id from an identity,
/// and the layout number in a table of its own (PostgreSQL has no `user_version`).
const POSTGRES_TABLES: &str = "
CREATE TABLE results (
    id BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
    content_sha256 TEXT NOT NULL UNIQUE,
    target TEXT NOT NULL,
    branch TEXT NOT NULL,
    revision TEXT NOT NULL,
    version TEXT,
    testbed TEXT NOT NULL,
    cpu TEXT NOT NULL,
    cores BIGINT NOT NULL,
    memory_bytes BIGINT NOT NULL,
    kernel TEXT NOT NULL,
    load_average DOUBLE PRECISION,
    started_unix_ms BIGINT,
    added_unix_ms BIGINT NOT NULL,
    run TEXT,
    duet_phases TEXT
);
CREATE INDEX results_series ON results (target, branch, testbed, started_unix_ms);
CREATE TABLE samples (
    result_id BIGINT NOT NULL REFERENCES results (id),
    metric TEXT NOT NULL,
    trial BIGINT NOT NULL,
    value DOUBLE PRECISION NOT NULL,
    PRIMARY KEY (result_id, metric, trial)
);
CREATE TABLE clibench_layout (layout BIGINT NOT NULL);
";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parameters_are_spelled_for_postgres_and_nothing_else_is_touched() {
        assert_eq!(
            postgres_sql("SELECT 1 WHERE a = ?1 AND b = ?12 AND c = '?'"),
            "SELECT 1 WHERE a = $1 AND b = $12 AND c = '?'"
        );
    }
}
