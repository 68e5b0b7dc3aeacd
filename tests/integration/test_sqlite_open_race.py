"""Processes that open one new SQLite file at the same instant all get it (WAL on, schema made):
the state files of memory/store/sqlite_file.py and the SQLite memory store."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
import time
from pathlib import Path

from memory.store.backends.sqlite_db import SqliteMemoryManager

ROOT = Path(__file__).resolve().parents[2]
PROCESSES = 12
ROUNDS = 4

WAIT_FOR_START = """
import sys, time
start = float(sys.argv[2])
while time.time() < start:
    pass
"""
OPEN_STATE_FILE = (
    WAIT_FOR_START
    + """
from memory.store.sqlite_file import open_wal
connection = open_wal(sys.argv[1], "CREATE TABLE IF NOT EXISTS seen (who TEXT);")
connection.execute("INSERT INTO seen VALUES (?)", (sys.argv[3],))
"""
)
OPEN_MEMORY_STORE = WAIT_FOR_START.replace("import sys, time", "import sys, time\n"
    "from memory.store.backends.sqlite_db import SqliteMemoryManager") + """
SqliteMemoryManager(sys.argv[1], "shared-user").add(f"written by {sys.argv[3]}", "load")
"""  # fmt: skip


def open_at_once(script: str, path: Path) -> None:
    """PROCESSES children run `script` on the new file `path` at the same instant."""
    start = time.time() + 1.5  # every child is past its imports before the first opens
    children = [
        subprocess.Popen(
            [sys.executable, "-c", script, str(path), str(start), str(n)],
            cwd=ROOT,
            stderr=subprocess.PIPE,
            text=True,
        )
        for n in range(PROCESSES)
    ]
    errors = [child.communicate(timeout=60)[1] for child in children]
    assert [child.returncode for child in children] == [0] * PROCESSES, "\n".join(errors)
    with sqlite3.connect(path) as db:
        assert db.execute("PRAGMA journal_mode").fetchone() == ("wal",)


def test_processes_opening_a_new_state_file_at_once_all_write(tmp_path: Path) -> None:
    # Before open_wal retried, one child in a few rounds died of "database is locked" here.
    for round_number in range(ROUNDS):
        path = tmp_path / f"state-{round_number}.db"
        open_at_once(OPEN_STATE_FILE, path)
        with sqlite3.connect(path) as db:
            written = {int(who) for (who,) in db.execute("SELECT who FROM seen")}
        assert written == set(range(PROCESSES))


def test_processes_opening_a_new_memory_store_at_once_all_add(tmp_path: Path) -> None:
    # A CI run's four writers of one new store: one died of this, the others waited for it.
    for round_number in range(ROUNDS):
        path = tmp_path / f"memory-{round_number}.db"
        open_at_once(OPEN_MEMORY_STORE, path)
        items = SqliteMemoryManager(path, "shared-user").list_items().values()
        assert sorted(item.description for item in items) == sorted(
            f"written by {n}" for n in range(PROCESSES)
        )
