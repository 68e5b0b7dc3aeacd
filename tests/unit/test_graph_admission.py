"""Admission in the chat graph: what ltm_write skips, journals, batches and records, and how the
server's memory_writer writes a thread's waiting turns (a real InMemoryStore)."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.store.memory import InMemoryStore

import memory.integration.writing.writer_graph as writer
from graph.agent import compile_graph
from graph.context import Context
from memory.admission import Admission
from memory.integration.settings import use_settings
from memory.integration.writing.pending import (
    due_batches,
    keep_pending,
    pending_namespace,
    pending_turns,
)
from memory.long_term import JOURNAL_FILE, TRACE_FILE
from memory.registry import registry
from memory.store.factory import open_memory_manager
from memory.writer.batching import BatchPolicy
from memory.writer.journal import TurnJournal
from memory.writer.local import local_writer
from memory.writer.trace import WriteTrace
from memory.writer.turn import Turn

BATCH = Admission(3.0, "batch", ("first_person_fact",))
WRITE = Admission(10.0, "write", ("remember",))


def says(text: str) -> dict[str, Any]:
    return {"messages": [{"role": "user", "content": text}]}


def offline() -> Context:
    return Context(user_id="alice", model="offline/rules")


async def chat(app: Any, text: str, thread: str = "t1") -> dict[str, Any]:
    return await app.ainvoke(says(text), {"configurable": {"thread_id": thread}}, context=offline())


async def drained() -> None:
    await asyncio.wait_for(asyncio.wrap_future(local_writer.drain()), 60)


def stored(tmp_path: Path) -> list[str]:
    manager = open_memory_manager(f"yaml:{tmp_path / 'memory'}", "alice")
    return sorted(item.description for item in manager.list_items().values())


@pytest.mark.uses("admission")
async def test_small_talk_is_skipped_with_its_reasons_and_never_journaled(tmp_path: Path) -> None:
    app = compile_graph(checkpointer=InMemorySaver())
    state = await chat(app, "ok thanks!")
    write = state["memory_write"]
    assert (write["mode"], write["status"]) == ("local", "skipped")
    assert write["admission"]["decision"] == "skip"
    assert "small_talk" in write["admission"]["reasons"]
    journal = TurnJournal(tmp_path / "memory" / JOURNAL_FILE)
    assert journal.get("alice", write["turn_id"]) is None
    [row] = WriteTrace(tmp_path / "memory" / TRACE_FILE).admissions("alice")
    assert (row.turn_id, row.admission.decision, row.said) == (
        write["turn_id"],
        "skip",
        "ok thanks!",
    )


@pytest.mark.uses("admission")
@pytest.mark.slow  # waits (0.8 s) to see a batch that is not yet due
async def test_facts_wait_in_their_batch_and_a_remember_takes_them_along(tmp_path: Path) -> None:
    app = compile_graph(checkpointer=InMemorySaver())
    with use_settings(write_batch_size=10):
        first = await chat(app, "My name is Ada.")
        second = await chat(app, "I live in Lisbon.")
        assert first["memory_write"]["admission"]["decision"] == "batch"
        assert first["memory_write"]["status"] == "journaled"
        journal = TurnJournal(tmp_path / "memory" / JOURNAL_FILE)
        entry = journal.get("alice", first["memory_write"]["turn_id"])
        assert entry is not None and entry.turn.admission is not None  # it travels with the turn
        await asyncio.sleep(0.3)
        assert stored(tmp_path) == []  # waiting for their batch
        third = await chat(app, "Remember that I like green tea.")
        assert third["memory_write"]["admission"]["decision"] == "write"
        await asyncio.sleep(0.5)
        await drained()
    assert stored(tmp_path) == [
        "User likes green tea",
        "User lives in Lisbon",
        "User's name is Ada",
    ]
    ids = [s["memory_write"]["turn_id"] for s in (first, second, third)]
    manager = open_memory_manager(f"yaml:{tmp_path / 'memory'}", "alice")
    assert all(manager.has_applied(turn_id) for turn_id in ids)
    assert journal.counts("alice") == {"pending": 0, "done": 3, "dead": 0}
    decisions = [
        r.admission.decision
        for r in WriteTrace(tmp_path / "memory" / TRACE_FILE).admissions("alice")
    ]
    assert sorted(decisions) == ["batch", "batch", "write"]


@pytest.mark.uses("admission")
async def test_a_threads_batch_can_be_flushed_before_compaction(tmp_path: Path) -> None:
    app = compile_graph(checkpointer=InMemorySaver())
    with use_settings(write_batch_size=10):
        await chat(app, "My name is Ada.", thread="t9")
        await asyncio.sleep(0.2)
        assert stored(tmp_path) == []
        memory = registry.peek(f"yaml:{tmp_path / 'memory'}", "alice")
        assert memory is not None
        assert await asyncio.wrap_future(local_writer.flush(memory, "t9")) == 1
        for _ in range(100):  # written without anyone waiting for the queue to drain
            if stored(tmp_path):
                break
            await asyncio.sleep(0.05)
    assert stored(tmp_path) == ["User's name is Ada"]


async def test_with_admission_off_every_turn_is_written_as_before(tmp_path: Path) -> None:
    app = compile_graph(checkpointer=InMemorySaver())
    with use_settings(admission=False):
        state = await chat(app, "ok")
        await drained()
    write = state["memory_write"]
    assert (write["status"], "admission" in write) == ("journaled", False)
    journal = TurnJournal(tmp_path / "memory" / JOURNAL_FILE)
    assert journal.get("alice", write["turn_id"]).state == "done"  # type: ignore[union-attr]


DRINKS = ("tea", "coffee", "cocoa")


def turn(n: int, thread: str, admission: Admission, minutes_ago: float = 0) -> Turn:
    when = (datetime.now(UTC) - timedelta(minutes=minutes_ago)).isoformat()
    return Turn.of(
        "alice", [{"role": "user", "content": f"I like {DRINKS[n % 3]}."}], turn_id=f"{thread}-{n}",
        thread_id=thread, admission=admission, enqueued_at=when,
    )  # fmt: skip


def test_a_batch_is_due_when_its_thread_went_quiet_or_filled_or_a_write_came() -> None:
    policy = BatchPolicy(size=3, quiet_seconds=30)
    quiet = [turn(0, "a", BATCH), turn(1, "a", BATCH)]
    assert due_batches(quiet, ("a", "a-1"), policy) == [quiet]  # the newest scheduled this run
    assert due_batches(quiet, ("a", "a-0"), policy) == []  # a-1's own run comes later
    assert due_batches(quiet, None, policy) == []
    full = [*quiet, turn(2, "a", BATCH)]
    assert due_batches(full, None, policy) == [full]
    written = [*quiet, turn(2, "a", WRITE)]
    assert due_batches(written, None, policy) == [written]
    lost = [turn(0, "b", BATCH, minutes_ago=10)]  # its run never came
    assert due_batches([*quiet, *lost], ("a", "a-0"), policy) == [lost]
    assert due_batches(quiet, None, policy, flush="a") == [quiet]  # before compaction


async def test_the_server_writer_writes_a_threads_waiting_turns_in_one_agent_run(
    tmp_path: Path,
) -> None:
    """The runs of a burst: the first finds a newer turn waiting and ends at once; the run of
    the newest writes the three turns in one writer run, records each and forgets them."""
    store = InMemoryStore()
    graph = writer.builder.compile(store=store)
    for n in range(3):
        await keep_pending(store, turn(n, "t1", BATCH))
    context = Context(user_id="alice", model="offline/rules")
    early = await graph.ainvoke({"thread_id": "t1", "turn_id": "t1-0"}, context=context)
    assert early["result"] == "nothing due"
    assert len(await pending_turns(store, "alice")) == 3
    last = await graph.ainvoke({"thread_id": "t1", "turn_id": "t1-2"}, context=context)
    assert last["result"] == "wrote 3 turns in 1 runs"
    assert await pending_turns(store, "alice") == []
    assert store.search(pending_namespace("alice")) == []
    manager = open_memory_manager(f"yaml:{tmp_path / 'memory'}", "alice")
    assert all(manager.has_applied(f"t1-{n}") for n in range(3))
    assert stored(tmp_path) == ["User likes cocoa", "User likes coffee", "User likes tea"]
    again = await graph.ainvoke({"thread_id": "t1", "turn_id": "t1-2"}, context=context)
    assert again["result"] == "nothing due"


@pytest.mark.uses("admission")
def test_ltm_writes_admission_reads_the_assistants_question_before_the_turn() -> None:
    """A short answer is kept because the assistant asked; the same words unasked are skipped."""
    from types import SimpleNamespace

    from memory.integration.writing.admission import admit

    run: Any = SimpleNamespace(settings=SimpleNamespace(admission=True))
    said = [{"role": "user", "content": "在三楼。"}, {"role": "assistant", "content": "好的。"}]
    asked = ({"role": "user", "content": "我换了新办公室"},
             {"role": "assistant", "content": "恭喜！办公室在几楼？"})  # fmt: skip
    answered = admit(run, Turn.of("alice", said, thread_id="t", context=asked), [])
    assert answered.admission is not None and answered.admission.decision == "batch"
    assert "answer" in answered.admission.reasons
    unasked = admit(run, Turn.of("alice", said, thread_id="t"), [])
    assert unasked.admission is not None and "answer" not in unasked.admission.reasons
