"""SQLite self-check: integrity check, hand-edited rows repaired after a backup, writability."""

from __future__ import annotations

import os
import shutil
import sqlite3
from collections.abc import Iterator
from contextlib import AbstractContextManager
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from memory.errors import CorruptStoreError
from memory.store.backends.sqlite_rows import SqliteTransaction

if TYPE_CHECKING:
    from memory.store.item import MemoryItem


class SqliteMemoryFile(Protocol):
    """What the check reads of `SqliteMemoryManager` (which imports this module, so the check
    names the parts it uses instead of the class)."""

    path: Path
    user_id: str
    _schema_ready: bool

    def _conn(self) -> sqlite3.Connection: ...
    def _write_lock(self) -> AbstractContextManager[None]: ...
    def close(self) -> None: ...
    def _scan_items(
        self,
        conn: sqlite3.Connection,
        where: str,
        with_history: bool = True,
        params: tuple[Any, ...] = (),
    ) -> Iterator[tuple[str, MemoryItem, list[str]]]: ...


def check_and_repair(manager: SqliteMemoryFile) -> tuple[list[str], list[str]]:
    """The SQLite part of self_check: integrity, orphans, repairs (with a backup first)."""
    if manager.path.exists() and not os.access(manager.path, os.R_OK | os.W_OK):
        raise OSError(f"{manager.path} is not readable and writable by this process")
    try:
        conn = manager._conn()
        verdict = [row[0] for row in conn.execute("PRAGMA quick_check")]
    except (CorruptStoreError, sqlite3.DatabaseError) as exc:
        if isinstance(exc, sqlite3.OperationalError):
            raise OSError(f"{manager.path}: {exc}") from exc
        raise refuse(manager, str(exc)) from exc
    if verdict != ["ok"]:
        raise refuse(manager, f"PRAGMA quick_check reported: {'; '.join(verdict[:5])}")
    issues: list[str] = []
    orphans = conn.execute(
        "SELECT count(*) FROM memory_history h WHERE user_id = ? AND NOT EXISTS (SELECT 1"
        " FROM memory_items i WHERE i.user_id = h.user_id AND i.id = h.item_id)",
        (manager.user_id,),
    ).fetchone()[0]
    if orphans:
        issues.append(f"{orphans} history rows belong to no memory; left in place")
    needs_repair = any([repairs for _, _, repairs in manager._scan_items(conn, "")])
    raw_revision = conn.execute(
        "SELECT revision FROM memory_meta WHERE user_id = ?", (manager.user_id,)
    ).fetchone()
    bad_revision = raw_revision is not None and not isinstance(raw_revision[0], int)
    if not needs_repair and not bad_revision:
        try:  # prove the database takes writes: make sure this user's meta row exists
            with manager._write_lock():
                conn.execute(
                    "INSERT OR IGNORE INTO memory_meta (user_id, revision) VALUES (?, 0)",
                    (manager.user_id,),
                )
        except sqlite3.OperationalError as exc:
            raise OSError(f"{manager.path} does not take writes: {exc}") from exc
        return issues, []
    backup = backup_copy(manager)
    repaired: list[str] = []
    with manager._write_lock():
        tx = SqliteTransaction(conn, manager.user_id)
        for memory_id, item, repairs in list(manager._scan_items(conn, "")):
            if repairs:
                repaired.extend(repairs)
                tx.put(memory_id, item)
        if bad_revision:
            repaired.append(f"revision was {raw_revision[0]!r}; reset")
            conn.execute(
                "UPDATE memory_meta SET revision = 0 WHERE user_id = ?", (manager.user_id,)
            )
        conn.execute(  # repaired rows carry no revision: change feeds start over
            "UPDATE memory_meta SET revision = revision + 1, reset_rev = revision + 1"
            " WHERE user_id = ?",
            (manager.user_id,),
        )
        conn.execute(
            "INSERT OR IGNORE INTO memory_meta (user_id, revision) VALUES (?, 1)",
            (manager.user_id,),
        )
    repaired.append(f"the database as it was before the repair is kept at {backup}")
    return issues, repaired


def refuse(manager: SqliteMemoryFile, reason: str) -> CorruptStoreError:
    """Close our handles, copy the file aside and explain; the file itself is not touched."""
    manager.close()
    manager._schema_ready = False
    copy = manager.path.with_name(f"{manager.path.name}.corrupt-{_stamp()}")
    if manager.path.exists():
        shutil.copy2(manager.path, copy)
    return CorruptStoreError(
        f"{reason}. {manager.path} is left untouched and a copy is at {copy}; fix or move it, "
        "then run self_check again"
    )


def backup_copy(manager: SqliteMemoryFile) -> Path:
    """A consistent copy of the whole database file beside it (SQLite's online backup)."""
    target = manager.path.with_name(f"{manager.path.name}.bak-{_stamp()}")
    with sqlite3.connect(target) as copy:
        manager._conn().backup(copy)
    copy.close()
    return target


def _stamp() -> str:
    return datetime.now().strftime("%Y%m%dT%H%M%S%f")
