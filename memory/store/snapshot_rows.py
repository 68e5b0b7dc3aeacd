"""Snapshots kept as rows of the state database, for a backend with no folder of its own."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from memory.store.document import MemoryDocument
from memory.store.manager import BaseMemoryManager
from memory.store.snapshots import document_from_records, snapshot_records
from memory.store.state_db import StateDatabase, upsert

if TYPE_CHECKING:
    from memory.store.erasure_report import ErasureReport
    from memory.text.needles import Needles

TABLE = "snapshots"
SNAPSHOTS_FILE = "snapshots.sqlite"  # open_state's SQLite side; only a state database keeps them
# The same JSON lines as a `.jsonl.gz` file: `psql -Atc "SELECT body ..." | gzip` is one that
# `make import FILE=` restores.
SCHEMA = """
CREATE TABLE IF NOT EXISTS {p}snapshots (
    user_id TEXT NOT NULL,
    name    TEXT NOT NULL,
    made_at TEXT NOT NULL,
    body    TEXT NOT NULL,
    PRIMARY KEY (user_id, name)
) WITHOUT ROWID;
"""
_SAVE = upsert(TABLE, ("user_id", "name", "made_at", "body"), ("user_id", "name"))
_ONE = "WHERE user_id = ? AND name = ?"


def save_snapshot(db: StateDatabase, manager: BaseMemoryManager, name: str) -> str:
    """Store the user's whole memory as snapshot `name`; where it went (for a report)."""
    records = snapshot_records(manager)
    with db.transaction() as tx:
        tx.execute(_SAVE, (manager.user_id, name, records[0]["written_at"], _body(records)))
    return f"{db.describe()} table {TABLE}, user {manager.user_id!r}, name {name!r}"


def stored_snapshots(db: StateDatabase, user_id: str) -> list[str]:
    """The names of the user's stored snapshots, oldest first."""
    rows = db.query(f"SELECT name FROM {{p}}{TABLE} WHERE user_id = ? ORDER BY made_at", (user_id,))
    return [name for (name,) in rows]


def load_snapshot(db: StateDatabase, user_id: str, name: str) -> MemoryDocument:
    """A stored snapshot as a document (what `import_document` restores); KeyError if none."""
    rows = db.query(
        f"SELECT body FROM {{p}}{TABLE} WHERE user_id = ? AND name = ?", (user_id, name)
    )
    if not rows:
        raise KeyError(f"no snapshot {name!r} of user {user_id!r}")
    return document_from_records(_records(rows[0][0]), f"{db.describe()} {name}")


def erase_stored_snapshots(
    db: StateDatabase, user_id: str, needles: Needles, report: ErasureReport
) -> None:
    """Redact one erased memory out of the user's stored snapshots, as out of their files
    (erase_user deletes the rows with the other state tables)."""
    from memory.store.snapshots import redact_records

    bodies = db.query(f"SELECT name, body FROM {{p}}{TABLE} WHERE user_id = ?", (user_id,))
    for name, body in bodies:
        kept, dropped = redact_records(_records(body), needles)
        if kept is None:
            continue
        with db.transaction() as tx:
            if len(kept) == 1:  # the header alone: no item is left to restore
                tx.execute(f"DELETE FROM {{p}}{TABLE} {_ONE}", (user_id, name))
            else:
                tx.execute(_SAVE, (user_id, name, kept[0].get("written_at", ""), _body(kept)))
        report.count("snapshot items", dropped)
        report.file(f"{db.describe()} snapshot {name}", "rewritten" if len(kept) > 1 else "removed")
    db.scrub([TABLE])


def _body(records: list[dict[str, Any]]) -> str:
    return "".join(json.dumps(record, ensure_ascii=False) + "\n" for record in records)


def _records(body: str) -> list[Any]:
    return [json.loads(line) for line in body.splitlines() if line.strip()]
