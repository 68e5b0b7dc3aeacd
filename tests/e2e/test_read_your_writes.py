"""Read your writes through a real `langgraph dev` and the SDK, default batching (5 turns or 30
quiet seconds), a writer model slow enough that turns are seen waiting."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator
from typing import Any

import pytest
from langgraph_sdk import get_client

from memory.integration.writing.pending import PENDING_NAMESPACE
from memory.store.backends.langgraph_store import namespace_label
from tests.e2e.server import DevServer, copy_app, running_server, stub_model_env
from tests.e2e.stub_openai import StubOpenAI

pytestmark = pytest.mark.slow

WRITER_SECONDS = 8  # each memory writer call of the stub model takes this long


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[DevServer]:
    app = copy_app(tmp_path_factory.mktemp("gulfstream") / "app")
    with StubOpenAI(writer_delay_seconds=WRITER_SECONDS) as stub:
        env = {**stub_model_env(stub), "GULFSTREAM_MEMORY_BACKEND": "store"}
        with running_server(app, env) as dev:
            dev.stub = stub  # type: ignore[attr-defined]
            yield dev


class User:
    """One user of the server, in as many threads as they like."""

    def __init__(self, server: DevServer, user_id: str) -> None:
        self.server, self.user_id = server, user_id
        self.client = get_client(url=server.url)
        self.threads: dict[str, str] = {}

    async def say(self, thread: str, text: str, checkpoint_id: str | None = None) -> dict:
        if thread not in self.threads:
            self.threads[thread] = (await self.client.threads.create())["thread_id"]
        state = await self.client.runs.wait(
            self.threads[thread], "agent",
            input={"messages": [{"role": "user", "content": text}]},
            context={"user_id": self.user_id}, checkpoint_id=checkpoint_id,
        )  # fmt: skip
        assert isinstance(state, dict) and "messages" in state, state
        return state

    async def checkpoint(self, thread: str) -> str:
        state = await self.client.threads.get_state(self.threads[thread])
        return str(state["checkpoint"]["checkpoint_id"])

    async def waiting(self) -> list[str]:
        """The user texts of the turns waiting in the store for a writer run."""
        items = await self.client.store.search_items(
            (PENDING_NAMESPACE, namespace_label(self.user_id)), limit=100
        )
        return [m["content"] for i in items["items"] for m in i["value"]["messages"]
                if m["role"] == "user"]  # fmt: skip

    async def wait_until_written(self, text: str, seconds: float = 90) -> float:
        """Seconds until the turn that said `text` no longer waits."""
        started = time.monotonic()
        while text in await self.waiting():
            assert time.monotonic() - started < seconds, self.server.log()[-4000:]
            await asyncio.sleep(0.3)
        return time.monotonic() - started


def recent(state: dict[str, Any]) -> list[str]:
    return [line["text"] for line in state["said_recently"]]


def remembered(state: dict[str, Any]) -> list[str]:
    return [memory["description"] for memory in state["related_memories"]]


def prompt_of(server: DevServer, question_marker: str) -> str:
    """The system prompt of the last chat request whose messages hold `question_marker`."""
    for request in reversed(server.stub.requests):  # type: ignore[attr-defined]
        messages = request.get("messages", [])
        if any(question_marker in str(m.get("content")) for m in messages if m["role"] == "user"):
            return "\n".join(str(m["content"]) for m in messages if m["role"] == "system")
    raise AssertionError(f"no chat request about {question_marker!r}")


async def test_a_fact_told_is_known_next_turn_in_a_new_thread_once_and_by_nobody_else(
    server: DevServer,
) -> None:
    alice, bob = User(server, "alice"), User(server, "alice-neighbour")
    told = await alice.say("a", "By the way, I live in Porto.")
    assert told["memory_write"]["status"] == "scheduled"  # a writer run queued, not yet run
    assert told["memory_write"]["admission"]["decision"] == "batch"  # feature: admission
    asked = await alice.say("b", "Where do I live? (alice)")
    assert recent(asked) == ["By the way, I live in Porto."]
    assert not any("Porto" in memory for memory in remembered(asked))  # feature: admission
    prompt = prompt_of(server, "Where do I live? (alice)")
    assert "<said_recently>" in prompt and "I live in Porto." in prompt
    other = await bob.say("c", "Where do I live? (bob)")
    assert other["said_recently"] == [] and "Porto" not in prompt_of(server, "(bob)")
    # Moving to thread b queued a writer run for a's batch at once: it is written within the
    # writer's own time, not after a's 30 quiet seconds.
    written_after = await alice.wait_until_written("By the way, I live in Porto.")
    assert written_after < 30, server.log()[-4000:]
    again = await alice.say("d", "Where do I live? (alice, later)")
    seen = [text for text in recent(again) + remembered(again) if "Porto" in text]
    assert seen == ["The user said: By the way, I live in Porto."]  # once, as a memory


async def test_a_fork_does_not_see_a_waiting_task_of_another_branch(server: DevServer) -> None:
    carol = User(server, "carol")
    await carol.say("t", "My name is Carol.")
    start = await carol.checkpoint("t")
    plan = "Let's plan a trip to Kyoto."
    await carol.say("t", plan)
    fork = await carol.say("t", "How is the Kyoto trip going?", checkpoint_id=start)
    elsewhere = await carol.say("u", "How is the Kyoto trip going? (elsewhere)")
    assert plan in await carol.waiting()  # it was waiting all along: the check means something
    assert plan not in recent(fork) + recent(elsewhere)
    assert recent(fork) == []  # its own thread: the rest of this branch is in its messages
    assert "My name is Carol." in recent(elsewhere)  # the user fact is everyone's


async def test_a_forget_said_just_now_hides_the_waiting_fact(server: DevServer) -> None:
    dave = User(server, "dave")
    await dave.say("a", "I live in Porto.")
    before = await dave.say("b", "Where do I live? (dave)")
    forget = await dave.say("c", "Please forget where I live.")
    after = await dave.say("d", "Where do I live? (dave, after)")
    assert "I live in Porto." in await dave.waiting()  # not written yet
    assert recent(before) == ["I live in Porto."]
    for state in (forget, after):
        assert not any("Porto" in text for text in recent(state) + remembered(state))
    assert "Porto" not in prompt_of(server, "(dave, after)")
