"""Branch-scope benchmark: retrieval with a lineage vs without, and the cost of visible_ids.

Run: `.venv/bin/python bench/branch_retrieval.py` (offline; a few seconds). 10,000 synthetic
memories, a fifth of them branch memories spread over a tree of 400 checkpoints (20 threads
of 20 turns, each forked once half-way); the lineage is one run 20 checkpoints deep.
"""

from __future__ import annotations

import random
import statistics
import sys
from functools import partial
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from retrieval import (  # the retrieval benchmark's synthetic store and helpers
    InMemoryManager,
    percentile,
    synthetic_items,
    synthetic_queries,
    timed,
)

from memory.retrieval import MechanicalRetriever
from memory.store.branch import Lineage, visible_ids
from memory.store.item import MemoryItem

SIZE = 10_000
QUERIES = 200


def branch_tree(items: dict[str, MemoryItem], rng: random.Random) -> Lineage:
    """Make every fifth item a branch item of some checkpoint; return one run's lineage."""
    checkpoints = [f"t{t}-c{c}" for t in range(20) for c in range(20)]
    forks = [f"t{t}-fork-c{c}" for t in range(20) for c in range(10, 20)]
    ids = list(items)
    for number, memory_id in enumerate(ids):
        if number % 5 == 0:
            item = items[memory_id]
            item.scope = "branch"
            item.origin = {"checkpoint_id": rng.choice(checkpoints + forks)}
            if number % 10 == 0 and number:
                item.supersedes = ids[number - 5]
    return Lineage("t3", frozenset(f"t3-c{c}" for c in range(20)))


def main() -> None:
    rng = random.Random(20261129)
    items = synthetic_items(SIZE, rng)
    lineage = branch_tree(items, rng)
    manager = InMemoryManager(items)
    queries = synthetic_queries(items, QUERIES, rng)
    retriever = MechanicalRetriever(manager)
    retriever.index()
    retriever.retrieve(queries[0], 10)
    retriever.retrieve(queries[0], 10, lineage)  # warm-up: visible set cached per revision

    plain = [timed(partial(retriever.retrieve, q, 10)) for q in queries]
    scoped = [timed(partial(retriever.retrieve, q, 10, lineage)) for q in queries]
    cold = [timed(partial(visible_ids, manager.all_items(), lineage)) for _ in range(50)]
    visible = visible_ids(manager.all_items(), lineage)
    found = [len(retriever.retrieve(q, 10, lineage)) for q in queries]
    branch_count = sum(item.scope == "branch" for item in items.values())
    print(f"branch retrieval at {SIZE:,} memories ({branch_count:,} branch memories; "
          f"{len(visible):,} visible to the lineage)")  # fmt: skip
    print(f"    no lineage:   median {statistics.median(plain):.3f} ms, "
          f"p95 {percentile(plain, 0.95):.3f} ms")  # fmt: skip
    print(f"    with lineage: median {statistics.median(scoped):.3f} ms, "
          f"p95 {percentile(scoped, 0.95):.3f} ms "
          f"({statistics.median(scoped) / statistics.median(plain):.2f}x the no-lineage median; "
          f"over-fetch 400 for limit 10)")  # fmt: skip
    ratio = statistics.median(cold) / statistics.median(plain)
    print(f"    visible_ids over {SIZE:,} items (once per store revision): median "
          f"{statistics.median(cold):.2f} ms ({ratio:.1f}x one plain query)")  # fmt: skip
    print(f"    results per query with lineage: median {statistics.median(found):.0f} (limit 10)")


if __name__ == "__main__":
    main()
