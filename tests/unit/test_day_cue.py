"""A question that names a day ("on May 2nd") finds what the user said that day even when the day
holds more memories than the fusion's shortlist: the day counts for every candidate of it; and
the query coverage that BM25's confidence gate would read."""

from __future__ import annotations

from pathlib import Path

import pytest

from memory import LongTermMemory
from memory.retrieval.bm25_index import Bm25Index
from memory.retrieval.embedder import OfflineEncoder
from memory.retrieval.evaluation import write_items
from memory.store.factory import open_memory_manager
from memory.store.item import MemoryItem
from memory.text.tokenize import tokenize

pytestmark = pytest.mark.skipif(not OfflineEncoder.available(), reason="offline model missing")

# What a talkative user told the assistant on one day after the morning's shopping, and what a
# friend did with a dress another day: BM25's "dress" alone would pick the friend's.
LATER_THAT_DAY = [
    "User cooked noodles with tomato and egg for lunch",
    "User watched a documentary about whales in the afternoon",
    "User called their grandmother, who is recovering from a cold",
    "User practised the guitar chords of a folk song",
    "User went for a run along the river in the evening",
    "User read two chapters of a mystery novel before bed",
]


def _item(text: str, when: str) -> MemoryItem:
    item = MemoryItem.create(text, "conversation", "test")
    item.latest_update_time = when
    item.history[-1]["time"] = when
    return item


def test_the_named_day_counts_for_a_morning_memory_of_a_busy_day(tmp_path: Path) -> None:
    items = {
        "dress": _item(
            "This morning at the mall the user finally bought a dark green dress "
            "for the summer wedding of a cousin",
            "2026-05-02T08:00:00+00:00",
        )
    }
    for number in range(80):  # more memories that day than the 50 most recent the cue reads
        text = f"{LATER_THAT_DAY[number % len(LATER_THAT_DAY)]} (part {number})"
        when = f"2026-05-02T{10 + number // 10:02d}:{number % 60:02d}:00+00:00"
        items[f"later{number}"] = _item(text, when)
    items["friend"] = _item("Mia bought a blue dress", "2026-04-20T12:00:00+00:00")
    manager = open_memory_manager(f"sqlite:{tmp_path / 'memory.db'}", "alice")
    write_items(manager, items)
    memory = LongTermMemory(manager)
    assert memory.retrievers.catch_up(max_missing=len(items), timeout=300)

    found = [m["id"] for m in memory.get_related_memory_from(
        "On May 2nd I bought a dress: what colour was it?", "mechanical", limit=3)]  # fmt: skip

    assert found[0] == "dress", found


def test_coverage_weighs_the_rare_words_of_the_question() -> None:
    """BM25's confidence gate (measured, off by default) reads how much of a question its best
    memory holds: the rare word "dress" counts for more than the common "bought"."""
    items = {f"m{n}": _item(f"User bought item number {n}", "2026-05-01T12:00:00+00:00")
             for n in range(20)}  # fmt: skip
    items["dress"] = _item("A green dress", "2026-05-01T12:00:00+00:00")
    index = Bm25Index.build("r1", items)
    tokens = tokenize("bought a dress")
    dress, bought = index.coverage(tokens, index.positions["dress"]), index.coverage(
        tokens, index.positions["m0"])  # fmt: skip
    assert dress > 0.5 > bought > 0.0
    assert index.coverage(tokenize("bought dress"), index.positions["dress"]) < 1.0
    assert index.coverage(tokenize("green dress"), index.positions["dress"]) == 1.0
