"""The rows of one user (or of one memory) in the databases several users share (SQLite files, or
the deployment's PostgreSQL): the write journal, the write trace with its admissions and usage
ledger, the recall log, topic summaries, consolidation's state."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from memory.store.state_db import SqliteState, StateDatabase


@dataclass(frozen=True)
class SharedTable:
    """A table with a `user_id` column: where it is reported, and the key that names a row."""

    place: str
    table: str
    keys: tuple[str, ...]
    about_memories: bool = True  # False: nothing in it says what a memory held (erase_user only)


JOURNAL_TABLES = (SharedTable("journal: turns", "turns", ("seq",)),)
TRACE_TABLES = (
    SharedTable("trace: changes", "write_trace", ("user_id", "turn_id", "step")),
    SharedTable("trace: admissions", "admissions", ("user_id", "turn_id")),
    SharedTable("usage ledger", "model_usage", ("user_id", "run_id", "purpose"), False),
)
RECALL_TABLES = (
    SharedTable("recall log", "recalls", ("user_id", "memory_id")),
    SharedTable(
        "recall log: query hashes", "recall_queries", ("user_id", "memory_id", "query_hash")
    ),
    SharedTable("recall log: flushes", "recall_flushes", ("user_id",), False),
)
# memory.topics keeps its summaries there; erased even when that feature is gone.
SUMMARY_TABLES = (SharedTable("topic summaries", "topic_summaries", ("user_id", "topic")),)
# memory.upkeep.consolidation.state's row per user, in a state database (files hold it elsewhere).
CONSOLIDATION_TABLES = (SharedTable("consolidation state", "consolidation", ("user_id",)),)
# memory.store.snapshot_rows' restore points; one erased memory is redacted out of them instead.
SNAPSHOT_TABLES = (SharedTable("stored snapshots", "snapshots", ("user_id", "name"), False),)
# memory.store.reminders' book: a reminder goes with the memory it is about (`Reminder.about`).
REMINDER_TABLES = (SharedTable("reminders", "reminders", ("user_id", "id")),)
STATE_TABLES = (
    TRACE_TABLES
    + RECALL_TABLES
    + SUMMARY_TABLES
    + CONSOLIDATION_TABLES
    + SNAPSHOT_TABLES
    + REMINDER_TABLES
)


def shared_database(target: Path | StateDatabase) -> StateDatabase:
    """`target`, or the SQLite file at that path (opened only when it exists)."""
    return target if isinstance(target, StateDatabase) else SqliteState(target, "")


def user_rows(
    target: Path | StateDatabase, tables: tuple[SharedTable, ...], user_id: str
) -> Iterator[dict[str, Any]]:
    """Every row of `user_id` in `tables` of the database (a SQLite file, read only)."""
    db = shared_database(target)
    if not db.exists():
        return
    try:
        present = db.tables()
        for spec in tables:
            if spec.table in present:
                with db.transaction() as tx:
                    cursor = tx.execute(
                        f"SELECT * FROM {{p}}{spec.table} WHERE user_id = ?", (user_id,)
                    )
                    columns = [column[0] for column in cursor.description]
                    rows = [dict(zip(columns, values, strict=True)) for values in cursor.fetchall()]
                yield from rows
    finally:
        if not isinstance(target, StateDatabase):
            db.close()


def erase_rows(
    target: Path | StateDatabase,
    tables: tuple[SharedTable, ...],
    user_id: str,
    match: Callable[[dict[str, Any]], bool] | None,
) -> dict[str, int]:
    """Delete the rows of `user_id` in `tables` of the database (a SQLite file at a path)
    (those `match` accepts; every one without it) in one transaction; counts by place. A
    missing file or table has none."""
    db = shared_database(target)
    if not db.exists():
        return {}
    removed: dict[str, int] = {}
    try:
        present = db.tables()
        with db.transaction() as tx:
            for spec in tables:
                if spec.table not in present or (match is not None and not spec.about_memories):
                    continue
                cursor = tx.execute(
                    f"SELECT * FROM {{p}}{spec.table} WHERE user_id = ?", (user_id,)
                )
                columns = [column[0] for column in cursor.description]
                doomed = [
                    tuple(row[k] for k in spec.keys)
                    for row in (
                        dict(zip(columns, values, strict=True)) for values in cursor.fetchall()
                    )
                    if match is None or match(row)
                ]
                where = " AND ".join(f"{key} = ?" for key in spec.keys)
                tx.executemany(f"DELETE FROM {{p}}{spec.table} WHERE {where}", doomed)
                if doomed:
                    removed[spec.place] = len(doomed)
    finally:
        if not isinstance(target, StateDatabase):
            db.close()
    return removed
