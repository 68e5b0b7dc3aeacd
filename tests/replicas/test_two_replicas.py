"""Two replicas, one user, one PostgreSQL: what one replica writes the other serves, concurrent
writes through both all land, and a replica killed mid-write loses nothing."""

from __future__ import annotations

import asyncio
import json
import time

import httpx
import pytest

from memory.long_term import LongTermMemory
from memory.store.factory import open_memory_manager
from memory.store.manager import BaseMemoryManager
from tests.replicas.conftest import delete_rows, files_in
from tests.replicas.replica import Replica, remembered
from tests.replicas.stub import HIT_PREFIX

pytestmark = [
    pytest.mark.slow,
    pytest.mark.postgres,
    pytest.mark.replicas,
    # One loop for the module: the replicas' SDK clients are made once and keep their pool.
    pytest.mark.asyncio(loop_scope="module"),
]

FACT = "I drink oolong tea every morning."
MEMORY = f"The user said: {FACT}"  # what the stub writer makes of it
NEEDLE = "oolong tea every morning"  # every edit below keeps it, so HIT turns still find it
TURNS_EACH = 4  # HIT turns per replica, run at once
EDITS_EACH = 3  # editor edits per replica, at the same time


def stored(dsn: str, user_id: str) -> BaseMemoryManager:
    """The user's memory read straight from the database, as neither replica holds it."""
    return open_memory_manager(f"postgres:{dsn}", user_id)


async def memory_id(manager: BaseMemoryManager, replica: Replica) -> str:
    """The id of the memory that holds NEEDLE; added through `replica`'s editor when a test
    runs without the first one (`-k`)."""
    ids = [i for i, item in manager.list_items().items() if NEEDLE in item.description]
    if not ids:
        async with replica.editor() as editor:
            added = await editor.post("memories", json={"description": MEMORY, "theme": "habits"})
        assert added.status_code == 201, added.text
        ids = [added.json()["id"]]
    assert len(ids) == 1, {i: item.description for i, item in manager.list_items().items()}
    return ids[0]


async def edit(editor: httpx.AsyncClient, target: str, description: str) -> str | None:
    """One edit through the editor's API: the description when it was saved, else None."""
    answer = await editor.patch(
        f"memories/{target}", json={"description": description, "reason": "replica lane"}
    )
    return description if answer.status_code == 200 else None


async def test_a_memory_written_through_a_is_recalled_through_b(
    replicas: tuple[Replica, Replica],
) -> None:
    a, b = replicas
    await a.say(FACT)
    await a.wait_idle()  # A's memory_writer run has written it to PostgreSQL
    asked = await b.say("What do I drink every morning?")
    assert MEMORY in remembered(asked), b.log_tail()


async def test_hits_and_edits_of_one_memory_through_both_replicas_at_once_all_land(
    replicas: tuple[Replica, Replica], postgres_dsn: str
) -> None:
    a, b = replicas
    manager = stored(postgres_dsn, a.user_id)
    target = await memory_id(manager, a)
    hits_before = manager.get(target).hit
    async with a.editor() as editor_a, b.editor() as editor_b:
        turns = [r.say(HIT_PREFIX + NEEDLE) for r in (a, b) for _ in range(TURNS_EACH)]
        edits = [
            edit(editor, target, f"I drink oolong tea every morning (edit {name}{i}).")
            for name, editor in (("a", editor_a), ("b", editor_b))
            for i in range(EDITS_EACH)
        ]
        results = await asyncio.gather(*turns, *edits)
    await asyncio.gather(a.wait_idle(), b.wait_idle())
    saved = [text for text in results[len(turns) :] if text is not None]
    assert len(saved) == 2 * EDITS_EACH  # no edit was refused: none set an expectation
    item = manager.get(target)
    in_history = {entry.get("description") for entry in item.history}
    missing = [text for text in saved if text not in in_history]
    assert (item.hit - hits_before, missing) == (2 * TURNS_EACH, [])


async def test_no_replica_keeps_state_in_its_own_data_folder(
    replicas: tuple[Replica, Replica],
) -> None:
    # A folder per replica is gone on the next deploy and unseen by the other replicas.
    found = {r.name: files_in(r.data_dir) for r in replicas}
    assert found == {"a": [], "b": []}


CONVERSATION = [
    "I work as a veterinarian in Porto.",
    "My daughter Lena turns seven in March.",
    "I drink oolong tea every morning.",
    "What do I drink in the morning?",
    HIT_PREFIX + "daughter Lena",
    "Where do I work?",
    HIT_PREFIX + "daughter Lena",
]


Seen = tuple[list[str], list[str], list[tuple[str, str]], int]


def seen_by(dsn: str, user_id: str) -> Seen:
    """What a user and the editor see of `user_id`, read from the database alone: the live
    memories, their hotness order, the trace's changes (tool and text, oldest first) and how
    many recalls the replies recorded."""
    memory = LongTermMemory(stored(dsn, user_id), embeddings="off", state_database=dsn)
    items = memory.manager.list_items()
    heat = memory.hotness(items=items)
    hottest = sorted(items, key=lambda i: (-round(heat[i], 9), items[i].description))

    def described(arguments: dict[str, object]) -> str:  # ids are random: name the memory
        named = {k: v for k, v in arguments.items() if k not in ("id", "memory_id")}
        target = arguments.get("memory_id") or arguments.get("id")
        named["memory"] = items[target].description if target in items else target
        return json.dumps(named, sort_keys=True)

    trace = [(e.tool, described(e.arguments))
             for e in reversed(memory.trace.for_user(user_id, limit=100))]  # fmt: skip
    recalls = sum(stats.recalls for stats in memory.recall_log.stats().values())
    return (
        sorted(i.description for i in items.values()),
        [items[i].description for i in hottest],
        trace,
        recalls,
    )


async def test_two_replicas_and_one_give_the_same_memories_hotness_order_and_trace(
    replicas: tuple[Replica, Replica], postgres_dsn: str
) -> None:
    a, b = replicas
    solo, pair = f"{a.user_id}-solo", f"{a.user_id}-pair"
    try:
        for number, text in enumerate(CONVERSATION):
            await a.say(text, solo)
            await a.wait_idle()
            served_by = (a, b)[number % 2]
            await served_by.say(text, pair)
            await served_by.wait_idle()
        one, two = seen_by(postgres_dsn, solo), seen_by(postgres_dsn, pair)
        # The stub writer keeps each thing said; the hits and the questions move the hotness.
        assert len(one[0]) == 5 and len(one[2]) == 7 and one[3] > 0, one
        assert one[1][0] == "The user said: My daughter Lena turns seven in March."  # hit twice
        assert two == one
    finally:
        delete_rows(postgres_dsn, solo)
        delete_rows(postgres_dsn, pair)


async def test_a_replica_killed_mid_write_loses_nothing_and_the_other_serves_the_user(
    replicas: tuple[Replica, Replica], postgres_dsn: str
) -> None:
    a, b = replicas
    manager = stored(postgres_dsn, a.user_id)
    target = await memory_id(manager, a)
    before = set(manager.list_items())
    seen = len(a.stub.requests)
    dying = [asyncio.create_task(a.say(HIT_PREFIX + NEEDLE)) for _ in range(TURNS_EACH)]
    await writer_at_work(a, seen)
    a.kill()
    await asyncio.gather(*dying, return_exceptions=True)  # their server is gone
    after_kill = manager.get(target).hit  # nothing writes through A any more
    assert set(manager.list_items()) >= before, "a memory was lost with the killed replica"
    asked = await b.say("What do I drink every morning? (after A died)")
    assert any(NEEDLE in text for text in remembered(asked)), b.log_tail()
    for _ in range(TURNS_EACH):  # one after another: B alone, no race
        await b.say(HIT_PREFIX + NEEDLE)
    await b.wait_idle()
    assert manager.get(target).hit == after_kill + TURNS_EACH
    assert manager.self_check().ok, manager.self_check()


async def writer_at_work(replica: Replica, seen: int, seconds: float = 60) -> None:
    """Until the stub model has been asked for a memory writer's step since request `seen`:
    a writer run of the replica is then under way."""
    deadline = time.monotonic() + seconds
    while not any(
        any(t["function"]["name"] == "hit_memory" for t in request.get("tools") or [])
        for request in replica.stub.requests[seen:]
    ):
        assert time.monotonic() < deadline, replica.log_tail()
        await asyncio.sleep(0.05)
