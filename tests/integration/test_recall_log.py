"""The recall log on real files and processes: batched, per user, off the reply path, durable."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from memory.long_term import LongTermMemory
from memory.retrieval.recall_log import RECALL_FILE, RecallLog
from memory.store.factory import open_memory_manager

ROOT = Path(__file__).resolve().parents[2]
# A process that records recalls and exits normally without flushing or closing anything.
RECORD_AND_EXIT = """
import sys
from memory.long_term import LongTermMemory
from memory.store.backends.yaml_files import YamlMemoryManager
memory = LongTermMemory(YamlMemoryManager(sys.argv[1], "alice"), embeddings="off")
memory.recall_log.flush_seconds = 3600  # only the exit can write them
for n in range(int(sys.argv[3])):
    memory.record_recall([sys.argv[2]], f"question {n % 7}")
"""


def rows(path: Path, sql: str, *params: Any) -> list[tuple[Any, ...]]:
    """Read the sidecar through a connection of its own, as another process would."""
    if not path.exists():
        return []
    with sqlite3.connect(path) as db:
        return db.execute(sql, params).fetchall()


def open_memory(kind: str, tmp_path: Path, user: str = "alice") -> LongTermMemory:
    if kind == "store":
        from langgraph.store.memory import InMemoryStore

        manager = open_memory_manager("store:memory", user, InMemoryStore())
    else:
        target = tmp_path / ("memory.db" if kind == "sqlite" else "yaml")
        manager = open_memory_manager(f"{kind}:{target}", user)
    return LongTermMemory(manager, data_dir=tmp_path / "data", embeddings="off")


@pytest.mark.parametrize("kind", ["yaml", "sqlite", "store"])
def test_many_recalls_are_written_in_one_transaction(kind: str, tmp_path: Path) -> None:
    memory = open_memory(kind, tmp_path)
    memory.recall_log.flush_seconds = 3600
    tea = memory.manager.add("User likes green tea", "taste")
    cat = memory.manager.add("User has a cat named Mochi", "pet")
    for n in range(40):
        memory.record_recall([tea, cat] if n % 2 else [tea], f"question {n % 5}")
    sidecar = tmp_path / "data" / RECALL_FILE
    assert rows(sidecar, "SELECT * FROM recalls") == []  # queued only
    assert memory.recall_log.flush() == 60
    assert rows(sidecar, "SELECT flushes, recalls FROM recall_flushes") == [(1, 60)]
    stats = memory.recall_stats()
    assert (stats[tea].recalls, stats[tea].queries) == (40, 5)
    assert (stats[cat].recalls, stats[cat].queries) == (20, 5)
    assert stats[tea].last_recalled
    assert memory.recall_log.flush() == 0  # nothing queued: no empty transaction
    assert memory.recall_log.flushes() == (1, 60)


def test_the_query_text_is_never_stored(tmp_path: Path) -> None:
    memory = open_memory("yaml", tmp_path)
    tea = memory.manager.add("User likes green tea", "taste")
    memory.record_recall([tea], "Is my divorce lawyer Mr Haddock?")
    memory.record_recall([tea], "  is my DIVORCE lawyer mr haddock?")  # the same question
    memory.close()
    assert memory.recall_stats()[tea].queries == 1
    sidecar = tmp_path / "data" / RECALL_FILE
    stored = b"".join(p.read_bytes() for p in sidecar.parent.glob(f"{RECALL_FILE}*"))
    assert b"Haddock" not in stored and b"haddock" not in stored and b"divorce" not in stored


def test_one_user_s_recalls_never_appear_in_another_s(tmp_path: Path) -> None:
    alice, bob = open_memory("yaml", tmp_path), open_memory("yaml", tmp_path, "bob")
    tea = alice.manager.add("User likes green tea", "taste")
    bob_tea = bob.manager.add("User likes green tea", "taste")
    alice.record_recall([tea, bob_tea], "tea?")  # even an id bob has
    alice.close()
    assert set(alice.recall_stats()) == {tea, bob_tea}
    assert bob.recall_stats() == {}
    assert bob.recall_log.flushes() == (0, 0)
    assert bob.hotness()[bob_tea] < alice.hotness()[tea]  # feature: hotness


def test_recording_returns_at_once_and_the_batch_is_written_soon_after(tmp_path: Path) -> None:
    memory = open_memory("yaml", tmp_path)
    memory.recall_log.flush_seconds = 0.3
    tea = memory.manager.add("User likes green tea", "taste")
    sidecar = tmp_path / "data" / RECALL_FILE
    for _ in range(5):
        memory.record_recall([tea], "tea?")
    assert memory.recall_log.pending == 5
    assert rows(sidecar, "SELECT * FROM recalls") == []  # the caller did not wait for a write
    deadline = time.monotonic() + 10
    while memory.recall_log.generation == 0 and time.monotonic() < deadline:  # flushes done
        time.sleep(0.05)
    assert rows(sidecar, "SELECT recalls FROM recalls WHERE memory_id = ?", tea) == [(5,)]
    assert rows(sidecar, "SELECT flushes FROM recall_flushes") == [(1,)]


def test_recalls_survive_a_normal_exit_and_a_restart(tmp_path: Path) -> None:
    memory = open_memory("yaml", tmp_path)
    tea = memory.manager.add("User likes green tea", "taste")
    folder = tmp_path / "yaml"
    run = [sys.executable, "-c", RECORD_AND_EXIT, str(folder), tea, "30"]
    subprocess.run(run, cwd=ROOT, check=True, timeout=120)
    # The child's data folder is the YAML folder (its own default): read it there.
    reopened = LongTermMemory(open_memory_manager(f"yaml:{folder}", "alice"), embeddings="off")
    stats = reopened.recall_stats()
    assert (stats[tea].recalls, stats[tea].queries) == (30, 7)
    assert reopened.recall_log.flushes() == (1, 30)  # the exit wrote one batch


def test_two_processes_count_into_one_file(tmp_path: Path) -> None:
    memory = open_memory("yaml", tmp_path)
    tea = memory.manager.add("User likes green tea", "taste")
    folder = tmp_path / "yaml"
    children = [
        subprocess.Popen([sys.executable, "-c", RECORD_AND_EXIT, str(folder), tea, "200"], cwd=ROOT)
        for _ in range(2)
    ]
    assert [child.wait(timeout=120) for child in children] == [0, 0]
    log = RecallLog(folder / RECALL_FILE, "alice")
    assert log.stats()[tea].recalls == 400
    assert log.flushes() == (2, 400)


def test_a_failed_write_keeps_the_batch_queued(tmp_path: Path) -> None:
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("a file where the data folder should be")
    log = RecallLog(blocker / RECALL_FILE, "alice")
    log.record(["m1", "m2"], "tea?")
    with pytest.raises(OSError):
        log.flush()
    assert log.pending == 2  # nothing lost: the next flush tries again
    moved = RecallLog(tmp_path / "data" / RECALL_FILE, "alice")
    assert moved.stats() == {} and not (tmp_path / "data").exists()  # reading creates nothing


def test_a_damaged_log_costs_the_signal_never_the_retrieval(tmp_path: Path) -> None:
    memory = open_memory("yaml", tmp_path)
    tea = memory.manager.add("User likes green tea", "taste")
    memory.manager.add("User likes green tea", "drinks")  # a tie: hotness is asked for
    sidecar = tmp_path / "data" / RECALL_FILE
    sidecar.parent.mkdir(parents=True)
    damaged = b"this is not a SQLite database" * 100
    sidecar.write_bytes(damaged)
    memory.record_recall([tea], "tea?")
    assert len(memory.get_related_memory_from("green tea", "mechanical")) == 2
    assert len(memory.get_related_memory_from("who am I?", "mechanical")) == 2
    with pytest.raises(sqlite3.DatabaseError):  # asked for explicitly: a clear error
        memory.recall_stats()
    assert memory.recall_log.pending == 1  # kept for when the file is fixed
    assert sidecar.read_bytes() == damaged  # never overwritten
    sidecar.unlink()
    assert memory.recall_stats()[tea].recalls == 1
