//! The one query surface both backends share, so every statement that means the same on SQLite
//! and PostgreSQL is written once:
//!
//! - **Placeholders**: `$1`, `$2`, ... (SQLite reads numbered `$N` as well as PostgreSQL does).
//!   Write a parameter PostgreSQL cannot type from its use as `CAST($1 AS TEXT)`, which both read.
//! - **Values**: bound in each backend's own column types: SQLite keeps times as Unix
//!   microseconds, ids as text and JSON as text; PostgreSQL as `timestamptz`, `uuid`, `jsonb`.
//! - **Rows**: read back through [`Row`], which undoes the same encodings.
//! - **The database clock**: `{now}` in a statement is PostgreSQL's transaction `now()`; on
//!   SQLite it is the time the transaction (or the single statement) began, bound as a value.
//!
//! What genuinely differs (the queue's claim, SQLite's group commit, `LISTEN/NOTIFY`, row locks
//! and advisory locks that only PostgreSQL needs) stays in the backend modules; a shared owner
//! asks [`Tx::is_postgres`] for the one extra statement PostgreSQL needs.

use std::borrow::Cow;

use sqlx::postgres::{PgPool, PgRow};
use sqlx::sqlite::{SqlitePool, SqliteRow};
use sqlx::{Decode, Postgres, Row as _, Sqlite, SqliteConnection, Transaction, Type};
use time::OffsetDateTime;
use uuid::Uuid;

use super::StoreError;

/// A backend's connections, as the shared owners use them.
#[derive(Debug, Clone)]
pub(super) enum Db {
    /// Reads go to the reader pool, writes to the one writer connection.
    Sqlite {
        reader: SqlitePool,
        writer: SqlitePool,
    },
    Pg(PgPool),
}

impl Db {
    /// Where a statement that only reads runs.
    pub(super) fn read(&self) -> On<'_> {
        On::Read(self)
    }

    /// Where a single statement that writes runs (outside a transaction).
    pub(super) fn write(&self) -> On<'_> {
        On::Write(self)
    }

    /// A write transaction: on SQLite it holds the writer connection until it ends, and its
    /// `{now}` is fixed when it begins, as PostgreSQL's `now()` is.
    pub(super) async fn begin(&self) -> Result<Tx, StoreError> {
        Ok(match self {
            Self::Sqlite { writer, .. } => Tx::Sqlite {
                tx: writer.begin().await?,
                now: now_micros(),
            },
            Self::Pg(pool) => Tx::Pg(pool.begin().await?),
        })
    }
}

/// An open write transaction on either backend; dropped without [`Tx::commit`], it rolls back.
#[derive(Debug)]
pub(super) enum Tx {
    Sqlite {
        tx: Transaction<'static, Sqlite>,
        now: i64,
    },
    Pg(Transaction<'static, Postgres>),
}

impl Tx {
    pub(super) fn is_postgres(&self) -> bool {
        matches!(self, Self::Pg(_))
    }

    pub(super) async fn commit(self) -> Result<(), StoreError> {
        match self {
            Self::Sqlite { tx, .. } => tx.commit().await?,
            Self::Pg(tx) => tx.commit().await?,
        }
        Ok(())
    }

    pub(super) async fn rollback(self) -> Result<(), StoreError> {
        match self {
            Self::Sqlite { tx, .. } => tx.rollback().await?,
            Self::Pg(tx) => tx.rollback().await?,
        }
        Ok(())
    }
}

/// Where one statement runs.
#[derive(Debug)]
pub(super) enum On<'a> {
    Read(&'a Db),
    Write(&'a Db),
    Tx(&'a mut Tx),
    /// A connection SQLite's group committer holds inside its own transaction, with its `now`.
    SqliteConn(&'a mut SqliteConnection, i64),
}

impl On<'_> {
    /// The same place for one more statement (a write of several statements in one
    /// transaction).
    pub(super) fn reborrow(&mut self) -> On<'_> {
        match self {
            Self::Read(db) => On::Read(db),
            Self::Write(db) => On::Write(db),
            Self::Tx(tx) => On::Tx(tx),
            Self::SqliteConn(conn, now) => On::SqliteConn(conn, *now),
        }
    }
}

impl<'a> From<&'a mut Tx> for On<'a> {
    fn from(tx: &'a mut Tx) -> Self {
        Self::Tx(tx)
    }
}

/// One bound value, encoded per backend when the statement runs.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum Value {
    Text(Option<String>),
    Int(Option<i64>),
    Bool(bool),
    Time(Option<OffsetDateTime>),
    Id(Option<Uuid>),
    Json(serde_json::Value),
}

macro_rules! value_from {
    ($($ty:ty => |$v:ident| $make:expr),* $(,)?) => {
        $(impl From<$ty> for Value {
            fn from($v: $ty) -> Self {
                $make
            }
        })*
    };
}

value_from! {
    &str => |v| Self::Text(Some(v.to_owned())),
    String => |v| Self::Text(Some(v)),
    &String => |v| Self::Text(Some(v.clone())),
    Option<&str> => |v| Self::Text(v.map(str::to_owned)),
    Option<String> => |v| Self::Text(v),
    &Option<String> => |v| Self::Text(v.clone()),
    i64 => |v| Self::Int(Some(v)),
    Option<i64> => |v| Self::Int(v),
    bool => |v| Self::Bool(v),
    OffsetDateTime => |v| Self::Time(Some(v)),
    Option<OffsetDateTime> => |v| Self::Time(v),
    Uuid => |v| Self::Id(Some(v)),
    Option<Uuid> => |v| Self::Id(v),
    &serde_json::Value => |v| Self::Json(v.clone()),
    serde_json::Value => |v| Self::Json(v),
}

/// A statement and its values.
#[derive(Debug, Clone)]
#[must_use = "a statement does nothing until it is run"]
pub(super) struct Sql {
    text: Cow<'static, str>,
    args: Vec<Value>,
}

impl Sql {
    pub(super) fn new(text: impl Into<Cow<'static, str>>) -> Self {
        Self {
            text: text.into(),
            args: Vec::new(),
        }
    }

    /// Binds the next `$N`.
    pub(super) fn bind(mut self, value: impl Into<Value>) -> Self {
        self.args.push(value.into());
        self
    }

    pub(super) async fn fetch_all<'a>(self, on: impl Into<On<'a>>) -> Result<Vec<Row>, StoreError> {
        match self.run(on.into(), Mode::All).await? {
            Out::Rows(rows) => Ok(rows),
            Out::Affected(_) => Err(mode_mismatch()),
        }
    }

    pub(super) async fn fetch_optional<'a>(
        self,
        on: impl Into<On<'a>>,
    ) -> Result<Option<Row>, StoreError> {
        match self.run(on.into(), Mode::Optional).await? {
            Out::Rows(rows) => Ok(rows.into_iter().next()),
            Out::Affected(_) => Err(mode_mismatch()),
        }
    }

    pub(super) async fn fetch_one<'a>(self, on: impl Into<On<'a>>) -> Result<Row, StoreError> {
        self.fetch_optional(on)
            .await?
            .ok_or_else(|| StoreError::NotFound("the statement returned no row".to_owned()))
    }

    /// Runs a statement for its effect; returns how many rows it changed.
    pub(super) async fn execute<'a>(self, on: impl Into<On<'a>>) -> Result<u64, StoreError> {
        match self.run(on.into(), Mode::Execute).await? {
            Out::Affected(n) => Ok(n),
            Out::Rows(_) => Err(mode_mismatch()),
        }
    }

    async fn run(self, on: On<'_>, mode: Mode) -> Result<Out, StoreError> {
        match on {
            On::Read(Db::Sqlite { reader, .. }) => self.sqlite(reader, now_micros(), mode).await,
            On::Write(Db::Sqlite { writer, .. }) => self.sqlite(writer, now_micros(), mode).await,
            On::Read(Db::Pg(pool)) | On::Write(Db::Pg(pool)) => self.pg(pool, mode).await,
            On::Tx(Tx::Sqlite { tx, now }) => {
                let now = *now;
                self.sqlite(&mut **tx, now, mode).await
            }
            On::Tx(Tx::Pg(tx)) => self.pg(&mut **tx, mode).await,
            On::SqliteConn(conn, now) => self.sqlite(conn, now, mode).await,
        }
    }

    async fn sqlite<'c, E>(self, on: E, now: i64, mode: Mode) -> Result<Out, StoreError>
    where
        E: sqlx::Executor<'c, Database = Sqlite>,
    {
        let uses_now = self.text.contains(NOW);
        let text = if uses_now {
            Cow::Owned(self.text.replace(NOW, &format!("${}", self.args.len() + 1)))
        } else {
            Cow::Borrowed(self.text.as_ref())
        };
        let mut query = sqlx::query(&text);
        for value in &self.args {
            query = match value {
                Value::Text(v) => query.bind(v.as_deref()),
                Value::Int(v) => query.bind(*v),
                Value::Bool(v) => query.bind(*v),
                Value::Time(v) => query.bind(v.map(micros_of)),
                Value::Id(v) => query.bind(v.map(|id| id.to_string())),
                Value::Json(v) => query.bind(v.to_string()),
            };
        }
        if uses_now {
            query = query.bind(now);
        }
        Ok(match mode {
            Mode::All => Out::Rows(
                query
                    .fetch_all(on)
                    .await?
                    .into_iter()
                    .map(Row::Sqlite)
                    .collect(),
            ),
            Mode::Optional => Out::Rows(
                query
                    .fetch_optional(on)
                    .await?
                    .map(Row::Sqlite)
                    .into_iter()
                    .collect(),
            ),
            Mode::Execute => Out::Affected(query.execute(on).await?.rows_affected()),
        })
    }

    async fn pg<'c, E>(self, on: E, mode: Mode) -> Result<Out, StoreError>
    where
        E: sqlx::Executor<'c, Database = Postgres>,
    {
        let text = self.text.replace(NOW, "now()");
        let mut query = sqlx::query(&text);
        for value in &self.args {
            query = match value {
                Value::Text(v) => query.bind(v.as_deref()),
                Value::Int(v) => query.bind(*v),
                Value::Bool(v) => query.bind(*v),
                Value::Time(v) => query.bind(*v),
                Value::Id(v) => query.bind(*v),
                Value::Json(v) => query.bind(v),
            };
        }
        Ok(match mode {
            Mode::All => Out::Rows(
                query
                    .fetch_all(on)
                    .await?
                    .into_iter()
                    .map(Row::Pg)
                    .collect(),
            ),
            Mode::Optional => Out::Rows(
                query
                    .fetch_optional(on)
                    .await?
                    .map(Row::Pg)
                    .into_iter()
                    .collect(),
            ),
            Mode::Execute => Out::Affected(query.execute(on).await?.rows_affected()),
        })
    }
}

/// The database clock's marker in a statement.
const NOW: &str = "{now}";

#[derive(Debug, Clone, Copy)]
enum Mode {
    All,
    Optional,
    Execute,
}

enum Out {
    Rows(Vec<Row>),
    Affected(u64),
}

fn mode_mismatch() -> StoreError {
    StoreError::Internal("a statement answered in a form it was not asked for".to_owned())
}

/// One row from either backend.
pub(super) enum Row {
    Sqlite(SqliteRow),
    Pg(PgRow),
}

impl Row {
    /// A column both backends store in the same type (text, integers, booleans).
    pub(super) fn get<T>(&self, column: &str) -> Result<T, StoreError>
    where
        T: for<'r> Decode<'r, Sqlite>
            + Type<Sqlite>
            + for<'r> Decode<'r, Postgres>
            + Type<Postgres>,
    {
        Ok(match self {
            Self::Sqlite(row) => row.try_get(column)?,
            Self::Pg(row) => row.try_get(column)?,
        })
    }

    pub(super) fn time(&self, column: &str) -> Result<OffsetDateTime, StoreError> {
        self.opt_time(column)?
            .ok_or_else(|| StoreError::Internal(format!("stored {column} is empty")))
    }

    pub(super) fn opt_time(&self, column: &str) -> Result<Option<OffsetDateTime>, StoreError> {
        match self {
            Self::Sqlite(row) => row
                .try_get::<Option<i64>, _>(column)?
                .map(time_from_micros)
                .transpose(),
            Self::Pg(row) => Ok(row.try_get(column)?),
        }
    }

    pub(super) fn id(&self, column: &str) -> Result<Uuid, StoreError> {
        self.opt_id(column)?
            .ok_or_else(|| StoreError::Internal(format!("stored {column} is empty")))
    }

    pub(super) fn opt_id(&self, column: &str) -> Result<Option<Uuid>, StoreError> {
        match self {
            Self::Sqlite(row) => row
                .try_get::<Option<String>, _>(column)?
                .map(|id| {
                    Uuid::parse_str(&id)
                        .map_err(|e| StoreError::Internal(format!("stored {column} `{id}`: {e}")))
                })
                .transpose(),
            Self::Pg(row) => Ok(row.try_get(column)?),
        }
    }

    pub(super) fn opt_json(&self, column: &str) -> Result<Option<serde_json::Value>, StoreError> {
        match self {
            Self::Sqlite(row) => row
                .try_get::<Option<String>, _>(column)?
                .map(|text| {
                    serde_json::from_str(&text).map_err(|e| {
                        StoreError::Internal(format!("stored {column} is not JSON: {e}"))
                    })
                })
                .transpose(),
            Self::Pg(row) => Ok(row.try_get(column)?),
        }
    }

    pub(super) fn json(&self, column: &str) -> Result<serde_json::Value, StoreError> {
        match self {
            Self::Sqlite(row) => {
                let text: String = row.try_get(column)?;
                serde_json::from_str(&text)
                    .map_err(|e| StoreError::Internal(format!("stored {column} is not JSON: {e}")))
            }
            Self::Pg(row) => Ok(row.try_get(column)?),
        }
    }
}

/// SQLite's time columns: Unix microseconds.
pub(super) fn micros_of(time: OffsetDateTime) -> i64 {
    i64::try_from(time.unix_timestamp_nanos() / 1_000).unwrap_or(i64::MAX)
}

pub(super) fn time_from_micros(micros: i64) -> Result<OffsetDateTime, StoreError> {
    OffsetDateTime::from_unix_timestamp_nanos(i128::from(micros) * 1_000)
        .map_err(|e| StoreError::Internal(format!("stored time {micros}: {e}")))
}

/// Now, in Unix microseconds (SQLite's `{now}`).
pub(super) fn now_micros() -> i64 {
    micros_of(OffsetDateTime::now_utc())
}
