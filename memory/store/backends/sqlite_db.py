"""SqliteMemoryManager: many users in one SQLite file, point reads and writes in transactions.

Long because one file holds many users: schema, locking and point reads go together.
"""

from __future__ import annotations

import json
import os
import sqlite3
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from memory.errors import CorruptStoreError
from memory.store.backends.sqlite_check import check_and_repair
from memory.store.backends.sqlite_rows import (
    BUSY_TIMEOUT_MS,
    INSERT_HISTORY,
    ITEM_COLUMNS,
    MIGRATIONS,
    SCHEMA_VERSION,
    UPSERT_ITEM,
    SqliteTransaction,
    decode_entry,
    item_params,
    raw_row,
    read_core_context_row,
    turn_recorded,
    well_formed_item,
    write_core_context_row,
)
from memory.store.core_context import StoredChanges, merge, resolve_changes
from memory.store.document import MemoryDocument, MemoryTransaction
from memory.store.item import MemoryItem, now_iso
from memory.store.manager import BaseMemoryManager
from memory.store.repair import item_from_raw
from memory.store.sqlite_file import while_locked


class SqliteMemoryManager(BaseMemoryManager):
    """`sqlite:<file.db>`: one file holds many users; every write is a short point transaction.

    WAL mode lets readers run beside the one writer; `BEGIN IMMEDIATE` plus a busy timeout
    serialises writers across threads and processes. Each thread gets its own connection.
    """

    backend = "sqlite"

    def __init__(self, path: str | os.PathLike[str], user_id: str) -> None:
        super().__init__(user_id)
        self.path = Path(path)
        self.data_dir = self.path.parent
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._local = threading.local()
        self._pid = os.getpid()
        self._connections: list[sqlite3.Connection] = []
        self._connections_lock = threading.Lock()
        self._schema_ready = False

    # ── connections and schema ──────────────────────────────────────────

    def _conn(self) -> sqlite3.Connection:
        """This thread's connection, opened lazily so that a bad file fails in self_check."""
        if self._pid != os.getpid():  # a forked child must not use its parent's connections
            self._pid, self._local, self._connections = os.getpid(), threading.local(), []
        conn: sqlite3.Connection | None = getattr(self._local, "conn", None)
        if conn is not None:
            return conn
        try:
            # isolation_level=None: we issue BEGIN/COMMIT ourselves.
            conn = opened = sqlite3.connect(
                self.path,
                timeout=BUSY_TIMEOUT_MS / 1000,
                isolation_level=None,
                check_same_thread=False,
            )
            # Processes opening a new file at once: one is told "locked" at once (while_locked).
            while_locked(lambda: opened.execute("PRAGMA journal_mode=WAL"))
            conn.execute(f"PRAGMA busy_timeout={BUSY_TIMEOUT_MS}")
            conn.execute("PRAGMA synchronous=FULL")  # a returned write survives power loss too
            if not self._schema_ready:
                self._migrate(conn)
                self._schema_ready = True
        except BaseException as exc:
            if conn is not None:
                conn.close()
            if isinstance(exc, sqlite3.OperationalError):  # locked, read-only, no such folder
                raise OSError(f"{self.path}: {exc}") from exc
            if isinstance(exc, sqlite3.DatabaseError):  # "file is not a database", "malformed"
                raise CorruptStoreError(
                    f"{self.path} is not a usable SQLite database: {exc}"
                ) from exc
            raise
        with self._connections_lock:
            self._connections.append(conn)
        self._local.conn = conn
        return conn

    def _migrate(self, conn: sqlite3.Connection) -> None:
        """Bring the schema to SCHEMA_VERSION; a newer file than this code is refused."""
        if conn.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION:
            return
        conn.execute("BEGIN IMMEDIATE")  # another process may be migrating too: re-read inside
        try:
            version = conn.execute("PRAGMA user_version").fetchone()[0]
            if version > SCHEMA_VERSION:
                raise CorruptStoreError(
                    f"{self.path} has schema version {version}; this code knows {SCHEMA_VERSION}"
                )
            for target in range(version + 1, SCHEMA_VERSION + 1):
                for statement in MIGRATIONS[target]:
                    conn.execute(statement)
            conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            raise

    def close(self) -> None:
        """Close every connection this manager opened (any thread)."""
        with self._connections_lock:
            for conn in self._connections:
                conn.close()
            self._connections.clear()
        self._local = threading.local()

    # ── primitives ──────────────────────────────────────────────────────

    @contextmanager
    def _write_lock(self) -> Iterator[None]:
        conn = self._conn()
        conn.execute("BEGIN IMMEDIATE")
        try:
            yield
        except BaseException as exc:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            if type(exc) is sqlite3.DatabaseError:  # "malformed" and the like, not "locked"
                raise CorruptStoreError(f"{self.path}: {exc}; run self_check") from exc
            raise
        try:
            conn.execute("COMMIT")
        except BaseException:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            raise

    @contextmanager
    def transaction(self) -> Iterator[MemoryTransaction]:
        self._check_writable()
        with self._write_lock():
            conn = self._conn()
            rev = self._revision(conn) + 1  # read under BEGIN IMMEDIATE: no other writer
            transaction = SqliteTransaction(conn, self.user_id, rev)
            yield transaction
            if transaction.dirty:
                reset = rev if transaction.removed else 0
                conn.execute(
                    "INSERT INTO memory_meta (user_id, revision, reset_rev) VALUES (?, ?, ?) ON"
                    " CONFLICT (user_id) DO UPDATE SET revision = excluded.revision,"
                    " reset_rev = max(reset_rev, excluded.reset_rev)",
                    (self.user_id, rev, reset),
                )
        if transaction.dirty:  # committed: tell the listeners
            self._notify_changed()

    def _read_core_context(self) -> dict[str, str]:
        return read_core_context_row(self._conn(), self.user_id)

    def _update_core_context(self, changes: StoredChanges) -> dict[str, str]:
        with self._write_lock():  # BEGIN IMMEDIATE: the read below and the write are one
            conn = self._conn()
            current = read_core_context_row(conn, self.user_id)
            wanted = resolve_changes(current, changes)
            if not wanted:
                return current
            context = merge(current, wanted)
            write_core_context_row(conn, self.user_id, context)
        return context

    def _load_all(self) -> MemoryDocument:
        conn = self._conn()
        own_transaction = not conn.in_transaction
        if own_transaction:  # one snapshot for items, history, turns and revision
            conn.execute("BEGIN")
        try:
            items = {i: item for i, item, _ in self._scan_items(conn, "")}
            turns = [
                t
                for (t,) in conn.execute(
                    "SELECT turn_id FROM memory_turns WHERE user_id = ? ORDER BY pos",
                    (self.user_id,),
                )
            ]
            core_context = read_core_context_row(conn, self.user_id)
            return MemoryDocument(items, turns, self._revision(conn), core_context)
        finally:
            if own_transaction:
                conn.execute("COMMIT")

    def _save_all(self, document: MemoryDocument) -> None:
        conn = self._conn()
        if not conn.in_transaction:
            with self._write_lock():
                return self._save_all(document)
        for table in ("memory_items", "memory_history", "memory_turns"):
            conn.execute(f"DELETE FROM {table} WHERE user_id = ?", (self.user_id,))
        rev = document.revision
        conn.executemany(
            UPSERT_ITEM, [item_params(self.user_id, i, it, rev) for i, it in document.items.items()]
        )
        conn.executemany(
            INSERT_HISTORY,
            [
                (self.user_id, i, seq, json.dumps(entry, ensure_ascii=False))
                for i, it in document.items.items()
                for seq, entry in enumerate(it.history)
            ],
        )
        write_core_context_row(conn, self.user_id, document.core_context)
        applied = now_iso()
        conn.executemany(
            "INSERT OR IGNORE INTO memory_turns (user_id, turn_id, applied_at) VALUES (?, ?, ?)",
            [(self.user_id, t, applied) for t in document.applied_turns],
        )
        conn.execute(  # everything was rewritten: every change feed starts over
            "INSERT INTO memory_meta (user_id, revision, reset_rev) VALUES (?, ?, ?) ON CONFLICT"
            " (user_id) DO UPDATE SET revision = excluded.revision, reset_rev = excluded.reset_rev",
            (self.user_id, rev, rev),
        )
        return None

    def _scan_items(
        self,
        conn: sqlite3.Connection,
        where: str,
        with_history: bool = True,
        params: tuple[Any, ...] = (),
    ) -> Iterator[tuple[str, MemoryItem, list[str]]]:
        """(id, item, repairs) for this user's rows matching `where`, in insertion order."""
        histories: dict[str, list[Any]] = {}
        if with_history:
            for item_id, entry in conn.execute(
                "SELECT item_id, entry FROM memory_history WHERE user_id = ? ORDER BY item_id, seq",
                (self.user_id,),
            ):
                histories.setdefault(item_id, []).append(decode_entry(entry))
        rows = conn.execute(
            f"SELECT {ITEM_COLUMNS} FROM memory_items WHERE user_id = ? {where} ORDER BY pos",
            (self.user_id, *params),
        ).fetchall()
        for row in rows:
            fast = None if with_history else well_formed_item(row)
            if fast is not None:
                yield row[0], fast, []
                continue
            repairs: list[str] = []
            item = item_from_raw(str(row[0]), raw_row(row, histories.get(row[0], [])), repairs)
            yield str(row[0]), item, repairs

    def _revision(self, conn: sqlite3.Connection) -> int:
        row = conn.execute(
            "SELECT revision FROM memory_meta WHERE user_id = ?", (self.user_id,)
        ).fetchone()
        return row[0] if row and isinstance(row[0], int) else 0

    # ── cheap reads ─────────────────────────────────────────────────────

    def _stored_revision(self) -> int:
        return self._revision(self._conn())

    def show(self) -> list[dict[str, Any]]:
        return [
            {"id": i, "description": item.description, "theme": item.theme}
            for i, item, _ in self._scan_items(self._conn(), "AND deleted = 0", with_history=False)
        ]

    def _read_item(self, memory_id: str) -> MemoryItem | None:
        return SqliteTransaction(self._conn(), self.user_id).get(memory_id)

    def changes_since(self, token: str) -> tuple[str, dict[str, MemoryItem]] | None:
        """The rows written after revision `token` (without their history), from one indexed
        query; None when rows were removed or rewritten since (read everything then)."""
        if not token.isdigit():
            return None
        conn = self._conn()
        own_transaction = not conn.in_transaction
        if own_transaction:  # the revision and the rows from one snapshot
            conn.execute("BEGIN")
        try:
            row = conn.execute(
                "SELECT revision, reset_rev FROM memory_meta WHERE user_id = ?", (self.user_id,)
            ).fetchone()
            revision, reset = (row[0], row[1]) if row else (0, 0)
            if not isinstance(revision, int) or reset > int(token):
                return None
            changed = self._scan_items(conn, "AND rev > ?", False, (int(token),))
            return str(revision), {memory_id: item for memory_id, item, _ in changed}
        finally:
            if own_transaction:
                conn.execute("COMMIT")

    def branch_items(self) -> dict[str, MemoryItem]:
        rows = self._scan_items(self._conn(), "AND scope = 'branch'", with_history=False)
        return {memory_id: item for memory_id, item, _ in rows}

    def has_applied(self, turn_id: str) -> bool:
        return turn_recorded(self._conn(), self.user_id, turn_id)

    def live_count(self) -> int:
        row = (
            self._conn()
            .execute(
                "SELECT count(*) FROM memory_items WHERE user_id = ? AND deleted = 0",
                (self.user_id,),
            )
            .fetchone()
        )
        return int(row[0])

    # ── self-check ──────────────────────────────────────────────────────

    def _check_and_repair(self) -> tuple[list[str], list[str]]:
        return check_and_repair(self)
