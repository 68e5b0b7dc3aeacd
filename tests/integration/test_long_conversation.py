"""A 300-turn conversation through the compiled graph with a real SQLite checkpointer: the prompt
stays within its budget, tool calls stay paired, and nothing said early is lost."""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import AIMessage, BaseMessage, ToolMessage
from langchain_core.messages.utils import count_tokens_approximately
from langgraph.checkpoint.sqlite import SqliteSaver

import graph.nodes as nodes
import memory.integration.compaction as compaction
from graph.agent import compile_graph
from graph.context import Context
from memory.integration.models.offline import OfflineChatModel
from memory.integration.settings import get_settings, use_settings
from memory.registry import registry
from tests.fakes import ScriptedModel

pytestmark = pytest.mark.slow

TURNS = 300
BUDGET = 2_000
DETAIL = "I live in Lisbon. My locker code at the gym is 4711."


def user_text(turn: int) -> str:
    if turn == 3:
        return DETAIL
    return f"Turn {turn}: the weather report says light rain, about {turn} millimetres today."


def script() -> Iterator[AIMessage]:
    """The chat model's answers: a plain reply, every tenth turn a tool round first, and at the
    last turn a search of the archive for what was said at turn 3."""
    for turn in range(1, TURNS + 1):
        if turn == TURNS:
            yield AIMessage("", tool_calls=[
                {"name": "search_conversations", "args": {"query": "locker code"},
                 "id": "call-search", "type": "tool_call"}])  # fmt: skip
            yield AIMessage("Your locker code is in the archive.")
            continue
        if turn % 10 == 0:
            yield AIMessage("", tool_calls=[
                {"name": "get_current_time", "args": {}, "id": f"call-{turn}",
                 "type": "tool_call"}])  # fmt: skip
        yield AIMessage(f"Reply {turn}: noted, and it sounds like a quiet day in the garden.")


def unpaired(messages: list[BaseMessage]) -> list[str]:
    """Tool results without their AI message before them, and tool calls without results."""
    problems, asked, answered = [], set(), set()
    for message in messages:
        if isinstance(message, AIMessage):
            asked.update(call["id"] for call in message.tool_calls)
        if isinstance(message, ToolMessage):
            if message.tool_call_id not in asked:
                problems.append(f"result {message.tool_call_id} without its call")
            answered.add(message.tool_call_id)
    last_ai = [m for m in messages if isinstance(m, AIMessage)][-1:]
    pending = {call["id"] for m in last_ai for call in m.tool_calls}
    problems += [f"call {c} without result" for c in asked - answered - pending]
    return problems


def checkpoint_bytes(path: Path) -> int:
    with sqlite3.connect(path) as db:
        checkpoints = db.execute("SELECT SUM(LENGTH(checkpoint)) FROM checkpoints").fetchone()[0]
        writes = db.execute("SELECT SUM(LENGTH(value)) FROM writes").fetchone()[0]
    return int(checkpoints or 0) + int(writes or 0)


def wait_for(check: Any, seconds: float = 30.0) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if check():
            return True
        time.sleep(0.1)
    return bool(check())


def test_three_hundred_turns(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    chat = ScriptedModel(messages=script())
    monkeypatch.setattr(nodes, "load_chat_model", lambda name, **_: chat)
    # The summary: extractive, as the offline model makes it.
    monkeypatch.setattr(compaction, "load_chat_model", lambda name, **_: OfflineChatModel())
    path = tmp_path / "threads.sqlite"
    context = Context(user_id="alice", model="offline/rules")
    with (
        use_settings(
            memory_backend=f"sqlite:{tmp_path / 'memory.db'}", context_budget_tokens=str(BUDGET),
            # Batches wait: only the flush before compaction can hand turn 3 to the writer.
            write_batch_size=100, write_batch_seconds=3600, embeddings="off",
        ),
        SqliteSaver.from_conn_string(str(path)) as saver,
    ):  # fmt: skip
        app = compile_graph(checkpointer=saver)
        config = {"configurable": {"thread_id": "long"}}
        manager = registry.open(get_settings().memory_backend, "alice").manager
        first_compaction, sizes, prompts_before = 0, {}, 0
        for turn in range(1, TURNS + 1):
            state = app.invoke(
                {"messages": [{"role": "user", "content": user_text(turn)}]}, config,
                context=context,
            )  # fmt: skip
            assert isinstance(state["messages"][-1], AIMessage)
            if not first_compaction and state.get("compaction", {}).get("status") == "compacted":
                first_compaction, prompts_before = turn, len(chat.seen)
                # Handed over by the flush: the batch was neither full nor quiet long enough.
                assert wait_for(
                    lambda: any("Lisbon" in i.description for i in manager.list_items().values())
                ), "the fact of turn 3 was not written after the flush"
            if turn in (100, 200, 300):
                sizes[turn] = checkpoint_bytes(path)
        assert 0 < first_compaction < 100
        compacted_prompts = chat.seen[prompts_before:]
        largest = max(count_tokens_approximately(p) for p in compacted_prompts)
        assert largest <= BUDGET, largest
        for prompt in chat.seen:
            assert unpaired(prompt) == []
        assert unpaired(list(state["messages"])) == []
        found = next(
            m for m in state["messages"]
            if isinstance(m, ToolMessage) and m.tool_call_id == "call-search"
        )  # fmt: skip
        assert "4711" in found.content and "locker code" in found.content
        # The state holds the recent turns and a summary, not 300 turns: each checkpoint is
        # bounded, so storage grows with the thread's length, not its square.
        assert len(state["messages"]) < 60
        assert state["summary"]["messages"] > 500
        growth_late, growth_early = sizes[300] - sizes[200], sizes[200] - sizes[100]
        assert growth_late < 1.3 * growth_early, sizes
