"""End to end: a real `langgraph dev` serving the app, a stub OpenAI-compatible model, the SDK."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from langgraph_sdk import get_client
from langgraph_sdk.errors import NotFoundError

from memory.integration.context import DEPLOYMENT_SETTINGS
from memory.integration.writing.server_runs import writer_thread_id
from tests.e2e.server import DevServer, copy_app, running_server, stub_model_env
from tests.e2e.stub_openai import NO_MEMORIES_REPLY, StubOpenAI

pytestmark = pytest.mark.slow

WRITE_SECONDS = 60
# The module server's GULFSTREAM_WRITE_DELAY_SECONDS: every writer run starts this much later, so
# a quick burst of turns has several writer runs waiting at once (a deployment setting now; a run
# can no longer choose it).
WRITE_DELAY_SECONDS = 1


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[DevServer]:
    app = copy_app(tmp_path_factory.mktemp("gulfstream") / "app")
    with StubOpenAI() as stub:
        env = {
            **stub_model_env(stub),
            # The deployment path: memories in the server's own store.
            "GULFSTREAM_MEMORY_BACKEND": "store",
            "GULFSTREAM_WRITE_DELAY_SECONDS": str(WRITE_DELAY_SECONDS),
            # An admitted turn's batch is written once its thread was quiet this long.
            "GULFSTREAM_WRITE_BATCH_SECONDS": str(WRITE_DELAY_SECONDS),
        }
        with running_server(app, env) as dev:
            dev.stub = stub  # type: ignore[attr-defined]  # what the models were asked
            yield dev


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
    # Under the server every admitted turn goes to a background run of memory_writer.
    write = state["memory_write"]
    assert write["mode"] == "server", write
    expected = "skipped" if write["admission"]["decision"] == "skip" else "scheduled"
    assert write["status"] == expected, write
    return state


async def wait_for_writer_runs(
    url: str,
    user_id: str,
    expected: int,
    headers: dict[str, str] | None = None,
    secret: str | None = None,
) -> list[dict]:
    """The user's memory_writer runs, once `expected` of them have all finished (`secret`: the
    server's GULFSTREAM_WRITER_THREAD_SECRET, default none)."""
    client = get_client(url=url, headers=headers)
    deadline = time.monotonic() + WRITE_SECONDS
    while True:
        try:
            runs = await client.runs.list(writer_thread_id(user_id, secret or ""))
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


async def test_studio_shows_the_writer_runs_tool_calls_not_one_opaque_node(
    server: DevServer, alice_remembered: str
) -> None:
    client = get_client(url=server.url)
    # What Studio shows of the user's writer thread: the memory agent's messages of its run.
    state = await client.threads.get_state(writer_thread_id("alice", ""))
    messages = state["values"]["messages"]  # type: ignore[index]
    calls = [c for m in messages if m["type"] == "ai" for c in m.get("tool_calls") or []]
    assert any(c["name"] == "create_memory" and "Porto" in json.dumps(c["args"]) for c in calls), (
        messages
    )
    answered = {m["tool_call_id"] for m in messages if m["type"] == "tool"}
    assert calls and {c["id"] for c in calls} <= answered  # each call with the tool's answer


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


@pytest.mark.uses("admission")
async def test_a_burst_of_facts_is_written_as_one_batch(server: DevServer) -> None:
    client = get_client(url=server.url)
    thread_id = (await client.threads.create())["thread_id"]
    facts = ["I own a red bicycle.", "My sister is called Maria.", "I play the cello."]
    for fact in facts:  # each turn schedules a delayed writer run; none may replace another
        state = await chat(server.url, "carol", fact, thread_id=thread_id)
        assert state["memory_write"]["admission"]["decision"] == "batch"
    runs = await wait_for_writer_runs(server.url, "carol", len(facts))
    assert [r["status"] for r in runs] == ["success"] * len(facts)
    # The runs of the first two found a newer turn waiting and ended at once; the last one,
    # a quiet second after the third turn, wrote all three in one agent run: two model calls
    # (its tool calls, then its answer), every turn id recorded, nothing left waiting.
    stub: StubOpenAI = server.stub  # type: ignore[attr-defined]
    writer_calls = [r for r in stub.requests if "Maria" in json.dumps(r) and r.get("tools")
                    and "create_memory" in json.dumps(r["tools"])]  # fmt: skip
    assert len(writer_calls) == 2, writer_calls
    assert all(fact in json.dumps(writer_calls[0], ensure_ascii=False) for fact in facts)
    applied = await client.store.search_items(["memories_turns", "carol"], limit=20)
    assert len(applied["items"]) == len(facts)
    assert (await client.store.search_items(["memories_pending", "carol"]))["items"] == []
    state = await chat(server.url, "carol", "bicycle Maria cello")
    remembered = " ".join(m["description"] for m in state["related_memories"])
    for word in ("bicycle", "Maria", "cello"):
        assert word in remembered


@pytest.mark.uses("admission")
async def test_small_talk_never_reaches_the_memory_writer(server: DevServer) -> None:
    client = get_client(url=server.url)
    thread_id = (await client.threads.create())["thread_id"]
    for text in ("Hi there!", "ok", "Thanks!", "哈哈", "What's the capital of Australia?"):
        state = await chat(server.url, "gina", text, thread_id=thread_id)
        write = state["memory_write"]
        assert write["status"] == "skipped" and write["admission"]["decision"] == "skip", write
        assert write["admission"]["reasons"], write  # which rules said so
    await asyncio.sleep(WRITE_DELAY_SECONDS + 1)
    with pytest.raises(NotFoundError):  # not one writer run: its thread was never created
        await client.runs.list(writer_thread_id("gina", ""))
    waiting = await client.store.search_items(["memories_pending", "gina"])
    assert waiting["items"] == []


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


def files_in(folder: Path) -> list[str]:
    return sorted(str(path.relative_to(folder)) for path in folder.rglob("*"))


async def test_the_archive_keeps_every_turn_and_search_conversations_finds_it(
    server: DevServer,
) -> None:
    """Under the server: a skipped turn is archived too, the chat tool finds it from another
    thread of the same user, and another user finds nothing."""
    said = await chat(server.url, "carol", "ok, the gate code is 2468")
    assert said["messages"][-1]["type"] == "ai"
    found = await chat(server.url, "carol", "search the archive for gate code")
    reply = found["messages"][-1]["content"]
    assert reply.startswith("STUB: the archive says:") and "2468" in reply, reply
    assert found["messages"][-2]["type"] == "tool"  # the tool ran in the chat graph
    other = await chat(server.url, "dave", "search the archive for gate code")
    assert "2468" not in other["messages"][-1]["content"]
    assert "No archived message matches." in other["messages"][-1]["content"]


async def test_a_run_cannot_choose_where_memories_live_or_how_they_are_written(
    server: DevServer, tmp_path: Path
) -> None:
    """A client naming a deployment setting in a run's context is refused by name, in process
    and through the server (as a run's context, a config's configurable, an assistant's
    context). Nothing is opened or written where the client pointed, and the thread
    keeps working under the deployment's settings."""
    from graph.agent import graph as agent_graph

    outside = tmp_path / "outside"  # not under the server's app folder
    outside.mkdir()
    assert not outside.is_relative_to(server.app_dir)
    said = {"messages": [{"role": "user", "content": "My favourite lake is Bled."}]}
    yaml_outside = {"memory_backend": f"yaml:{outside / 'memory'}"}
    sqlite_inline = {"write_mode": "inline", "memory_backend": f"sqlite:{outside / 'm.db'}"}

    # The graph itself, handed such a context, refuses the run and names the field.
    for context, field in (
        (yaml_outside, "memory_backend"),
        ({"write_mode": "inline"}, "write_mode"),
    ):
        with pytest.raises(ValueError, match=rf"Context\.{field} is not a run setting") as refused:
            await agent_graph.ainvoke(said, context={"user_id": "erin", **context})
        assert f"GULFSTREAM_{field.upper()}" in str(refused.value)
    assert files_in(outside) == []

    # Through the server: the run fails with the same error, whatever door the setting came by.
    client = get_client(url=server.url)
    thread_id = (await client.threads.create())["thread_id"]
    assistant = await client.assistants.create(
        graph_id="agent", context={"user_id": "erin", **sqlite_inline}
    )
    attempts = [
        client.runs.wait(thread_id, "agent", input=said, context={"user_id": "erin", **ctx})
        for ctx in (yaml_outside, sqlite_inline)
    ]
    # The server hands a run without context its configurable as the context.
    attempts.append(
        client.runs.wait(
            thread_id,
            "agent",
            input=said,
            config={"configurable": {"user_id": "erin", **sqlite_inline}},
        )
    )
    attempts.append(client.runs.wait(thread_id, assistant["assistant_id"], input=said))
    for attempt in attempts:
        with pytest.raises(Exception, match=r"Context\.(memory_backend|write_mode) is not a run"):
            await attempt
        assert files_in(outside) == []
    refused_runs = await client.runs.list(thread_id)
    assert [run["status"] for run in refused_runs] == ["error"] * len(attempts)
    # While it exists, "agent" names the newest assistant of the graph: this one.
    await client.assistants.delete(assistant["assistant_id"])

    # A normal run on the same thread works and its turn goes where the deployment keeps
    # memories: the server's store.
    await chat(server.url, "erin", "My favourite lake is Bled.", thread_id=thread_id)
    writer_runs = await wait_for_writer_runs(server.url, "erin", 1)
    assert [r["status"] for r in writer_runs] == ["success"], server.log()[-4000:]
    stored = await client.store.search_items(["memories", "erin"], limit=100)
    assert any("Bled" in item["value"].get("description", "") for item in stored["items"])
    later = await chat(server.url, "erin", "Which lake do I like best?", thread_id=thread_id)
    assert any("Bled" in m["description"] for m in later["related_memories"])
    assert "Bled" in later["messages"][-1]["content"]
    assert files_in(outside) == []


async def test_a_misspelled_context_field_is_refused_through_the_server_not_run_as_default(
    server: DevServer,
) -> None:
    """`usr_id` for `user_id`: the server would drop the unknown key and run the turn as user
    `default`, whose memories would answer it. The run fails with an error naming the field,
    and `default` neither reads nor gains anything from it."""
    await chat(server.url, "default", "My locker number is 5151.")
    await wait_for_writer_runs(server.url, "default", 1)
    client = get_client(url=server.url)
    before = await client.store.search_items(["memories", "default"], limit=100)
    thread_id = (await client.threads.create())["thread_id"]
    asked = {"messages": [{"role": "user", "content": "What is my locker number?"}]}
    with pytest.raises(Exception, match=r"Context has no field 'usr_id'") as refused:
        await client.runs.wait(thread_id, "agent", input=asked, context={"usr_id": "ada"})
    assert "5151" not in str(refused.value)
    (run,) = await client.runs.list(thread_id)
    assert run["status"] == "error"
    state = await client.threads.get_state(thread_id)
    assert not state["values"].get("messages"), state["values"]  # no reply was written
    after = await client.store.search_items(["memories", "default"], limit=100)
    assert after["items"] == before["items"]


async def test_studio_sees_only_the_callers_choices_in_the_context_schema(
    server: DevServer,
) -> None:
    client = get_client(url=server.url)
    graphs = json.loads((Path(__file__).parents[2] / "langgraph.json").read_text())["graphs"]
    for graph_id in graphs:  # each graph the deployment serves
        (assistant,) = await client.assistants.search(graph_id=graph_id, limit=1)
        schemas = await client.assistants.get_schemas(assistant["assistant_id"])
        fields = set(schemas["context_schema"]["properties"])
        assert {"user_id", "model", "retrieval_mode", "memory_scope"} <= fields, fields
        assert not fields & DEPLOYMENT_SETTINGS, fields & DEPLOYMENT_SETTINGS
        assert not fields & {"memory_backend", "write_mode", "write_delay_seconds"}


@pytest.mark.uses("consolidation")
async def test_the_memory_consolidator_graph_runs_a_pass_for_the_user(
    server: DevServer, alice_remembered: str
) -> None:
    client = get_client(url=server.url)
    thread = await client.threads.create()
    state = await client.runs.wait(
        thread["thread_id"],
        "memory_consolidator",
        input={"reason": "e2e"},
        context={"user_id": "alice"},
    )
    report = state["report"]
    assert report["user_id"] == "alice" and report["refused"] == "", state
    assert report["kept"] >= 1 and report["merged"] == {}  # Porto, once: nothing to merge


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


async def test_a_deployment_requiring_a_user_refuses_a_run_that_names_none(
    tmp_path: Path,
) -> None:
    """GULFSTREAM_REQUIRE_USER_ID=on (auto turns it on in a deployed server without auth): a
    run naming no user fails with an error naming the field instead of running as `default`;
    a run naming one goes on."""
    app = copy_app(tmp_path / "app")
    with StubOpenAI() as stub:
        env = {**stub_model_env(stub), "GULFSTREAM_REQUIRE_USER_ID": "on"}
        env["GULFSTREAM_MEMORY_BACKEND"] = "store"
        with running_server(app, env) as dev:
            client = get_client(url=dev.url)
            thread_id = (await client.threads.create())["thread_id"]
            said = {"messages": [{"role": "user", "content": "My locker number is 5151."}]}
            for context in (None, {"model": stub_model_env(stub)["GULFSTREAM_MODEL"]}):
                with pytest.raises(Exception, match=r"Context\.user_id is required"):
                    await client.runs.wait(thread_id, "agent", input=said, context=context)
            state = await client.runs.wait(
                thread_id, "agent", input=said, context={"user_id": "fay"}
            )
            assert state["messages"][-1]["type"] == "ai"
            runs = await client.runs.list(thread_id)
            assert sorted(run["status"] for run in runs) == ["error", "error", "success"]
