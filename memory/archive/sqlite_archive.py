"""SqliteArchive: one user's conversation archive in a SQLite file with an FTS5 index.

Long because the FTS5 index is kept in the same transactions as the messages it indexes.
"""

from __future__ import annotations

import os
import sqlite3
import threading
from collections.abc import Collection, Sequence
from pathlib import Path
from typing import Any

from memory.archive.base import ConversationArchive
from memory.archive.erasing import erase_carriers, erase_said
from memory.archive.query import Window, index_text
from memory.archive.records import (
    SEARCHED_ROLES,
    ArchivedMessage,
    Digest,
    ForgottenRecord,
    MessageKey,
)
from memory.store.manager import file_stem
from memory.store.sqlite_file import open_wal, remove_database, scrub, write_transaction

# The index holds the tokenizer's terms separated by spaces (unicode61 then only splits on
# them): FTS5's own tokenizers cannot match a two-character Chinese word (trigram needs three
# characters, unicode61 takes a whole run of Chinese as one word).
_SCHEMA = """
CREATE TABLE IF NOT EXISTS messages (
    id            INTEGER PRIMARY KEY,
    thread_id     TEXT NOT NULL,
    checkpoint_id TEXT NOT NULL,
    message_id    TEXT NOT NULL,
    role          TEXT NOT NULL,
    content       TEXT NOT NULL,
    ts            REAL NOT NULL,
    position      INTEGER NOT NULL,
    content_hash  TEXT NOT NULL,
    UNIQUE (thread_id, checkpoint_id, message_id, content_hash)
);
CREATE INDEX IF NOT EXISTS messages_by_thread ON messages (thread_id, ts, checkpoint_id, position);
CREATE INDEX IF NOT EXISTS messages_by_time ON messages (ts);
CREATE VIRTUAL TABLE IF NOT EXISTS messages_fts USING fts5(
    terms, content='', tokenize='unicode61 remove_diacritics 0'
);
CREATE VIRTUAL TABLE IF NOT EXISTS messages_vocab USING fts5vocab(messages_fts, 'row');
CREATE TABLE IF NOT EXISTS digests (
    id            INTEGER PRIMARY KEY,
    day           TEXT NOT NULL UNIQUE,
    text          TEXT NOT NULL,
    message_count INTEGER NOT NULL,
    last_ts       REAL NOT NULL,
    made_at       REAL NOT NULL
);
CREATE VIRTUAL TABLE IF NOT EXISTS digests_fts USING fts5(
    terms, tokenize='unicode61 remove_diacritics 0'
);
-- One row per forgotten memory: the messages it hid and its days' digests as they were.
CREATE TABLE IF NOT EXISTS forgotten (
    memory_id     TEXT PRIMARY KEY,
    forgotten_at  REAL NOT NULL,
    messages      TEXT NOT NULL,
    digests       TEXT NOT NULL
);
"""
RANKED = 2_000  # matches ranked by relevance at most: the newest ones
# An archive made before tool results were kept out of the index may still hold some there.
_SEARCHED = "m.role IN ({})".format(", ".join(f"'{role}'" for role in SEARCHED_ROLES))
_COLUMNS = "thread_id, checkpoint_id, message_id, role, content, ts, position, content_hash"


def archive_path(folder: str | os.PathLike[str], user_id: str) -> Path:
    """The user's archive file in `folder` (one file per user: no query can reach another's)."""
    return Path(folder) / f"{file_stem(user_id)}.sqlite"


def fts_query(terms: Sequence[str], any_term: bool) -> str:
    """An FTS5 MATCH expression of quoted terms (the terms come from the tokenizer: letters,
    digits and CJK characters only, so quoting is enough)."""
    joiner = " OR " if any_term else " AND "
    return joiner.join(f'"{term}"' for term in terms)


class SqliteArchive(ConversationArchive):
    """The archive of one user in `<folder>/<user>.sqlite` (WAL, one writer at a time)."""

    erase_carriers = erase_carriers  # what erasure asks: memory/archive/erasing.py
    erase_said = erase_said

    backend = "sqlite"

    def __init__(self, folder: str | os.PathLike[str], user_id: str) -> None:
        super().__init__(user_id)
        self.path = archive_path(folder, user_id)
        self._lock = threading.Lock()
        self._open: sqlite3.Connection | None = open_wal(self.path, _SCHEMA, synchronous="NORMAL")

    @property
    def _db(self) -> sqlite3.Connection:
        """The connection; after `erase_all` the file is gone and comes back only with the
        user's next write (or read), not at the erase itself."""
        if self._open is None:
            self._open = open_wal(self.path, _SCHEMA, synchronous="NORMAL")
        return self._open

    def add(self, messages: Sequence[ArchivedMessage]) -> int:
        added = 0
        with write_transaction(self._lock, self._db) as db:
            for m in messages:
                if m.user_id != self.user_id:
                    raise ValueError(f"message of {m.user_id!r} sent to {self.user_id!r}'s archive")
                row = db.execute(
                    f"INSERT OR IGNORE INTO messages ({_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                    (m.thread_id, m.checkpoint_id, m.message_id, m.role, m.content, m.timestamp,
                     m.position, m.content_hash),
                )  # fmt: skip
                if row.rowcount and m.searched:
                    db.execute(
                        "INSERT INTO messages_fts (rowid, terms) VALUES (?, ?)",
                        (row.lastrowid, index_text(m.content)),
                    )
                added += row.rowcount
        return added

    def known(self, thread_id: str) -> list[tuple[str, str, str]]:
        sql = "SELECT message_id, content_hash, checkpoint_id FROM messages WHERE thread_id = ?"
        return [(str(a), str(b), str(c)) for a, b, c in self._read(sql, (thread_id,))]

    def match(
        self, terms: Sequence[str], any_term: bool, window: Window, limit: int
    ) -> list[tuple[ArchivedMessage, float]]:
        if not terms:
            return []
        where, params = window.sql("?", "m.")
        where = f"AND {_SEARCHED} {where}"
        query = fts_query(terms, any_term)
        join = "FROM messages_fts JOIN messages m ON m.id = messages_fts.rowid"
        # A common word matches a large part of the archive, and ranking every match costs
        # tens of milliseconds at 100,000 messages: only the newest RANKED matches are ranked
        # (rows are added in time order, so the newest have the highest ids).
        floor = self._read(
            f"SELECT messages_fts.rowid {join} WHERE messages_fts MATCH ? {where} "
            "ORDER BY messages_fts.rowid DESC LIMIT 1 OFFSET ?",
            (query, *params, RANKED - 1),
        )
        lowest = int(floor[0][0]) if floor else 0
        rows = self._read(
            f"SELECT {_prefixed('m.')}, bm25(messages_fts) AS score {join} WHERE messages_fts "
            f"MATCH ? AND messages_fts.rowid >= ? {where} ORDER BY score, m.ts DESC LIMIT ?",
            (query, lowest, *params, limit),
        )
        return [(self._message(row[:8]), -float(row[8])) for row in rows]

    def neighbours(
        self, message: ArchivedMessage, before: int, after: int
    ) -> list[ArchivedMessage]:
        key = (message.timestamp, message.checkpoint_id, message.position)
        earlier = self._read(
            f"SELECT {_COLUMNS} FROM messages m WHERE thread_id = ? AND {_SEARCHED} AND "
            "(ts, checkpoint_id, position) < (?, ?, ?) "
            "ORDER BY ts DESC, checkpoint_id DESC, position DESC LIMIT ?",
            (message.thread_id, *key, before),
        )
        later = self._read(
            f"SELECT {_COLUMNS} FROM messages m WHERE thread_id = ? AND {_SEARCHED} AND "
            "(ts, checkpoint_id, position) > (?, ?, ?) "
            "ORDER BY ts, checkpoint_id, position LIMIT ?",
            (message.thread_id, *key, after),
        )
        return [self._message(r) for r in reversed(earlier)] + [self._message(r) for r in later]

    def messages(
        self, thread_id: str | None = None, since: float | None = None, until: float | None = None
    ) -> list[ArchivedMessage]:
        where, params = Window(since, until, thread_id).sql("?")
        sql = (
            f"SELECT {_COLUMNS} FROM messages WHERE 1 {where} ORDER BY ts, checkpoint_id, position"
        )
        return [self._message(row) for row in self._read(sql, params)]

    def put_digest(self, digest: Digest) -> None:
        with write_transaction(self._lock, self._db) as db:
            old = db.execute("SELECT id FROM digests WHERE day = ?", (digest.day,)).fetchone()
            if old is not None:
                db.execute("DELETE FROM digests WHERE id = ?", (old[0],))
                db.execute("DELETE FROM digests_fts WHERE rowid = ?", (old[0],))
            row = db.execute(
                "INSERT INTO digests (day, text, message_count, last_ts, made_at) "
                "VALUES (?, ?, ?, ?, ?)",
                (digest.day, digest.text, digest.message_count, digest.last_timestamp,
                 digest.made_at),
            )  # fmt: skip
            db.execute(
                "INSERT INTO digests_fts (rowid, terms) VALUES (?, ?)",
                (row.lastrowid, index_text(digest.text)),
            )

    def digests(
        self, since: float | None = None, until: float | None = None, terms: Sequence[str] = ()
    ) -> list[Digest]:
        where, params = Window(since, until).sql("?", "d.", column="last_ts")
        if terms:
            sql = (
                "SELECT d.day, d.text, d.message_count, d.last_ts, d.made_at FROM digests_fts "
                f"JOIN digests d ON d.id = digests_fts.rowid WHERE digests_fts MATCH ? {where} "
                "ORDER BY d.day DESC"
            )
            params = [fts_query(terms, False), *params]
        else:
            sql = (
                "SELECT d.day, d.text, d.message_count, d.last_ts, d.made_at FROM digests d "
                f"WHERE 1 {where} ORDER BY d.day DESC"
            )
        return [Digest(self.user_id, *row) for row in self._read(sql, params)]

    def frequencies(self, terms: Sequence[str]) -> tuple[int, dict[str, int]]:
        # One lookup per term (fts5vocab answers `term = ?` from the index; `IN` scans it), and
        # the highest row id for the total: counting an FTS5 table reads all of it, and idf
        # needs the size only roughly.
        found = {}
        for term in terms:
            rows = self._read("SELECT doc FROM messages_vocab WHERE term = ?", (term,))
            found[term] = int(rows[0][0]) if rows else 0
        total = self._read("SELECT MAX(id) FROM messages", ())[0][0]
        return int(total or 0), found

    def count(self) -> int:
        return int(self._read("SELECT COUNT(*) FROM messages", ())[0][0])

    def _load_forgotten(self) -> dict[str, ForgottenRecord]:
        rows = self._read("SELECT memory_id, forgotten_at, messages, digests FROM forgotten", ())
        return {row[0]: ForgottenRecord.from_json(self.user_id, *row) for row in rows}

    def forgotten_signature(self) -> object:
        # A row replaced or added gets a new rowid (its times and sizes tell a reused one).
        sql = (
            "SELECT COUNT(*), MAX(rowid), TOTAL(forgotten_at), TOTAL(LENGTH(messages)) "
            "FROM forgotten"
        )
        return tuple(self._read(sql, ())[0])

    def put_forgotten(self, record: ForgottenRecord) -> None:
        with write_transaction(self._lock, self._db) as db:
            db.execute(
                "INSERT OR REPLACE INTO forgotten VALUES (?, ?, ?, ?)",
                (record.memory_id, record.forgotten_at, *record.to_json()),
            )

    def drop_forgotten(self, memory_id: str) -> ForgottenRecord | None:
        with write_transaction(self._lock, self._db) as db:
            row = db.execute(
                "SELECT memory_id, forgotten_at, messages, digests FROM forgotten "
                "WHERE memory_id = ?",
                (memory_id,),
            ).fetchone()
            db.execute("DELETE FROM forgotten WHERE memory_id = ?", (memory_id,))
        return ForgottenRecord.from_json(self.user_id, *row) if row else None

    def clear(self) -> None:
        with write_transaction(self._lock, self._db) as db:
            db.execute("DELETE FROM messages")
            db.execute("INSERT INTO messages_fts (messages_fts) VALUES ('delete-all')")
            db.execute("DELETE FROM digests")
            db.execute("DELETE FROM digests_fts")
            db.execute("DELETE FROM forgotten")  # hidden again from the rebuilt rows

    def erase_messages(self, keys: Collection[MessageKey]) -> int:
        erased = 0
        with write_transaction(self._lock, self._db) as db:
            for thread, checkpoint, message_id, digest in dict.fromkeys(keys):
                row = db.execute(
                    "SELECT id, content, role FROM messages WHERE thread_id = ? AND "
                    "checkpoint_id = ? AND message_id = ? AND content_hash = ?",
                    (thread, checkpoint, message_id, digest),
                ).fetchone()
                if row is None:
                    continue
                # A contentless FTS table forgets a row only when told its terms again, and
                # only a row it holds: told to forget a tool result it never indexed, it breaks.
                if row[2] in SEARCHED_ROLES:
                    db.execute(
                        "INSERT INTO messages_fts (messages_fts, rowid, terms) "
                        "VALUES ('delete', ?, ?)",
                        (row[0], index_text(row[1])),
                    )
                db.execute("DELETE FROM messages WHERE id = ?", (row[0],))
                erased += 1
        return erased

    def erase_digests(self, days: Collection[str]) -> int:
        erased = 0
        with write_transaction(self._lock, self._db) as db:
            for day in dict.fromkeys(days):
                row = db.execute("SELECT id FROM digests WHERE day = ?", (day,)).fetchone()
                if row is not None:
                    db.execute("DELETE FROM digests WHERE id = ?", (row[0],))
                    db.execute("DELETE FROM digests_fts WHERE rowid = ?", (row[0],))
                    erased += 1
        return erased

    def erase_all(self) -> list[str]:
        # One file per user: removing it (with its WAL) leaves nothing to scrub.
        # Not reopened here: an empty file named after the user would be a trace of them.
        with self._lock:
            if self._open is not None:
                self._open.close()
                self._open = None
            return remove_database(self.path)

    def scrub(self) -> bool:
        if self._open is None and not self.path.exists():
            return True  # erased: nothing left to scrub
        with self._lock:
            # Deleted FTS entries stay in the index's segments until they are merged.
            self._db.execute("INSERT INTO messages_fts (messages_fts) VALUES ('optimize')")
            self._db.execute("INSERT INTO digests_fts (digests_fts) VALUES ('optimize')")
            return scrub(self._db)

    def close(self) -> None:
        with self._lock:
            if self._open is not None:
                self._open.close()
                self._open = None

    def _read(self, sql: str, params: Sequence[Any]) -> list[Any]:
        if self._open is None and not self.path.exists():
            return []  # erased, nothing written since: reading must not make the file again
        with self._lock:
            return self._db.execute(sql, tuple(params)).fetchall()

    def _message(self, row: Sequence[Any]) -> ArchivedMessage:
        thread, checkpoint, message_id, role, content, ts, position, digest = row
        return ArchivedMessage(
            self.user_id, thread, checkpoint, message_id, role, content, float(ts),
            int(position), digest,
        )  # fmt: skip


def _prefixed(prefix: str) -> str:
    return ", ".join(prefix + column.strip() for column in _COLUMNS.split(","))
