"""SQLite schema, its migrations, and point reads and writes of one user's rows."""

from __future__ import annotations

import json
import sqlite3
from typing import Any

from memory.store.core_context import read_stored
from memory.store.document import MemoryTransaction
from memory.store.item import MAX_THEME_CHARS, MemoryItem, now_iso
from memory.store.repair import item_from_raw

BUSY_TIMEOUT_MS = 60_000
SCHEMA_VERSION = 3
# Migration steps by the schema version they reach; `_migrate` runs the missing ones in order.
MIGRATIONS: dict[int, list[str]] = {
    1: [
        # `pos` keeps insertion order, as the YAML file does; an update keeps its row.
        """CREATE TABLE IF NOT EXISTS memory_items (
            pos INTEGER PRIMARY KEY, user_id TEXT NOT NULL, id TEXT NOT NULL,
            description TEXT, theme TEXT, latest_update_time TEXT, hit INTEGER, deleted INTEGER,
            UNIQUE (user_id, id))""",
        "CREATE INDEX IF NOT EXISTS memory_items_by_user ON memory_items (user_id, pos)",
        """CREATE TABLE IF NOT EXISTS memory_history (
            user_id TEXT NOT NULL, item_id TEXT NOT NULL, seq INTEGER NOT NULL, entry TEXT NOT NULL,
            PRIMARY KEY (user_id, item_id, seq)) WITHOUT ROWID""",
        """CREATE TABLE IF NOT EXISTS memory_turns (
            pos INTEGER PRIMARY KEY, user_id TEXT NOT NULL, turn_id TEXT NOT NULL,
            applied_at TEXT NOT NULL, UNIQUE (user_id, turn_id))""",
        """CREATE TABLE IF NOT EXISTS memory_meta (
            user_id TEXT PRIMARY KEY, revision INTEGER NOT NULL DEFAULT 0)""",
    ],
    # Branch scope: rows written before it are user-scope items of unknown origin.
    2: [
        "ALTER TABLE memory_items ADD COLUMN scope TEXT NOT NULL DEFAULT 'user'",
        "ALTER TABLE memory_items ADD COLUMN origin TEXT NOT NULL DEFAULT '{}'",
        "ALTER TABLE memory_items ADD COLUMN supersedes TEXT NOT NULL DEFAULT ''",
        """CREATE TABLE IF NOT EXISTS memory_core_context (
            user_id TEXT PRIMARY KEY, context TEXT NOT NULL)""",
    ],
    # A change feed: each row keeps the revision that last wrote it, so a reader learns what
    # changed since its revision with one indexed query (`changes_since`). A write that removes
    # rows or rewrites them all moves `reset_rev`: readers older than it read everything again.
    3: [
        "ALTER TABLE memory_items ADD COLUMN rev INTEGER NOT NULL DEFAULT 0",
        "CREATE INDEX IF NOT EXISTS memory_items_by_rev ON memory_items (user_id, rev)",
        "CREATE INDEX IF NOT EXISTS memory_items_of_branches ON memory_items (user_id)"
        " WHERE scope = 'branch'",
        "ALTER TABLE memory_meta ADD COLUMN reset_rev INTEGER NOT NULL DEFAULT 0",
    ],
}
ITEM_COLUMNS = "id, description, theme, latest_update_time, hit, deleted, scope, origin, supersedes"
UPSERT_ITEM = (
    "INSERT INTO memory_items (user_id, id, description, theme, latest_update_time, hit, deleted,"
    " scope, origin, supersedes, rev) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
    " ON CONFLICT (user_id, id) DO UPDATE SET"
    " description = excluded.description, theme = excluded.theme,"
    " latest_update_time = excluded.latest_update_time, hit = excluded.hit,"
    " deleted = excluded.deleted, scope = excluded.scope, origin = excluded.origin,"
    " supersedes = excluded.supersedes, rev = excluded.rev"
)
INSERT_HISTORY = "INSERT INTO memory_history (user_id, item_id, seq, entry) VALUES (?, ?, ?, ?)"


def raw_row(row: tuple[Any, ...], history: list[Any]) -> dict[str, Any]:
    """A stored row as the raw dict `item_from_raw` repairs; 0/1 are SQLite's booleans."""
    _, description, theme, latest, hit, deleted, scope, origin, supersedes = row
    return {
        "description": description,
        "theme": theme,
        "history": history,
        "latest_update_time": latest,
        "hit": hit,
        "deleted": bool(deleted) if deleted in (0, 1) else deleted,
        "scope": scope,
        "origin": decode_entry(origin),
        "supersedes": supersedes,
    }


def well_formed_item(row: tuple[Any, ...]) -> MemoryItem | None:
    """The row as an item without its history when no field needs repair, else None.

    Listing 100,000 rows through `item_from_raw` costs ~0.5 s; rows the app wrote need none of it.
    """
    memory_id, description, theme, latest, hit, deleted, scope, origin, supersedes = row
    if scope != "user" or origin != "{}" or supersedes:
        return None  # branch rows are few: the full path checks their origin
    if (
        isinstance(memory_id, str)
        and isinstance(description, str)
        and description.strip()
        and isinstance(theme, str)
        and theme
        and len(theme) <= MAX_THEME_CHARS
        and theme == theme.strip()
        and "\n" not in theme
        and isinstance(latest, str)
        and latest
        and type(hit) is int
        and hit >= 0
        and deleted in (0, 1)
    ):
        return MemoryItem(description, theme, [], latest, hit, bool(deleted))
    return None


def decode_entry(text: Any) -> Any:
    try:
        return json.loads(text)
    except (TypeError, ValueError):
        return text  # item_from_raw keeps it as a note and reports the repair


def item_params(user_id: str, memory_id: str, item: MemoryItem, rev: int) -> tuple[Any, ...]:
    return (
        user_id,
        memory_id,
        item.description,
        item.theme,
        item.latest_update_time,
        item.hit,
        int(item.deleted),
        item.scope,
        json.dumps(item.origin, ensure_ascii=False, sort_keys=True),
        item.supersedes,
        rev,
    )


class SqliteTransaction(MemoryTransaction):
    """Point reads and writes on one connection inside BEGIN IMMEDIATE; history is appended.
    Rows written are stamped with `rev`, the revision this transaction commits."""

    def __init__(self, conn: sqlite3.Connection, user_id: str, rev: int = 0) -> None:
        self.conn, self.user_id, self.rev = conn, user_id, rev
        self.dirty = False
        self.removed = False  # rows were deleted: the change feed cannot tell
        # What each item's history rows held when read: lets `put` append instead of rewrite.
        self._stored: dict[str, tuple[list[Any], int]] = {}

    def get(self, memory_id: str) -> MemoryItem | None:
        row = self.conn.execute(
            f"SELECT {ITEM_COLUMNS} FROM memory_items WHERE user_id = ? AND id = ?",
            (self.user_id, memory_id),
        ).fetchone()
        if row is None:
            return None
        rows = self.conn.execute(
            "SELECT seq, entry FROM memory_history WHERE user_id = ? AND item_id = ? ORDER BY seq",
            (self.user_id, memory_id),
        ).fetchall()
        history = [decode_entry(entry) for _, entry in rows]
        self._stored[memory_id] = (list(history), rows[-1][0] if rows else -1)
        return item_from_raw(memory_id, raw_row(row, list(history)), [])

    def put(self, memory_id: str, item: MemoryItem) -> None:
        self.conn.execute(UPSERT_ITEM, item_params(self.user_id, memory_id, item, self.rev))
        stored, last_seq = self._stored.get(memory_id, ([], -1))
        if memory_id not in self._stored or item.history[: len(stored)] != stored:
            # New item, or history reordered (merge) or repaired: rewrite this item's history.
            self.conn.execute(
                "DELETE FROM memory_history WHERE user_id = ? AND item_id = ?",
                (self.user_id, memory_id),
            )
            stored, last_seq = [], -1
        new_entries = item.history[len(stored) :]
        self.conn.executemany(
            INSERT_HISTORY,
            [
                (self.user_id, memory_id, last_seq + 1 + n, json.dumps(entry, ensure_ascii=False))
                for n, entry in enumerate(new_entries)
            ],
        )
        self._stored[memory_id] = (
            [dict(entry) for entry in item.history],
            last_seq + len(new_entries),
        )
        self.dirty = True

    def remove(self, memory_id: str) -> None:
        for table, column in (("memory_items", "id"), ("memory_history", "item_id")):
            self.conn.execute(
                f"DELETE FROM {table} WHERE user_id = ? AND {column} = ?",
                (self.user_id, memory_id),
            )
        self._stored.pop(memory_id, None)
        self.dirty = self.removed = True

    def has_turn(self, turn_id: str) -> bool:
        return turn_recorded(self.conn, self.user_id, turn_id)

    def record_turn(self, turn_id: str) -> None:
        self.conn.execute(
            "INSERT INTO memory_turns (user_id, turn_id, applied_at) VALUES (?, ?, ?)",
            (self.user_id, turn_id, now_iso()),
        )
        self.dirty = True


def turn_recorded(conn: sqlite3.Connection, user_id: str, turn_id: str) -> bool:
    return (
        conn.execute(
            "SELECT 1 FROM memory_turns WHERE user_id = ? AND turn_id = ?", (user_id, turn_id)
        ).fetchone()
        is not None
    )


def read_core_context_row(conn: sqlite3.Connection, user_id: str) -> dict[str, str]:
    row = conn.execute(
        "SELECT context FROM memory_core_context WHERE user_id = ?", (user_id,)
    ).fetchone()
    return read_stored(decode_entry(row[0])) if row else {}


def write_core_context_row(conn: sqlite3.Connection, user_id: str, context: dict[str, str]) -> None:
    if not context:
        conn.execute("DELETE FROM memory_core_context WHERE user_id = ?", (user_id,))
        return
    conn.execute(
        "INSERT INTO memory_core_context (user_id, context) VALUES (?, ?) ON CONFLICT (user_id)"
        " DO UPDATE SET context = excluded.context",
        (user_id, json.dumps(context, ensure_ascii=False)),
    )
