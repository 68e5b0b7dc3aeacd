"""A question about a topic the user opened finds the detail they gave next in the same
conversation, though the detail shares no word with the question: the fused ranking passes a
share of a memory's score to the one its conversation created next (and only that one)."""

from __future__ import annotations

from pathlib import Path

import pytest

from memory import LongTermMemory
from memory.retrieval.bm25_index import Bm25Index
from memory.retrieval.embedder import OfflineEncoder
from memory.retrieval.evaluation import write_items
from memory.retrieval.fusion import fuse_scores
from memory.store.factory import open_memory_manager
from memory.store.item import MemoryItem

QUESTION = "Do you remember the painting of mine that went to the exhibition? What was behind it?"
OPENER = "One of the user's paintings was selected for a gallery exhibition in the city"
DETAIL = "A trip to Tibet last spring, its mountains and monasteries, gave the user the idea"
OTHERS = [
    "The user visited an exhibition of ancient bronze artwork with a friend",
    "The user thinks modern art exhibitions are often too crowded",
    "The user is painting the kitchen walls light blue this weekend",
    "The user bought new watercolour paper and brushes",
    "The user's sister works at a museum of natural history",
    "The user admires the paintings of Monet, especially the water lilies",
]


def _item(text: str, thread: str, minute: int) -> MemoryItem:
    item = MemoryItem.create(text, "conversation", "test", origin={"thread_id": thread})
    when = f"2026-04-30T10:{minute:02d}:00+00:00"
    item.latest_update_time = when
    item.history[-1]["time"] = when
    return item


def _store(tmp_path: Path, detail_thread: str) -> LongTermMemory:
    items = {"opener": _item(OPENER, "monday", 1), "detail": _item(DETAIL, detail_thread, 2)}
    items |= {f"other{n}": _item(text, f"day{n}", 3 + n) for n, text in enumerate(OTHERS)}
    manager = open_memory_manager(f"sqlite:{tmp_path / 'memory.db'}", "alice")
    write_items(manager, items)
    memory = LongTermMemory(manager)
    assert memory.retrievers.catch_up(max_missing=len(items), timeout=300)
    return memory


def _found(memory: LongTermMemory, limit: int) -> list[str]:
    return [m["id"] for m in memory.get_related_memory_from(QUESTION, "mechanical", limit=limit)]


@pytest.mark.skipif(not OfflineEncoder.available(), reason="offline model missing")
def test_the_detail_said_next_comes_with_the_topic_it_follows(tmp_path: Path) -> None:
    found = _found(_store(tmp_path, "monday"), 5)
    assert found[0] == "opener" and "detail" in found


@pytest.mark.skipif(not OfflineEncoder.available(), reason="offline model missing")
def test_the_same_text_from_another_conversation_does_not_ride_along(tmp_path: Path) -> None:
    found = _found(_store(tmp_path, "tuesday"), 5)
    assert found[0] == "opener" and "detail" not in found


def _index(items: dict[str, MemoryItem]) -> Bm25Index:
    return Bm25Index.build("r1", items)


def test_next_is_by_creation_in_the_same_thread_and_skips_what_is_gone() -> None:
    items = {
        "b": _item("second thing said", "t1", 2),
        "a": _item("first thing said", "t1", 1),
        "x": _item("said elsewhere in between", "t2", 3),
        "c": _item("third thing said", "t1", 4),
        "none": MemoryItem.create("written with no conversation", "note", "test"),
    }
    index = _index(items)
    position = index.positions
    assert index.next_in_conversation(position["a"]) == position["b"]  # not the first indexed
    assert index.next_in_conversation(position["b"]) == position["c"]  # not t2's
    assert index.next_in_conversation(position["c"]) is None  # the conversation's newest
    assert index.next_in_conversation(position["none"]) is None
    # Edited: indexed again at a new position, still second in its conversation.
    items["b"] = _item("second thing said, corrected", "t1", 2)
    edited = index.updated("r2", items)
    assert edited.next_in_conversation(edited.positions["a"]) == edited.positions["b"]
    # Forgotten: it leaves the index, and the conversation's next one takes its place.
    del items["b"]
    forgotten = edited.updated("r3", items)
    assert forgotten.next_in_conversation(forgotten.positions["a"]) == forgotten.positions["c"]


def test_only_the_best_pass_a_share_and_only_their_own_score() -> None:
    following = {0: 1, 1: 2, 7: 8}.get
    # BM25 finds 0 (best) and 7 (far behind); 1 and 8 follow them; 2 follows 1.
    order = fuse_scores([(0, 10.0), (7, 0.5), (9, 6.0)], [], 10, next_in_conversation=following)
    assert order[:3] == [0, 9, 1]  # 1 gets half of 0's score: 5.0, below 9's 6.0
    assert 2 not in order  # 1's share came from 0: it passes nothing on
    assert order.index(8) > order.index(7)
    alone = fuse_scores([(0, 10.0), (7, 0.5), (9, 6.0)], [], 10)
    assert alone == [0, 9, 7]
