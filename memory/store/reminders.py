"""ReminderBook: what a user asked to be reminded of and when, kept beside their memories and tied
to them: forgetting a memory of the reminder cancels it, and an erase removes it."""

from __future__ import annotations

import uuid
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, datetime
from functools import cached_property
from typing import Any

from memory.store.forgotten import forgotten_at, forgotten_items
from memory.store.item import MemoryItem, now_iso
from memory.store.manager import BaseMemoryManager
from memory.store.state_db import StateDatabase
from memory.text.fingerprint import Fingerprint

REMINDERS_FILE = "reminders.sqlite"

SCHEMA = """
CREATE TABLE IF NOT EXISTS {p}reminders (
    user_id   TEXT NOT NULL,
    id        TEXT NOT NULL,
    thread_id TEXT NOT NULL,
    turn_id   TEXT NOT NULL,
    what      TEXT NOT NULL,
    due       TEXT NOT NULL,
    set_at    TEXT NOT NULL,
    PRIMARY KEY (user_id, id)
);
"""
_COLUMNS = ("id", "thread_id", "turn_id", "what", "due", "set_at")
REMINDER_COLUMNS = frozenset(_COLUMNS)  # what tells a reminders row from other shared rows


def turn_of(turn_id: str) -> str:
    """The turn a memory or a reminder came from, whichever checkpoint ("thread:message")."""
    return turn_id.split("@", 1)[0]


@dataclass(frozen=True)
class Reminder:
    """One reminder: its id, the thread it is said in, the turn that set it, what to say, when
    (ISO 8601 with the user's offset), and when it was set (UTC)."""

    id: str
    thread_id: str
    turn_id: str
    what: str
    due: str
    set_at: str

    @property
    def due_at(self) -> datetime:
        return datetime.fromisoformat(self.due)

    def forgotten_with(self, item: MemoryItem) -> bool:
        """Whether forgetting `item` forgets this reminder: it was forgotten after the reminder
        was set (a memory forgotten last month does not cancel today's; both times are the
        runs', so a replay at another `now` compares its own) and is about it."""
        return forgotten_at(item) >= datetime.fromisoformat(self.set_at).timestamp() and (
            self.about(item)
        )

    def about(self, item: MemoryItem) -> bool:
        """Whether `item` is a memory of this reminder: written by the turn that set it, or
        saying what it says ("call my mom" in "User asked to be reminded to call my mom")."""
        if self.turn_id and turn_of(item.origin.get("turn_id", "")) == turn_of(self.turn_id):
            return True
        texts = [item.description]
        texts += [entry.get("previous_description", "") for entry in item.history]
        return any(self._print.carries(text) for text in texts if text)

    @cached_property
    def _print(self) -> Fingerprint:
        """What makes a text say this reminder: made once, read for every forgotten memory."""
        return Fingerprint.of([self.what])


class ReminderBook:
    """One user's reminders in a state database (a SQLite file in the data folder, or the
    deployment's PostgreSQL): the chat adds them, the server's scheduler or `make chat` says
    them when they fall due, and a reminder whose memory the user forgot is never said."""

    def __init__(self, db: StateDatabase, manager: BaseMemoryManager) -> None:
        self.db = db
        self.manager = manager

    @property
    def user_id(self) -> str:
        return self.manager.user_id

    def add(
        self, thread_id: str, turn_id: str, what: str, due: datetime, at: datetime | None = None
    ) -> Reminder:
        """Keep a reminder of `what` at `due` (an aware time), set by turn `turn_id` at `at`
        (the run's moment, on the clock the writer dates that turn's memories by; default now)."""
        if due.tzinfo is None:
            raise ValueError("a reminder's time needs its offset (the user's zone)")
        if not what.strip():
            raise ValueError("a reminder needs something to remind of")
        set_at = at.astimezone(UTC).isoformat() if at is not None else now_iso()
        reminder = Reminder(
            uuid.uuid4().hex[:8], thread_id, turn_id, what.strip(), due.isoformat(), set_at
        )
        with self.db.transaction() as tx:
            tx.execute(
                f"INSERT INTO {{p}}reminders (user_id, {', '.join(_COLUMNS)}) "
                "VALUES (?, ?, ?, ?, ?, ?, ?)",
                (self.user_id, *(getattr(reminder, c) for c in _COLUMNS)),
            )
        return reminder

    def pending(self, thread_id: str | None = None) -> list[Reminder]:
        """The reminders still to come (of `thread_id` only, when given), soonest first. Those
        whose memory was forgotten are cancelled on the way."""
        return sorted(
            (r for r in self._live() if thread_id is None or r.thread_id == thread_id),
            key=lambda r: r.due_at,
        )

    def cancel(self, reminder_id: str) -> Reminder | None:
        """Remove the reminder whose id starts with `reminder_id` (None: no such reminder)."""
        wanted = reminder_id.strip()
        found = [r for r in self._live() if wanted and r.id.startswith(wanted)]
        if len(found) != 1:
            return None
        self._delete([found[0].id])
        return found[0]

    def take(self, reminder_id: str) -> Reminder | None:
        """The reminder with exactly this id, removed: said once. None when it was cancelled,
        forgotten or erased."""
        found = next((r for r in self._live() if r.id == reminder_id), None)
        if found is not None:
            self._delete([found.id])
        return found

    def take_due(self, now: datetime) -> list[Reminder]:
        """The reminders due by `now`, removed (each is said once), soonest first."""
        due = [r for r in self.pending() if r.due_at <= now]
        self._delete([r.id for r in due])
        return due

    def clear(self) -> int:
        """Remove every reminder of the user (reminders turned off); how many there were."""
        if not _has_reminders(self.db):
            return 0
        with self.db.transaction() as tx:
            cursor = tx.execute("DELETE FROM {p}reminders WHERE user_id = ?", (self.user_id,))
            return int(cursor.rowcount or 0)

    def _rows(self) -> list[Reminder]:
        if not _has_reminders(self.db):
            return []  # nothing set yet: reading never makes the file
        rows = self.db.query(
            f"SELECT {', '.join(_COLUMNS)} FROM {{p}}reminders WHERE user_id = ?", (self.user_id,)
        )
        return [Reminder(*(str(value) for value in row)) for row in rows]

    def _live(self) -> list[Reminder]:
        """The rows, without (and deleting) those a forgotten memory was about."""
        rows = self._rows()
        if not rows:
            return rows
        forgotten = list(forgotten_items(self.manager).values())
        gone = [r for r in rows if any(r.forgotten_with(item) for item in forgotten)]
        self._delete([r.id for r in gone])
        return [r for r in rows if r not in gone]

    def _delete(self, ids: Iterable[str]) -> None:
        doomed = [(self.user_id, reminder_id) for reminder_id in ids]
        if doomed:
            with self.db.transaction() as tx:
                tx.executemany("DELETE FROM {p}reminders WHERE user_id = ? AND id = ?", doomed)


def _has_reminders(db: StateDatabase) -> bool:
    """Whether `db` holds a reminders table yet (asking never creates the file)."""
    return db.exists() and "reminders" in db.tables()


def reminder_of_row(row: dict[str, Any]) -> Reminder:
    """A reminders row (as the erasure reads it) as a Reminder."""
    return Reminder(*(str(row.get(column, "")) for column in _COLUMNS))


def drop_every_reminder(db: StateDatabase) -> int:
    """Remove every user's reminders from `db` (reminders turned off), leaving none of their
    bytes in the file; how many there were."""
    try:
        if not _has_reminders(db):
            return 0
        with db.transaction() as tx:
            removed = int(tx.execute("DELETE FROM {p}reminders").rowcount or 0)
        if removed:
            db.scrub(["reminders"])
        return removed
    finally:
        db.close()
