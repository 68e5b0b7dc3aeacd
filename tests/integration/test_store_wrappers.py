"""Per-thread store wrappers share one lock per user; self_check leaves the revision alone; a
cached reader sees any write, even one that set the revision number it cached."""

from __future__ import annotations

import asyncio
import importlib
import threading
from pathlib import Path
from typing import Any

import pytest
from langgraph.store.base import PutOp
from langgraph.store.memory import InMemoryStore

from memory.store.backends.langgraph_store import REVISION_KEY, StoreMemoryManager
from memory.store.item import MemoryItem

HITS_PER_THREAD = 150


def _server_wrapper_class(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Any:
    """langgraph_runtime_inmem's BatchedStore: what `langgraph dev` gives each event loop."""
    monkeypatch.chdir(tmp_path)  # the module makes a .langgraph_api folder where it is imported
    return importlib.import_module("langgraph_runtime_inmem.store").BatchedStore


def test_two_event_loops_with_their_own_wrappers_lose_no_write(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    batched_store = _server_wrapper_class(tmp_path, monkeypatch)
    shared = InMemoryStore()
    memory_id = StoreMemoryManager(shared, "alice").add("User likes tea", "taste")
    managers: list[StoreMemoryManager] = []
    start = threading.Barrier(2)

    async def one_loop() -> None:
        manager = StoreMemoryManager(batched_store(shared), "alice")  # this loop's own wrapper
        managers.append(manager)

        def hammer() -> None:
            start.wait()
            for _ in range(HITS_PER_THREAD):
                manager.hit(memory_id)  # a read-modify-write of the same item

        await asyncio.to_thread(hammer)

    threads = [threading.Thread(target=asyncio.run, args=(one_loop(),)) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    assert managers[0].store is not managers[1].store
    assert managers[0]._lock is managers[1]._lock
    assert StoreMemoryManager(shared, "alice").get(memory_id).hit == 2 * HITS_PER_THREAD


class RecordingStore(InMemoryStore):
    """An in-memory store that remembers every write of the revision key."""

    revision_puts: list[Any]

    def batch(self, ops: Any) -> Any:
        ops = list(ops)
        self.revision_puts += [op for op in ops if isinstance(op, PutOp) and op.key == REVISION_KEY]
        return super().batch(ops)


def test_self_check_does_not_rewrite_the_revision_when_nothing_was_repaired() -> None:
    store = RecordingStore()
    store.revision_puts = []
    writer = StoreMemoryManager(store, "alice")
    writer.add("User likes tea", "taste")
    written = writer.revision
    store.revision_puts.clear()
    report = StoreMemoryManager(store, "alice").self_check()
    assert report.status == "OK"
    assert store.revision_puts == []  # a racing writer's newer revision is never set back
    assert writer.revision == written


def test_a_write_that_set_the_same_revision_number_still_reaches_a_cached_reader() -> None:
    store = InMemoryStore()
    reader = StoreMemoryManager(store, "alice")
    reader.add("User likes tea", "taste")
    assert len(reader.list_items()) == 1  # cached at this revision
    # A second writer that read the same revision (no shared lock) writes an item and sets the
    # same revision number the reader cached, as two racing read-modify-writes would.
    counter = reader._revision()
    coffee = MemoryItem(description="User likes coffee", theme="taste")
    store.put(reader.items_ns, "racer01", coffee.to_dict())
    store.put(reader.meta_ns, REVISION_KEY, {"revision": counter, "stamp": "second-writer"})
    assert {item.description for item in reader.list_items().values()} == {
        "User likes tea",
        "User likes coffee",
    }
