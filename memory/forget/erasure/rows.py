"""The rows of one user (or of one memory) in the databases several users share (SQLite files, or
the deployment's PostgreSQL): the write journal, the write trace with its admissions and usage
ledger, the recall log, topic summaries, consolidation's state."""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from memory.store.state_db import SqliteState, StateDatabase

ERASED = "[erased]"
_SEPARATORS = re.compile(r"(?:\s*;\s*){2,}")
MIN_NEEDLE_CHARS = 6
MIN_CONTAINED_CHARS = 20  # a stored text this long that a needle contains is a cut copy of it


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
# memory.upkeep.topics keeps its summaries there; erased even when that feature is gone.
SUMMARIES_FILE = "topic-summaries.sqlite"
SUMMARY_TABLES = (SharedTable("topic summaries", "topic_summaries", ("user_id", "topic")),)
# memory.upkeep.consolidation.state's row per user, in a state database (files hold it elsewhere).
CONSOLIDATION_TABLES = (SharedTable("consolidation state", "consolidation", ("user_id",)),)
# memory.store.snapshot_rows' restore points; one erased memory is redacted out of them instead.
SNAPSHOT_TABLES = (SharedTable("stored snapshots", "snapshots", ("user_id", "name"), False),)
STATE_TABLES = (
    TRACE_TABLES + RECALL_TABLES + SUMMARY_TABLES + CONSOLIDATION_TABLES + SNAPSHOT_TABLES
)


@dataclass
class Needles:
    """What marks a stored row as carrying an erased memory: its ids and its texts (every
    version, and the archived messages that said it)."""

    ids: set[str] = field(default_factory=set)
    texts: set[str] = field(default_factory=set)

    def add_texts(self, texts: Iterable[str]) -> None:
        """Texts long enough to name the memory (a word alone would take unrelated rows)."""
        self.texts |= {text for text in texts if len(text.strip()) >= MIN_NEEDLE_CHARS}

    def in_text(self, value: str) -> bool:
        if value in self.ids:
            return True
        if any(text in value for text in self.texts):
            return True
        # The admission log keeps the start of a message; a trace row, a cut preview.
        return len(value) >= MIN_CONTAINED_CHARS and any(value in text for text in self.texts)

    def in_row(self, row: dict[str, Any]) -> bool:
        # Not by turn id: a batched turn wrote other memories too, whose rows stay.
        if row.get("memory_id") in self.ids:
            return True
        return any(self.in_text(value) for value in strings_in(row))

    def without(self, text: str) -> str:
        """`text` without the erased texts in it (the rest kept: `human` lists other facts)."""
        stripped = text
        for needle in sorted(self.texts, key=len, reverse=True):
            stripped = stripped.replace(needle, "")
        if stripped == text:
            return text
        return _SEPARATORS.sub("; ", stripped).strip(" ;")

    def redact(self, value: Any) -> tuple[Any, bool]:
        """`value` with every string carrying a needle replaced by ERASED; and whether any was."""
        if isinstance(value, str):
            return (ERASED, True) if self.in_text(value) else (value, False)
        if isinstance(value, dict):
            pairs = {key: self.redact(inner) for key, inner in value.items()}
            return {k: v for k, (v, _) in pairs.items()}, any(c for _, c in pairs.values())
        if isinstance(value, list):
            parts = [self.redact(inner) for inner in value]
            return [v for v, _ in parts], any(c for _, c in parts)
        return value, False


def strings_in(value: Any) -> Iterator[str]:
    """Every string in a row, JSON columns opened (a JSON text may escape what it holds)."""
    if isinstance(value, dict):
        for inner in value.values():
            yield from strings_in(inner)
    elif isinstance(value, list | tuple):
        for inner in value:
            yield from strings_in(inner)
    elif isinstance(value, str):
        yield value
        if value.startswith(("[", "{")):
            try:
                parsed = json.loads(value)
            except ValueError:
                return
            yield from strings_in(parsed)


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
