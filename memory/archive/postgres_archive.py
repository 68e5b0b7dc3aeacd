"""PostgresArchive: the conversation archive in PostgreSQL with a full-text (GIN) index.

Long because the GIN index and the queries that use it must be read together.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from typing import Any

from memory.archive.base import ConversationArchive
from memory.archive.erasing import erase_carriers, erase_said
from memory.archive.query import Window
from memory.archive.records import (
    SEARCHED_ROLES,
    ArchivedMessage,
    Digest,
    ForgottenRecord,
    MessageKey,
)
from memory.store.state_db import pool_for
from memory.text.tokenize import tokenize

# Documents and queries are the tokenizer's terms taken as they are (array_to_tsvector and
# quoted tsquery lexemes): PostgreSQL's parsers would split Chinese differently, or not at all.
_SCHEMA = """
CREATE TABLE IF NOT EXISTS gulfstream_archive_messages (
    id            BIGSERIAL PRIMARY KEY,
    user_id       TEXT NOT NULL,
    thread_id     TEXT NOT NULL,
    checkpoint_id TEXT NOT NULL,
    message_id    TEXT NOT NULL,
    role          TEXT NOT NULL,
    content       TEXT NOT NULL,
    ts            DOUBLE PRECISION NOT NULL,
    position      INTEGER NOT NULL,
    content_hash  TEXT NOT NULL,
    terms         TSVECTOR NOT NULL,
    UNIQUE (user_id, thread_id, checkpoint_id, message_id, content_hash)
);
CREATE INDEX IF NOT EXISTS gulfstream_archive_terms
    ON gulfstream_archive_messages USING GIN (terms);
CREATE INDEX IF NOT EXISTS gulfstream_archive_thread
    ON gulfstream_archive_messages (user_id, thread_id, ts, checkpoint_id, position);
CREATE INDEX IF NOT EXISTS gulfstream_archive_time ON gulfstream_archive_messages (user_id, ts);
CREATE TABLE IF NOT EXISTS gulfstream_archive_digests (
    user_id       TEXT NOT NULL,
    day           TEXT NOT NULL,
    text          TEXT NOT NULL,
    message_count INTEGER NOT NULL,
    last_ts       DOUBLE PRECISION NOT NULL,
    made_at       DOUBLE PRECISION NOT NULL,
    terms         TSVECTOR NOT NULL,
    PRIMARY KEY (user_id, day)
);
CREATE TABLE IF NOT EXISTS gulfstream_archive_forgotten (
    user_id       TEXT NOT NULL,
    memory_id     TEXT NOT NULL,
    forgotten_at  DOUBLE PRECISION NOT NULL,
    messages      TEXT NOT NULL,
    digests       TEXT NOT NULL,
    PRIMARY KEY (user_id, memory_id)
);
"""
_TABLE = "gulfstream_archive_messages"
RANKED = 2_000  # matches ranked by relevance at most: the newest ones
# Tool results get no terms; an archive made before that may still hold some with terms.
_SEARCHED = "role IN ({})".format(", ".join(f"'{role}'" for role in SEARCHED_ROLES))
_COLUMNS = "thread_id, checkpoint_id, message_id, role, content, ts, position, content_hash"
_FORGOTTEN = "memory_id, forgotten_at, messages, digests"


def tsquery(terms: Sequence[str], any_term: bool) -> str:
    """A tsquery of quoted lexemes (the tokenizer's terms hold no quote)."""
    return (" | " if any_term else " & ").join(f"'{term}'" for term in terms)


class PostgresArchive(ConversationArchive):
    """One user's archive in the tables `gulfstream_archive_*` of a PostgreSQL database; every
    statement names the user."""

    erase_carriers = erase_carriers  # what erasure asks: memory/archive/erasing.py
    erase_said = erase_said

    backend = "postgres"

    def __init__(self, dsn: str, user_id: str) -> None:
        super().__init__(user_id)
        self.pool = pool_for(dsn)
        self.pool.require(_SCHEMA)

    def add(self, messages: Sequence[ArchivedMessage]) -> int:
        rows = []
        for m in messages:
            if m.user_id != self.user_id:
                raise ValueError(f"message of {m.user_id!r} sent to {self.user_id!r}'s archive")
            rows.append((self.user_id, m.thread_id, m.checkpoint_id, m.message_id, m.role,
                         m.content, m.timestamp, m.position, m.content_hash,
                         tokenize(m.content) if m.searched else []))  # fmt: skip
        if not rows:
            return 0
        added = 0
        with self.pool.connection() as conn, conn.transaction(), conn.cursor() as cur:
            for row in rows:
                cur.execute(
                    f"INSERT INTO {_TABLE} (user_id, {_COLUMNS}, terms) VALUES (%s, %s, %s, "
                    "%s, %s, %s, %s, %s, %s, array_to_tsvector(%s::text[])) ON CONFLICT DO NOTHING",
                    row,
                )
                added += cur.rowcount
        return added

    def known(self, thread_id: str) -> list[tuple[str, str, str]]:
        return [
            (str(a), str(b), str(c))
            for a, b, c in self._read(
                f"SELECT message_id, content_hash, checkpoint_id FROM {_TABLE} "
                "WHERE user_id = %s AND thread_id = %s",
                (self.user_id, thread_id),
            )
        ]

    def match(
        self, terms: Sequence[str], any_term: bool, window: Window, limit: int
    ) -> list[tuple[ArchivedMessage, float]]:
        if not terms:
            return []
        where, params = window.sql("%s")
        query = tsquery(terms, any_term)
        # As in SQLite: a common word's matches are ranked among the newest RANKED only (the
        # matches come from the GIN index, materialized so that the planner cannot walk the
        # primary key backwards instead).
        rows = self._read(
            f"WITH hits AS MATERIALIZED (SELECT id FROM {_TABLE} WHERE user_id = %s AND "
            f"terms @@ CAST(%s AS tsquery) AND {_SEARCHED} {where}), "
            "recent AS (SELECT id FROM hits ORDER BY id DESC LIMIT %s)"
            f" SELECT {_COLUMNS}, ts_rank(terms, q) AS score FROM {_TABLE} "
            "JOIN recent USING (id), CAST(%s AS tsquery) AS q "
            "ORDER BY score DESC, ts DESC LIMIT %s",
            (self.user_id, query, *params, RANKED, query, limit),
        )
        return [(self._message(r[:8]), float(r[8])) for r in rows]

    def neighbours(
        self, message: ArchivedMessage, before: int, after: int
    ) -> list[ArchivedMessage]:
        key = (message.timestamp, message.checkpoint_id, message.position)
        base = (
            f"SELECT {_COLUMNS} FROM {_TABLE} WHERE user_id = %s AND thread_id = %s AND "
            f"{_SEARCHED} AND "
        )
        earlier = self._read(
            base + "(ts, checkpoint_id, position) < (%s, %s, %s) "
            "ORDER BY ts DESC, checkpoint_id DESC, position DESC LIMIT %s",
            (self.user_id, message.thread_id, *key, before),
        )
        later = self._read(
            base + "(ts, checkpoint_id, position) > (%s, %s, %s) "
            "ORDER BY ts, checkpoint_id, position LIMIT %s",
            (self.user_id, message.thread_id, *key, after),
        )
        return [self._message(r) for r in reversed(earlier)] + [self._message(r) for r in later]

    def messages(
        self, thread_id: str | None = None, since: float | None = None, until: float | None = None
    ) -> list[ArchivedMessage]:
        where, params = Window(since, until, thread_id).sql("%s")
        rows = self._read(
            f"SELECT {_COLUMNS} FROM {_TABLE} WHERE user_id = %s {where} "
            "ORDER BY ts, checkpoint_id, position",
            (self.user_id, *params),
        )
        return [self._message(r) for r in rows]

    def put_digest(self, digest: Digest) -> None:
        with self.pool.connection() as conn:
            conn.execute(
                "INSERT INTO gulfstream_archive_digests VALUES (%s, %s, %s, %s, %s, %s, "
                "array_to_tsvector(%s::text[])) ON CONFLICT (user_id, day) DO UPDATE SET "
                "text = EXCLUDED.text, message_count = EXCLUDED.message_count, "
                "last_ts = EXCLUDED.last_ts, made_at = EXCLUDED.made_at, terms = EXCLUDED.terms",
                (self.user_id, digest.day, digest.text, digest.message_count,
                 digest.last_timestamp, digest.made_at, tokenize(digest.text)),
            )  # fmt: skip

    def digests(
        self, since: float | None = None, until: float | None = None, terms: Sequence[str] = ()
    ) -> list[Digest]:
        where, params = Window(since, until).sql("%s", column="last_ts")
        if terms:
            where += " AND terms @@ CAST(%s AS tsquery)"
            params.append(tsquery(terms, False))
        rows = self._read(
            "SELECT day, text, message_count, last_ts, made_at FROM gulfstream_archive_digests "
            f"WHERE user_id = %s {where} ORDER BY day DESC",
            (self.user_id, *params),
        )
        return [Digest(self.user_id, *row) for row in rows]

    def frequencies(self, terms: Sequence[str]) -> tuple[int, dict[str, int]]:
        # One count per term, each through the GIN index (terms are few: a question's words).
        found = {}
        for term in terms:
            rows = self._read(
                f"SELECT COUNT(*) FROM {_TABLE} WHERE user_id = %s AND "
                "terms @@ CAST(%s AS tsquery)",
                (self.user_id, tsquery([term], False)),
            )
            found[term] = int(rows[0][0])
        total = self._read(
            f"SELECT COUNT(*) FROM {_TABLE} WHERE user_id = %s AND {_SEARCHED}", (self.user_id,)
        )
        return int(total[0][0]), found

    def count(self) -> int:
        rows = self._read(f"SELECT COUNT(*) FROM {_TABLE} WHERE user_id = %s", (self.user_id,))
        return int(rows[0][0])

    def forgotten_signature(self) -> object:
        # xmin is the transaction that wrote a row: any insert, update or delete changes this.
        rows = self._read(
            "SELECT COUNT(*), MAX(xmin::text::bigint) FROM gulfstream_archive_forgotten "
            "WHERE user_id = %s",
            (self.user_id,),
        )
        return tuple(rows[0])

    def _load_forgotten(self) -> dict[str, ForgottenRecord]:
        rows = self._read(
            f"SELECT {_FORGOTTEN} FROM gulfstream_archive_forgotten WHERE user_id = %s",
            (self.user_id,),
        )
        return {row[0]: ForgottenRecord.from_json(self.user_id, *row) for row in rows}

    def put_forgotten(self, record: ForgottenRecord) -> None:
        with self.pool.connection() as conn:
            conn.execute(
                "INSERT INTO gulfstream_archive_forgotten VALUES (%s, %s, %s, %s, %s) ON CONFLICT "
                "(user_id, memory_id) DO UPDATE SET forgotten_at = EXCLUDED.forgotten_at, "
                "messages = EXCLUDED.messages, digests = EXCLUDED.digests",
                (self.user_id, record.memory_id, record.forgotten_at, *record.to_json()),
            )

    def drop_forgotten(self, memory_id: str) -> ForgottenRecord | None:
        with self.pool.connection() as conn:
            row = conn.execute(
                f"DELETE FROM gulfstream_archive_forgotten WHERE user_id = %s AND memory_id = %s "
                f"RETURNING {_FORGOTTEN}",
                (self.user_id, memory_id),
            ).fetchone()
        return ForgottenRecord.from_json(self.user_id, *row) if row else None

    def clear(self) -> None:
        with self.pool.connection() as conn, conn.transaction():
            conn.execute(f"DELETE FROM {_TABLE} WHERE user_id = %s", (self.user_id,))
            for table in ("gulfstream_archive_digests", "gulfstream_archive_forgotten"):
                conn.execute(f"DELETE FROM {table} WHERE user_id = %s", (self.user_id,))

    def erase_messages(self, keys: Collection[MessageKey]) -> int:
        wanted = list(dict.fromkeys(keys))
        if not wanted:
            return 0
        erased = 0
        with self.pool.connection() as conn, conn.transaction(), conn.cursor() as cur:
            for key in wanted:
                cur.execute(
                    f"DELETE FROM {_TABLE} WHERE user_id = %s AND thread_id = %s AND "
                    "checkpoint_id = %s AND message_id = %s AND content_hash = %s",
                    (self.user_id, *key),
                )
                erased += cur.rowcount
        return erased

    def erase_digests(self, days: Collection[str]) -> int:
        wanted = list(dict.fromkeys(days))
        if not wanted:
            return 0
        with self.pool.connection() as conn:
            cursor = conn.execute(
                "DELETE FROM gulfstream_archive_digests WHERE user_id = %s AND day = ANY(%s)",
                (self.user_id, wanted),
            )
            return int(cursor.rowcount)

    def erase_all(self) -> list[str]:
        messages, digests = self.count(), len(self.digests())
        self.clear()
        return [f"{_TABLE}: {messages} rows", f"gulfstream_archive_digests: {digests} rows"]

    def scrub(self) -> bool:
        # Deleted rows stay in the table's pages until VACUUM reclaims them (autovacuum does it
        # later; this does it now). The server's own WAL and backups are the operator's.
        with self.pool.connection() as conn:
            for table in (_TABLE, "gulfstream_archive_digests", "gulfstream_archive_forgotten"):
                conn.execute(f"VACUUM {table}")
        return True

    def _read(self, sql: str, params: Sequence[Any]) -> list[Any]:
        with self.pool.connection() as conn:
            return list(conn.execute(sql, tuple(params)).fetchall())

    def _message(self, row: Sequence[Any]) -> ArchivedMessage:
        thread, checkpoint, message_id, role, content, ts, position, digest = row
        return ArchivedMessage(
            self.user_id, thread, checkpoint, message_id, role, content, float(ts),
            int(position), digest,
        )  # fmt: skip
