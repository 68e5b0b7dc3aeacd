"""The small SQLite files of the write pipeline (journal, trace): WAL, one writer at a time."""

from __future__ import annotations

import os
import sqlite3
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

BUSY_TIMEOUT_MS = 10_000


def open_wal(
    path: str | os.PathLike[str], schema: str, synchronous: str = ""
) -> sqlite3.Connection:
    """A connection usable from any thread (callers hold their own lock), WAL, schema applied."""
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    connection = sqlite3.connect(path, check_same_thread=False, isolation_level=None)
    connection.execute("PRAGMA journal_mode=WAL")
    if synchronous:
        connection.execute(f"PRAGMA synchronous={synchronous}")
    connection.execute(f"PRAGMA busy_timeout={BUSY_TIMEOUT_MS}")
    connection.executescript(schema)
    return connection


@contextmanager
def write_transaction(
    lock: threading.Lock, connection: sqlite3.Connection
) -> Iterator[sqlite3.Connection]:
    """`BEGIN IMMEDIATE` … `COMMIT` under `lock`; any exception rolls back and propagates."""
    with lock:
        connection.execute("BEGIN IMMEDIATE")
        try:
            yield connection
        except BaseException:
            connection.execute("ROLLBACK")
            raise
        connection.execute("COMMIT")
