"""The user's threads: which ones memory knows of, and deleting them through a checkpointer."""

from __future__ import annotations

import contextlib
import json
import sqlite3
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from memory.erasure.archive import ErasableArchive
from memory.erasure.rows import SharedTable, user_rows
from memory.store.erasure_report import ErasureReport
from memory.store.sqlite_file import scrub
from memory.store.state_db import StateDatabase


def known_threads(
    user_id: str,
    archive: ErasableArchive | None,
    files: Sequence[tuple[Path | StateDatabase, tuple[SharedTable, ...]]],
) -> set[str]:
    """The user's threads as far as memory knows them: the archive's, the journal's and the
    trace's."""
    found: set[str] = set()
    if archive is not None:
        found |= archive.thread_ids()
    for path, tables in files:
        for row in user_rows(path, tables, user_id):
            if "turn" in row:
                found.add(str(json.loads(row["turn"]).get("thread_id") or ""))
            found |= {str(row.get(key) or "") for key in ("thread_id", "session_id")}
    return {thread for thread in found if thread}


def delete_threads(checkpointer: Any, thread_ids: list[str], report: ErasureReport) -> None:
    """Delete the threads through the checkpointer's own API; a SQLite saver's file is then
    vacuumed too (its deleted checkpoints would stay in free pages)."""
    for thread_id in thread_ids:
        try:
            checkpointer.delete_thread(thread_id)
        except Exception as exc:
            report.notes.append(f"thread {thread_id} could not be deleted: {exc}")
            continue
        report.threads_deleted.append(thread_id)
    report.count("checkpointer: threads", len(report.threads_deleted))
    conn = getattr(checkpointer, "conn", None)
    if isinstance(conn, sqlite3.Connection):
        with getattr(checkpointer, "lock", None) or contextlib.nullcontext():
            conn.commit()
            if not scrub(conn):
                report.notes.append("the checkpointer's WAL is held by a reader")
