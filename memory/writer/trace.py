"""The records beside the journal, in one SQLite file or the deployment's PostgreSQL: WriteTrace
(the memory agent's writes, one row per change, and the admission decisions) and UsageLedger
(the model calls of each run).

Long because both records share one database, its schema and its migrations.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from memory.admission import Admission
from memory.store.item import now_iso
from memory.store.state_db import SqliteState, StateDatabase, Transaction, upsert
from memory.usage.counts import ByPurpose, Usage
from memory.writer.staging import StagedChange, ToolEvent
from memory.writer.turn import Turn

SCHEMA = """
CREATE TABLE IF NOT EXISTS {p}write_trace (
    user_id    TEXT NOT NULL,
    turn_id    TEXT NOT NULL,
    step       INTEGER NOT NULL,          -- index of the change within its turn
    session_id TEXT,
    tool       TEXT NOT NULL,
    op         TEXT NOT NULL,
    arguments  TEXT NOT NULL,             -- JSON
    result     TEXT NOT NULL,
    time       TEXT NOT NULL,
    state      TEXT NOT NULL CHECK (state IN ('staged', 'applied', 'failed')),
    PRIMARY KEY (user_id, turn_id, step)
);
CREATE INDEX IF NOT EXISTS {p}write_trace_by_user ON {p}write_trace (user_id, time);
CREATE TABLE IF NOT EXISTS {p}admissions (
    user_id    TEXT NOT NULL,
    turn_id    TEXT NOT NULL,
    thread_id  TEXT,
    decision   TEXT NOT NULL,             -- write | batch | skip
    score      REAL NOT NULL,
    reasons    TEXT NOT NULL,             -- JSON list of rule names
    said       TEXT NOT NULL,             -- the start of the user's message
    time       TEXT NOT NULL,
    PRIMARY KEY (user_id, turn_id)
);
CREATE INDEX IF NOT EXISTS {p}admissions_by_user ON {p}admissions (user_id, time);
"""
SAID_CHARS = 200  # enough of the message to recognise it in the editor
TRACE_COLUMNS = ("user_id", "turn_id", "step", "session_id", "tool", "op", "arguments", "result",
                 "time", "state")  # fmt: skip
_TRACE_ROW = upsert("write_trace", TRACE_COLUMNS, ("user_id", "turn_id", "step"))
_ADMISSION_ROW = upsert(
    "admissions",
    ("user_id", "turn_id", "thread_id", "decision", "score", "reasons", "said", "time"),
    ("user_id", "turn_id"),
)
# Traces written before failed attempts were recorded allow only staged and applied rows (SQLite
# files only: the PostgreSQL tables were made with the check as it is).
_WITH_FAILED = (
    "DROP INDEX IF EXISTS write_trace_by_user; ALTER TABLE write_trace RENAME TO write_trace_old;"
    + SCHEMA
    + "INSERT INTO write_trace SELECT * FROM write_trace_old; DROP TABLE write_trace_old;"
)
UNMATCHED_FORGET = "nothing was forgotten: no memory matched what the user asked to forget"
FAILED_STEP = -1  # the row of a failed attempt (one per turn: the latest failure)


@dataclass(frozen=True)
class AdmissionEntry:
    """What the admission scorer decided for one turn, and why (`memory.admission`)."""

    user_id: str
    turn_id: str
    thread_id: str | None
    admission: Admission
    said: str
    time: str


@dataclass(frozen=True)
class TraceEntry:
    """One change the memory agent made: who, which turn, which tool with what, and when."""

    user_id: str
    turn_id: str
    step: int
    session_id: str | None
    tool: str
    op: str
    arguments: dict[str, Any]
    result: str
    time: str
    state: str


class WriteTrace:
    """Rows are written as `staged` before the store commit and marked `applied` after it.

    A crash between the two leaves `staged` rows; the replay of that turn either finds the turn
    applied and marks them (`mark_applied`) or reruns the agent and replaces them (`stage`), so a
    replayed turn never duplicates rows. An attempt that failed leaves one `failed` row with the
    error (the latest failure of that turn).
    """

    def __init__(self, target: str | os.PathLike[str] | StateDatabase) -> None:
        # NORMAL: a record of what happened, not the turns themselves (the journal keeps those
        # durably); a commit then costs no fsync, which matters on the reply path.
        self.db = target if isinstance(target, StateDatabase) else SqliteState(
            Path(target), SCHEMA, synchronous="NORMAL"
        )  # fmt: skip
        if isinstance(self.db, SqliteState):
            table = self.db.query("SELECT sql FROM sqlite_master WHERE name = 'write_trace'")
            if table and "'failed'" not in table[0][0]:
                self.db.script(f"BEGIN IMMEDIATE;{_WITH_FAILED}COMMIT;")

    def _write(self) -> AbstractContextManager[Transaction]:
        return self.db.transaction()

    def stage(self, turn: Turn, changes: Sequence[StagedChange]) -> None:
        """Record a turn's changes as staged, replacing staged rows of an earlier attempt."""
        user_id, turn_id, session_id = turn.user_id, turn.turn_id, turn.thread_id or None
        with self._write() as db:
            db.execute(
                "DELETE FROM {p}write_trace WHERE user_id = ? AND turn_id = ? AND state = 'staged'",
                (user_id, turn_id),
            )
            db.executemany(
                "INSERT INTO {p}write_trace VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, 'staged') "
                "ON CONFLICT DO NOTHING",
                [
                    (
                        user_id,
                        turn_id,
                        step,
                        session_id,
                        s.event.tool,
                        s.change.op,
                        json.dumps(s.event.arguments, ensure_ascii=False, default=str),
                        s.event.result,
                        s.event.time,
                    )
                    for step, s in enumerate(changes)
                ],
            )

    def stage_rows(
        self, user_id: str, turn_id: str, rows: Sequence[tuple[str, str, dict[str, Any], str]]
    ) -> None:
        """Record changes made without the memory agent (tool, op, arguments, result), e.g. a
        consolidation step, as staged: `mark_applied` after the commit, as for a turn."""
        time = now_iso()
        with self._write() as db:
            db.execute(
                "DELETE FROM {p}write_trace WHERE user_id = ? AND turn_id = ? AND state = 'staged'",
                (user_id, turn_id),
            )
            db.executemany(
                "INSERT INTO {p}write_trace VALUES (?, ?, ?, NULL, ?, ?, ?, ?, ?, 'staged') "
                "ON CONFLICT DO NOTHING",
                [
                    (user_id, turn_id, step, tool, op,
                     json.dumps(arguments, ensure_ascii=False, default=str), result, time)
                    for step, (tool, op, arguments, result) in enumerate(rows)
                ],
            )  # fmt: skip

    def record_refused(self, turn: Turn, events: Sequence[ToolEvent], first_step: int) -> None:
        """Record tool calls the writer could not carry out (a create refused because the
        store is full) after the turn's applied changes, as op "refused", so that what the
        user said and memory did not take stays visible in the trace."""
        with self._write() as db:
            db.executemany(
                _TRACE_ROW,
                [
                    (turn.user_id, turn.turn_id, first_step + n, turn.thread_id or None,
                     e.tool, "refused", json.dumps(e.arguments, ensure_ascii=False, default=str),
                     e.result, e.time, "applied")
                    for n, e in enumerate(events)
                ],
            )  # fmt: skip

    def record_unmatched_forget(self, turn: Turn, step: int) -> None:
        """Record that the user asked to forget something and no memory was deleted (op
        "unmatched"), so the trace never reads as if the forget had been done."""
        with self._write() as db:
            db.execute(
                _TRACE_ROW,
                (turn.user_id, turn.turn_id, step, turn.thread_id or None, "forget", "unmatched",
                 json.dumps({"request": turn.user_text[:SAID_CHARS]}, ensure_ascii=False),
                 UNMATCHED_FORGET, now_iso(), "applied"),
            )  # fmt: skip

    def record_failure(self, turn: Turn, error: str) -> None:
        """Record that an attempt at `turn` failed, and why (replacing an earlier failure)."""
        with self._write() as db:
            db.execute(
                _TRACE_ROW,
                (turn.user_id, turn.turn_id, FAILED_STEP, turn.thread_id or None, "memory_writer",
                 "failed", "{}", error, now_iso(), "failed"),
            )  # fmt: skip

    def record_admission(self, turn: Turn) -> None:
        """Record the admission decision a turn carries (a turn sent again replaces its row)."""
        if turn.admission is None:
            return
        admission = turn.admission
        with self._write() as db:
            db.execute(
                _ADMISSION_ROW,
                (turn.user_id, turn.turn_id, turn.thread_id or None, admission.decision,
                 admission.score, json.dumps(list(admission.reasons)),
                 turn.user_text[:SAID_CHARS], now_iso()),
            )  # fmt: skip

    def admissions(self, user_id: str, limit: int = 200) -> list[AdmissionEntry]:
        """The user's latest admission decisions, newest first."""
        rows = self.db.query(
            "SELECT user_id, turn_id, thread_id, decision, score, reasons, said, time "
            "FROM {p}admissions WHERE user_id = ? ORDER BY time DESC LIMIT ?",
            (user_id, limit),
        )
        return [
            AdmissionEntry(r[0], r[1], r[2], Admission(r[4], r[3], tuple(json.loads(r[5]))),
                           r[6], r[7])
            for r in rows
        ]  # fmt: skip

    def mark_applied(self, user_id: str, turn_id: str) -> int:
        """The store committed the turn: its staged rows become applied. Returns how many."""
        with self._write() as db:
            cursor = db.execute(
                "UPDATE {p}write_trace SET state = 'applied' "
                "WHERE user_id = ? AND turn_id = ? AND state = 'staged'",
                (user_id, turn_id),
            )
            return cursor.rowcount

    def discard_staged(self, user_id: str, turn_id: str) -> None:
        """The commit did not happen (or changed nothing): drop the turn's staged rows."""
        with self._write() as db:
            db.execute(
                "DELETE FROM {p}write_trace WHERE user_id = ? AND turn_id = ? AND state = 'staged'",
                (user_id, turn_id),
            )

    def signature(self, user_id: str) -> tuple[Any, ...]:
        """What moves whenever a row of the user is written (the editor's live view polls it):
        the count and latest time of their changes and admission decisions."""
        rows = self.db.query(
            "SELECT (SELECT count(*) FROM {p}write_trace WHERE user_id = ?), "
            "(SELECT max(time) FROM {p}write_trace WHERE user_id = ?), "
            "(SELECT count(*) FROM {p}admissions WHERE user_id = ?), "
            "(SELECT max(time) FROM {p}admissions WHERE user_id = ?)",
            (user_id, user_id, user_id, user_id),
        )
        return tuple(rows[0])

    def for_user(
        self, user_id: str, limit: int = 200, include_staged: bool = False
    ) -> list[TraceEntry]:
        """The user's most recent changes, newest first."""
        state = "" if include_staged else "AND state = 'applied'"
        return self._select(
            f"WHERE user_id = ? {state} ORDER BY time DESC, step DESC LIMIT ?", (user_id, limit)
        )

    def for_turn(
        self, user_id: str, turn_id: str, include_staged: bool = False
    ) -> list[TraceEntry]:
        """One turn's changes in the order they were made."""
        state = "" if include_staged else "AND state = 'applied'"
        return self._select(
            f"WHERE user_id = ? AND turn_id = ? {state} ORDER BY step", (user_id, turn_id)
        )

    def _select(self, where: str, params: tuple[Any, ...]) -> list[TraceEntry]:
        query = (
            "SELECT user_id, turn_id, step, session_id, tool, op, arguments, result, time, state "
            f"FROM {{p}}write_trace {where}"
        )
        rows = self.db.query(query, params)
        return [
            TraceEntry(r[0], r[1], r[2], r[3], r[4], r[5], json.loads(r[6]), r[7], r[8], r[9])
            for r in rows
        ]

    def close(self) -> None:
        self.db.close()


USAGE_SCHEMA = """
CREATE TABLE IF NOT EXISTS {p}model_usage (
    user_id       TEXT NOT NULL,
    run_id        TEXT NOT NULL,             -- a chat turn's id, or "writer:" + a turn id
    purpose       TEXT NOT NULL,
    thread_id     TEXT,
    calls         INTEGER NOT NULL,
    input_tokens  INTEGER NOT NULL,
    output_tokens INTEGER NOT NULL,
    time          TEXT NOT NULL,
    PRIMARY KEY (user_id, run_id, purpose)
);
"""
_USAGE_ROW = upsert(
    "model_usage",
    ("user_id", "run_id", "purpose", "thread_id", "calls", "input_tokens", "output_tokens", "time"),
    ("user_id", "run_id", "purpose"),
)


class UsageLedger:
    """Every run's usage, one row per (run, purpose), in a small SQLite file (the write trace's,
    beside the journal) or the deployment's PostgreSQL. A run recorded again replaces its rows."""

    def __init__(self, target: str | os.PathLike[str] | StateDatabase) -> None:
        # NORMAL: an account of calls already made, not data that must survive a power cut.
        self.db = target if isinstance(target, StateDatabase) else SqliteState(
            Path(target), USAGE_SCHEMA, synchronous="NORMAL"
        )  # fmt: skip

    def record(
        self, user_id: str, run_id: str, usage: Mapping[str, Usage], thread_id: str = ""
    ) -> None:
        rows = [
            (user_id, run_id, purpose, thread_id or None, u.calls, u.input_tokens,
             u.output_tokens, now_iso())
            for purpose, u in usage.items()
            if u.calls
        ]  # fmt: skip
        if not rows:
            return
        with self.db.transaction() as db:
            db.executemany(_USAGE_ROW, rows)

    def totals(self, user_id: str) -> ByPurpose:
        """The user's usage so far, by purpose."""
        return self._sum("WHERE user_id = ?", (user_id,))

    def for_run(self, user_id: str, run_id: str) -> ByPurpose:
        return self._sum("WHERE user_id = ? AND run_id = ?", (user_id, run_id))

    def _sum(self, where: str, params: tuple[Any, ...]) -> ByPurpose:
        query = (
            "SELECT purpose, SUM(calls), SUM(input_tokens), SUM(output_tokens) FROM "
            f"{{p}}model_usage {where} GROUP BY purpose"
        )
        try:
            rows = self.db.query(query, params)
        except self.db.errors:
            return {}
        return {purpose: Usage(int(c), int(i), int(o)) for purpose, c, i, o in rows}

    def close(self) -> None:
        self.db.close()
