"""Optimistic concurrency: a writer's change staged against an old read never overwrites an edit."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, ToolMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from pydantic import Field

from memory.errors import StaleWrite
from memory.long_term import LongTermMemory
from memory.store.backends.yaml_files import YamlMemoryManager
from memory.store.manager import BaseMemoryManager, Change
from memory.writer.consumer import MemoryConsumer, MemoryWriteFailed
from memory.writer.turn import Turn


def test_apply_refuses_a_change_to_an_item_edited_since_it_was_read(
    manager: BaseMemoryManager,
) -> None:
    lisbon = manager.add("User lives in Lisbon", "identity")
    tea = manager.add("User likes tea", "taste")
    seen = {i: item.latest_update_time for i, item in manager.list_items().items()}
    manager.update(lisbon, "corrected in the editor", "User lives in Porto since 2026")
    revision = manager.revision
    stale = [
        Change(
            "update", id=tea, description="User likes green tea", expected_update_time=seen[tea]
        ),
        Change(
            "update",
            id=lisbon,
            description="Lisbon, by the river",
            reason="more detail",
            expected_update_time=seen[lisbon],
        ),
    ]
    with pytest.raises(StaleWrite, match=repr(lisbon)):
        manager.apply(stale, "turn-1")
    assert manager.get(lisbon).description == "User lives in Porto since 2026"
    assert manager.get(tea).description == "User likes tea"  # all or nothing
    assert manager.revision == revision and not manager.has_applied("turn-1")

    for change in (
        Change("delete", id=lisbon, reason="obsolete", expected_update_time=seen[lisbon]),
        Change(
            "merge",
            id=tea,
            other_id=lisbon,
            description="x",
            theme="t",
            reason="same",
            expected_update_time=seen[tea],
            expected_other_update_time=seen[lisbon],
        ),
    ):
        with pytest.raises(StaleWrite):
            manager.apply([change], "turn-2")
    # Hits carry no expectation (a count commutes with an edit); a fresh expectation passes.
    current = manager.get(lisbon).latest_update_time
    manager.apply(
        [
            Change("hit", id=lisbon),
            Change(
                "update",
                id=lisbon,
                description="Porto, by the river",
                reason="detail",
                expected_update_time=current,
            ),
            Change("hit", id=lisbon),
        ],
        "turn-3",
    )
    assert manager.get(lisbon).description == "Porto, by the river"
    assert manager.get(lisbon).hit == 2


class EditingModel(BaseChatModel):
    """Plays its steps in order; a callable step runs (the user edits) and plays what it returns."""

    steps: list[Any]
    seen: list[list[BaseMessage]] = Field(default_factory=list)

    @property
    def _llm_type(self) -> str:
        return "scripted-with-edits"

    def bind_tools(self, tools: Any, **kwargs: Any) -> EditingModel:
        return self

    def _generate(self, messages: list[BaseMessage], *args: Any, **kwargs: Any) -> ChatResult:
        self.seen.append(list(messages))
        step = self.steps.pop(0)
        message = step() if callable(step) else step
        return ChatResult(generations=[ChatGeneration(message=message)])


def _call(name: str, n: int, **args: Any) -> AIMessage:
    return AIMessage(
        "", tool_calls=[{"name": name, "args": args, "id": f"c{n}", "type": "tool_call"}]
    )


TURN = Turn.of(
    "u",
    # Lisbon said, so that a memory naming it is no invented name (memory/writer/faithful.py).
    [
        {"role": "user", "content": "I live near the river in Lisbon"},
        {"role": "assistant", "content": "Ok"},
    ],
    turn_id="turn-1",
    thread_id="s",
)


async def test_an_edit_between_staging_and_apply_is_kept_and_the_turn_reruns(
    tmp_path: Path,
) -> None:
    manager = YamlMemoryManager(tmp_path, "u")
    lisbon = manager.add("User lives in Lisbon", "identity")

    def edit_then_update() -> AIMessage:  # the person corrects the memory while the agent works
        manager.update(lisbon, "corrected in the editor", "User lives in Porto since 2026")
        return _call(
            "update_memory",
            2,
            id=1,
            content="User lives in Lisbon, by the river",
            reason="more detail",
        )

    model = EditingModel(
        steps=[
            _call("read_memories", 1),
            edit_then_update,
            AIMessage("done"),  # first run: stale
            _call("read_memories", 3),  # the rerun reads the corrected text ...
            _call(
                "update_memory",
                4,
                id=1,
                content="User lives in Porto since 2026, by the river",
                reason="more detail",
            ),
            AIMessage("done"),
        ]
    )
    memory = LongTermMemory(manager)
    result = await MemoryConsumer(model).consume(TURN, memory)

    assert result.applied
    # The trace keeps the rerun's changes only (an update also counts as a use: a hit).
    traced = memory.trace.for_turn("u", "turn-1", include_staged=True)
    assert [(e.tool, e.op, e.state) for e in traced] == [
        ("update_memory", "update", "applied"), ("update_memory", "hit", "applied")
    ]  # fmt: skip
    assert {e.arguments["content"] for e in traced} == {
        "User lives in Porto since 2026, by the river"
    }
    rerun_read = [m for m in model.seen[-2] if isinstance(m, ToolMessage)][-1]
    assert "Porto since 2026" in str(rerun_read.content)
    history = manager.show_description_history(lisbon)
    assert [h["action"] for h in history] == ["update", "update", "create"]
    assert history[1]["description"] == "User lives in Porto since 2026"  # the correction kept
    assert manager.get(lisbon).description == "User lives in Porto since 2026, by the river"


async def test_edits_on_every_run_fail_the_turn_and_keep_the_edits(tmp_path: Path) -> None:
    manager = YamlMemoryManager(tmp_path, "u")
    lisbon = manager.add("User lives in Lisbon", "identity")
    edits = iter(["Porto", "Faro"])

    def edit_then_update() -> AIMessage:
        manager.update(lisbon, "editor", f"User lives in {next(edits)}")
        return _call(
            "update_memory", 2, id=1, content="User lives in Lisbon, by the river", reason="detail"
        )

    model = EditingModel(steps=[_call("read_memories", 1), edit_then_update, AIMessage("done")] * 2)
    memory = LongTermMemory(manager)
    with pytest.raises(MemoryWriteFailed, match="changed since the writer read it"):
        await MemoryConsumer(model).consume(TURN, memory)
    assert manager.get(lisbon).description == "User lives in Faro"
    assert not manager.has_applied("turn-1")  # the queue retries it later, or dead-letters it
    # Nothing staged is left behind; the failure is traced with its cause.
    [failed] = memory.trace.for_turn("u", "turn-1", include_staged=True)
    assert failed.state == "failed" and "changed since the writer read it" in failed.result


async def test_a_memory_deleted_in_the_editor_meanwhile_reruns_the_turn_without_it(
    tmp_path: Path,
) -> None:
    manager = YamlMemoryManager(tmp_path, "u")
    tea = manager.add("User likes tea", "taste")
    manager.add("User lives in Lisbon", "identity")

    def delete_then_hit() -> AIMessage:  # a hit carries no expectation, but its item is gone
        manager.delete(tea, "the person removed it in the editor")
        return _call("hit_memory", 2, id=1)

    model = EditingModel(
        steps=[
            _call("read_memories", 1),
            delete_then_hit,
            AIMessage("done"),
            _call("read_memories", 3),  # the rerun sees one memory, Lisbon, as id 1
            _call("hit_memory", 4, id=1),
            AIMessage("done"),
        ]
    )
    result = await MemoryConsumer(model).consume(TURN, LongTermMemory(manager))
    assert result.applied
    assert tea in manager.deleted_items()  # the person's delete stands
    assert [item.hit for item in manager.list_items().values()] == [1]
