"""The memory capacity: over it the writer is told so and create_memory refuses; the fact it
could not add is recorded in the trace; a merge makes room within the same turn."""

from __future__ import annotations

from pathlib import Path

import pytest
from langchain_core.messages import AIMessage

from memory.long_term import LongTermMemory
from memory.store.backends.yaml_files import YamlMemoryManager
from tests.unit.test_writer_tools import call, consume, reopened, step, tool_replies


@pytest.fixture
def full(tmp_path: Path) -> YamlMemoryManager:
    manager = YamlMemoryManager(tmp_path / "memory", "alice")
    manager.add("The user likes jazz.", "taste")
    manager.add("The user enjoys jazz music.", "taste")
    manager.add("The user lives in Lyon.", "identity")
    return manager


async def test_over_capacity_the_prompt_says_so_and_create_refuses(full: YamlMemoryManager):
    script = [
        step(call("create_memory", content="The user studies maths.", section="identity")),
        AIMessage("Could not add."),
    ]
    result, model = await consume(full, script, capacity=3)

    system = str(model.seen[0][0].content)
    assert "## The memory is full" in system and "holds 3 memories; the limit is 3" in system
    refusal = tool_replies(model)[0]
    assert refusal.startswith("Error: the memory is full") and "merge_memories" in refusal
    assert len(reopened(full).list_items()) == 3  # nothing created
    # Not dropped silently: the trace keeps the fact memory could not take.
    rows = LongTermMemory(full).trace.for_turn("alice", "turn-1")
    assert [(r.tool, r.op) for r in rows] == [("create_memory", "refused")]
    assert rows[0].arguments["content"] == "The user studies maths."
    assert result.applied


async def test_a_merge_makes_room_and_the_create_goes_through(full: YamlMemoryManager):
    script = [
        step(call("read_memories")),
        step(
            call(
                "merge_memories",
                id1=1,
                id2=2,
                content="The user likes jazz music.",
                section="taste",
                reason="duplicates",
            )
        ),
        step(call("create_memory", content="The user studies maths.", section="identity")),
        AIMessage("Merged and added."),
    ]
    _, model = await consume(full, script, capacity=3)
    assert tool_replies(model)[-1].startswith("Created memory")
    texts = {m["description"] for m in reopened(full).show()}
    assert texts == {
        "The user likes jazz music.",
        "The user lives in Lyon.",
        "The user studies maths.",
    }


async def test_under_capacity_or_without_one_the_prompt_is_unchanged(full: YamlMemoryManager):
    script = [
        step(call("create_memory", content="The user studies maths.", section="identity")),
        AIMessage("Added."),
    ]
    _, model = await consume(full, script, capacity=10)
    assert "memory is full" not in str(model.seen[0][0].content)
    assert len(reopened(full).list_items()) == 4


async def test_the_chinese_prompt_says_it_in_chinese(full: YamlMemoryManager):
    script = [AIMessage("没有变化")]
    _, model = await consume(full, script, text="我在里昂学数学。", capacity=2)
    assert "## 记忆已满" in str(model.seen[0][0].content)
