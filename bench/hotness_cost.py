"""What recall signals and hotness cost: recording on the reply path, the batched flush, and
ranking by hotness, each as a ratio against a baseline measured in the same run.

    .venv/bin/python bench/hotness_cost.py      # about half a minute on two cores

(1) `record_recall` (queue only) against the BM25 query it follows; (2) one flush of N recalls
against N one-recall transactions (what writing on the reply path would cost); (3) a broad
question ordered by hotness against the old recency + hit order, first query after a change
and cached; (4) a topic query with hotness for ties against the same query without ("tied":
the share of queries that had a tie to break).
"""

from __future__ import annotations

import random
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from retrieval import InMemoryManager, synthetic_items, synthetic_queries

from memory.long_term import LongTermMemory
from memory.retrieval.hotness_ranking import HotnessRanking
from memory.retrieval.query import read_query
from memory.retrieval.recall_log import RecallLog

SIZES = (1_000, 10_000, 100_000)
RECALLS = 2_000


def median_ms(function: Callable[[], Any], repeat: int) -> float:
    times = []
    for _ in range(repeat):
        started = time.perf_counter()
        function()
        times.append((time.perf_counter() - started) * 1000)
    return statistics.median(times)


def reply_path(folder: Path, rng: random.Random) -> None:
    items = synthetic_items(10_000, rng)
    memory = LongTermMemory(InMemoryManager(items), data_dir=folder, embeddings="off")
    memory.recall_log.flush_seconds = 3600
    queries = synthetic_queries(items, 200, rng)
    found = [memory.get_related_memory_from(q, "mechanical", 5) for q in queries]  # warm
    ids = [[m["id"] for m in result] for result in found]
    query_ms = median_ms(lambda: memory.get_related_memory_from(queries[0], "mechanical", 5), 200)
    turn = iter(range(10**9))
    record_ms = median_ms(lambda: memory.record_recall(ids[next(turn) % 200], queries[0]), 2000)
    print("(1) reply path, 10,000 memories")
    print(f"    BM25 query {query_ms:.3f} ms, record_recall {record_ms * 1000:.1f} µs: "
          f"{record_ms / query_ms:.1%} of the query")  # fmt: skip
    memory.recall_log.flush()

    batched = RecallLog(folder / "batched.sqlite", "bench", flush_seconds=3600)
    single = RecallLog(folder / "single.sqlite", "bench", flush_seconds=3600)
    pairs = [(rng.choice(ids), rng.choice(queries)) for _ in range(RECALLS)]
    started = time.perf_counter()
    for recalled, query in pairs:
        batched.record(recalled, query)
    batched.flush()
    batched_ms = (time.perf_counter() - started) * 1000
    started = time.perf_counter()
    for recalled, query in pairs:
        single.record(recalled, query)
        single.flush()
    single_ms = (time.perf_counter() - started) * 1000
    print(f"(2) {RECALLS} recalls: one batch {batched_ms:.1f} ms, one transaction each "
          f"{single_ms:.1f} ms: batching is {single_ms / batched_ms:.0f}x cheaper")  # fmt: skip


def ranking(rng: random.Random) -> None:
    print("(3) broad question, ms: the first query after a change (orders computed anew) and")
    print("    cached; (4) topic query, ms per query (best of 7 rounds of 100 queries)")
    print(f"{'memories':>9} {'old broad':>10} {'hot broad':>10} {'ratio':>6} {'cached':>8} "
          f"{'query':>8} {'+ hot ties':>11} {'ratio':>6} {'tied':>5}")  # fmt: skip
    for size in SIZES:
        one_size(size, rng)


def one_size(size: int, rng: random.Random) -> None:
    items = synthetic_items(size, rng)
    memory = LongTermMemory(InMemoryManager(items), embeddings="off")
    retriever = memory.retrievers.mechanical
    index = retriever.index()
    repeat = 5 if size >= 100_000 else 20

    def old_order() -> list[int]:
        index.__dict__.pop("broad_order", None)  # as on a new index: computed anew
        return index.broad_order

    old = median_ms(old_order, repeat)
    hot_first = median_ms(lambda: HotnessRanking().broad_order(index, True), repeat)
    hot_cached = median_ms(lambda: retriever.hotness.broad_order(index, True), 50)
    queries = synthetic_queries(items, 100, rng)
    tied: list[int] = []
    asked = retriever.hotness.at

    def counting(index: Any, positions: list[int]) -> list[float]:
        tied.append(len(positions))
        return asked(index, positions)

    retriever.hotness.at = counting  # type: ignore[method-assign]
    plain, hot = [], []
    for _ in range(7):  # interleaved: both see the same load on a shared machine
        plain.append(median_ms(lambda: [index.search(read_query(q, index.theme_keys).tokens, 10)
                                        for q in queries], 1))  # fmt: skip
        hot.append(median_ms(lambda: [retriever.rank(index, q, 10) for q in queries], 1))
    plain_ms, hot_ms = min(plain) / 100, min(hot) / 100
    share = len(tied) / (7 * len(queries))  # `at` is asked only when there is a tie
    print(f"{size:>9,} {old:>10.1f} {hot_first:>10.1f} {hot_first / old:>6.1f} "
          f"{hot_cached:>8.3f} {plain_ms:>8.3f} {hot_ms:>11.3f} {hot_ms / plain_ms:>6.2f} "
          f"{share:>5.0%}")  # fmt: skip


def main() -> None:
    rng = random.Random(14)
    with tempfile.TemporaryDirectory() as folder:
        reply_path(Path(folder), rng)
    ranking(rng)


if __name__ == "__main__":
    main()
