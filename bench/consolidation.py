"""The consolidation pass: its time at 1k, 10k and 100k memories, the threshold sweep on the
planted set, and its effect on retrieval recall.

Run: `.venv/bin/python bench/consolidation.py` (about a minute; `--quick` stops at 10k).

Scaling: each size is a planted store (tests/consolidation_data.py: 15% of the memories in
duplicate groups, half Chinese, with look-alike traps) in a real SQLite file. Detection (the
candidate pairs from the inverted index over each memory's rarest tokens, the similarity check,
union-find) is timed alone, then the whole pass (snapshot, plan, every apply). The ratio of
each size's time to the 1k time is printed beside the ratio of sizes: linear scaling keeps
them close; all-pairs comparison would grow with the square (100x at 10k, 10,000x at 100k).
Quality: groups found whole, pairwise precision and traps merged for a grid of thresholds.
Recall: tests/data/retrieval_set.json padded with a duplicate of every memory (and another of
every other one) and 600 planted memories; BM25 recall@5 by fact (a fact is found when any of
its copies is) before and after one pass. It must not drop.
"""

from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from memory import LongTermMemory, open_memory_manager
from memory.consolidation import similarity
from memory.item import MemoryItem
from memory.retrieval import MechanicalRetriever
from memory.retrieval.evaluation import load_labelled_set, write_items
from tests.consolidation_data import planted_set, score

LABELLED = Path(__file__).resolve().parents[1] / "tests" / "data" / "retrieval_set.json"
SIZES = (1_000, 10_000, 100_000)
K = 5


def scaling(sizes: tuple[int, ...]) -> None:
    print("== pass time by store size (SQLite, planted set: 15% in duplicate groups)")
    print(
        f"{'memories':>9} {'pairs checked':>14} {'detect s':>9} {'x1k':>6} {'pass s':>8} "
        f"{'x1k':>6} {'merged':>7} {'groups ok':>9} {'precision':>9}"
    )
    base: tuple[float, float] | None = None
    for size in sizes:
        planted = planted_set(total=size, groups=size * 15 // 100, seed=size)
        texts = {i: text for i, (text, _) in planted.memories.items()}
        pairs = similarity.candidate_pairs({i: similarity.fingerprint(t) for i, t in texts.items()})
        started = time.perf_counter()
        groups = similarity.duplicate_groups(texts)
        detect = time.perf_counter() - started
        with tempfile.TemporaryDirectory() as folder:
            manager = open_memory_manager(f"sqlite:{folder}/memory.db", "bench")
            items = {i: MemoryItem.create(t, th, "seed") for i, (t, th) in planted.memories.items()}
            write_items(manager, items)
            started = time.perf_counter()
            report = LongTermMemory(manager, embeddings="off").consolidate()
            whole = time.perf_counter() - started
        found = [[survivor, *ids] for survivor, ids in report.merged.items()]
        groups_ok, precision, _ = score(planted, found)
        base = base or (detect, whole)
        print(
            f"{size:>9,} {len(pairs):>14,} {detect:>9.2f} {detect / base[0]:>6.1f} "
            f"{whole:>8.2f} {whole / base[1]:>6.1f} {report.removed:>7,} {groups_ok:>9.3f} "
            f"{precision:>9.3f}"
        )
        assert len(groups) == len(report.merged) or report.skipped, "detection and pass differ"


def sweep() -> None:
    planted = planted_set()
    texts = {i: text for i, (text, _) in planted.memories.items()}
    print("\n== thresholds on the planted set (1,000 memories, 150 groups, 75 traps)")
    print(f"{'contained':>9} {'swapped':>8} {'groups ok':>9} {'precision':>9} {'traps merged':>12}")
    for contained in (0.3, 0.5, 0.7):
        for swapped in (0.7, 0.8, 0.9, 1.01):
            found = similarity.duplicate_groups(texts, contained, swapped)
            groups_ok, precision, traps = score(planted, found)
            chosen = (
                " <- chosen"
                if (contained, swapped)
                == (similarity.CONTAINED_JACCARD, similarity.SWAPPED_JACCARD)
                else ""
            )
            figures = f"{groups_ok:>9.3f} {precision:>9.3f} {traps:>12}"
            print(f"{contained:>9} {swapped:>8} {figures}{chosen}")


def _copy(text: str, n: int) -> str:
    """A copy of a memory as people repeat themselves: another ending, an added "really"."""
    chinese = any("\u4e00" <= char <= "\u9fff" for char in text)
    bare = text.rstrip("。.!！ ")
    if n == 0:
        return bare + ("。" if chinese else ".") if bare == text else bare
    return (
        bare.replace("喜欢", "非常喜欢", 1)
        if chinese
        else bare.replace(" likes ", " really likes ", 1) + " "
    )


def recall() -> None:
    labelled = load_labelled_set(LABELLED)
    family: dict[str, str] = {}  # every id → the labelled memory it copies
    items = dict(labelled.items)
    for n, (memory_id, item) in enumerate(labelled.items.items()):
        family[memory_id] = memory_id
        for copy in range(1 if n % 2 else 2):  # at most 25% may go in one pass: not more
            copy_id = f"{memory_id}-copy{copy}"
            items[copy_id] = MemoryItem.create(_copy(item.description, copy), item.theme, "padding")
            family[copy_id] = memory_id
    planted = planted_set(total=600, groups=40, seed=7)
    items.update(
        {i: MemoryItem.create(t, th, "padding") for i, (t, th) in planted.memories.items()}
    )
    with tempfile.TemporaryDirectory() as folder:
        manager = open_memory_manager(f"sqlite:{folder}/memory.db", "bench")
        write_items(manager, items)

        def by_fact() -> float:
            retriever = MechanicalRetriever(manager)
            total = 0.0
            for query in labelled.queries:
                found = {family.get(r["id"], r["id"]) for r in retriever.retrieve(query.query, K)}
                total += len(found & set(query.relevant)) / len(query.relevant)
            return total / len(labelled.queries)

        before, live_before = by_fact(), len(manager.list_items())
        report = LongTermMemory(manager, embeddings="off").consolidate()
        after, live_after = by_fact(), len(manager.list_items())
    print(f"\n== BM25 recall@{K} by fact on the labelled set padded with duplicates")
    print(
        f"before: {before:.3f} ({live_before} memories)  after: {after:.3f} ({live_after} "
        f"memories, {report.removed} merged)  change: {after - before:+.3f}"
    )
    assert not report.refused, report.refused
    assert after >= before, "consolidation lowered recall"


if __name__ == "__main__":
    quick = "--quick" in sys.argv
    scaling(SIZES[:2] if quick else SIZES)
    sweep()
    recall()
