"""Forked conversations in-process: a real AsyncSqliteSaver, real YAML memory, the offline model.

A thread is a tree of checkpoints. Memory written in one branch must not leak into a sibling,
user-scope memories are shared, and a branch never changes what an ancestor wrote.
"""

from __future__ import annotations

import json
import re
import shutil
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import AIMessage, BaseMessage, ToolMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver

import graph.nodes
import memory.integration.run_memory
from graph.agent import compile_graph
from graph.cli.session import LocalSession
from graph.context import Context
from memory.integration.models.offline import OfflineChatModel
from memory.integration.settings import get_settings, use_settings
from memory.registry import registry
from memory.store.manager import BaseMemoryManager

USER_FACT = "User's name is Ada"
KYOTO = "Current task: plan a trip to Kyoto"
QUESTION = "Ada, how is the Kyoto trip?"  # a question: the offline writer stores nothing


class ScriptedWriter(OfflineChatModel):
    """The offline writer, except that with a `plan` it reads the memories, then updates or
    deletes the one containing `plan[1]` (what a real model does when the user changes plans)."""

    plan: tuple[str, str, str] | None = None

    def _generate(self, messages: list[BaseMessage], *rest: Any, **kwargs: Any) -> ChatResult:
        if self.plan is None:
            return super()._generate(messages, *rest, **kwargs)
        op, keyword, text = self.plan
        results = [m for m in messages if isinstance(m, ToolMessage)]
        if not results:
            call: tuple[str, dict[str, Any]] = ("read_memories", {})
        elif len(results) == 1:
            line = next(ln for ln in str(results[0].content).splitlines() if keyword in ln)
            short_id = int(re.match(r"\[(\d+)\]", line).group(1))  # type: ignore[union-attr]
            args: dict[str, Any] = {"id": short_id, "reason": "the user changed plans"}
            call = (f"{op}_memory", {**args, "content": text} if op == "update" else args)
        else:
            return ChatResult(generations=[ChatGeneration(message=AIMessage("Done."))])
        tool_call = {
            "name": call[0],
            "args": call[1],
            "id": f"c{len(results)}",
            "type": "tool_call",
        }
        message = AIMessage("", tool_calls=[tool_call])
        return ChatResult(generations=[ChatGeneration(message=message)])


class Conversation:
    """One thread of the chat graph; `say` continues from any checkpoint, which forks."""

    def __init__(self, app: Any, context: Context, thread_id: str) -> None:
        self.app, self.context, self.thread_id = app, context, thread_id

    async def say(self, text: str, after: RunnableConfig | None = None) -> tuple[dict, Any]:
        """Send `text` after checkpoint `after` (default: the thread's latest); returns the
        final state and the config of the checkpoint the turn ended at."""
        config = after or {"configurable": {"thread_id": self.thread_id}}
        state = await self.app.ainvoke(
            {"messages": [{"role": "user", "content": text}]}, config, context=self.context
        )
        # A failed write no longer raises: the run reports it here (a question or small talk is
        # skipped by admission, which is no failure).
        assert state["memory_write"]["status"] in ("written", "skipped"), state["memory_write"]
        latest = await self.app.aget_state({"configurable": {"thread_id": self.thread_id}})
        return state, latest.config


def descriptions(state: dict) -> list[str]:
    return [m["description"] for m in state["related_memories"]]


def item_bytes(manager: BaseMemoryManager, memory_id: str) -> str:
    return json.dumps(manager.get(memory_id).to_dict(), sort_keys=True, ensure_ascii=False)


@pytest.fixture
def writer(monkeypatch: pytest.MonkeyPatch) -> ScriptedWriter:
    """The memory writer's model, in every write mode (they all use `writer_consumer()`)."""
    scripted = ScriptedWriter()
    monkeypatch.setattr(
        memory.integration.run_memory, "load_chat_model", lambda name, **_: scripted
    )
    return scripted


@pytest.fixture
async def app(tmp_path: Path) -> AsyncIterator[Any]:
    async with AsyncSqliteSaver.from_conn_string(str(tmp_path / "threads.sqlite")) as saver:
        yield compile_graph(checkpointer=saver)


@pytest.fixture
def context(tmp_path: Path) -> Iterator[Context]:
    """The run's choices; the deployment keeps YAML memories in this test's folder and writes
    each turn before the run returns ("inline")."""
    with use_settings(memory_backend=f"yaml:{tmp_path / 'memory'}", write_mode="inline"):
        yield Context(user_id="ada", model="offline/rules")


@pytest.fixture
async def taught(app: Any, context: Context, writer: ScriptedWriter) -> dict[str, Any]:
    """Thread t1: turn 1 tells a user fact, turn 2 starts a task (a branch memory)."""
    chat = Conversation(app, context, "t1")
    _, end_of_turn_1 = await chat.say("My name is Ada.")
    _, end_of_turn_2 = await chat.say("Let's plan a trip to Kyoto.")
    manager = registry.open(get_settings().memory_backend, "ada").manager
    by_text = {
        item.description: (memory_id, item) for memory_id, item in manager.list_items().items()
    }
    assert by_text[USER_FACT][1].scope == "user"
    assert by_text[KYOTO][1].scope == "branch"
    return {
        "chat": chat,
        "manager": manager,
        "turn_1": end_of_turn_1,
        "turn_2": end_of_turn_2,
        "kyoto_id": by_text[KYOTO][0],
    }


async def test_a_fork_does_not_see_its_siblings_branch_memory(taught: dict[str, Any]) -> None:
    chat: Conversation = taught["chat"]
    # A new run from the checkpoint before turn 2: a sibling of "Let's plan a trip to Kyoto".
    fork, _ = await chat.say(QUESTION, after=taught["turn_1"])
    assert USER_FACT in descriptions(fork)  # user scope: shared
    assert KYOTO not in descriptions(fork)
    # The original branch, continued after turn 2, still sees its task.
    original, _ = await chat.say(QUESTION, after=taught["turn_2"])
    assert {USER_FACT, KYOTO} <= set(descriptions(original))
    # Another thread of the same user: user memories only.
    other, _ = await Conversation(chat.app, chat.context, "t2").say(QUESTION)
    assert descriptions(other) == [USER_FACT]


async def test_search_memory_tool_reads_only_the_lineage(
    taught: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    class Searching(OfflineChatModel):
        """Calls search_memory once, then answers with what it returned."""

        def _generate(self, messages: list[BaseMessage], *a: Any, **k: Any) -> ChatResult:
            last = messages[-1]
            if isinstance(last, ToolMessage):
                reply = AIMessage(str(last.content))
            else:
                call = {"name": "search_memory", "args": {"query": "Kyoto trip"}, "id": "s1"}
                reply = AIMessage("", tool_calls=[{**call, "type": "tool_call"}])
            return ChatResult(generations=[ChatGeneration(message=reply)])

    monkeypatch.setattr(graph.nodes, "load_chat_model", lambda name, **_: Searching())
    chat: Conversation = taught["chat"]
    fork, _ = await chat.say("Anything planned?", after=taught["turn_1"])
    original, _ = await chat.say("Anything planned?", after=taught["turn_2"])
    assert "Kyoto" not in fork["messages"][-1].content
    assert KYOTO in original["messages"][-1].content


async def test_a_forks_update_is_its_own_version_and_the_ancestor_stays_byte_stable(
    taught: dict[str, Any], writer: ScriptedWriter
) -> None:
    chat, manager, kyoto_id = taught["chat"], taught["manager"], taught["kyoto_id"]
    before = item_bytes(manager, kyoto_id)
    writer.plan = ("update", "Kyoto", "Current task: plan a trip to Osaka")
    _, fork_end = await chat.say("Change of plan: Osaka instead.", after=taught["turn_2"])
    writer.plan = None
    assert item_bytes(manager, kyoto_id) == before  # copy-on-write: the ancestor is untouched
    versions = [i for i in manager.list_items().values() if i.supersedes == kyoto_id]
    assert [v.description for v in versions] == ["Current task: plan a trip to Osaka"]
    assert versions[0].scope == "branch"
    assert versions[0].origin["thread_id"] == "t1" and versions[0].origin["checkpoint_id"]

    fork, _ = await chat.say("Osaka or Kyoto trip?", after=fork_end)
    assert "Current task: plan a trip to Osaka" in descriptions(fork)
    assert KYOTO not in descriptions(fork)  # superseded in this branch
    original, _ = await chat.say("Osaka or Kyoto trip?", after=taught["turn_2"])
    assert KYOTO in descriptions(original)
    assert "Current task: plan a trip to Osaka" not in descriptions(original)


async def test_a_forks_delete_hides_the_item_only_in_that_fork(
    taught: dict[str, Any], writer: ScriptedWriter
) -> None:
    chat, manager, kyoto_id = taught["chat"], taught["manager"], taught["kyoto_id"]
    before = item_bytes(manager, kyoto_id)
    writer.plan = ("delete", "Kyoto", "")
    _, fork_end = await chat.say("Forget the trip.", after=taught["turn_2"])
    writer.plan = None
    assert item_bytes(manager, kyoto_id) == before
    fork, _ = await chat.say(QUESTION, after=fork_end)
    assert KYOTO not in descriptions(fork) and USER_FACT in descriptions(fork)
    original, _ = await chat.say(QUESTION, after=taught["turn_2"])
    assert KYOTO in descriptions(original)


async def test_memory_scope_user_shares_even_task_memories(
    app: Any, context: Context, writer: ScriptedWriter
) -> None:
    import dataclasses

    shared = dataclasses.replace(context, memory_scope="user")
    chat = Conversation(app, shared, "t-user")
    _, start = await chat.say("Hello there.")
    await chat.say("Let's plan a trip to Kyoto.")
    fork, _ = await chat.say(QUESTION, after=start)
    assert KYOTO in descriptions(fork)


async def test_core_context_is_seeded_after_the_first_turn_and_enters_the_prompt(
    taught: dict[str, Any],
) -> None:
    manager: BaseMemoryManager = taught["manager"]
    core = manager.get_core_context("t1")  # the goal is the thread's: its task, not "My name is…"
    assert USER_FACT in core["human"] and core["goal"] == KYOTO
    assert manager.get_core_context("another thread")["goal"] == ""
    state, _ = await taught["chat"].say("Hello again.")
    assert state["core_context"]["human"] == core["human"]
    assert state["core_context"]["goal"] == core["goal"]  # the run reads its thread's goal


CHAT = Context(user_id="ada", model="offline/rules")


def sqlite_in(data_dir: Path) -> str:
    return f"sqlite:{data_dir}/memory.sqlite"


async def teach_and_fork(data_dir: Path) -> tuple[str, str]:
    """A local session (durable write queue, SQLite threads and memory) that tells a user fact,
    then starts a task; returns the checkpoints after turn 1 and turn 2."""
    async with LocalSession(CHAT, data_dir) as session:
        told = await session.say("t1", "My name is Ada.")
        turn_1 = await session.latest_checkpoint_id("t1")
        task = await session.say("t1", "Let's plan a trip to Kyoto.")
        turn_2 = await session.latest_checkpoint_id("t1")
        await session.wait_for_writes()
        assert [told.memory_write["status"], task.memory_write["status"]] == ["journaled"] * 2
        assert session.memory is not None
        status = session.memory.write_status()
        assert (status.pending, status.done, status.dead) == (0, 2, 0)
    return turn_1, turn_2


async def ask_both_branches(data_dir: Path, turn_1: str, turn_2: str) -> tuple[list, list, dict]:
    async with LocalSession(CHAT, data_dir) as session:
        fork = await session.say("t1", QUESTION, checkpoint_id=turn_1)
        original = await session.say("t1", QUESTION, checkpoint_id=turn_2)
        assert session.manager is not None
        core = session.manager.get_core_context()
    fork_seen = [m["description"] for m in fork.related_memories]
    original_seen = [m["description"] for m in original.related_memories]
    return fork_seen, original_seen, core


@pytest.mark.parametrize("keep_store", [True, False], ids=["whole-folder", "snapshot-only"])
async def test_copying_the_data_folder_elsewhere_keeps_memories_scopes_and_branches(
    tmp_path: Path, keep_store: bool
) -> None:
    first = tmp_path / "first"
    with use_settings(memory_backend=sqlite_in(first), snapshot_seconds=0.05):
        turn_1, turn_2 = await teach_and_fork(first)
    memory = registry.peek(sqlite_in(first), "ada")  # the session's memory, still open
    assert memory is not None and memory.snapshots is not None
    assert memory.journal_path == first / "write-journal.sqlite"  # beside the store
    manager = memory.manager
    memory.snapshots.flush()  # what the exit hook does for a snapshot still waiting
    elsewhere = tmp_path / "elsewhere"
    shutil.copytree(first, elsewhere)
    if not keep_store:  # only the threads and memory_backup/ made it: restored at start
        for leftover in elsewhere.glob("memory.sqlite*"):
            leftover.unlink()
    with use_settings(memory_backend=sqlite_in(elsewhere), snapshot_seconds=0.05):
        fork_seen, original_seen, core = await ask_both_branches(elsewhere, turn_1, turn_2)
    assert USER_FACT in fork_seen and KYOTO not in fork_seen
    assert {USER_FACT, KYOTO} <= set(original_seen)
    assert core == manager.get_core_context() and USER_FACT in core["human"]
    moved = registry.open(sqlite_in(elsewhere), "ada").manager
    assert {k: v.to_dict() for k, v in moved.all_items().items()} == {
        k: v.to_dict() for k, v in manager.all_items().items()
    }
