"""StateDatabase: where the records beside the memories live, a SQLite file or PostgreSQL."""

from __future__ import annotations

import os
import sqlite3
import threading
import zlib
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Protocol

from memory.store.sqlite_file import open_wal, scrub

# The topics feature keeps its summaries in this file (or table): named here so that erasure
# clears it even in a fork that deleted that feature.
SUMMARIES_FILE = "topic-summaries.sqlite"
PG_PREFIX = "gulfstream_"  # every table and index of this project in a shared PostgreSQL
# A statement names its tables `{p}name`: `name` in a SQLite file, `gulfstream_name` in
# PostgreSQL, where the platform's database also holds the checkpointer's and the store's.
TABLE_MARK = "{p}"


def is_postgres_dsn(value: str) -> bool:
    """Whether `value` is a PostgreSQL connection URL (what a state database is opened by)."""
    return value.startswith(("postgres://", "postgresql://"))


def upsert(table: str, columns: Sequence[str], keys: Sequence[str]) -> str:
    """`INSERT ... ON CONFLICT (keys) DO UPDATE` of every other column: a row written again
    replaces its values, in both dialects (SQLite's `INSERT OR REPLACE` is not PostgreSQL's)."""
    others = [c for c in columns if c not in keys]
    update = ", ".join(f"{c} = excluded.{c}" for c in others)
    return (
        f"INSERT INTO {TABLE_MARK}{table} ({', '.join(columns)}) VALUES "
        f"({', '.join('?' for _ in columns)}) ON CONFLICT ({', '.join(keys)}) "
        + (f"DO UPDATE SET {update}" if others else "DO NOTHING")
    )


class Transaction(Protocol):
    """The statements of one transaction (a cursor's `execute` / `executemany` / `rowcount`)."""

    def execute(self, sql: str, params: Sequence[Any] = ()) -> Any: ...

    def executemany(self, sql: str, rows: Sequence[Sequence[Any]]) -> Any: ...


class StateDatabase:
    """One database of shared records, by user id in every row: the schema is made when it is
    first used; statements use `?` placeholders and `{p}` before each table name."""

    dialect = ""
    errors: tuple[type[BaseException], ...] = ()

    def query(self, sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        """The rows of one statement (its own transaction)."""
        with self.transaction() as tx:
            return list(tx.execute(sql, params).fetchall())

    @contextmanager
    def transaction(self) -> Iterator[Transaction]:
        raise NotImplementedError
        yield

    def exists(self) -> bool:
        """Whether anything may be stored yet (reading never creates a file)."""
        return True

    def tables(self) -> set[str]:
        """The names of the tables present (without the PostgreSQL prefix)."""
        raise NotImplementedError

    def scrub(self, tables: Sequence[str]) -> bool:
        """Leave none of the deleted rows' bytes in `tables`' pages (VACUUM); False when a
        reader kept some for now (a SQLite WAL held open)."""
        raise NotImplementedError

    def close(self) -> None:
        """Let go of the connection (opened again when used again)."""

    def describe(self) -> str:
        return self.dialect


class SqliteState(StateDatabase):
    """A SQLite file (WAL, busy timeout), shared by every user of a data folder and by the
    processes that have it (a CLI beside a server); created by the first statement."""

    dialect = "sqlite"
    errors = (sqlite3.Error,)

    def __init__(self, path: str | os.PathLike[str], schema: str, synchronous: str = "") -> None:
        self.path = Path(path)
        self.schema = schema.replace(TABLE_MARK, "")
        self.synchronous = synchronous
        self._lock = threading.Lock()
        self._connection: sqlite3.Connection | None = None

    def connection(self) -> sqlite3.Connection:
        """The open connection (made, with the schema, on first use); callers hold `lock`."""
        if self._connection is None:
            self._connection = open_wal(self.path, self.schema, self.synchronous)
        return self._connection

    def script(self, sql: str) -> None:
        """Run a script of SQLite statements (a migration), `{p}` marks dropped."""
        with self._lock:
            self.connection().executescript(sql.replace(TABLE_MARK, ""))

    @contextmanager
    def transaction(self) -> Iterator[Transaction]:
        with self._lock:
            connection = self.connection()
            connection.execute("BEGIN IMMEDIATE")
            try:
                yield _SqliteStatements(connection)
            except BaseException:
                connection.execute("ROLLBACK")
                raise
            connection.execute("COMMIT")

    def query(self, sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        # A plain read, not `BEGIN IMMEDIATE`: readers (the editor, every retrieval's recall
        # stats) must not take the write lock from the processes writing the file.
        with self._lock:
            return self.connection().execute(sql.replace(TABLE_MARK, ""), params).fetchall()

    def exists(self) -> bool:
        return self._connection is not None or self.path.exists()

    def tables(self) -> set[str]:
        return {row[0] for row in self.query("SELECT name FROM sqlite_master WHERE type = 'table'")}

    def scrub(self, tables: Sequence[str]) -> bool:
        with self._lock:  # the whole file: VACUUM in SQLite rebuilds every table at once
            return scrub(self.connection())

    def close(self) -> None:
        with self._lock:
            if self._connection is not None:
                self._connection.close()
                self._connection = None

    def describe(self) -> str:
        return str(self.path)


class _SqliteStatements:
    def __init__(self, connection: sqlite3.Connection) -> None:
        self.connection = connection

    def execute(self, sql: str, params: Sequence[Any] = ()) -> sqlite3.Cursor:
        return self.connection.execute(sql.replace(TABLE_MARK, ""), params)

    def executemany(self, sql: str, rows: Sequence[Sequence[Any]]) -> sqlite3.Cursor:
        return self.connection.executemany(sql.replace(TABLE_MARK, ""), rows)


def pg_sql(sql: str) -> str:
    """A statement of this module's portable form in psycopg's: tables prefixed, `%s` for `?`
    (a literal `%` doubled first)."""
    return sql.replace(TABLE_MARK, PG_PREFIX).replace("%", "%%").replace("?", "%s")


def pg_schema(schema: str) -> str:
    """A schema script in PostgreSQL's: tables and indexes prefixed, no `WITHOUT ROWID` (a
    SQLite storage detail)."""
    return schema.replace(TABLE_MARK, PG_PREFIX).replace(" WITHOUT ROWID", "")


class SharedConnection:
    """One autocommit connection per database for the whole process, used by one statement
    (or transaction) at a time, opened again when it broke; each schema required of it is made
    once per connection, under an advisory lock (two replicas starting together would
    otherwise race in `CREATE TABLE IF NOT EXISTS`)."""

    def __init__(self, dsn: str) -> None:
        self.dsn = dsn
        self._lock = threading.Lock()
        self._conn: Any = None
        self._schemas: list[str] = []
        self._made: set[str] = set()

    def require(self, schema: str) -> None:
        """Make `schema` (PostgreSQL statements) before the next statement, and after each
        reconnection."""
        with self._lock:
            if schema.strip() and schema not in self._schemas:
                self._schemas.append(schema)

    @contextmanager
    def connection(self) -> Iterator[Any]:
        import psycopg

        with self._lock:
            if self._conn is None or self._conn.closed or self._conn.broken:
                self._conn = psycopg.connect(self.dsn, autocommit=True)
                self._made = set()
            for schema in self._schemas:
                if schema not in self._made:
                    with self._conn.transaction():
                        key = zlib.crc32(schema.encode()) - 2**31
                        self._conn.execute("SELECT pg_advisory_xact_lock(%s)", (key,))
                        self._conn.execute(schema)
                    self._made.add(schema)
            yield self._conn


_shared: dict[str, SharedConnection] = {}
_shared_lock = threading.Lock()


def pool_for(dsn: str) -> SharedConnection:
    """The process's connection to `dsn`."""
    with _shared_lock:
        return _shared.setdefault(dsn, SharedConnection(dsn))


class PostgresState(StateDatabase):
    """The tables `gulfstream_<name>` of a PostgreSQL database, through the process's shared
    connection: every replica and worker of a deployment reads and writes the same rows."""

    dialect = "postgres"

    def __init__(self, dsn: str, schema: str) -> None:
        import psycopg

        self.errors = (psycopg.Error,)
        self.dsn = dsn
        self.pool = pool_for(dsn)
        self.pool.require(pg_schema(schema))

    @contextmanager
    def transaction(self) -> Iterator[Transaction]:
        with self.pool.connection() as conn, conn.transaction(), conn.cursor() as cursor:
            yield _PostgresStatements(cursor)

    def query(self, sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        with self.pool.connection() as conn:  # autocommit: one round trip, no BEGIN/COMMIT
            return list(conn.execute(pg_sql(sql), params).fetchall())

    def tables(self) -> set[str]:
        rows = self.query(
            "SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema()"
        )
        return {name[len(PG_PREFIX) :] for (name,) in rows if name.startswith(PG_PREFIX)}

    def scrub(self, tables: Sequence[str]) -> bool:
        # Deleted rows stay in the table's pages until VACUUM reclaims them (autovacuum does it
        # later; this does it now; VACUUM runs outside a transaction). The server's own WAL and
        # backups are the operator's.
        present = self.tables()
        with self.pool.connection() as conn:
            for table in tables:
                if table in present:  # a feature never used has no table
                    conn.execute(f"VACUUM {PG_PREFIX}{table}")
        return True

    def describe(self) -> str:
        return "PostgreSQL (tables gulfstream_*)"


class _PostgresStatements:
    def __init__(self, cursor: Any) -> None:
        self.cursor = cursor

    def execute(self, sql: str, params: Sequence[Any] = ()) -> Any:
        self.cursor.execute(pg_sql(sql), params)
        return self.cursor

    def executemany(self, sql: str, rows: Sequence[Sequence[Any]]) -> Any:
        if rows:  # psycopg refuses an empty batch of a statement with parameters
            self.cursor.executemany(pg_sql(sql), rows)
        return self.cursor


def open_state(
    dsn: str | None, path: str | os.PathLike[str], schema: str, synchronous: str = ""
) -> StateDatabase:
    """PostgreSQL when the deployment names one (`dsn`), else the SQLite file at `path`."""
    if dsn:
        return PostgresState(dsn, schema)
    return SqliteState(path, schema, synchronous)
