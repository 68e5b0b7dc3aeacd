"""Write locks on one user's memory: this process's threads, or every process on one PostgreSQL."""

from __future__ import annotations

import hashlib
import threading
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager
from typing import Any, Protocol

from memory.errors import MemoryBusy

WAIT_SECONDS = 30.0  # how long a write waits for another process's before it is refused
IDLE_CONNECTIONS = 4  # lock connections kept open per database between writes


class WriteLock(Protocol):
    """Exclusive access for one read-modify-write of one user's memory.

    `hold` yields a connection in an open transaction when the lock lives in a database (what
    the holder writes through it commits with the release, or not at all), else None."""

    def hold(self, name: str, user_id: str) -> AbstractContextManager[Any | None]: ...


class ThreadLock:
    """One re-entrant lock per name: serialises the threads of this process, nothing beyond it.
    Right for a store only this process opens (`store:memory`, `langgraph dev`'s own store)."""

    def __init__(self) -> None:
        self._locks: dict[str, threading.RLock] = {}
        self._guard = threading.Lock()

    def _lock(self, name: str) -> threading.RLock:
        with self._guard:
            return self._locks.setdefault(name, threading.RLock())

    @contextmanager
    def hold(self, name: str, user_id: str) -> Iterator[None]:
        with self._lock(name):
            yield None


class PostgresLock:
    """A transaction-scoped advisory lock per key on a connection of its own to `dsn`, taken
    after this process's thread lock (so one process waits on one connection per key).

    Every process that writes the memory takes the same lock, so read-modify-write sequences
    never interleave; the revision read under it is the latest. A holder killed mid-write loses
    its connection: PostgreSQL rolls its transaction back and releases the lock. A lock that
    cannot be had within `wait_seconds` raises MemoryBusy (nothing was written)."""

    def __init__(self, dsn: str, wait_seconds: float = WAIT_SECONDS) -> None:
        self.dsn = dsn
        self.wait_seconds = wait_seconds
        self._threads = ThreadLock()
        self._held = threading.local()  # key → the connection this thread holds it on
        self._idle: list[Any] = []
        self._idle_guard = threading.Lock()

    @contextmanager
    def hold(self, name: str, user_id: str) -> Iterator[Any]:
        held: dict[str, Any] = self._held.__dict__.setdefault("connections", {})
        if name in held:  # re-entered by its holder: one transaction, released by the outer hold
            yield held[name]
            return
        with self._threads.hold(name, user_id):
            connection = self._connection()
            try:
                with connection.transaction():
                    self._acquire(connection, name, user_id)
                    held[name] = connection
                    try:
                        yield connection
                    finally:
                        del held[name]
            finally:
                self._release(connection)

    def _acquire(self, connection: Any, name: str, user_id: str) -> None:
        from psycopg import errors

        timeout_ms = int(self.wait_seconds * 1000)
        connection.execute(f"SET LOCAL lock_timeout = {timeout_ms}")
        try:
            connection.execute("SELECT pg_advisory_xact_lock(%s)", (lock_number(name),))
        except errors.LockNotAvailable as exc:
            raise MemoryBusy(user_id, self.wait_seconds) from exc

    def _connection(self) -> Any:
        with self._idle_guard:
            while self._idle:
                connection = self._idle.pop()
                if not connection.closed:
                    return connection
        from psycopg import Connection

        return Connection.connect(self.dsn, autocommit=True, prepare_threshold=None)

    def _release(self, connection: Any) -> None:
        """Keep a connection that is idle and whole for the next write; close any other (a
        broken one, or one whose transaction did not end)."""
        from psycopg.pq import TransactionStatus

        reusable = not connection.closed and (
            connection.info.transaction_status == TransactionStatus.IDLE
        )
        with self._idle_guard:
            if reusable and len(self._idle) < IDLE_CONNECTIONS:
                self._idle.append(connection)
                return
        connection.close()


def lock_number(name: str) -> int:
    """The name as PostgreSQL's bigint lock number: a stable 64-bit hash, prefixed so that other
    applications' advisory locks on the same database do not meet this one's."""
    digest = hashlib.blake2b(f"gulfstream:{name}".encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big", signed=True)


_process_locks: dict[int, ThreadLock] = {}
_process_guard = threading.Lock()


def process_lock(store: object) -> ThreadLock:
    """The process's ThreadLock for one store object (every wrapper of it shares one)."""
    with _process_guard:
        return _process_locks.setdefault(id(store), ThreadLock())
