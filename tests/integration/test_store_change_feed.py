"""The store backend's change feed: a replica catches up on another's writes by point reads and
sees what a full read would (what either feed gives: tests/integration/test_retrieval.py)."""

from __future__ import annotations

from langgraph.store.memory import InMemoryStore

from memory.store.backends.langgraph_store import REVISION_KEY, StoreMemoryManager
from memory.store.backends.store_changes import CHANGES_KEPT
from memory.store.document import Change, MemoryDocument
from memory.store.item import MemoryItem


def test_a_token_that_names_no_one_write_gets_no_delta() -> None:
    manager = StoreMemoryManager(InMemoryStore(), "alice")
    manager.add("User likes tea", "taste")
    counter = manager.change_token().split(".")[0]
    assert manager.changes_since(counter) is None  # a counter alone: which write set it?
    assert manager.changes_since(f"{counter}.another-write") is None


def test_a_replica_catching_up_by_the_feed_sees_what_a_full_read_sees() -> None:
    store = InMemoryStore()
    writer, reader = StoreMemoryManager(store, "alice"), StoreMemoryManager(store, "alice")
    tea = writer.add("User likes tea", "taste")
    porto = writer.add("User lives in Porto", "identity")
    assert set(reader.list_items()) == {tea, porto}  # cached now
    writer.hit(tea)
    writer.update(porto, "moved", new_description="User lives in Lisbon")
    writer.apply(
        [Change("add", description="User has a cat", theme="pets"), Change("hit", id=tea)],
        "turn-1",
    )
    writer.merge(tea, porto, "User likes tea in Lisbon", "taste", "one fact")
    caught_up = reader.read_document()
    full = StoreMemoryManager(store, "alice").read_document()
    assert caught_up.items == full.items
    assert caught_up.revision == full.revision
    assert caught_up.applied_turns == full.applied_turns and reader.has_applied("turn-1")
    assert [item.description for item in reader.list_items().values()] == [
        "User likes tea in Lisbon",
        "User has a cat",
    ]


def test_writes_the_feed_cannot_describe_make_a_reader_read_everything() -> None:
    store = InMemoryStore()
    writer, reader = StoreMemoryManager(store, "alice"), StoreMemoryManager(store, "alice")
    tea = writer.add("User likes tea", "taste")
    assert set(reader.list_items()) == {tea}
    writer.purge(tea)  # removed for good
    assert reader.list_items() == {}
    bulk = {f"m{n:04d}": MemoryItem.create(f"memory {n}", "bulk", "") for n in range(3)}
    writer.import_document(MemoryDocument(bulk, [], 0))  # a snapshot restore writes no entry
    assert set(reader.list_items()) == set(bulk)


def test_a_reader_far_behind_reads_everything_and_the_feed_stays_bounded() -> None:
    store = InMemoryStore()
    writer, reader = StoreMemoryManager(store, "alice"), StoreMemoryManager(store, "alice")
    tea = writer.add("User likes tea", "taste")
    token = reader.change_token()
    assert set(reader.list_items()) == {tea}
    for _ in range(CHANGES_KEPT + 5):
        writer.hit(tea)
    assert writer.changes_since(token) is None  # further behind than the feed keeps
    assert reader.list_items()[tea].hit == CHANGES_KEPT + 5
    assert len(store.search(writer.changes.namespace, limit=5 * CHANGES_KEPT)) == CHANGES_KEPT
    revision = store.get(writer.meta_ns, REVISION_KEY)
    assert revision is not None and revision.value["revision"] == CHANGES_KEPT + 6
