"""search_conversations at 10,000 and 100,000 archived messages of one user, on SQLite and on
the local PostgreSQL, against a plain LIKE scan of the same rows in the same run.

Run: `.venv/bin/python bench/conversation_search.py` (a few minutes; `--sqlite-only` skips
PostgreSQL, `GULFSTREAM_TEST_POSTGRES` names another server).

The messages are the synthetic half-Chinese, half-English texts of bench/retrieval.py, spread
over 50 threads and 60 days; queries are two to four English words or two to five Chinese
characters taken from random messages. Each query is the whole library call the chat tool
makes: full-text match, the branch filter of the current thread, two messages around each of
three hits, and the day digests; the baseline is `content LIKE '%query%'` over the user's rows,
newest first. Target: p95 <= 20 ms at 100,000 messages on SQLite.
"""

from __future__ import annotations

import os
import random
import statistics
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from retrieval import percentile, synthetic_items, synthetic_queries

from memory.archive import ArchivedMessage, ConversationArchive, Ranking, Window
from memory.archive.postgres_archive import PostgresArchive
from memory.archive.sqlite_archive import SqliteArchive
from memory.store.branch import Lineage

SIZES = (10_000, 100_000)
QUERIES = 200
LIKE_QUERIES = {10_000: 100, 100_000: 40}
THREADS = 50
DAYS = 60
TARGET_P95_MS = 20.0
POSTGRES = os.environ.get("GULFSTREAM_TEST_POSTGRES", "postgresql://postgres@127.0.0.1:5432/test")


def messages(user: str, count: int, rng: random.Random) -> tuple[list[ArchivedMessage], list[str]]:
    items = synthetic_items(count, rng)
    start = time.time() - DAYS * 86400
    found = []
    for number, item in enumerate(items.values()):
        thread = f"t{number % THREADS}"
        found.append(ArchivedMessage(
            user, thread, f"c{number // 2}", f"m{number}", "user" if number % 2 else "assistant",
            item.description, start + number * DAYS * 86400 / count, number % 2,
        ))  # fmt: skip
    return found, synthetic_queries(items, QUERIES, rng)


def fill(archive: ConversationArchive, rows: list[ArchivedMessage]) -> float:
    started = time.perf_counter()
    for offset in range(0, len(rows), 5_000):
        archive.add(rows[offset : offset + 5_000])
    return time.perf_counter() - started


def like_sqlite(archive: SqliteArchive, query: str) -> list[Any]:
    return archive._read(
        "SELECT * FROM messages WHERE content LIKE ? ORDER BY ts DESC LIMIT 3", (f"%{query}%",)
    )


def like_postgres(archive: PostgresArchive, query: str) -> list[Any]:
    return archive._read(
        "SELECT * FROM gulfstream_archive_messages WHERE user_id = %s AND content LIKE %s "
        "ORDER BY ts DESC LIMIT 3",
        (archive.user_id, f"%{query}%"),
    )


def timed(call: Any, *args: Any) -> float:
    started = time.perf_counter()
    call(*args)
    return (time.perf_counter() - started) * 1000


def measure(
    name: str, archive: ConversationArchive, like: Any, size: int, rng: random.Random
) -> None:
    rows, queries = messages(archive.user_id, size, rng)
    seconds = fill(archive, rows)
    window = Window(lineage=Lineage("t7", frozenset(f"c{n}" for n in range(0, size, 3))))
    archive.search(queries[0], window)  # warm the caches, as a running server would be
    search = [timed(archive.search, q, window) for q in queries]
    before = Ranking.baseline()
    older = [timed(lambda q: archive.search(q, window, ranking=before), q) for q in queries]
    scan = [timed(like, archive, q) for q in queries[: LIKE_QUERIES[size]]]
    hits = sum(bool(archive.search(q, window).hits) for q in queries[:50])
    p50, p95 = statistics.median(search), percentile(search, 0.95)
    o50, o95 = statistics.median(older), percentile(older, 0.95)
    l50, l95 = statistics.median(scan), percentile(scan, 0.95)
    print(f"{name:<10} {size:>8,} {p50:>8.1f} {p95:>8.1f} {o50:>8.1f} {o95:>8.1f} {l50:>9.1f} "
          f"{l95:>9.1f} {l50 / p50:>9.1f}x {hits * 2:>6}% {seconds:>8.1f}")  # fmt: skip


def main() -> None:
    rng = random.Random(11)
    print("search_conversations (the whole call) vs a LIKE scan, ms per query;")
    print("found: share of queries with a hit")
    print("old p50/p95: the ranking before question words, BM25 again and dates (Ranking.baseline)")
    print(f"{'backend':<10} {'messages':>8} {'p50':>8} {'p95':>8} {'old p50':>8} {'old p95':>8} "
          f"{'LIKE p50':>9} {'LIKE p95':>9} {'speed-up':>10} {'found':>6} "
          f"{'fill s':>8}")  # fmt: skip
    with tempfile.TemporaryDirectory() as folder:
        for size in SIZES:
            archive = SqliteArchive(Path(folder) / str(size), "bench")
            measure("sqlite", archive, like_sqlite, size, rng)
            archive.close()
    if "--sqlite-only" in sys.argv:
        return
    try:
        PostgresArchive(POSTGRES, "bench-probe").count()
    except Exception as exc:  # no server here: the SQLite figures stand alone
        print(f"postgres: skipped, {POSTGRES} is unreachable ({type(exc).__name__})")
        return
    for size in SIZES:
        archive = PostgresArchive(POSTGRES, f"bench-{uuid.uuid4().hex[:8]}")
        try:
            measure("postgres", archive, like_postgres, size, rng)
        finally:
            archive.clear()
    print(f"target: p95 <= {TARGET_P95_MS:g} ms at 100,000 messages on SQLite")


if __name__ == "__main__":
    main()
