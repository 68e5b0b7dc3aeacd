"""What forgetting costs on the way to a reply: `memory.archive.reconcile.reconcile` (run at
the start of every turn and before every conversation search) and `search_conversations` with
hidden messages, against the same search with nothing forgotten, in the same run.

Run: `.venv/bin/python bench/forget_cost.py` (about a minute; `--sizes 10000` for one size).

One user's SQLite archive of N synthetic messages (bench/retrieval.py's texts, half Chinese, 60
days) among which 101 planted facts were told (a colleague's name, company, town and room, told
in one turn and mentioned again later), and a SQLite store of 1,000 synthetic memories plus the
101 facts. Figures: reconcile with nothing new (what every turn pays), the first reconcile after
one forget and after a consolidation-like pass that archives 100 memories at once, and the
search p50/p95 with nothing hidden, then with those 101 memories' messages hidden.
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from retrieval import percentile, synthetic_items, synthetic_queries

from memory.archive import ArchivedMessage
from memory.archive.reconcile import reconcile
from memory.archive.sqlite_archive import SqliteArchive
from memory.store.backends.sqlite_db import SqliteMemoryManager
from memory.store.item import MemoryItem
from memory.store.operations import archive as archive_memory

SIZES = (10_000, 100_000)
MEMORIES = 1_000
PLANTED = 101
SYLLABLES = ["ka", "zo", "rim", "bel", "tu", "vex", "nor", "qui", "lan", "dro", "pes", "mav"]
QUERIES = 200
DAYS = 60


def _ms(seconds: float) -> str:
    return f"{seconds * 1000:.1f} ms"


def _search_times(archive: SqliteArchive, queries: list[str]) -> list[float]:
    times = []
    for query in queries:
        started = time.perf_counter()
        archive.search(query)
        times.append(time.perf_counter() - started)
    return times


def _name(rng: random.Random) -> str:
    return "".join(rng.choice(SYLLABLES) for _ in range(3)).capitalize()


def run(size: int, folder: Path, rng: random.Random) -> None:
    items = synthetic_items(size, rng)
    start = time.time() - DAYS * 86400
    step = DAYS * 86400 / size
    rows = [
        ArchivedMessage("bench", f"t{n % 50}", f"c{n}", f"m{n}", "user", item.description,
                        start + n * step)
        for n, item in enumerate(items.values())
    ]  # fmt: skip
    facts = []
    for k in range(PLANTED):
        who, firm, town = _name(rng), _name(rng), _name(rng)
        told, later = rng.randrange(size // 2), size // 2 + rng.randrange(size // 2)
        rows.append(ArchivedMessage("bench", "facts", f"f{k}", f"f{k}", "user",
                                    f"My colleague {who} works at {firm} Labs in {town}, room "
                                    f"{100 + k}", start + told * step))  # fmt: skip
        rows.append(
            ArchivedMessage(
                "bench",
                "later",
                f"l{k}",
                f"l{k}",
                "user",
                f"{who} sent me the report",
                start + later * step,
            )
        )
        facts.append(MemoryItem.create(
            f"User's colleague {who} works at {firm} Labs in {town}, room {100 + k}", "work",
            origin={"thread_id": "facts", "checkpoint_id": f"f{k}"},
        ))  # fmt: skip
    archive = SqliteArchive(folder / f"conversations-{size}", "bench")
    archive.add(sorted(rows, key=lambda m: m.timestamp))
    manager = SqliteMemoryManager(folder / f"memory-{size}.sqlite", "bench")
    with manager.transaction() as tx:
        for n, item in enumerate(list(items.values())[:MEMORIES]):
            tx.put(f"m{n:04d}", item)
        for k, fact in enumerate(facts):
            tx.put(f"p{k:03d}", fact)
    queries = synthetic_queries(items, QUERIES, rng)
    baseline = _search_times(archive, queries)
    reconcile(manager, archive)
    idle = []
    for _ in range(50):
        started = time.perf_counter()
        reconcile(manager, archive)
        idle.append(time.perf_counter() - started)
    ids = [f"p{k:03d}" for k in range(PLANTED)]
    manager.delete(ids[0], "forget")
    started = time.perf_counter()
    one = reconcile(manager, archive)
    first = time.perf_counter() - started
    with manager.transaction() as tx:
        for memory_id in ids[1:101]:
            archive_memory(tx, memory_id, "cold")
    started = time.perf_counter()
    many = reconcile(manager, archive)
    hundred = time.perf_counter() - started
    hidden = len(archive.hidden_keys())
    with_hidden = _search_times(archive, queries)
    print(f"\n{size + 2 * PLANTED:,} archived messages, {MEMORIES + PLANTED:,} memories")
    print(f"  reconcile, nothing new (every turn): p50 {statistics.median(idle) * 1e6:.0f} µs, "
          f"p95 {percentile(idle, 95) * 1e6:.0f} µs")  # fmt: skip
    print(f"  first reconcile after 1 forget: {_ms(first)} ({sum(one.hidden.values())} hidden)")
    print(f"  first reconcile after 100 archived at once: {_ms(hundred)} "
          f"({sum(many.hidden.values())} hidden)")  # fmt: skip
    b50, b95 = statistics.median(baseline), percentile(baseline, 95)
    h50, h95 = statistics.median(with_hidden), percentile(with_hidden, 95)
    print(f"  search, nothing hidden: p50 {_ms(b50)}, p95 {_ms(b95)}")
    print(f"  search, {hidden:,} messages hidden: p50 {_ms(h50)} ({h50 / b50:.2f}x), "
          f"p95 {_ms(h95)} ({h95 / b95:.2f}x)")  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--sizes", default=",".join(str(s) for s in SIZES))
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        for size in (int(s) for s in args.sizes.split(",")):
            run(size, Path(folder), random.Random(7))


if __name__ == "__main__":
    main()
