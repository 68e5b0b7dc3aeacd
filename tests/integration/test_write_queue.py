"""The durable write queue: exactly once across a real SIGKILL, order, dead letters, no waiting."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from memory.long_term import JOURNAL_FILE, TRACE_FILE, LongTermMemory
from memory.store.backends.yaml_files import YamlMemoryManager
from memory.writer.journal import TurnJournal
from memory.writer.queue import RetryPolicy
from memory.writer.trace import WriteTrace
from memory.writer.turn import Turn

ROOT = Path(__file__).resolve().parents[2]


# The turn a killed worker was writing stays leased to it until the lease runs out; then the next
# process takes it (the lease keeps two live processes from writing one turn at once).
SHORT_LEASE = {"WORKER_LEASE_SECONDS": "2"}


def journal_of(data_dir: Path) -> Path:
    """Where the worker's journal is: beside its YAML store."""
    return data_dir / "memory" / JOURNAL_FILE


def start_worker(data_dir: Path, *args: str, **env: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "tests.integration.write_queue_worker", str(data_dir), *args],
        cwd=ROOT,
        env={**os.environ, **env},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def wait_for_done(journal_path: Path, at_least: int, timeout: float = 60) -> int:
    journal, deadline = TurnJournal(journal_path), time.monotonic() + timeout
    try:
        while time.monotonic() < deadline:
            done = journal.counts("alice")["done"]
            if done >= at_least:
                return done
            time.sleep(0.02)
    finally:
        journal.close()
    raise AssertionError(f"fewer than {at_least} turns done after {timeout} s")


def assert_each_turn_applied_once(data_dir: Path, count: int) -> None:
    """Items, applied-turn records, trace rows and journal states all say: once per turn."""
    manager = YamlMemoryManager(data_dir / "memory", "alice")
    facts = Counter(item.description for item in manager.list_items().values())
    assert facts == Counter(f"The user told fact number {i}." for i in range(count))
    assert all(manager.has_applied(f"turn-{i}") for i in range(count))
    trace = WriteTrace(data_dir / "memory" / TRACE_FILE)
    for index in range(count):
        rows = trace.for_turn("alice", f"turn-{index}", include_staged=True)
        assert [(r.tool, r.state) for r in rows] == [("create_memory", "applied")], index
        assert rows[0].arguments["content"] == f"The user told fact number {index}."
    assert len(trace.for_user("alice", limit=1000)) == count
    journal = TurnJournal(journal_of(data_dir))
    assert journal.counts("alice") == {"pending": 0, "done": count, "dead": 0}


def resume(data_dir: Path) -> str:
    worker = start_worker(data_dir, "resume")
    out, err = worker.communicate(timeout=120)
    assert worker.returncode == 0, err
    return out


@pytest.mark.slow
def test_a_sigkill_while_consuming_loses_nothing_and_duplicates_nothing(tmp_path):
    worker = start_worker(tmp_path, "send", "6", WORKER_MODEL_DELAY="0.3", **SHORT_LEASE)
    assert worker.stdout is not None
    assert worker.stdout.readline().startswith("replayed 0")
    assert worker.stdout.readline().strip() == "queued"  # all six are journaled
    wait_for_done(journal_of(tmp_path), at_least=2)
    worker.send_signal(signal.SIGKILL)  # mid-way through a later turn's agent run
    worker.wait(timeout=30)
    assert worker.returncode == -signal.SIGKILL
    pending = TurnJournal(journal_of(tmp_path)).counts("alice")["pending"]
    assert pending >= 1

    out = resume(tmp_path)
    assert f"replayed {pending}" in out
    assert_each_turn_applied_once(tmp_path, 6)


@pytest.mark.slow
def test_a_crash_between_commit_and_journal_is_replayed_without_a_second_write(tmp_path):
    worker = start_worker(tmp_path, "send", "4", WORKER_CRASH_AFTER_APPLY="turn-2", **SHORT_LEASE)
    worker.communicate(timeout=120)
    assert worker.returncode == -signal.SIGKILL
    journal = TurnJournal(journal_of(tmp_path))
    assert journal.get("alice", "turn-2").state == "pending"  # committed, not marked done
    staged = WriteTrace(tmp_path / "memory" / TRACE_FILE).for_turn("alice", "turn-2", True)
    assert [r.state for r in staged] == ["staged"]

    out = resume(tmp_path)
    assert "replayed 2" in out  # turn-2 (already in the store) and turn-3
    assert_each_turn_applied_once(tmp_path, 4)


class RecordingConsumer:
    """A cheap stand-in for the memory agent: records the order, optionally fails or waits."""

    def __init__(self, fail: set[str] | None = None, gate: asyncio.Event | None = None) -> None:
        self.seen: list[str] = []
        self.fail = fail or set()
        self.gate = gate

    async def consume(self, turn: Turn, memory: LongTermMemory) -> Any:
        assert memory.manager.user_id == turn.user_id == "alice"
        self.seen.append(turn.turn_id)
        if self.gate is not None:
            await self.gate.wait()
        if turn.turn_id in self.fail:
            raise ConnectionError(f"provider down while writing {turn.turn_id}")


def make_memory(tmp_path: Path, consumer: RecordingConsumer) -> LongTermMemory:
    manager = YamlMemoryManager(tmp_path / "memory", "alice")
    return LongTermMemory(
        manager, consumer=consumer, retry=RetryPolicy(max_attempts=3, initial_delay=0.01)
    )


def one_turn(text: str) -> list[dict[str, str]]:
    return [{"role": "user", "content": text}]


async def test_a_thousand_queued_turns_are_drained_in_order_by_stop(tmp_path):
    consumer = RecordingConsumer()
    memory = make_memory(tmp_path, consumer)
    memory.start()
    sent = [await memory.send_history(one_turn(f"message {i}")) for i in range(1000)]
    await memory.stop()
    assert consumer.seen == sent
    status = memory.write_status()
    assert (status.status, status.pending, status.done, status.dead) == ("OK", 0, 1000, 0)


async def test_a_turn_that_keeps_failing_is_dead_lettered_with_its_error(tmp_path):
    consumer = RecordingConsumer(fail={"bad"})
    memory = make_memory(tmp_path, consumer)
    memory.start()
    await memory.send_history(one_turn("first"), turn_id="first")
    await memory.send_history(one_turn("broken"), turn_id="bad")
    await memory.send_history(one_turn("after"), turn_id="after")
    await memory.stop()

    assert consumer.seen == ["first", "bad", "bad", "bad", "after"]
    status = memory.write_status()
    assert (status.status, status.pending, status.done, status.dead) == ("WARN", 0, 2, 1)
    [dead] = status.dead_letters
    assert (dead.turn_id, dead.attempts) == ("bad", 3)
    assert dead.last_error == "ConnectionError: provider down while writing bad"
    assert dead.turn.messages == tuple(one_turn("broken"))  # kept whole, ready to requeue
    assert dead.turn.turn_id == "bad" and dead.user_id == "alice"
    assert "failed 3 times" in status.issues[0]

    fixed = RecordingConsumer()
    restarted = make_memory(tmp_path, fixed)
    assert restarted.start() == 0  # dead letters are not replayed on their own
    assert restarted.retry_dead_letters() == 1  # once the cause is fixed, they are
    await restarted.stop()
    assert fixed.seen == ["bad"]
    status = restarted.write_status()
    assert (status.status, status.done, status.dead) == ("OK", 3, 0)


async def test_send_history_returns_before_the_consumer_finishes(tmp_path):
    gate = asyncio.Event()
    consumer = RecordingConsumer(gate=gate)
    memory = make_memory(tmp_path, consumer)
    memory.start()
    turn_id = await memory.send_history(one_turn("hello"))  # the consumer waits on the gate
    await asyncio.sleep(0.05)
    assert consumer.seen == [turn_id] and memory.write_status().pending == 1
    gate.set()
    await memory.stop()
    assert memory.write_status().done == 1


async def test_bad_input_is_refused_and_a_repeated_turn_is_queued_once(tmp_path):
    consumer = RecordingConsumer()
    memory = make_memory(tmp_path, consumer)
    with pytest.raises(RuntimeError, match="start"):
        await memory.send_history(one_turn("too early"))
    memory.start()
    with pytest.raises(ValueError, match="role"):
        await memory.send_history([{"role": "robot", "content": "x"}])
    with pytest.raises(ValueError, match="empty"):
        await memory.send_history([])
    assert await memory.send_history(one_turn("hi"), turn_id="t") == "t"
    assert await memory.send_history(one_turn("hi"), turn_id="t") == "t"
    with pytest.raises(ValueError, match="other messages"):
        await memory.send_history(one_turn("something else"), turn_id="t")
    await memory.stop()
    assert consumer.seen == ["t"]
    assert memory.write_status().done == 1


async def test_send_history_from_session_queues_the_last_turn_once(tmp_path):
    from langchain_core.messages import AIMessage, HumanMessage

    consumer = RecordingConsumer()
    memory = make_memory(tmp_path, consumer)
    memory.start()
    session = [
        HumanMessage("hi", id="m1"),
        AIMessage("hello"),
        HumanMessage("I moved to Lyon", id="m2"),
        AIMessage("Nice!"),
    ]
    first = await memory.send_history_from_session(session, session_id="s1")
    again = await memory.send_history_from_session(session, session_id="s1")
    await memory.stop()
    assert first == again == "s1:m2" and consumer.seen == ["s1:m2"]
    assert memory.journal_path == tmp_path / "memory" / JOURNAL_FILE  # beside the store
    journal = TurnJournal(memory.journal_path)
    entry = journal.get("alice", "s1:m2")
    assert entry is not None and entry.turn.messages == (
        {"role": "user", "content": "I moved to Lyon"},
        {"role": "assistant", "content": "Nice!"},
    )
    assert entry.turn.thread_id == "s1"
