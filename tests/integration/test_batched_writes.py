"""Batched writes in the local queue: one writer run per batch of a thread, each turn exactly once,
and a crash mid-batch (a real SIGKILL) leaves every turn applied or pending, never half."""

from __future__ import annotations

import asyncio
import signal
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from memory.admission import Admission
from memory.long_term import TRACE_FILE, LongTermMemory
from memory.store.backends.yaml_files import YamlMemoryManager
from memory.store.branch import Lineage
from memory.writer.batching import BatchPolicy
from memory.writer.journal import TurnJournal
from memory.writer.trace import WriteTrace
from memory.writer.turn import Turn
from tests.integration.test_write_queue import journal_of, resume, start_worker, wait_for_done

BATCH = Admission(3.0, "batch", ("first_person_fact",))
WRITE = Admission(10.0, "write", ("remember",))


class BatchRecorder:
    """Stands in for the memory agent: records which turn ids each run got, then applies one
    memory per turn through the real manager (so the store records every id)."""

    def __init__(self) -> None:
        self.runs: list[tuple[str, ...]] = []

    async def consume(self, turn: Turn, memory: LongTermMemory) -> None:
        self.runs.append(turn.turn_ids)
        from memory.store.document import Change

        said = [m["content"] for m in turn.messages if m["role"] == "user"]
        changes = [Change("add", description=text, theme="moments") for text in said]
        await asyncio.to_thread(memory.manager.apply, changes, turn.turn_ids, turn.provenance)


async def runs_settled(recorder: BatchRecorder, count: int, seconds: float = 10.0) -> None:
    """Wait until the writer ran `count` times (a busy machine may take more than a moment),
    then a little longer, so that a run too many would be seen too."""
    deadline = asyncio.get_running_loop().time() + seconds
    while len(recorder.runs) < count and asyncio.get_running_loop().time() < deadline:
        await asyncio.sleep(0.02)
    await asyncio.sleep(0.05)


def make_memory(tmp_path: Path, size: int = 3, quiet: float = 600) -> tuple[LongTermMemory, Any]:
    recorder = BatchRecorder()
    memory = LongTermMemory(
        YamlMemoryManager(tmp_path / "memory", "alice"),
        consumer=recorder,
        journal_path=tmp_path / "journal.sqlite",
        batching=BatchPolicy(size=size, quiet_seconds=quiet),
    )
    return memory, recorder


def turn(n: int, admission: Admission | None = BATCH, thread: str = "t1", **kw: Any) -> Turn:
    said = [{"role": "user", "content": f"I said thing {n}"}]
    return Turn.of("alice", said, turn_id=f"turn-{n}", thread_id=thread, admission=admission, **kw)


async def test_a_thread_s_batch_is_one_writer_run_recording_every_turn(tmp_path: Path) -> None:
    memory, recorder = make_memory(tmp_path, size=3)
    memory.start()
    for n in range(7):
        await memory.send(turn(n))
    await runs_settled(recorder, 2)
    assert recorder.runs == [("turn-0", "turn-1", "turn-2"), ("turn-3", "turn-4", "turn-5")]
    assert memory.write_status().pending == 1  # turn-6 waits for its batch
    await memory.stop()  # the session ends: the waiting turn is written too
    assert recorder.runs[-1] == ("turn-6",)
    manager = memory.manager
    assert all(manager.has_applied(f"turn-{n}") for n in range(7))
    assert Counter(i.description for i in manager.list_items().values()) == Counter(
        f"I said thing {n}" for n in range(7)
    )
    assert memory.write_status().done == 7


async def test_a_write_decision_takes_its_threads_batch_along_and_other_threads_wait(
    tmp_path: Path,
) -> None:
    memory, recorder = make_memory(tmp_path, size=10)
    memory.start()
    await memory.send(turn(0))
    await memory.send(turn(1, thread="t2"))
    await memory.send(turn(2))
    await memory.send(turn(3, admission=WRITE))  # "remember …": now, with turns 0 and 2
    await memory.send(turn(4, admission=None))  # not scored: written at once, alone
    await runs_settled(recorder, 2)
    assert recorder.runs == [("turn-0", "turn-2", "turn-3"), ("turn-4",)]
    assert memory.flush("t2") == 1  # before compacting t2, say
    await memory.join()
    assert recorder.runs[-1] == ("turn-1",)
    await memory.stop()


async def test_a_quiet_thread_s_batch_is_written_after_the_quiet_time(tmp_path: Path) -> None:
    memory, recorder = make_memory(tmp_path, size=10, quiet=0.3)
    memory.start()
    await memory.send(turn(0))
    await asyncio.sleep(0.15)
    await memory.send(turn(1))  # the thread speaks again: the quiet time starts over
    await asyncio.sleep(0.2)
    assert recorder.runs == []
    await asyncio.sleep(0.4)
    assert recorder.runs == [("turn-0", "turn-1")]
    await memory.stop()


async def test_a_fork_starts_a_batch_of_its_own(tmp_path: Path) -> None:
    """Turns 1 and 2 answer from the same checkpoint (siblings): one batch cannot hold both, so
    each is written from its own place in the conversation tree."""
    memory, recorder = make_memory(tmp_path, size=10)
    memory.start()
    base = {"c0"}
    await memory.send(turn(0, checkpoint_id="c1", lineage=Lineage("t1", frozenset(base))))
    await memory.send(turn(1, checkpoint_id="c2", lineage=Lineage("t1", frozenset({"c0", "c1"}))))
    await memory.send(turn(2, checkpoint_id="c3", lineage=Lineage("t1", frozenset({"c0", "c1"}))))
    await memory.join()
    assert recorder.runs == [("turn-0", "turn-1"), ("turn-2",)]
    items = memory.manager.list_items().values()
    assert {i.origin.get("checkpoint_id") for i in items} == {"c2", "c3"}
    await memory.stop()


async def test_turns_the_store_has_already_are_left_out_of_their_batch(tmp_path: Path) -> None:
    """As after a crash between the store's commit and the journal's: the store has turns 0 and
    1, the journal says pending. The batch is written without them; all three end done."""
    memory, recorder = make_memory(tmp_path, size=10)
    memory.start()
    for n in range(3):
        await memory.send(turn(n))
    memory.manager.apply([], ["turn-0", "turn-1"])
    await memory.stop()
    assert recorder.runs == [("turn-2",)]
    journal = TurnJournal(tmp_path / "journal.sqlite")
    assert journal.counts("alice") == {"pending": 0, "done": 3, "dead": 0}


async def test_a_batch_partly_applied_elsewhere_is_refused_whole(tmp_path: Path) -> None:
    from memory.errors import PartlyApplied
    from memory.store.document import Change

    manager = YamlMemoryManager(tmp_path / "memory", "alice")
    manager.apply([], ["turn-1"])
    revision = manager.revision
    with pytest.raises(PartlyApplied, match="turn-1"):
        manager.apply([Change("add", description="x", theme="t")], ["turn-0", "turn-1"])
    assert manager.revision == revision and not manager.has_applied("turn-0")
    assert manager.apply([], ["turn-1"]).applied is False  # all applied: a no-op


def assert_each_fact_applied_once(data_dir: Path, count: int) -> None:
    manager = YamlMemoryManager(data_dir / "memory", "alice")
    facts = Counter(item.description for item in manager.list_items().values())
    assert facts == Counter(f"The user told fact number {i}." for i in range(count))
    assert all(manager.has_applied(f"turn-{i}") for i in range(count))
    assert TurnJournal(journal_of(data_dir)).counts("alice") == {
        "pending": 0,
        "done": count,
        "dead": 0,
    }
    created = WriteTrace(journal_of(data_dir).with_name(TRACE_FILE)).for_user("alice", limit=1000)
    assert Counter(r.arguments["content"] for r in created) == facts


@pytest.mark.slow
def test_a_sigkill_mid_batch_leaves_each_turn_applied_or_pending(tmp_path: Path) -> None:
    worker = start_worker(tmp_path, "send", "9", WORKER_BATCH_SIZE="3", WORKER_MODEL_DELAY="0.4")
    assert worker.stdout is not None
    assert worker.stdout.readline().startswith("replayed 0")
    assert worker.stdout.readline().strip() == "queued"
    wait_for_done(journal_of(tmp_path), at_least=3)
    worker.send_signal(signal.SIGKILL)  # while the agent works on the second batch
    worker.wait(timeout=30)
    journal = TurnJournal(journal_of(tmp_path))
    manager = YamlMemoryManager(tmp_path / "memory", "alice")
    for n in range(9):  # never half: the store and the journal agree on every turn
        state = journal.get("alice", f"turn-{n}").state  # type: ignore[union-attr]
        assert state == ("done" if manager.has_applied(f"turn-{n}") else "pending"), n
    pending = journal.counts("alice")["pending"]
    assert pending % 3 == 0 and pending >= 3  # whole batches, not parts of one
    journal.close()
    out = resume(tmp_path)
    assert f"replayed {pending}" in out
    assert_each_fact_applied_once(tmp_path, 9)


@pytest.mark.slow
def test_a_crash_between_a_batch_s_commit_and_the_journal_writes_nothing_twice(
    tmp_path: Path,
) -> None:
    worker = start_worker(
        tmp_path, "send", "6", WORKER_BATCH_SIZE="3", WORKER_CRASH_AFTER_APPLY="turn-4"
    )
    worker.communicate(timeout=120)
    assert worker.returncode == -signal.SIGKILL
    journal = TurnJournal(journal_of(tmp_path))
    manager = YamlMemoryManager(tmp_path / "memory", "alice")
    # The second batch (turns 3-5) is in the store, every id of it, and pending in the journal.
    assert all(manager.has_applied(f"turn-{n}") for n in range(6))
    assert [journal.get("alice", f"turn-{n}").state for n in range(6)] == (  # type: ignore[union-attr]
        ["done"] * 3 + ["pending"] * 3
    )
    journal.close()
    out = resume(tmp_path)
    assert "replayed 3" in out
    assert_each_fact_applied_once(tmp_path, 6)
