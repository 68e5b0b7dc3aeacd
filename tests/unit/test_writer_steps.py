"""What Studio shows of a memory_writer run: the memory agent's steps (its tool calls with their
arguments and what each tool answered) in the run's `messages`, not one opaque node."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from langchain_core.messages import AIMessage, ToolMessage
from langgraph.checkpoint.memory import InMemorySaver

from graph.context import Context
from memory.integration.writing.writer_graph import builder
from memory.store.factory import open_memory_manager


def _turn(turn_id: str, text: str) -> dict[str, Any]:
    return {
        "turn": {
            "user_id": "alice",
            "turn_id": turn_id,
            "thread_id": "t",
            "messages": [{"role": "user", "content": text}],
            "writer_model": "offline/rules",
        }
    }


def _tool_calls(messages: list[Any]) -> list[dict[str, Any]]:
    return [call for m in messages if isinstance(m, AIMessage) for call in m.tool_calls]


async def test_a_writer_run_shows_each_tool_call_with_its_arguments_and_answer(
    tmp_path: Path,
) -> None:
    writer = builder.compile(checkpointer=InMemorySaver())
    config = {"configurable": {"thread_id": "writer-of-alice"}}
    context = Context(user_id="alice", model="offline/rules")
    updates = [
        update
        async for update in writer.astream(
            _turn("t:1", "My name is Ada and I live in Lisbon."),
            config,
            context=context,
            stream_mode="updates",
        )
    ]
    # The node's update (what Studio's run view lists) carries the agent's steps.
    [step] = [u["write_memory"] for u in updates if "write_memory" in u]
    calls = _tool_calls(step["messages"])
    created = [c for c in calls if c["name"] == "create_memory"]
    assert created, calls
    stored = open_memory_manager(f"yaml:{tmp_path / 'memory'}", "alice").list_items().values()
    # Each call shown is one the agent made: its arguments are what reached the store.
    described = {str(c["args"]["content"]) for c in created}
    assert described == {item.description for item in stored}
    assert any("Lisbon" in text for text in described)
    answers = {m.tool_call_id: m for m in step["messages"] if isinstance(m, ToolMessage)}
    assert {c["id"] for c in calls} <= set(answers)  # every call has the tool's answer
    state = (await writer.aget_state(config)).values
    assert state["messages"] == step["messages"]

    # The next run on the user's writer thread shows its own steps only: no pile-up.
    await writer.ainvoke(_turn("t:2", "I work at Acme."), config, context=context)
    later = (await writer.aget_state(config)).values["messages"]
    later_calls = _tool_calls(later)
    assert later_calls and not {c["id"] for c in later_calls} & {c["id"] for c in calls}
    assert any("Acme" in str(c["args"]) for c in later_calls)
    assert not any("Lisbon" in str(c["args"]) for c in later_calls)
