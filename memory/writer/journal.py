"""TurnJournal: a SQLite (WAL) journal of queued turns, so a queued turn survives a crash."""

from __future__ import annotations

import json
import os
import sqlite3
import threading
from contextlib import AbstractContextManager
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Literal

from memory.branch import Lineage, Provenance, check_scope_policy
from memory.item import now_iso
from memory.writer.sqlite_file import open_wal, write_transaction

TurnState = Literal["pending", "done", "dead"]

_SCHEMA = """
CREATE TABLE IF NOT EXISTS turns (
    seq        INTEGER PRIMARY KEY AUTOINCREMENT,   -- arrival order, the replay order
    user_id    TEXT NOT NULL,
    turn_id    TEXT NOT NULL,
    session_id TEXT,
    messages   TEXT NOT NULL,                       -- JSON [{role, content}]
    state      TEXT NOT NULL DEFAULT 'pending' CHECK (state IN ('pending', 'done', 'dead')),
    attempts   INTEGER NOT NULL DEFAULT 0,
    last_error TEXT,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    UNIQUE (user_id, turn_id)
);
CREATE INDEX IF NOT EXISTS turns_by_state ON turns (user_id, state, seq);
"""
# Added with branch scope: JSON {provenance, lineage, scope_policy}; NULL for older rows.
_BRANCH_COLUMN = "ALTER TABLE turns ADD COLUMN branch TEXT"


@dataclass(frozen=True)
class QueuedTurn:
    """One turn as journaled: enough to run the memory agent on it again after a crash."""

    user_id: str
    turn_id: str
    session_id: str | None
    messages: list[dict[str, str]]
    seq: int = 0
    state: TurnState = "pending"
    attempts: int = 0
    last_error: str | None = None
    created_at: str = ""
    updated_at: str = ""
    provenance: Provenance | None = None
    lineage: Lineage | None = None
    scope_policy: str = "auto"

    def branch_json(self) -> str | None:
        """The branch fields as the journal stores them (None when there are none)."""
        if self.provenance is None and self.lineage is None and self.scope_policy == "auto":
            return None
        return json.dumps(
            {
                "provenance": self.provenance.as_dict() if self.provenance else None,
                "lineage": self.lineage.as_dict() if self.lineage else None,
                "scope_policy": self.scope_policy,
            },
            ensure_ascii=False,
        )

    def with_branch_json(self, text: str | None) -> QueuedTurn:
        if not text:
            return self
        data = json.loads(text)
        provenance = data.get("provenance")
        return replace(
            self,
            provenance=Provenance.from_dict(provenance) if provenance is not None else None,
            lineage=Lineage.from_dict(data.get("lineage")),
            scope_policy=check_scope_policy(data.get("scope_policy") or "auto"),
        )


class TurnJournal:
    """Turns move pending → done, or pending → dead after too many failures; none is deleted.

    `append` commits before it returns. With `durability="normal"` (default; SQLite WAL with
    synchronous=NORMAL) an accepted turn survives a crash of the process (SIGKILL, OOM, Ctrl-C),
    and a power cut can lose at most the last few turns, never corrupt the journal. `"full"` also
    fsyncs every commit, so a power cut loses nothing, at a cost of a few milliseconds per turn on
    a busy disk (see bench/write_path.py); the reply waits for that.
    """

    def __init__(
        self, path: str | os.PathLike[str], durability: Literal["full", "normal"] = "normal"
    ) -> None:
        if durability not in ("full", "normal"):
            raise ValueError(f"durability must be 'full' or 'normal', not {durability!r}")
        self.durability = durability
        self.path = Path(path)
        self._lock = threading.Lock()
        self._db = open_wal(self.path, _SCHEMA, synchronous=durability.upper())
        self._migrate()

    def _migrate(self) -> None:
        """Journals written before branch scope lack the `branch` column: add it."""
        columns = {row[1] for row in self._db.execute("PRAGMA table_info(turns)")}
        if "branch" not in columns:
            try:
                self._db.execute(_BRANCH_COLUMN)
            except sqlite3.OperationalError as exc:  # another process added it meanwhile
                if "duplicate column" not in str(exc):
                    raise

    def _write(self) -> AbstractContextManager[sqlite3.Connection]:
        return write_transaction(self._lock, self._db)

    def append(self, turn: QueuedTurn) -> QueuedTurn:
        """Journal a turn durably and return it with its sequence number.

        Sending the same turn id again is idempotent and returns the journaled turn; the same id
        with different messages is a ValueError, never a silent drop.
        """
        now = now_iso()
        messages = json.dumps(turn.messages, ensure_ascii=False)
        branch = turn.branch_json()
        with self._write() as db:
            row = db.execute(
                "INSERT INTO turns (user_id, turn_id, session_id, messages, created_at, "
                "updated_at, branch) VALUES (?, ?, ?, ?, ?, ?, ?) "
                "ON CONFLICT (user_id, turn_id) DO NOTHING RETURNING seq",
                (turn.user_id, turn.turn_id, turn.session_id, messages, now, now, branch),
            ).fetchone()
        if row is not None:  # the common case: one statement, one commit
            return replace(turn, seq=row[0], created_at=now, updated_at=now)
        existing = self.get(turn.user_id, turn.turn_id)
        assert existing is not None
        if existing.messages != turn.messages:
            raise ValueError(
                f"turn_id {turn.turn_id!r} was already queued with other messages; "
                "use a new turn_id for a new turn"
            )
        return existing

    def get(self, user_id: str, turn_id: str) -> QueuedTurn | None:
        rows = self._select("WHERE user_id = ? AND turn_id = ?", (user_id, turn_id))
        return rows[0] if rows else None

    def pending(self, user_id: str) -> list[QueuedTurn]:
        """Unfinished turns in arrival order: what `start()` replays."""
        return self._select("WHERE user_id = ? AND state = 'pending' ORDER BY seq", (user_id,))

    def dead_letters(self, user_id: str) -> list[QueuedTurn]:
        """Turns that failed too often, with their last error, oldest first."""
        return self._select("WHERE user_id = ? AND state = 'dead' ORDER BY seq", (user_id,))

    def counts(self, user_id: str) -> dict[str, int]:
        """How many turns are pending, done and dead."""
        with self._lock:
            rows = self._db.execute(
                "SELECT state, COUNT(*) FROM turns WHERE user_id = ? GROUP BY state", (user_id,)
            ).fetchall()
        counts = {"pending": 0, "done": 0, "dead": 0}
        counts.update({state: count for state, count in rows})
        return counts

    def mark_done(self, user_id: str, turn_id: str) -> None:
        self._set(user_id, turn_id, "state = 'done'", ())

    def record_failure(self, user_id: str, turn_id: str, error: str) -> int:
        """Count one failed attempt, keep its error, and return the number of attempts so far."""
        self._set(user_id, turn_id, "attempts = attempts + 1, last_error = ?", (error,))
        turn = self.get(user_id, turn_id)
        return turn.attempts if turn else 0

    def mark_dead(self, user_id: str, turn_id: str) -> None:
        self._set(user_id, turn_id, "state = 'dead'", ())

    def requeue(self, user_id: str, turn_id: str) -> None:
        """Give a dead letter another chance (after fixing its cause); `start()` will replay it."""
        self._set(user_id, turn_id, "state = 'pending', attempts = 0", ())

    def _set(
        self, user_id: str, turn_id: str, assignments: str, params: tuple[object, ...]
    ) -> None:
        with self._write() as db:
            cursor = db.execute(
                f"UPDATE turns SET {assignments}, updated_at = ? WHERE user_id = ? AND turn_id = ?",
                (*params, now_iso(), user_id, turn_id),
            )
            if cursor.rowcount == 0:
                raise KeyError(f"turn {turn_id!r} of user {user_id!r} is not in the journal")

    def _select(self, where: str, params: tuple[object, ...]) -> list[QueuedTurn]:
        query = (
            "SELECT user_id, turn_id, session_id, messages, seq, state, attempts, last_error, "
            f"created_at, updated_at, branch FROM turns {where}"
        )
        with self._lock:
            rows = self._db.execute(query, params).fetchall()
        return [
            QueuedTurn(
                r[0], r[1], r[2], json.loads(r[3]), r[4], r[5], r[6], r[7], r[8], r[9]
            ).with_branch_json(r[10])
            for r in rows
        ]

    def close(self) -> None:
        with self._lock:
            self._db.close()
