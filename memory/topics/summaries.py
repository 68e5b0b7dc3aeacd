"""Short topic summaries kept beside the store (a model may have written them): by user, in a
SQLite file or the deployment's PostgreSQL."""

from __future__ import annotations

import json
import os
from dataclasses import dataclass

from memory.store.item import now_iso
from memory.store.state_db import SqliteState, StateDatabase, upsert

SCHEMA = """
CREATE TABLE IF NOT EXISTS {p}topic_summaries (
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
_ROW = upsert(
    "topic_summaries",
    ("user_id", "topic", "summary", "source", "made_from", "fingerprint", "updated_at"),
    ("user_id", "topic"),
)


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
    """The summaries of every user of one data folder, in one SQLite file (or of a deployment,
    in PostgreSQL). The user id is only ever a bound value, never part of a path, so no user id
    can name another file."""

    def __init__(self, target: str | os.PathLike[str] | StateDatabase) -> None:
        self.db = target if isinstance(target, StateDatabase) else SqliteState(target, SCHEMA)

    def read(self, user_id: str) -> dict[str, StoredSummary]:
        """The stored summaries of `user_id` by topic key ({} when none, or no file yet)."""
        if not self.db.exists():
            return {}
        rows = self.db.query(
            "SELECT topic, summary, source, made_from, fingerprint, updated_at "
            "FROM {p}topic_summaries WHERE user_id = ?",
            (user_id,),
        )
        return {
            row[0]: StoredSummary(row[0], row[1], row[2], tuple((str(i), str(t)) for i, t in json.loads(row[3])), row[4], row[5])  # noqa: E501
            for row in rows
        }  # fmt: skip

    def replace(self, user_id: str, written: list[StoredSummary], keep: set[str]) -> None:
        """Write `written` and drop the summaries of topics not in `keep`, all in one
        transaction: a crash leaves either the old summaries or the new ones."""
        with self.db.transaction() as connection:
            stamp = now_iso()
            connection.executemany(
                _ROW,
                [
                    (user_id, s.topic, s.summary, s.source, json.dumps(s.made_from),
                     s.fingerprint, stamp)
                    for s in written
                ],
            )  # fmt: skip
            stored = [row[0] for row in connection.execute(
                "SELECT topic FROM {p}topic_summaries WHERE user_id = ?", (user_id,)
            ).fetchall()]  # fmt: skip
            connection.executemany(
                "DELETE FROM {p}topic_summaries WHERE user_id = ? AND topic = ?",
                [(user_id, topic) for topic in stored if topic not in keep],
            )

    def close(self) -> None:
        self.db.close()
