"""PostgreSQL, once per process and database: the LangGraph store and the write locks on it."""

from __future__ import annotations

import threading
from typing import Any

from memory.store.locking import PostgresLock

_stores: dict[str, Any] = {}
_locks: dict[str, PostgresLock] = {}
_guard = threading.Lock()


def open_postgres_store(conn_string: str) -> Any:
    """A set-up PostgresStore for `conn_string`, one per process, its connection kept open.

    Needs the `postgres` extra (langgraph-checkpoint-postgres and psycopg).
    """
    with _guard:
        store = _stores.get(conn_string)
        if store is None:
            from langgraph.store.postgres import PostgresStore
            from psycopg import Connection
            from psycopg.rows import dict_row

            # The same settings as PostgresStore.from_conn_string, without closing on exit.
            conn = Connection.connect(
                conn_string, autocommit=True, prepare_threshold=0, row_factory=dict_row
            )
            store = PostgresStore(conn)
            store.setup()
            _stores[conn_string] = store
        return store


def postgres_lock(conn_string: str) -> PostgresLock:
    """The process's write lock on `conn_string` (one pool of lock connections per database)."""
    with _guard:
        return _locks.setdefault(conn_string, PostgresLock(conn_string))
