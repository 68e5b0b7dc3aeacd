"""Processes that open one new SQLite file at the same instant all get it (WAL on, schema made)."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PROCESSES = 12
ROUNDS = 4

OPEN_AT_ONCE = """
import sys, time
from memory.store.sqlite_file import open_wal
start = float(sys.argv[2])
while time.time() < start:
    pass
connection = open_wal(sys.argv[1], "CREATE TABLE IF NOT EXISTS seen (who TEXT);")
connection.execute("INSERT INTO seen VALUES (?)", (sys.argv[3],))
"""


def test_processes_opening_a_new_file_at_once_all_write(tmp_path: Path) -> None:
    # Before open_wal retried, one child in a few rounds died of "database is locked" here.
    for round_number in range(ROUNDS):
        path = tmp_path / f"state-{round_number}.db"
        start = time.time() + 1.5  # every child is past its imports before the first opens
        children = [
            subprocess.Popen(
                [sys.executable, "-c", OPEN_AT_ONCE, str(path), str(start), str(n)],
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
            written = {int(who) for (who,) in db.execute("SELECT who FROM seen")}
        assert written == set(range(PROCESSES))
