"""Short topic summaries kept beside the store (a model may have written them): SQLite, by user."""

from __future__ import annotations

import json
import os
import sqlite3
import threading
from dataclasses import dataclass

from memory.item import now_iso
from memory.writer.sqlite_file import open_wal, write_transaction

_SCHEMA = """
CREATE TABLE IF NOT EXISTS topic_summaries (
    user_id TEXT NOT NULL,
    topic TEXT NOT NULL,
    summary TEXT NOT NULL,
    source TEXT NOT NULL,          -- "offline" or "model"
    made_from TEXT NOT NULL,       -- JSON: [id, latest_update_time] of the facts it summarises
    fingerprint TEXT NOT NULL,     -- the members and their update times, to see a change
    updated_at TEXT NOT NULL,
    PRIMARY KEY (user_id, topic)
);
"""


@dataclass(frozen=True)
class StoredSummary:
    """One topic's summary as stored: the text, who made it ("offline" or "model"), and from which
    versions of which memories (`made_from`: id and latest_update_time pairs)."""

    topic: str
    summary: str
    source: str
    made_from: tuple[tuple[str, str], ...]
    fingerprint: str
    updated_at: str = ""


class SummaryStore:
    """The summaries of every user of one data folder, in one SQLite file. The user id is only
    ever a bound value, never part of a path, so no user id can name another file."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = path
        self._lock = threading.Lock()
        self._connection: sqlite3.Connection | None = None

    def _open(self) -> sqlite3.Connection:
        if self._connection is None:
            self._connection = open_wal(self.path, _SCHEMA)
        return self._connection

    def read(self, user_id: str) -> dict[str, StoredSummary]:
        """The stored summaries of `user_id` by topic key ({} when none, or no file yet)."""
        if self._connection is None and not os.path.exists(self.path):
            return {}
        with self._lock:
            rows = self._open().execute(
                "SELECT topic, summary, source, made_from, fingerprint, updated_at "
                "FROM topic_summaries WHERE user_id = ?",
                (user_id,),
            )
            return {
                row[0]: StoredSummary(row[0], row[1], row[2], tuple((str(i), str(t)) for i, t in json.loads(row[3])), row[4], row[5])  # noqa: E501
                for row in rows
            }  # fmt: skip

    def replace(self, user_id: str, written: list[StoredSummary], keep: set[str]) -> None:
        """Write `written` and drop the summaries of topics not in `keep`, all in one
        transaction: a crash leaves either the old summaries or the new ones."""
        with write_transaction(self._lock, self._open()) as connection:
            stamp = now_iso()
            connection.executemany(
                "INSERT OR REPLACE INTO topic_summaries VALUES (?, ?, ?, ?, ?, ?, ?)",
                [
                    (user_id, s.topic, s.summary, s.source, json.dumps(s.made_from),
                     s.fingerprint, stamp)
                    for s in written
                ],
            )  # fmt: skip
            stored = [row[0] for row in connection.execute(
                "SELECT topic FROM topic_summaries WHERE user_id = ?", (user_id,)
            )]  # fmt: skip
            connection.executemany(
                "DELETE FROM topic_summaries WHERE user_id = ? AND topic = ?",
                [(user_id, topic) for topic in stored if topic not in keep],
            )

    def close(self) -> None:
        with self._lock:
            if self._connection is not None:
                self._connection.close()
                self._connection = None
