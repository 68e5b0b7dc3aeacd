"""read_memories in a large store: under budget, related memories first, a search for the rest."""

from __future__ import annotations

import re
import time
from pathlib import Path

import pytest

from memory.store.backends.sqlite_db import SqliteMemoryManager
from memory.store.manager import Change
from memory.writer.listing import MAX_SHOWN_CHARS, MAX_SHOWN_ITEMS
from memory.writer.tools import MemoryToolkit
from memory.writer.turn import Turn

TOPICS = ["hiking", "chess", "violin", "baking", "cycling", "poetry", "gardening", "sailing"]


def _big_store(tmp_path: Path, count: int = 5000) -> tuple[SqliteMemoryManager, str]:
    manager = SqliteMemoryManager(tmp_path / "m.db", "u")
    changes = [
        Change(
            "add",
            description=f"User noted {TOPICS[i % 8]} detail {i} on day {i % 365}",
            theme=TOPICS[i % 8],
        )
        for i in range(count - 1)
    ]
    changes.insert(
        1234, Change("add", id="cat", description="User's cat Mochi is three", theme="pets")
    )
    manager.apply(changes, "fill")
    return manager, "cat"


def toolkit_for(manager: SqliteMemoryManager, said: str) -> MemoryToolkit:
    """The toolkit of a turn in which the user said `said` (what read_memories ranks by)."""
    return MemoryToolkit.for_turn(manager, Turn.of("u", [{"role": "user", "content": said}]))


@pytest.mark.slow  # a 5,000-item store
def test_a_5000_item_store_is_shown_under_budget_with_the_related_memory(tmp_path: Path) -> None:
    manager, cat_id = _big_store(tmp_path)
    kit = toolkit_for(manager, "Mochi my cat had a checkup at the vet today")
    tools = {tool.name: tool for tool in kit.tools}
    kit.view.load()
    started = time.perf_counter()
    shown = tools["read_memories"].invoke({})
    elapsed = time.perf_counter() - started

    lines = [line for line in shown.splitlines() if line.startswith("[")]
    assert len(lines) <= MAX_SHOWN_ITEMS
    assert len(shown) <= MAX_SHOWN_CHARS + 1000  # the list plus the note and headings
    assert "Mochi" in shown
    assert "5000 memories exist" in shown and "read_memories(query=" in shown
    assert elapsed < 10, elapsed

    # The model searches the rest with words, and the short ids it sees work for updates.
    found = tools["read_memories"].invoke({"query": "violin detail 4242"})
    short_id = int(re.search(r"\[(\d+)\] User noted violin detail 4242 ", found).group(1))
    reply = tools["update_memory"].invoke(
        {"id": short_id, "content": "User noted violin detail 4242, weekly", "reason": "more"}
    )
    assert reply == f"Updated memory {short_id}."
    assert kit.changes[0].id == kit.view.live[short_id].real_id
    cat_short = next(s for s, m in kit.view.live.items() if m.real_id == cat_id)
    assert f"[{cat_short}] User's cat Mochi" in shown


def test_a_small_store_is_shown_whole_without_a_note(tmp_path: Path) -> None:
    manager = SqliteMemoryManager(tmp_path / "m.db", "u")
    manager.add("User likes tea", "taste")
    kit = toolkit_for(manager, "anything")
    assert (
        kit.read_memories()
        == "1 memories (ids are the numbers in brackets):\n## taste\n[1] User likes tea"
    )
