"""RecallLog: which memories were injected into replies, queued in memory and flushed in batches."""

from __future__ import annotations

import atexit
import hashlib
import logging
import os
import threading
import time
import weakref
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from memory.store.item import now_iso
from memory.store.state_db import SqliteState, StateDatabase
from memory.text.tokenize import normalize

logger = logging.getLogger(__name__)

RECALL_FILE = "recall-log.sqlite"
FLUSH_SECONDS = 2.0  # how long a recall waits in memory before its batch is written
# Hotness barely moves past a few dozen distinct questions (it grows with a log): more hashes
# per memory would only grow the file.
MAX_QUERIES_PER_MEMORY = 100
# Other processes (a CLI beside the server, the replicas of a deployment) flush into the same
# rows: cached stats are read again whenever the user's flush count moved (one primary-key
# read), and at least this often even when it did not (an erase deletes rows, not flushes).
STATS_MAX_AGE_SECONDS = 30.0
UNREADABLE = -1  # the flush count of a log that could not be read (the stats cache's key)
# While the file cannot be written (a full disk, a damaged file), recalls wait in memory up to
# this many; later ones are dropped with a warning rather than growing the process forever.
MAX_QUEUED = 50_000


@dataclass(frozen=True)
class RecallStats:
    """How often one memory was injected into a reply: `recalls` times, for `queries` distinct
    questions, the last time at `last_recalled` (ISO 8601, "" for never)."""

    recalls: int = 0
    queries: int = 0
    last_recalled: str = ""


NEVER_RECALLED = RecallStats()


SCHEMA = """
CREATE TABLE IF NOT EXISTS {p}recalls (
    user_id       TEXT NOT NULL,
    memory_id     TEXT NOT NULL,
    recalls       INTEGER NOT NULL,
    last_recalled TEXT NOT NULL,
    PRIMARY KEY (user_id, memory_id)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS {p}recall_queries (  -- hashes only: the questions may be private
    user_id    TEXT NOT NULL,
    memory_id  TEXT NOT NULL,
    query_hash TEXT NOT NULL,
    PRIMARY KEY (user_id, memory_id, query_hash)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS {p}recall_flushes (  -- one count per user: batches and recalls written
    user_id TEXT PRIMARY KEY,
    flushes INTEGER NOT NULL,
    recalls INTEGER NOT NULL,
    last_flush TEXT NOT NULL
) WITHOUT ROWID;
"""


@dataclass(frozen=True)
class QueuedRecall:
    """One memory injected into one reply, waiting for the next flush."""

    memory_id: str
    query_hash: str
    time: str


def query_hash(query: str) -> str:
    """A stable hash of the query with case, width and spacing ignored (the text is never kept)."""
    normalised = " ".join(normalize(query).split())
    return hashlib.sha256(normalised.encode("utf-8")).hexdigest()[:16]


class RecallLog:
    """One user's recalls: `record` only queues (the reply path pays a lock and an append); a
    daemon timer writes the queue `flush_seconds` later in one transaction, and `flush` /
    `close` / the process's normal exit write what is left. The file is shared by every user of
    a data folder and by processes (WAL, busy timeout), or PostgreSQL tables shared by every
    replica (`StateDatabase`); rows are keyed by user id, counts added in SQL, never read and
    written back, so that no process's recalls are lost."""

    def __init__(
        self,
        target: str | os.PathLike[str] | StateDatabase,
        user_id: str,
        flush_seconds: float = FLUSH_SECONDS,
    ) -> None:
        # NORMAL: losing the last batch to a power cut costs a little hotness, not a fact.
        self.db = recall_database(target)
        self.user_id = user_id
        self.flush_seconds = flush_seconds
        self.generation = 0  # flushes written by this object (the stats cache's key)
        self._queue: list[QueuedRecall] = []
        self._queue_lock = threading.Lock()
        self._flush_lock = threading.Lock()  # one flush at a time: a batch is written once
        self._timer: threading.Timer | None = None
        self._stats: tuple[tuple[int, int], float, dict[str, RecallStats]] | None = None
        self.dropped = 0  # recalls refused because the queue was full
        _open_logs.add(self)

    def record(self, memory_ids: Iterable[str], query: str) -> int:
        """Queue one recall of each of `memory_ids` for `query`; returns how many were queued."""
        ids = list(dict.fromkeys(i for i in memory_ids if isinstance(i, str) and i))
        if not ids:
            return 0
        hashed, moment = query_hash(query if isinstance(query, str) else ""), now_iso()
        with self._queue_lock:
            if len(self._queue) + len(ids) > MAX_QUEUED:
                if not self.dropped:
                    logger.warning("recall log %s is not being written; dropping recalls "
                                   "of user %r until it is", self.db.describe(),
                                   self.user_id)  # fmt: skip
                self.dropped += len(ids)
                return 0
            self._queue.extend(QueuedRecall(i, hashed, moment) for i in ids)
            if self._timer is None:
                self._timer = threading.Timer(self.flush_seconds, self._flush_in_background)
                self._timer.daemon = True
                self._timer.start()
        return len(ids)

    @property
    def pending(self) -> int:
        """Recalls queued and not yet written."""
        with self._queue_lock:
            return len(self._queue)

    def flush(self) -> int:
        """Write every queued recall in one transaction; returns how many. On a failure the
        batch goes back to the queue (the next flush retries it) and the error propagates."""
        with self._flush_lock:
            with self._queue_lock:
                batch, self._queue = self._queue, []
                if self._timer is not None:
                    self._timer.cancel()
                    self._timer = None
            if not batch:
                return 0
            try:
                self._write(batch)
            except BaseException:
                with self._queue_lock:
                    self._queue[:0] = batch
                raise
            self.generation += 1
            return len(batch)

    def discard(self) -> int:
        """Drop the queued recalls unwritten (the user's data is being erased); how many."""
        with self._queue_lock:
            dropped, self._queue = len(self._queue), []
            if self._timer is not None:
                self._timer.cancel()
                self._timer = None
        return dropped

    def _flush_in_background(self) -> None:
        try:
            self.flush()
        except Exception:  # kept queued; the next record or close tries again
            logger.exception(
                "writing recalls of user %r to %s failed", self.user_id, self.db.describe()
            )

    def _write(self, batch: list[QueuedRecall]) -> None:
        counts: dict[str, tuple[int, str]] = {}
        for recall in batch:
            seen, _ = counts.get(recall.memory_id, (0, ""))
            counts[recall.memory_id] = (seen + 1, recall.time)
        user = self.user_id
        with self.db.transaction() as db:
            db.executemany(
                "INSERT INTO {p}recalls VALUES (?, ?, ?, ?) ON CONFLICT (user_id, memory_id) DO "
                "UPDATE SET recalls = {p}recalls.recalls + excluded.recalls, last_recalled = "
                "CASE WHEN excluded.last_recalled > {p}recalls.last_recalled "
                "THEN excluded.last_recalled ELSE {p}recalls.last_recalled END",
                [(user, memory_id, n, last) for memory_id, (n, last) in counts.items()],
            )
            db.executemany(
                "INSERT INTO {p}recall_queries SELECT ?, ?, ? WHERE (SELECT count(*) FROM "
                "{p}recall_queries WHERE user_id = ? AND memory_id = ?) < ? ON CONFLICT DO NOTHING",
                [
                    (user, memory_id, hashed, user, memory_id, MAX_QUERIES_PER_MEMORY)
                    for memory_id, hashed in {(r.memory_id, r.query_hash) for r in batch}
                ],
            )
            db.execute(
                "INSERT INTO {p}recall_flushes VALUES (?, 1, ?, ?) ON CONFLICT (user_id) DO UPDATE "
                "SET flushes = {p}recall_flushes.flushes + 1, "
                "recalls = {p}recall_flushes.recalls + excluded.recalls, "
                "last_flush = excluded.last_flush",
                (user, len(batch), now_iso()),
            )

    def stats(self) -> dict[str, RecallStats]:
        """Every memory's recall stats as written (queued recalls not included), read again
        when a flush by any process moved the user's flush count (and at least every
        STATS_MAX_AGE_SECONDS)."""
        cached, now = self._stats, time.monotonic()
        fresh = cached is not None and now - cached[1] < STATS_MAX_AGE_SECONDS
        if cached is not None and fresh and cached[0] == (self.generation, UNREADABLE):
            return cached[2]  # the last read failed: not tried again on every reply
        unreadable: tuple[type[BaseException], ...] = (*self.db.errors, OSError)
        try:
            key = (self.generation, self.flushes()[0])
            if cached is not None and fresh and cached[0] == key:
                return cached[2]
            stats = self._read() if self.db.exists() else {}
        except unreadable:
            # Ranking reads this: a damaged or unreachable log costs the recall signal, never
            # the retrieval (tried again after STATS_MAX_AGE_SECONDS; the file is left as is).
            logger.exception("recall log %s could not be read; ranking without it",
                             self.db.describe())  # fmt: skip
            key, stats = (self.generation, UNREADABLE), {}
        self._stats = (key, now, stats)
        return stats

    def flushes(self) -> tuple[int, int]:
        """(transactions written, recalls written) for this user, by every process."""
        if not self.db.exists():
            return 0, 0
        rows = self.db.query(
            "SELECT flushes, recalls FROM {p}recall_flushes WHERE user_id = ?", (self.user_id,)
        )
        return (int(rows[0][0]), int(rows[0][1])) if rows else (0, 0)

    def _read(self) -> dict[str, RecallStats]:
        rows = self.db.query(
            "SELECT r.memory_id, r.recalls, r.last_recalled, (SELECT count(*) FROM "
            "{p}recall_queries q WHERE q.user_id = r.user_id AND q.memory_id = r.memory_id) "
            "FROM {p}recalls r WHERE r.user_id = ?",
            (self.user_id,),
        )
        return {row[0]: RecallStats(int(row[1]), int(row[3]), str(row[2])) for row in rows}

    def close(self) -> None:
        """Write what is queued and close the file (it is opened again when used again)."""
        try:
            self.flush()
        finally:
            self.db.close()


def recall_database(target: str | os.PathLike[str] | StateDatabase) -> StateDatabase:
    """`target` itself, or the SQLite file at that path (made by the first flush only)."""
    if isinstance(target, StateDatabase):
        return target
    return SqliteState(Path(target), SCHEMA, synchronous="NORMAL")


_open_logs: weakref.WeakSet[RecallLog] = weakref.WeakSet()


@atexit.register
def _flush_at_exit() -> None:
    """A normal exit writes every queued recall (daemon timers die with the process)."""
    for log in list(_open_logs):
        try:
            log.flush()
        except Exception:
            logger.exception("recalls of user %r could not be written at exit", log.user_id)
