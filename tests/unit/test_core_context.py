"""The core context block: the goal belongs to one thread (its task as the writer filed it, never
its first message), `human` follows the user's facts until edited by hand, no persona is copied
into the store, and seeding never overwrites an edit or refills a cleared part."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import AIMessage

from memory.long_term import LongTermMemory
from memory.store.backends.sqlite_db import SqliteMemoryManager
from memory.store.backends.yaml_files import YamlMemoryManager
from memory.store.branch import Lineage
from memory.writer.consumer import MemoryConsumer
from tests.fakes import ScriptedModel
from tests.unit.test_writer_tools import MONDAY_MORNING, a_turn, call, step


@pytest.fixture
def manager(tmp_path: Path) -> YamlMemoryManager:
    return YamlMemoryManager(tmp_path / "memory", "ada")


async def say(manager: Any, thread: str, text: str, turn_id: str, *script: Any) -> None:
    model = ScriptedModel(messages=iter([*script, AIMessage("done")]))
    consumer = MemoryConsumer(model, clock=lambda: MONDAY_MORNING)
    checkpoint = f"{thread}-{turn_id}"
    lineage = Lineage(thread, frozenset({checkpoint}))
    said = a_turn(manager.user_id, turn_id, text, thread_id=thread, checkpoint_id=checkpoint,
                  lineage=lineage)  # fmt: skip
    result = await consumer.consume(said, LongTermMemory(manager))
    assert result.applied


def create(content: str, section: str, scope: str = "user") -> Any:
    return step(call("create_memory", content=content, section=section, scope=scope))


async def test_each_thread_has_its_own_goal_and_human_follows_the_facts(manager) -> None:
    await say(manager, "t1", "Let's plan a trip to Kyoto.", "turn-1",
              create("We plan a trip to Kyoto.", "task", "branch"))  # fmt: skip
    first = manager.get_core_context("t1")
    assert first["persona"] == ""  # the default persona lives in the app's prompt, not here
    assert first["human"] == ""  # no fact about the user yet
    assert first["goal"] == "We plan a trip to Kyoto."  # the task the writer filed
    await say(manager, "t1", "I like tea.", "turn-2", create("The user likes tea.", "taste"))
    await say(manager, "t1", "My name is Ada.", "turn-3", create("The user is Ada.", "identity"))
    assert manager.get_core_context("t1")["human"] == "The user is Ada.; The user likes tea."
    await say(manager, "t2", "Let's write a cover letter.", "turn-4",
              create("We write a cover letter.", "task", "branch"))  # fmt: skip
    other = manager.get_core_context("t2")
    assert other["goal"] == "We write a cover letter."  # not the Kyoto task of thread t1
    assert other["human"] == "The user is Ada.; The user likes tea."  # the user is the same
    assert manager.get_core_context("t1")["goal"] == "We plan a trip to Kyoto."  # kept


async def test_a_first_message_that_is_no_goal_does_not_become_one(manager) -> None:
    await say(manager, "t1", "Hi! My name is Ada and I live in Lisbon.", "turn-1",
              create("The user is Ada.", "identity"), create("The user lives in Lisbon.",
                                                              "identity"))  # fmt: skip
    context = manager.get_core_context("t1")
    assert context["goal"] == ""  # was "Hi! My name is Ada and I live in Lisbon."
    assert context["human"] == "The user is Ada.; The user lives in Lisbon."
    assert manager.get_core_context()["goal"] == manager.get_core_context("t3")["goal"] == ""


async def test_a_hand_edit_pins_human_and_a_cleared_part_stays_cleared(manager) -> None:
    await say(manager, "t1", "I'm Ada.", "turn-1", create("The user is Ada.", "identity"))
    manager.set_core_context(persona="", human="Ada, a botanist (written by hand)")
    await say(manager, "t1", "I live in Kyoto.", "turn-2", create("The user lives in Kyoto.",
                                                                 "places & paths"))  # fmt: skip
    assert "The user lives in Kyoto." in [m["description"] for m in manager.show()]
    context = manager.get_core_context("t1")
    assert context["persona"] == ""  # cleared by the user, not seeded again
    assert context["human"] == "Ada, a botanist (written by hand)"
    manager.set_core_context(goal="Learn Japanese", thread_id="t1")
    await say(manager, "t1", "Also this.", "turn-3")
    assert manager.get_core_context("t1")["goal"] == "Learn Japanese"


def test_seeding_decides_on_the_block_as_stored_not_as_read_before(tmp_path: Path) -> None:
    path = tmp_path / "memory.sqlite"
    writer, editor = SqliteMemoryManager(path, "ada"), SqliteMemoryManager(path, "ada")
    writer.seed_core_context(persona="p", human="auto facts", thread_id="t1", goal="g1")
    assert writer.get_core_context("t1")["human"] == "auto facts"
    editor.set_core_context(human="typed by Ada", goal="mine", thread_id="t1")
    # The writer's process read the old block; its seeding still keeps the editor's edit.
    writer.seed_core_context(persona="p2", human="newer auto facts", thread_id="t1", goal="g2")
    context = editor.get_core_context("t1")
    assert (context["persona"], context["human"], context["goal"]) == ("p", "typed by Ada", "mine")
    writer.close()
    editor.close()


def test_seeding_writes_only_when_something_changes(manager) -> None:
    heard: list[str] = []
    manager.add_change_listener(lambda: heard.append("write"))
    manager.seed_core_context(persona="p", human="h", thread_id="t1", goal="g")
    stamp = manager.get_core_context("t1")["updated_at"]
    manager.seed_core_context(persona="p", human="h", thread_id="t1", goal="other")
    assert manager.get_core_context("t1")["updated_at"] == stamp and heard == ["write"]


def test_bad_core_context_input_is_named(manager) -> None:
    with pytest.raises(ValueError, match="thread_id"):
        manager.set_core_context(goal="a goal without a thread")
    with pytest.raises(ValueError, match="thread_id"):
        manager.set_core_context(goal="g", thread_id="  ")
    with pytest.raises(ValueError, match="human"):
        manager.set_core_context(human="x" * 5000)
    assert manager.get_core_context() == {}
