"""Read your writes in a local session (durable queue, SQLite threads and memory, the offline
model, default batching): what the user just said is known in their next turn, in any thread."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import memory.integration.run_memory
from graph.cli.session import LocalSession
from graph.context import Context
from memory.integration.local_session import TurnReply
from memory.integration.models.offline import OfflineChatModel
from memory.integration.settings import use_settings
from memory.writer.local import local_writer

ADA = Context(user_id="ada", model="offline/rules")
BOB = Context(user_id="bob", model="offline/rules")


@pytest.fixture
def data_dir(tmp_path: Path) -> Iterator[Path]:
    """The deployment's defaults (admission on, batches of 5 turns or 30 quiet seconds), with
    SQLite memories in this test's folder."""
    with use_settings(memory_backend=f"sqlite:{tmp_path}/memory.sqlite"):
        yield tmp_path


@pytest.fixture
def gate(monkeypatch: pytest.MonkeyPatch) -> Iterator[threading.Event]:
    """A writer model that hangs until the test opens the gate: every turn keeps waiting."""
    opened = threading.Event()

    class HungWriter(OfflineChatModel):
        def _generate(self, *args: Any, **kwargs: Any) -> Any:
            opened.wait(60)
            return super()._generate(*args, **kwargs)

    monkeypatch.setattr(
        memory.integration.run_memory, "load_chat_model", lambda name, **_: HungWriter()
    )
    yield opened
    opened.set()


def recent(reply: TurnReply) -> list[str]:
    return [line["text"] for line in reply.said_recently]


def remembered(reply: TurnReply) -> list[str]:
    return [memory["description"] for memory in reply.related_memories]


async def wait_for(condition: Any, seconds: float = 20.0) -> None:
    deadline = asyncio.get_running_loop().time() + seconds
    while not condition():
        assert asyncio.get_running_loop().time() < deadline, "not within the writer's time"
        await asyncio.sleep(0.05)


async def test_a_fact_told_is_known_next_turn_in_a_new_thread_once_and_by_nobody_else(
    data_dir: Path,
) -> None:
    async with LocalSession(ADA, data_dir) as ada:
        told = await ada.say("t1", "By the way, I live in Porto.")
        assert told.memory_write["status"] == "journaled"  # in the durable queue, not yet written
        assert told.memory_write["admission"]["decision"] == "batch"  # feature: admission
        asked = await ada.say("t2", "Where do I live?")
        assert recent(asked) == ["By the way, I live in Porto."]
        assert "I live in Porto" in asked.text  # the model was given it
        assert not any("Porto" in memory for memory in remembered(asked))  # feature: admission
        async with LocalSession(BOB, data_dir) as bob:
            other = await bob.say("t3", "Where do I live?")
        assert bob.memory is not None  # no turn of bob's was queued: stop the queue it started
        await asyncio.wrap_future(local_writer.run(bob.memory.stop(timeout=5)))
        assert other.said_recently == [] and "Porto" not in other.text
        # Moving to t2 sent t1's batch to the writer: written within the writer's own time,
        # not after t1's 30 quiet seconds.
        assert ada.memory is not None
        manager = ada.manager
        await wait_for(lambda: any("Porto" in i.description for i in manager.list_items().values()))
        await ada.wait_for_writes()
        again = await ada.say("t4", "Where do I live?")
    seen = recent(again) + remembered(again)
    assert [text for text in seen if "Porto" in text] == ["User lives in Porto"]  # once


async def test_a_fork_does_not_see_a_waiting_task_of_another_branch(
    data_dir: Path, gate: threading.Event
) -> None:
    async with LocalSession(ADA, data_dir) as ada:
        await ada.say("t1", "My name is Ada.")
        start = await ada.latest_checkpoint_id("t1")
        task = await ada.say("t1", "Let's plan a trip to Kyoto.")
        assert task.memory_write["status"] == "journaled"
        question = "How is the Kyoto trip going?"
        fork = await ada.say("t1", question, checkpoint_id=start)
        elsewhere = await ada.say("t2", question)
        assert ada.memory is not None and ada.memory.write_status().pending >= 2  # both wait
        gate.set()
    plan = "Let's plan a trip to Kyoto."
    assert plan not in recent(fork) + recent(elsewhere)
    assert recent(fork) == []  # its own thread: the rest of this branch is in its messages
    assert "My name is Ada." in recent(elsewhere)  # the user fact is everyone's
    assert plan not in fork.text and plan not in elsewhere.text


async def test_a_forget_said_just_now_hides_the_waiting_fact(
    data_dir: Path, gate: threading.Event
) -> None:
    async with LocalSession(ADA, data_dir) as ada:
        await ada.say("t1", "I live in Porto.")
        before = await ada.say("t2", "Where do I live?")
        forget = await ada.say("t3", "Please forget where I live.")
        after = await ada.say("t4", "Where do I live?")
        assert ada.memory is not None and ada.memory.write_status().pending >= 2  # both wait
        gate.set()
        await ada.wait_for_writes()
        written = await ada.say("t5", "Where do I live?")
    assert recent(before) == ["I live in Porto."]  # what the forget request then hides
    for reply in (forget, after, written):
        assert not any("Porto" in text for text in recent(reply) + remembered(reply))
        assert "Porto" not in reply.text


@pytest.mark.parametrize(
    ("fact", "forget", "question", "place", "unrelated"),
    [
        ("I moved to Porto last week.", "Please forget where I live.", "Where do I live now?",
         "Porto", "My sister is called Mei."),
        ("我上周搬到了杭州。", "忘掉我住在哪里", "我现在住在哪里？", "杭州", "我妹妹叫小美。"),
    ],
)  # fmt: skip
async def test_a_forget_hides_a_waiting_fact_of_its_topic_with_no_word_shared(
    data_dir: Path,
    gate: threading.Event,
    fact: str,
    forget: str,
    question: str,
    place: str,
    unrelated: str,
) -> None:
    async with LocalSession(ADA, data_dir) as ada:
        await ada.say("t1", fact)
        await ada.say("t1", unrelated)
        before = await ada.say("t2", question)
        await ada.say("t3", forget)
        after = await ada.say("t4", question)
        assert ada.memory is not None and ada.memory.write_status().pending >= 3  # all wait
        gate.set()
    assert fact in recent(before)  # what the forget request then hides
    assert not any(place in text for text in recent(after))
    assert place not in after.text  # nor is it in the model's prompt
    assert unrelated in recent(after)  # another topic stays visible
