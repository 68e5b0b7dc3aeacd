"""TurnJournal: the SQLite journal that keeps every queued turn until it is written, across
crashes, a second process on the same file, and a damaged file (moved aside and salvaged).

Long because claiming, leasing, dead-lettering and salvaging a damaged file all guard the same table
in the same transactions.
"""

from __future__ import annotations

import json
import logging
import os
import socket
import sqlite3
import threading
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass, replace
from datetime import datetime
from pathlib import Path
from typing import Any, Literal

from memory.store.branch import Lineage
from memory.store.item import now_iso
from memory.store.sqlite_file import open_wal, wal_damage, write_transaction
from memory.writer.salvage import salvage_rows
from memory.writer.turn import Turn

logger = logging.getLogger(__name__)

TurnState = Literal["pending", "done", "dead"]
_COLUMNS = "turn, state, attempts, last_error, created_at, updated_at, seq"
_TABLE = """
CREATE TABLE IF NOT EXISTS turns (
    seq         INTEGER PRIMARY KEY AUTOINCREMENT,  -- arrival order, the replay order
    user_id     TEXT NOT NULL,
    turn_id     TEXT NOT NULL,
    turn        TEXT NOT NULL,                      -- the Turn as JSON, written once
    state       TEXT NOT NULL DEFAULT 'pending' CHECK (state IN ('pending', 'done', 'dead')),
    attempts    INTEGER NOT NULL DEFAULT 0,
    last_error  TEXT,
    lease_owner TEXT,                               -- the process running it, until lease_until
    lease_until REAL NOT NULL DEFAULT 0,            -- epoch seconds
    created_at  TEXT NOT NULL,
    updated_at  TEXT NOT NULL,
    UNIQUE (user_id, turn_id)
)"""
_INDEX = "CREATE INDEX IF NOT EXISTS turns_by_state ON turns (user_id, state, seq)"


class JournalError(Exception):
    """The journal cannot take or give turns; the message names its file."""


@dataclass(frozen=True)
class JournalEntry:
    """One journaled turn and where it stands: pending → done, or pending → dead."""

    turn: Turn
    state: TurnState = "pending"
    attempts: int = 0
    last_error: str | None = None
    created_at: str = ""
    updated_at: str = ""
    seq: int = 0

    @property
    def user_id(self) -> str:
        return self.turn.user_id

    @property
    def turn_id(self) -> str:
        return self.turn.turn_id


@dataclass(frozen=True)
class JournalRecovery:
    """A journal that could not be opened was moved aside and its readable rows salvaged. The
    note stays beside the journal (and self-checks say FAIL) until someone acknowledges it."""

    journal: str
    reason: str
    moved_to: list[str]
    salvaged: int
    unreadable: int
    at: str

    def describe(self) -> str:
        return (
            f"the write journal {self.journal} could not be opened ({self.reason}); it was moved "
            f"to {', '.join(self.moved_to) or 'nowhere (it was gone)'} and {self.salvaged} turns "
            f"were salvaged into a fresh journal ({self.unreadable} unreadable). Turns journaled "
            "in the damaged part may be lost: check the moved files, then acknowledge_recovery()"
        )


class TurnJournal:
    """Turns move pending → done, or pending → dead after too many failures; none is deleted.

    `append` commits before it returns. With `durability="normal"` (default; WAL with
    synchronous=NORMAL) an accepted turn survives a crash of the process; `"full"` also fsyncs
    every commit, so a power cut loses nothing, at a few milliseconds per turn. A process runs a
    turn only while it holds the turn's lease (`claim`), so two processes sharing the file never
    run one turn at the same time.
    """

    def __init__(
        self,
        path: str | os.PathLike[str],
        durability: Literal["full", "normal"] = "normal",
        owner: str | None = None,
    ) -> None:
        if durability not in ("full", "normal"):
            raise ValueError(f"durability must be 'full' or 'normal', not {durability!r}")
        self.path = Path(path)
        self.durability = durability
        self.owner = owner or f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:8]}"
        self.note_path = self.path.with_name(self.path.name + ".recovered.json")
        self._lock = threading.Lock()
        self._db = self._open()
        self.recovery = self._read_note()

    # ── opening, migrating, recovering ──────────────────────────────────

    def _open(self) -> sqlite3.Connection:
        damage = wal_damage(self.path)
        if damage:
            return self._recover(damage)
        try:
            db = open_wal(self.path, "", synchronous=self.durability.upper())
        except sqlite3.OperationalError as exc:  # no such folder, read-only, locked
            raise JournalError(f"the write journal {self.path} cannot be opened: {exc}") from exc
        except sqlite3.DatabaseError as exc:
            return self._recover(str(exc))
        try:
            verdict = [row[0] for row in db.execute("PRAGMA quick_check")]
            if verdict != ["ok"]:
                raise sqlite3.DatabaseError("; ".join(verdict[:3]))
            self._migrate(db)
        except sqlite3.OperationalError as exc:
            db.close()
            raise JournalError(f"the write journal {self.path} cannot be used: {exc}") from exc
        except sqlite3.DatabaseError as exc:
            db.close()
            return self._recover(str(exc))
        return db

    @staticmethod
    def _migrate(db: sqlite3.Connection) -> None:
        """Create the table, or bring a journal of the first layout (messages and branch
        columns) to one Turn per row, in one transaction."""
        columns = {row[1] for row in db.execute("PRAGMA table_info(turns)")}
        if "turn" in columns:
            return
        db.execute("BEGIN IMMEDIATE")
        try:
            columns = {row[1] for row in db.execute("PRAGMA table_info(turns)")}
            if columns and "turn" not in columns:
                db.execute("ALTER TABLE turns RENAME TO turns_v1")
                db.execute("DROP INDEX IF EXISTS turns_by_state")
            db.execute(_TABLE)
            db.execute(_INDEX)
            if columns and "turn" not in columns:
                for entry in _entries_of_v1(db, "turns_v1"):
                    _insert(db, entry, entry.turn.to_json())
                db.execute("DROP TABLE turns_v1")
            db.execute("COMMIT")
        except BaseException:
            db.execute("ROLLBACK")
            raise

    def _recover(self, reason: str) -> sqlite3.Connection:
        stamp = datetime.now().strftime("%Y%m%dT%H%M%S%f")
        aside = self.path.with_name(f"{self.path.name}.damaged-{stamp}")
        moved = []
        for suffix in ("", "-wal", "-shm"):  # kept together: SQLite reads a WAL beside its db
            source = Path(f"{self.path}{suffix}")
            if source.exists():
                target = Path(f"{aside}{suffix}")
                os.replace(source, target)
                moved.append(str(target))
        entries, unreadable = _salvage(aside) if moved else ([], 0)
        db = open_wal(self.path, "", synchronous=self.durability.upper())
        self._migrate(db)
        with write_transaction(self._lock, db):
            for entry in entries:
                _insert(db, entry, entry.turn.to_json())
        recovery = JournalRecovery(
            str(self.path), reason, moved, len(entries), unreadable, now_iso()
        )
        self.note_path.write_text(json.dumps(asdict(recovery), indent=1), encoding="utf-8")
        logger.error("%s", recovery.describe())
        return db

    def _read_note(self) -> JournalRecovery | None:
        try:
            return JournalRecovery(**json.loads(self.note_path.read_text(encoding="utf-8")))
        except FileNotFoundError:
            return None
        except (ValueError, TypeError) as exc:  # a hand-edited note still says FAIL
            return JournalRecovery(str(self.path), f"unreadable note: {exc}", [], 0, 0, "")

    def acknowledge_recovery(self) -> None:
        """Someone looked at the damaged journal: stop reporting it."""
        self.note_path.unlink(missing_ok=True)
        self.recovery = None

    # ── writing ─────────────────────────────────────────────────────────

    @contextmanager
    def _write(self, what: str) -> Iterator[sqlite3.Connection]:
        try:
            with write_transaction(self._lock, self._db) as db:
                yield db
        except sqlite3.Error as exc:
            raise JournalError(f"the write journal {self.path} could not {what}: {exc}") from exc

    def append(self, turn: Turn) -> JournalEntry:
        """Journal a turn durably and return its entry. The same turn id again returns the
        journaled entry; the same id with other messages is a ValueError, never a silent drop."""
        now = now_iso()
        entry = JournalEntry(turn, created_at=now, updated_at=now)
        with self._write(f"take turn {turn.turn_id}") as db:
            seq = _insert(db, entry, turn.to_json())
        if seq is not None:  # the common case: one statement, one commit
            return replace(entry, seq=seq)
        existing = self.get(turn.user_id, turn.turn_id)
        assert existing is not None
        if existing.turn.messages != turn.messages:
            raise ValueError(
                f"turn_id {turn.turn_id!r} was already queued with other messages; "
                "use a new turn_id for a new turn"
            )
        return existing

    def claim(self, user_id: str, turn_id: str, seconds: float) -> bool:
        """Take (or extend) the lease on a pending turn for `seconds`; False when it is done,
        dead, or another live process holds a lease that has not run out. A lease held by a
        process of this machine that no longer exists (it crashed) is taken over at once."""
        now = time.time()
        with self._write(f"lease turn {turn_id}") as db:
            cursor = db.execute(
                "UPDATE turns SET lease_owner = ?, lease_until = ? WHERE user_id = ? AND "
                "turn_id = ? AND state = 'pending' AND (lease_owner IS NULL OR lease_owner = ? "
                "OR lease_until < ?)",
                (self.owner, now + seconds, user_id, turn_id, self.owner, now),
            )
            if cursor.rowcount == 1:
                return True
            row = db.execute(
                "SELECT lease_owner FROM turns WHERE user_id = ? AND turn_id = ? AND "
                "state = 'pending'",
                (user_id, turn_id),
            ).fetchone()
            if row is None or not row[0] or not _owner_is_gone(row[0]):
                return False
            cursor = db.execute(
                "UPDATE turns SET lease_owner = ?, lease_until = ? WHERE user_id = ? AND "
                "turn_id = ? AND lease_owner = ?",
                (self.owner, now + seconds, user_id, turn_id, row[0]),
            )
            return cursor.rowcount == 1

    def lease_until(self, user_id: str, turn_id: str) -> float:
        """When the current lease on a turn runs out (epoch seconds; 0 without one)."""
        with self._lock:
            row = self._db.execute(
                "SELECT lease_until FROM turns WHERE user_id = ? AND turn_id = ?",
                (user_id, turn_id),
            ).fetchone()
        return float(row[0]) if row else 0.0

    def mark_done(self, user_id: str, *turn_ids: str) -> None:
        """The store has these turns (one writer run's): done, in one transaction."""
        with self._write(f"finish turns {', '.join(turn_ids)}") as db:
            for turn_id in turn_ids:
                db.execute(
                    "UPDATE turns SET state = 'done', lease_owner = NULL, updated_at = ? "
                    "WHERE user_id = ? AND turn_id = ?",
                    (now_iso(), user_id, turn_id),
                )

    def record_failure(self, user_id: str, turn_id: str, error: str) -> int:
        """Count one failed attempt, keep its error, and return the number of attempts so far."""
        self._set(user_id, turn_id, "attempts = attempts + 1, last_error = ?", (error,))
        entry = self.get(user_id, turn_id)
        return entry.attempts if entry else 0

    def mark_dead(self, user_id: str, turn_id: str, error: str | None = None) -> None:
        assignments = "state = 'dead', lease_owner = NULL"
        if error is not None:
            self._set(user_id, turn_id, f"{assignments}, last_error = ?", (error,))
        else:
            self._set(user_id, turn_id, assignments, ())

    def requeue(self, user_id: str, turn_id: str) -> None:
        """Give a dead letter another chance (after fixing its cause); `start()` replays it."""
        self._set(user_id, turn_id, "state = 'pending', attempts = 0, lease_owner = NULL", ())

    def _set(self, user_id: str, turn_id: str, assignments: str, params: tuple[Any, ...]) -> None:
        with self._write(f"update turn {turn_id}") as db:
            cursor = db.execute(
                f"UPDATE turns SET {assignments}, updated_at = ? WHERE user_id = ? AND turn_id = ?",
                (*params, now_iso(), user_id, turn_id),
            )
            if cursor.rowcount == 0:
                raise KeyError(f"turn {turn_id!r} of user {user_id!r} is not in the journal")

    # ── reading ─────────────────────────────────────────────────────────

    def get(self, user_id: str, turn_id: str) -> JournalEntry | None:
        rows = self._select("WHERE user_id = ? AND turn_id = ?", (user_id, turn_id))
        return rows[0] if rows else None

    def pending(self, user_id: str) -> list[JournalEntry]:
        """Unfinished turns in arrival order: what `start()` replays."""
        return self._select("WHERE user_id = ? AND state = 'pending' ORDER BY seq", (user_id,))

    def dead_letters(self, user_id: str) -> list[JournalEntry]:
        """Turns that failed too often, with their last error, oldest first."""
        return self._select("WHERE user_id = ? AND state = 'dead' ORDER BY seq", (user_id,))

    def counts(self, user_id: str) -> dict[str, int]:
        """How many turns are pending, done and dead."""
        counts = {"pending": 0, "done": 0, "dead": 0}
        with self._reading():
            rows = self._db.execute(
                "SELECT state, COUNT(*) FROM turns WHERE user_id = ? GROUP BY state", (user_id,)
            ).fetchall()
        counts.update({state: count for state, count in rows})
        return counts

    def _select(self, where: str, params: tuple[Any, ...]) -> list[JournalEntry]:
        with self._reading():
            rows = self._db.execute(f"SELECT {_COLUMNS} FROM turns {where}", params).fetchall()
        return [_entry(row) for row in rows]

    @contextmanager
    def _reading(self) -> Iterator[None]:
        with self._lock:
            try:
                yield
            except sqlite3.Error as exc:
                raise JournalError(f"the write journal {self.path} cannot be read: {exc}") from exc

    def close(self) -> None:
        with self._lock:
            self._db.close()


def _owner_is_gone(owner: str) -> bool:
    """Whether a lease owner ("host:pid:tag") is a process of this machine that has ended."""
    host, _, rest = owner.partition(":")
    pid = rest.split(":")[0]
    if host != socket.gethostname() or not pid.isdigit() or int(pid) == os.getpid():
        return False
    try:
        os.kill(int(pid), 0)
    except ProcessLookupError:
        return True
    except PermissionError:  # alive, another user's process
        return False
    return False


def _insert(db: sqlite3.Connection, entry: JournalEntry, turn_json: str) -> int | None:
    row = db.execute(
        "INSERT INTO turns (user_id, turn_id, turn, state, attempts, last_error, created_at, "
        "updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (user_id, turn_id) DO NOTHING "
        "RETURNING seq",
        (
            entry.user_id,
            entry.turn_id,
            turn_json,
            entry.state,
            entry.attempts,
            entry.last_error,
            entry.created_at or now_iso(),
            entry.updated_at or now_iso(),
        ),
    ).fetchone()
    return int(row[0]) if row is not None else None


def _entry(row: tuple[Any, ...]) -> JournalEntry:
    return JournalEntry(Turn.from_json(row[0]), row[1], row[2], row[3], row[4], row[5], row[6])


def _entries_of_v1(db: sqlite3.Connection, table: str) -> list[JournalEntry]:
    """Rows of a journal written before turns were stored whole, as entries."""
    entries = []
    # The first layout had no branch column (it was added with branch scope).
    columns = {row[1] for row in db.execute(f"PRAGMA table_info({table})")}
    branch_column = "branch" if "branch" in columns else "NULL"
    query = (
        "SELECT user_id, turn_id, session_id, messages, state, attempts, last_error, "
        f"created_at, updated_at, {branch_column} FROM {table} ORDER BY seq"
    )
    for (
        user,
        turn_id,
        session,
        messages,
        state,
        attempts,
        error,
        created,
        updated,
        branch,
    ) in db.execute(query):
        details = json.loads(branch) if branch else {}
        provenance = details.get("provenance") or {}
        turn = Turn(
            user, turn_id, tuple(json.loads(messages)),
            thread_id=session or provenance.get("thread_id", ""),
            checkpoint_id=provenance.get("checkpoint_id", ""),
            lineage=Lineage.from_dict(details.get("lineage")),
            scope_policy=details.get("scope_policy") or "auto",
            enqueued_at=created,
        )  # fmt: skip
        entries.append(JournalEntry(turn, state, attempts, error, created, updated))
    return entries


def _salvage(path: Path) -> tuple[list[JournalEntry], int]:
    """What can still be read from a damaged journal: a whole scan when SQLite manages one,
    else the rows found page by page (a truncated file fails every query but keeps most of
    its pages); and how many rows were found but could not be read."""
    try:
        entries = _read_all(sqlite3.connect(path))
    except sqlite3.Error:
        entries = None
    if entries is not None:
        return entries, 0
    found, unreadable = [], 0
    for row in salvage_rows(path):
        try:
            found.append(_entry(row))
        except (ValueError, TypeError):
            unreadable += 1
    return found, unreadable


def _read_all(db: sqlite3.Connection) -> list[JournalEntry] | None:
    """Every row of a journal that can still be scanned (either layout), or None."""
    try:
        columns = {row[1] for row in db.execute("PRAGMA table_info(turns)")}
        if columns and "turn" not in columns:
            return _entries_of_v1(db, "turns")
        return [_entry(row) for row in db.execute(f"SELECT {_COLUMNS} FROM turns")]
    except (sqlite3.Error, ValueError):
        return None
    finally:
        db.close()
