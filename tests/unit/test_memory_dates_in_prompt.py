"""The chat prompt shows the day each memory was said (and last changed): "when did I tell you…?"
has an answer, and of two memories that disagree the model can tell the later."""

from __future__ import annotations

from pathlib import Path

from graph.context import Context
from graph.prompting import build_system_prompt
from memory import LongTermMemory
from memory.retrieval.evaluation import write_items
from memory.store.factory import open_memory_manager
from tests.dated_memories import said


def test_the_chat_prompt_shows_when_each_memory_was_said_and_changed(tmp_path: Path) -> None:
    moved = said("I live in Lisbon.", "03-01")
    moved.update("moved", new_description="I live in Porto.")
    moved.latest_update_time = moved.history[-1]["time"] = "2024-05-02T12:00:00+00:00"
    items = {"home": moved, "dog": said("My dog is called Rex.", "01-15")}
    manager = open_memory_manager(f"sqlite:{tmp_path / 'memory.db'}", "alice")
    write_items(manager, items)
    memories = LongTermMemory(manager, embeddings="off").get_related_memory_from(
        "When did I tell you where I live? And my dog?", "mechanical", 5
    )
    prompt = build_system_prompt(Context(), memories, language="en")
    assert "- [conversation] I live in Porto. (said 2024-03-01, updated 2024-05-02)" in prompt
    assert "- [conversation] My dog is called Rex. (said 2024-01-15)" in prompt
    chinese = build_system_prompt(Context(), memories, language="zh")
    assert "I live in Porto.（2024-03-01 说的，2024-05-02 更新）" in chinese
