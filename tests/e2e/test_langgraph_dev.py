"""End to end: a real `langgraph dev` serving the app, a stub OpenAI-compatible model, the SDK."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from langgraph_sdk import get_client

from graph.handoff import writer_thread_id
from tests.e2e.server import DevServer, copy_app
from tests.e2e.stub_openai import NO_MEMORIES_REPLY, StubOpenAI

pytestmark = pytest.mark.slow

STARTUP_SECONDS = 120
WRITE_SECONDS = 60


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[DevServer]:
    app = copy_app(tmp_path_factory.mktemp("gulfstream") / "app")
    with StubOpenAI() as stub:
        dev = DevServer(
            app,
            {
                "OPENAI_BASE_URL": stub.base_url,
                "OPENAI_API_KEY": "stub",
                "GULFSTREAM_MODEL": "openai/stub-model",
                # The deployment path: memories in the server's own store.
                "GULFSTREAM_MEMORY_BACKEND": "store",
            },
        )
        try:
            if not dev.wait_ready(STARTUP_SECONDS):
                pytest.fail(f"langgraph dev did not become ready:\n{dev.log()[-5000:]}")
            yield dev
        finally:
            dev.stop()


async def chat(
    url: str, user_id: str, text: str, thread_id: str | None = None, **context: Any
) -> dict:
    client = get_client(url=url)
    if thread_id is None:
        thread_id = (await client.threads.create())["thread_id"]
    state = await client.runs.wait(
        thread_id,
        "agent",
        input={"messages": [{"role": "user", "content": text}]},
        context={"user_id": user_id, **context},
    )
    assert isinstance(state, dict) and "messages" in state, state
    return state


async def wait_for_writer_runs(
    url: str,
    user_id: str,
    expected: int,
    headers: dict[str, str] | None = None,
    secret: str | None = None,
) -> list[dict]:
    """The user's memory_writer runs, once `expected` of them have all finished (`secret`: the
    server's GULFSTREAM_WRITER_THREAD_SECRET, default this process's)."""
    client = get_client(url=url, headers=headers)
    deadline = time.monotonic() + WRITE_SECONDS
    while True:
        try:
            runs = await client.runs.list(writer_thread_id(user_id, secret))
        except Exception:  # the writer thread may not exist yet
            runs = []
        finished = [r for r in runs if r["status"] in ("success", "error", "interrupted")]
        if len(finished) >= expected:
            return runs
        if time.monotonic() > deadline:
            raise AssertionError(f"writer runs for {user_id}: {[r['status'] for r in runs]}")
        await asyncio.sleep(0.3)


@pytest.fixture(scope="module")
def alice_remembered(server: DevServer) -> str:
    """Alice tells a fact on one thread; the background writer must store it."""

    async def tell() -> str:
        state = await chat(server.url, "alice", "My favourite city is Porto.")
        runs = await wait_for_writer_runs(server.url, "alice", 1)
        assert [r["status"] for r in runs] == ["success"], server.log()[-4000:]
        return str(state["messages"][-1]["content"])

    return asyncio.run(tell())


async def test_memory_written_in_background_is_recalled_in_a_new_thread(
    server: DevServer, alice_remembered: str
) -> None:
    assert alice_remembered == NO_MEMORIES_REPLY  # nothing known before the first turn
    state = await chat(server.url, "alice", "Which city do I like best?")
    assert any("Porto" in m["description"] for m in state["related_memories"])
    assert "Porto" in state["messages"][-1]["content"]


async def test_another_user_sees_nothing(server: DevServer, alice_remembered: str) -> None:
    state = await chat(server.url, "bob", "Which city do I like best?")
    assert state["related_memories"] == []
    assert state["messages"][-1]["content"] == NO_MEMORIES_REPLY


async def test_reply_streams_token_chunks(server: DevServer, alice_remembered: str) -> None:
    client = get_client(url=server.url)
    thread_id = (await client.threads.create())["thread_id"]
    pieces: list[str] = []
    async for part in client.runs.stream(
        thread_id,
        "agent",
        input={"messages": [{"role": "user", "content": "Tell me about Porto."}]},
        context={"user_id": "alice"},
        stream_mode="messages-tuple",
    ):
        if part.event == "messages":
            message, metadata = part.data
            if metadata.get("langgraph_node") == "agent" and message.get("content"):
                pieces.append(message["content"])
    assert len(pieces) > 1, pieces  # several chunks, not one final message
    assert "Porto" in "".join(pieces)


async def test_quick_burst_of_turns_is_written_turn_by_turn(server: DevServer) -> None:
    client = get_client(url=server.url)
    thread_id = (await client.threads.create())["thread_id"]
    facts = ["I own a red bicycle.", "My sister is called Maria.", "I play the cello."]
    for fact in facts:  # each turn schedules a delayed writer run; none may replace another
        await chat(server.url, "carol", fact, thread_id=thread_id, write_delay_seconds=1)
    runs = await wait_for_writer_runs(server.url, "carol", len(facts))
    assert [r["status"] for r in runs] == ["success"] * len(facts)
    state = await chat(server.url, "carol", "bicycle Maria cello")
    remembered = " ".join(m["description"] for m in state["related_memories"])
    for word in ("bicycle", "Maria", "cello"):
        assert word in remembered


async def test_a_fork_from_an_earlier_checkpoint_does_not_see_its_siblings_branch_memory(
    server: DevServer,
) -> None:
    """Studio's "fork" / "edit message": a new run from an earlier checkpoint of the thread."""
    client = get_client(url=server.url)
    thread_id = (await client.threads.create())["thread_id"]
    user_fact = "The user said: My favourite colour is teal."
    task = "The user said: Let's plan a trip to Kyoto."

    async def say(text: str, checkpoint_id: str | None = None) -> dict:
        state = await client.runs.wait(
            thread_id,
            "agent",
            input={"messages": [{"role": "user", "content": text}]},
            context={"user_id": "dora"},
            checkpoint_id=checkpoint_id,
        )
        assert isinstance(state, dict) and "messages" in state, state
        return state

    async def checkpoint_now() -> str:
        return str((await client.threads.get_state(thread_id))["checkpoint"]["checkpoint_id"])

    await say("My favourite colour is teal.")
    end_of_turn_1 = await checkpoint_now()
    await say("Let's plan a trip to Kyoto.")
    end_of_turn_2 = await checkpoint_now()
    runs = await wait_for_writer_runs(server.url, "dora", 2)
    assert [r["status"] for r in runs] == ["success"] * 2, server.log()[-4000:]

    fork = await say("teal colour Kyoto trip", checkpoint_id=end_of_turn_1)
    remembered = [m["description"] for m in fork["related_memories"]]
    assert user_fact in remembered and task not in remembered
    # The core context was seeded after the first written turn and is in every turn's state.
    assert "teal" in fork["core_context"]["human"]
    original = await say("teal colour Kyoto trip", checkpoint_id=end_of_turn_2)
    remembered = [m["description"] for m in original["related_memories"]]
    assert user_fact in remembered and task in remembered
    # The fork really is a sibling in the thread's history: both runs descend from turn 1.
    history = await client.threads.get_history(thread_id, limit=100)
    parents = {
        h["checkpoint"]["checkpoint_id"]: (h["parent_checkpoint"] or {}).get("checkpoint_id")
        for h in history
    }
    assert len([c for c, p in parents.items() if p == end_of_turn_1]) == 2


def test_broken_graph_fails_fast_with_a_clear_message(tmp_path: Path) -> None:
    app = copy_app(tmp_path / "app")
    tools = app / "graph" / "tools.py"
    tools.write_text(tools.read_text() + "\nimport gulfstream_missing_module  # noqa\n")
    started = time.monotonic()
    dev = DevServer(app, {})
    try:
        assert not dev.wait_ready(90), "a server with a broken graph must not report ready"
        assert dev.process.poll() is not None, "the server kept running with a broken graph"
        assert time.monotonic() - started < 90
        log = dev.log()
        assert "Failed to load graph 'agent'" in log
        assert "gulfstream_missing_module" in log
    finally:
        dev.stop()
