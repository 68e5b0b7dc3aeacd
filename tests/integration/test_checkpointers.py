"""`compile_graph` with every kind of checkpointer, invoked sync and async: a fact told in one
thread is written (nothing dead-lettered) and recalled in a new thread."""

from __future__ import annotations

import asyncio
import sqlite3
import uuid
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import AbstractAsyncContextManager, asynccontextmanager, contextmanager
from pathlib import Path
from typing import Any

import pytest

from graph.agent import compile_graph
from graph.context import Context
from memory.integration.settings import get_settings
from memory.registry import registry
from memory.writer.local import local_writer
from tests.integration.conftest import POSTGRES_URL, postgres_unreachable_reason

CONTEXT = Context(user_id="ada", model="offline/rules")


@contextmanager
def no_saver(tmp_path: Path) -> Iterator[Any]:
    yield None


@contextmanager
def memory_saver(tmp_path: Path) -> Iterator[Any]:
    from langgraph.checkpoint.memory import InMemorySaver

    yield InMemorySaver()


@contextmanager
def sqlite_saver(tmp_path: Path) -> Iterator[Any]:
    from langgraph.checkpoint.sqlite import SqliteSaver

    # The sync saver as every LangGraph tutorial shows it; its async methods all raise.
    conn = sqlite3.connect(tmp_path / "threads.sqlite", check_same_thread=False)
    yield SqliteSaver(conn)
    conn.close()


@contextmanager
def postgres_saver(tmp_path: Path) -> Iterator[Any]:
    from langgraph.checkpoint.postgres import PostgresSaver

    with PostgresSaver.from_conn_string(POSTGRES_URL) as saver:
        saver.setup()
        yield saver


@asynccontextmanager
async def async_sqlite_saver(tmp_path: Path) -> AsyncIterator[Any]:
    from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver

    async with AsyncSqliteSaver.from_conn_string(str(tmp_path / "threads.sqlite")) as saver:
        yield saver


@asynccontextmanager
async def async_postgres_saver(tmp_path: Path) -> AsyncIterator[Any]:
    from langgraph.checkpoint.postgres.aio import AsyncPostgresSaver

    async with AsyncPostgresSaver.from_conn_string(POSTGRES_URL) as saver:
        await saver.setup()
        yield saver


postgres = pytest.mark.postgres
SYNC_SAVERS = [
    pytest.param(no_saver, id="none"),
    pytest.param(memory_saver, id="InMemorySaver"),
    pytest.param(sqlite_saver, id="SqliteSaver"),
    pytest.param(postgres_saver, id="PostgresSaver", marks=postgres),
]
ASYNC_SAVERS = [
    *SYNC_SAVERS[:2],
    pytest.param(async_sqlite_saver, id="AsyncSqliteSaver"),
    pytest.param(async_postgres_saver, id="AsyncPostgresSaver", marks=postgres),
]


def say(text: str, thread: str) -> tuple[dict[str, Any], dict[str, Any]]:
    return {"messages": [{"role": "user", "content": text}]}, {
        "configurable": {"thread_id": thread}
    }


def check_written_and_recalled(first: dict[str, Any], second: dict[str, Any], saver: Any) -> None:
    assert first["memory_write"]["status"] == "journaled", first["memory_write"]
    assert first["memory_write"]["error"] == ""
    recalled = [m["description"] for m in second["related_memories"]]
    assert "User lives in Lisbon" in recalled, recalled
    assert "Lisbon" in second["messages"][-1].content
    memory = registry.open(get_settings().memory_backend, "ada")
    status = memory.write_status()
    assert (status.dead, status.pending) == (0, 0), status.issues
    item = next(i for i in memory.manager.list_items().values() if "Lisbon" in i.description)
    # With a checkpointer the write knows where it was said (branch-aware); without, it cannot.
    assert bool(item.origin.get("checkpoint_id")) == (saver is not None), item.origin
    # The conversation it was said in, with or without: retrieval reads what it said next.
    assert item.origin.get("thread_id"), item.origin


def skip_without_postgres(maker: Callable[..., Any]) -> None:
    if maker in (postgres_saver, async_postgres_saver) and (why := postgres_unreachable_reason()):
        pytest.skip(why)


@pytest.mark.parametrize("make_saver", SYNC_SAVERS)
def test_invoke(make_saver: Callable[[Path], Any], tmp_path: Path) -> None:
    skip_without_postgres(make_saver)
    thread = uuid.uuid4().hex
    with make_saver(tmp_path) as saver:
        app = compile_graph(checkpointer=saver)
        first = app.invoke(*say("My name is Ada and I live in Lisbon.", thread), context=CONTEXT)
        app.invoke(*say("I like green tea.", thread), context=CONTEXT)  # a second turn: lineage
        local_writer.drain().result(60)
        second = app.invoke(*say("Where do I live?", uuid.uuid4().hex), context=CONTEXT)
        local_writer.drain().result(60)
        check_written_and_recalled(first, second, saver)


@pytest.mark.parametrize("make_saver", ASYNC_SAVERS)
async def test_ainvoke(make_saver: Callable[[Path], Any], tmp_path: Path) -> None:
    skip_without_postgres(make_saver)
    thread = uuid.uuid4().hex
    opened = make_saver(tmp_path)
    if isinstance(opened, AbstractAsyncContextManager):
        async with opened as saver:
            await _ainvoke_turns(saver, thread)
    else:
        with opened as saver:
            await _ainvoke_turns(saver, thread)


async def _ainvoke_turns(saver: Any, thread: str) -> None:
    app = compile_graph(checkpointer=saver)
    first = await app.ainvoke(*say("My name is Ada and I live in Lisbon.", thread), context=CONTEXT)
    await app.ainvoke(*say("I like green tea.", thread), context=CONTEXT)
    await asyncio.wrap_future(local_writer.drain())
    second = await app.ainvoke(*say("Where do I live?", uuid.uuid4().hex), context=CONTEXT)
    await asyncio.wrap_future(local_writer.drain())
    check_written_and_recalled(first, second, saver)


@pytest.mark.parametrize("mode", ["inline", "local"])
def test_the_memory_agent_never_writes_into_the_chat_thread(mode: str, tmp_path: Path) -> None:
    """The memory agent is a run of its own: none of its steps land in the user's thread as a
    subgraph of the chat run, whichever sink writes the turn."""
    from memory.integration.settings import use_settings

    thread = uuid.uuid4().hex
    with use_settings(write_mode=mode), sqlite_saver(tmp_path) as saver:
        app = compile_graph(checkpointer=saver)
        state = app.invoke(*say("My name is Ada and I live in Lisbon.", thread), context=CONTEXT)
        local_writer.drain().result(60)
        assert state["memory_write"]["status"] == {"inline": "written", "local": "journaled"}[mode]
        memory = registry.open(get_settings().memory_backend, "ada")
        assert any("Lisbon" in i.description for i in memory.manager.list_items().values())
        namespaces = {
            saved.config["configurable"].get("checkpoint_ns", "")
            for saved in saver.list({"configurable": {"thread_id": thread}})
        }
        assert namespaces == {""}, namespaces
