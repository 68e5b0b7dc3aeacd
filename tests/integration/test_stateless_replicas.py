"""Stateless replicas on a real PostgreSQL: with a state database nothing of a user's records is
kept in the data folder, two processes count into the same rows, and erase_user leaves none."""

from __future__ import annotations

import json
import multiprocessing
import shutil
import uuid
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from memory.admission import Admission
from memory.archive import ArchivedMessage, archives
from memory.integration.models.offline import OfflineChatModel
from memory.long_term import LongTermMemory
from memory.store.factory import open_memory_manager
from memory.upkeep.consolidation.trigger import note_write, writes_since_pass
from memory.usage.counts import Usage
from memory.writer.consumer import MemoryConsumer
from memory.writer.turn import Turn
from tests.integration.conftest import POSTGRES_URL, require_postgres

pytestmark = pytest.mark.postgres

FACTS = [
    "I live in Qingdao, near the old railway station.",
    "My sister is called Xiaolan.",
    "I play the cello on Sundays.",
]
RECALLS_PER_PROCESS = 20
WRITES_PER_PROCESS = 15


@pytest.fixture(autouse=True)
def _postgres() -> None:
    require_postgres()


_users: list[str] = []


@pytest.fixture(autouse=True)
def _erase_afterwards(tmp_path: Path) -> Iterator[None]:
    """The database is shared by every test run: a failed test leaves no user behind."""
    yield
    while _users:
        user = _users.pop()
        replica(user, tmp_path / "cleanup").erase_user(
            archive=archives.open(f"postgres:{POSTGRES_URL}", user)
        )
    archives.clear()


def fresh_user(name: str) -> str:
    """A user id no other run of these tests (in the shared database) has used."""
    user = f"{name}-{uuid.uuid4().hex[:10]}"
    _users.append(user)
    return user


def replica(user: str, data_dir: Path) -> LongTermMemory:
    """The user's memory as one replica of a deployment opens it: the store and every record
    in PostgreSQL, the data folder its own (and gone at the next deploy)."""
    manager = open_memory_manager(f"postgres:{POSTGRES_URL}", user)
    return LongTermMemory(manager, data_dir=data_dir, embeddings="off", state_database=POSTGRES_URL)


async def writer_turn(memory: LongTermMemory, number: int, text: str) -> None:
    """What the server does for one turn: the admission row and the chat's usage (the chat
    run), the memory_writer run's write, and the consolidation count."""
    turn = Turn.of(
        memory.user_id,
        [{"role": "user", "content": text}, {"role": "assistant", "content": "Noted."}],
        turn_id=f"turn-{number}",
        thread_id="thread-1",
        admission=Admission(3.0, "write", ("first_person_fact",)),
    )
    memory.trace.record_admission(turn)
    memory.usage.record(memory.user_id, turn.turn_id, {"chat": Usage(1, 120, 8)}, "thread-1")
    result = await MemoryConsumer(OfflineChatModel()).consume(turn, memory)
    assert result.applied
    note_write(memory)


def recall(memory: LongTermMemory, question: str) -> list[str]:
    ids = [hit["id"] for hit in memory.get_related_memory_from(question, "mechanical")]
    memory.record_recall(ids, question)
    memory.recall_log.flush()
    return ids


def files_in(folder: Path) -> list[str]:
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*") if p.is_file())


async def test_writer_turns_and_recalls_leave_no_file_in_the_data_folder(tmp_path: Path) -> None:
    data_dir = tmp_path / "data"
    memory = replica(fresh_user("ada"), data_dir)
    for number, text in enumerate(FACTS):
        await writer_turn(memory, number, text)
    assert recall(memory, "Where do I live?")
    assert memory.topics.refresh() >= 0
    report = memory.consolidate()
    assert not report.refused
    assert memory.trace.for_user(memory.user_id)  # the writer's changes
    assert len(memory.trace.admissions(memory.user_id)) == len(FACTS)
    assert memory.usage.totals(memory.user_id)["chat"].calls == len(FACTS)
    assert memory.recall_log.flushes()[0] == 1
    assert writes_since_pass(memory) == 0  # the pass reset it, in the database
    assert not data_dir.exists() or files_in(data_dir) == []


def count_in_a_process(user: str, data_dir: str, ids: list[str], ready: Any) -> None:
    """One replica: a recall of each of `ids` per flush, and writer runs counted."""
    memory = replica(user, Path(data_dir))
    ready.wait()
    for number in range(RECALLS_PER_PROCESS):
        memory.record_recall(ids, f"question {number}")
        memory.recall_log.flush()
    for _ in range(WRITES_PER_PROCESS):
        note_write(memory)


def test_two_processes_add_up_recalls_and_writes_without_losing_one(tmp_path: Path) -> None:
    user, ids = fresh_user("bea"), ["m-one", "m-two", "m-three"]
    spawn = multiprocessing.get_context("spawn")
    ready = spawn.Event()
    workers = [
        spawn.Process(target=count_in_a_process, args=(user, str(tmp_path / f"r{n}"), ids, ready))
        for n in range(2)
    ]
    for worker in workers:
        worker.start()
    ready.set()
    for worker in workers:
        worker.join(120)
        assert worker.exitcode == 0
    memory = replica(user, tmp_path / "reader")
    stats = memory.recall_stats()
    assert {i: stats[i].recalls for i in ids} == dict.fromkeys(ids, 2 * RECALLS_PER_PROCESS)
    assert all(stats[i].queries == RECALLS_PER_PROCESS for i in ids)  # the same questions
    assert memory.recall_log.flushes() == (2 * RECALLS_PER_PROCESS, 6 * RECALLS_PER_PROCESS)
    assert writes_since_pass(memory) == 2 * WRITES_PER_PROCESS
    assert files_in(tmp_path) == []


def seen_by_the_user(memory: LongTermMemory) -> dict[str, Any]:
    """What the chat and the editor show of the records: hotness order, trace, counter."""
    heat = memory.hotness()
    user = memory.user_id
    return {
        "hotness order": sorted(heat, key=lambda i: (-heat[i], i)),
        "trace": [(e.turn_id, e.step, e.op, e.state) for e in memory.trace.for_user(user)],
        "admissions": [a.turn_id for a in memory.trace.admissions(user)],
        "usage": memory.usage.totals(user),
        "writes since the pass": writes_since_pass(memory),
        "summaries": sorted(memory.topics.summaries.read(user)),
        "recall flushes": memory.recall_log.flushes(),
    }


async def test_deleting_the_data_folder_between_turns_changes_nothing(tmp_path: Path) -> None:
    user, data_dir = fresh_user("cai"), tmp_path / "data"
    first = replica(user, data_dir)
    await writer_turn(first, 0, FACTS[0])
    await writer_turn(first, 1, FACTS[1])
    recall(first, "Where do I live?")
    recall(first, "Qingdao railway station")
    first.topics.refresh()
    before = seen_by_the_user(first)
    assert before["writes since the pass"] == 2 and before["recall flushes"][0] == 2
    shutil.rmtree(data_dir, ignore_errors=True)
    # The next turn reaches another replica (a new process: a new object, an empty folder).
    second = replica(user, data_dir)
    assert seen_by_the_user(second) == before
    await writer_turn(second, 2, FACTS[2])
    assert writes_since_pass(second) == 3
    assert writes_since_pass(first) == 3  # and the first replica sees the second's count
    assert files_in(tmp_path) == []


def user_rows_by_table(user: str) -> dict[str, int]:
    """Rows of `user` in every gulfstream_ table that has a user_id column."""
    import psycopg

    counts = {}
    with psycopg.connect(POSTGRES_URL, autocommit=True) as conn:
        tables = conn.execute(
            "SELECT table_name FROM information_schema.columns WHERE column_name = 'user_id' "
            "AND table_schema = current_schema() AND table_name LIKE 'gulfstream%%'"
        ).fetchall()
        for (table,) in tables:
            row = conn.execute(f'SELECT count(*) FROM "{table}" WHERE user_id = %s', (user,))
            counts[table] = row.fetchone()[0]  # type: ignore[index]
    return counts


async def test_erase_user_leaves_no_row_of_them_in_any_gulfstream_table(tmp_path: Path) -> None:
    ada, bob = fresh_user("ada"), fresh_user("bob")
    memories = {user: replica(user, tmp_path / "data") for user in (ada, bob)}
    for user, memory in memories.items():
        for number, text in enumerate(FACTS):
            await writer_turn(memory, number, text)
        recall(memory, "Where do I live?")
        memory.topics.refresh()
        archive = archives.open(f"postgres:{POSTGRES_URL}", user)
        assert archive is not None
        archive.add([ArchivedMessage(user, "thread-1", "cp-1", "m-1", "user", FACTS[0], 1.0, 0)])
        due = datetime.now(UTC) + timedelta(days=1)
        set_here = memory.reminders.add("thread-1", "", "call the Qingdao office", due)
        # Another replica, its own data folder: the same reminder, from the database.
        assert replica(user, tmp_path / "other").reminders.pending() == [set_here]
    before, bob_before = user_rows_by_table(ada), user_rows_by_table(bob)
    expected = {"gulfstream_write_trace", "gulfstream_admissions", "gulfstream_model_usage",
                "gulfstream_recalls", "gulfstream_recall_queries", "gulfstream_recall_flushes",
                "gulfstream_consolidation", "gulfstream_archive_messages",
                "gulfstream_reminders"}  # fmt: skip
    assert expected <= {table for table, count in before.items() if count}
    report = memories[ada].erase_user(archive=archives.open(f"postgres:{POSTGRES_URL}", ada))
    assert report.removed
    assert {t: n for t, n in user_rows_by_table(ada).items() if n} == {}
    assert user_rows_by_table(bob) == bob_before  # the other user is untouched
    assert expected <= {table for table, count in bob_before.items() if count}
    assert memories[bob].manager.list_items()


def test_an_unfinished_pass_s_plan_is_found_by_the_next_replica(tmp_path: Path) -> None:
    from memory.store.document import Change
    from memory.upkeep.consolidation.plan import ConsolidationPlan, PlanStep
    from memory.upkeep.consolidation.state import consolidation_state

    user = fresh_user("dan")
    plan = ConsolidationPlan("p1", user, "2026-12-01T00:00:00+00:00", 2, [
        PlanStep("stale", [Change("stale", "m1", reason="consolidation")])
    ])  # fmt: skip
    consolidation_state(replica(user, tmp_path / "one")).save_plan(plan)
    other = consolidation_state(replica(user, tmp_path / "two"))
    assert other.load_plan() == plan
    other.drop_plan()
    assert consolidation_state(replica(user, tmp_path / "one")).load_plan() is None
    assert files_in(tmp_path) == []


def test_a_pass_that_merges_keeps_its_restore_point_in_the_database(tmp_path: Path) -> None:
    from memory.store.snapshot_rows import SCHEMA, SNAPSHOTS_FILE, load_snapshot, stored_snapshots

    data_dir = tmp_path / "data"
    memory = replica(fresh_user("ines"), data_dir)
    cello = memory.manager.add("User plays the cello on Sundays", "hobby")
    memory.manager.add("User plays the cello on Sundays.", "hobby")
    memory.manager.add("User's sister Mariana lives in Braga", "family")
    report = memory.consolidate()
    assert report.merged, report.summary()  # the pass changed something: a restore point first
    assert not data_dir.exists() or files_in(data_dir) == []
    db = memory.state_database(SNAPSHOTS_FILE, SCHEMA)
    [name] = stored_snapshots(db, memory.user_id)
    assert name in report.snapshot
    before = load_snapshot(db, memory.user_id, name)
    assert len([i for i in before.items.values() if not i.deleted]) == 3  # as before the merge
    # Another replica, a fresh data folder: the restore point is there, and erasing a memory
    # takes it out of the restore point too.
    other = replica(memory.user_id, tmp_path / "other")
    sister = next(i for i, item in before.items.items() if "Mariana" in item.description)
    other.erase(sister)
    redacted = load_snapshot(db, memory.user_id, name)
    assert sister not in redacted.items and cello in redacted.items
    assert "Mariana" not in json.dumps([item.to_dict() for item in redacted.items.values()])
    other.erase_user()
    assert stored_snapshots(db, memory.user_id) == []
