"""Several real processes writing one user's memory on one PostgreSQL lose no write."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from memory.errors import MemoryBusy
from memory.long_term import LongTermMemory
from memory.store.backends.langgraph_store import StoreMemoryManager
from memory.store.locking import PostgresLock
from tests.integration.conftest import (
    POSTGRES_URL,
    _delete_postgres_rows,
    require_postgres,
)
from tests.integration.contended_writer import open_manager

ROOT = Path(__file__).resolve().parents[2]
PROCESSES, HITS, EDITS = 4, 40, 10

pytestmark = [pytest.mark.postgres, pytest.mark.slow]


@pytest.fixture
def user() -> Iterator[str]:
    """A fresh user on the local PostgreSQL (missing there: skipped, but failed under CI)."""
    require_postgres()
    name = f"contended-{uuid.uuid4().hex[:8]}"
    yield name
    _delete_postgres_rows({name})


def spawn(*args: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "tests.integration.contended_writer", *args],
        cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)}, text=True,
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
    )  # fmt: skip


@pytest.mark.parametrize("backend", ["postgres", "store"])
def test_four_processes_hitting_and_editing_one_memory_lose_nothing(
    backend: str, user: str, tmp_path: Path
) -> None:
    manager = open_manager(backend, POSTGRES_URL, user)
    hit_id = manager.add("User drinks green tea", "taste")
    edit_id = manager.add("User lives in Lisbon", "place")
    go = tmp_path / "go"
    writers = [
        spawn("write", backend, POSTGRES_URL, user, hit_id, edit_id, str(HITS), str(EDITS), str(go))
        for _ in range(PROCESSES)
    ]
    time.sleep(3)  # every process is importing and connecting: start them together
    go.touch()
    reports = []
    for writer in writers:
        output, _ = writer.communicate(timeout=240)
        assert writer.returncode == 0, output
        reports.append(json.loads(output.strip().splitlines()[-1]))
    assert [report["errors"] for report in reports] == [{}] * PROCESSES
    fresh = open_manager(backend, POSTGRES_URL, user)
    assert fresh.get(hit_id).hit == PROCESSES * HITS
    history = {entry.get("description") for entry in fresh.get(edit_id).history}
    made = {edit for report in reports for edit in report["edits"]}
    assert len(made) == PROCESSES * EDITS
    assert made <= history | {fresh.get(edit_id).description}
    # Every write moved the revision once: 2 adds, then each hit and edit.
    assert fresh.revision.split(".")[0] == str(2 + PROCESSES * (HITS + EDITS))


def test_a_writer_killed_while_holding_the_lock_leaves_nothing_and_frees_the_lock(
    user: str,
) -> None:
    manager = open_manager("postgres", POSTGRES_URL, user)
    kept = manager.add("User plays the cello", "hobby")
    before = manager.revision
    holder = spawn("hold", "postgres", POSTGRES_URL, user)
    assert holder.stdout is not None
    assert holder.stdout.readline().strip() == "holding"
    holder.send_signal(signal.SIGKILL)
    holder.wait(10)
    started = time.monotonic()
    manager.hit(kept)  # waits for PostgreSQL to see the holder's connection gone
    assert time.monotonic() - started < 10
    fresh = open_manager("postgres", POSTGRES_URL, user)
    assert "doomed" not in fresh.all_items()  # its write died with its transaction
    assert fresh.get(kept).hit == 1
    assert fresh.revision != before


def test_a_write_that_cannot_get_the_lock_is_refused_with_a_clear_error(user: str) -> None:
    manager = open_manager("postgres", POSTGRES_URL, user)
    kept = manager.add("User plays the cello", "hobby")
    holder = spawn("hold", "postgres", POSTGRES_URL, user)
    try:
        assert holder.stdout is not None
        assert holder.stdout.readline().strip() == "holding"
        impatient = StoreMemoryManager(
            manager.store, user, PostgresLock(POSTGRES_URL, wait_seconds=0.5), writes_in_lock=True
        )
        with pytest.raises(MemoryBusy, match=f"memory of user '{user}' is being written"):
            impatient.hit(kept)
    finally:
        holder.kill()
        holder.wait(10)
    assert manager.get(kept).hit == 0  # refused, not half done
    assert manager.hit(kept) == 1  # and the same call goes through once the lock is free


@pytest.mark.parametrize("backend", ["postgres", "store"])
def test_a_replica_sees_another_replicas_write_on_its_next_read(backend: str, user: str) -> None:
    reader = LongTermMemory(open_manager(backend, POSTGRES_URL, user), embeddings="off")
    reader.manager.add("User drinks green tea every morning", "taste")
    assert reader.get_related_memory_from("cello lessons", "mechanical") == []
    assert reader.get_core_context() == {}  # read once: whatever it caches is now stale
    writer = spawn("add", backend, POSTGRES_URL, user, "User takes cello lessons", "Ana, 34")
    output, _ = writer.communicate(timeout=60)
    assert writer.returncode == 0, output
    found = reader.get_related_memory_from("cello lessons", "mechanical")
    assert [memory["description"] for memory in found] == ["User takes cello lessons"]
    assert reader.get_core_context()["human"] == "Ana, 34"
    assert reader.search("cello") == [output.strip().splitlines()[-1]]  # the editor's search too
