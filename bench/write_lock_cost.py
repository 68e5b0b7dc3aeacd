"""What the cross-process write lock costs, and how soon a replica reads another replica's write.

Run: `.venv/bin/python bench/write_lock_cost.py` (a minute or two; needs the local PostgreSQL,
`GULFSTREAM_TEST_POSTGRES` or postgresql://postgres@127.0.0.1:5432/test).

Same run, same database, two managers of the `postgres:` backend: the baseline takes only this
process's thread lock (what every replica did before, losing writes across processes); the
protected one takes the user's advisory lock and writes in its transaction. Rows: one edit, one
hit, and a writer turn's `apply` (two adds and an update). Then retrieval on one replica right
after another replica's write, at 10,000 memories, against the same query with no write between.
"""

from __future__ import annotations

import os
import random
import statistics
import sys
import time
import uuid
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from retrieval import percentile, synthetic_items, synthetic_queries

from memory.retrieval import MechanicalRetriever
from memory.retrieval.evaluation import write_items
from memory.store.backends.langgraph_store import StoreMemoryManager, namespace_label
from memory.store.document import Change
from memory.store.factory import open_memory_manager
from memory.store.manager import BaseMemoryManager
from memory.store.postgres import open_postgres_store, postgres_lock

DSN = os.environ.get("GULFSTREAM_TEST_POSTGRES", "postgresql://postgres@127.0.0.1:5432/test")
REPS = 200
SIZE = 10_000
QUERIES = 40


def timed(action: Callable[[int], object], reps: int = REPS) -> list[float]:
    times = []
    for number in range(reps):
        started = time.perf_counter()
        action(number)
        times.append((time.perf_counter() - started) * 1000)
    return times


def write_costs(manager: BaseMemoryManager) -> dict[str, list[float]]:
    kept = manager.add("User drinks green tea", "taste")

    def edit(n: int) -> None:
        manager.update(kept, "bench", new_description=f"User drinks green tea, cup {n}")

    def turn(n: int) -> None:
        changes = [
            Change("add", description=f"User met friend {n} in Lisbon", theme="people"),
            Change("add", description=f"User plans trip {n}", theme="plans"),
            Change("update", id=kept, description=f"User drinks tea, turn {n}", reason="bench"),
        ]
        manager.apply(changes, f"bench-turn-{uuid.uuid4().hex}")

    return {
        "edit": timed(edit),
        "hit": timed(lambda n: manager.hit(kept)),
        "writer turn": timed(turn, REPS // 2),
    }


def other_replica(user: str) -> StoreMemoryManager:
    """A manager over a store connection of its own, as another process would have."""
    from langgraph.store.postgres import PostgresStore
    from psycopg import Connection
    from psycopg.rows import dict_row

    conn = Connection.connect(DSN, autocommit=True, prepare_threshold=0, row_factory=dict_row)
    return StoreMemoryManager(PostgresStore(conn), user, postgres_lock(DSN), writes_in_lock=True)


def read_after_write(user: str, rng: random.Random) -> tuple[list[float], list[float]]:
    reader_manager = open_memory_manager(f"postgres:{DSN}", user)
    write_items(reader_manager, synthetic_items(SIZE, rng))
    items = reader_manager.list_items()
    queries = synthetic_queries(items, QUERIES, rng)
    reader = MechanicalRetriever(reader_manager)
    writer = other_replica(user)
    reader.retrieve(queries[0], 10)  # the first build is not what is measured
    after, unchanged = [], []
    for number, query in enumerate(queries):
        marker = f"replicawrite{number}"  # found only once the reader's index has the write
        writer.add(f"{marker}: {query}", "project")
        started = time.perf_counter()
        reader.retrieve(query, 10)
        after.append((time.perf_counter() - started) * 1000)
        found = reader.retrieve(marker, 10)
        assert f"{marker}: {query}" in [hit["description"] for hit in found], "a stale read"
        started = time.perf_counter()
        reader.retrieve(query, 10)
        unchanged.append((time.perf_counter() - started) * 1000)
    return after, unchanged


def row(label: str, times: list[float]) -> str:
    return f"{label:<42} {statistics.median(times):8.2f} {percentile(times, 0.95):8.2f}"


def cleanup(users: list[str]) -> None:
    import psycopg

    with psycopg.connect(DSN, autocommit=True) as conn:
        for user in users:
            conn.execute("DELETE FROM store WHERE prefix LIKE %s", (f"%.{namespace_label(user)}",))


def main() -> int:
    rng = random.Random(20261203)
    users = [f"bench-lock-{uuid.uuid4().hex[:8]}" for _ in range(3)]
    try:
        unprotected = StoreMemoryManager(open_postgres_store(DSN), users[0])
        protected = open_memory_manager(f"postgres:{DSN}", users[1])
        before, after = write_costs(unprotected), write_costs(protected)
        print(f"postgres: backend, one process, {REPS} reps (writer turn: {REPS // 2}), ms")
        print(f"{'':<42} {'p50':>8} {'p95':>8}   p50 ratio (locked / thread lock only)")
        for name in before:
            ratio = statistics.median(after[name]) / statistics.median(before[name])
            print(row(f"{name}, thread lock only", before[name]))
            print(row(f"{name}, advisory lock + transaction", after[name]) + f"   {ratio:.2f}x")
        fresh, cached = read_after_write(users[2], rng)
        print(f"retrieval (BM25) on replica B at {SIZE:,} memories, {QUERIES} queries, ms")
        print(row("right after replica A's write", fresh))
        print(row("same query, no write between", cached))
        ratio = statistics.median(fresh) / statistics.median(cached)
        print(f"after a write / unchanged, p50: {ratio:.1f}x")
    finally:
        cleanup(users)
    return 0


if __name__ == "__main__":
    sys.exit(main())
