"""Entities and topics: extraction quality, retrieval recall with topic routing, and cost at scale.

Run: `.venv/bin/python bench/topics.py` (about a minute; `--sizes 1000` for a quick run).

Quality: precision and recall of the entity rules on tests/data/entity_set.json, per language.
Recall: recall@5 on tests/data/retrieval_set.json with BM25 alone and with the topic routing of
broad questions ("how is Tom") in front of it: the routing must not lower it.
Cost, against building the BM25 index of the same store in the same run (both read the store):
the topic table's first build
(every memory's entities extracted), its update after one write (the change feed: only the
written memory is read again), `topics()` (hotness of every topic), and a broad question naming a
person answered by the topic table compared with plain BM25 retrieval.
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from memory.retrieval import Retrievers
from memory.retrieval.bm25 import MechanicalRetriever
from memory.retrieval.evaluation import load_labelled_set, recall_at, write_items
from memory.store.backends.sqlite_db import SqliteMemoryManager
from memory.text.entity_lexicon import PLACES
from memory.topics import TopicTable, extract_entities

DATA = Path(__file__).resolve().parents[1] / "tests" / "data"
PEOPLE_EN = ["my sister", "my mom", "my boss", "my friend Tom", "Alice", "my brother", "Priya"]
PEOPLE_ZH = ["妈妈", "我妹", "老板", "同事老李", "朋友小王", "老公"]
ACTIVITY_EN = [
    "started learning the cello",
    "is training for a marathon",
    "bought a used car",
    "recommended a thriller novel",
    "is renovating the kitchen",
    "adopted a cat",
]
ACTIVITY_ZH = ["在学游泳", "换了新工作", "准备装修厨房", "推荐了一部电影", "最近在减肥",
               "养了一只猫"]  # fmt: skip


def entity_quality() -> None:
    sentences = json.loads((DATA / "entity_set.json").read_text(encoding="utf-8"))["sentences"]
    for language in ("en", "zh"):
        found = expected = correct = 0
        for sentence in sentences:
            if (language == "zh") != any("\u4e00" <= c <= "\u9fff" for c in sentence["text"]):
                continue
            got = {e.key for e in extract_entities(sentence["text"])}
            wanted = set(sentence["topics"])
            found, expected, correct = (
                found + len(got),
                expected + len(wanted),
                correct + len(got & wanted),
            )
        print(f"entities {language}: precision {correct / max(found, 1):.3f}, "
              f"recall {correct / max(expected, 1):.3f} ({expected} labelled)")  # fmt: skip


def routing_recall(folder: Path) -> None:
    labelled = load_labelled_set(DATA / "retrieval_set.json")
    manager = SqliteMemoryManager(folder / "labelled.db", "bench")
    write_items(manager, labelled.items)
    plain = MechanicalRetriever(manager)
    routed = Retrievers(manager)
    base, _ = recall_at(lambda q, k: plain.retrieve(q, k), labelled.queries, 5)
    with_topics, _ = recall_at(
        lambda q, k: routed.retrieve(q, "mechanical", k), labelled.queries, 5
    )
    answered = sum(1 for q in labelled.queries if routed.topics.topic_of_query(q.query))
    print(f"recall@5 on {len(labelled.queries)} labelled queries: BM25 {base:.3f}, "
          f"with topic routing {with_topics:.3f} ({answered} routed to a topic)")  # fmt: skip


def synthetic(count: int, seed: int = 7) -> list[tuple[str, str]]:
    rng = random.Random(seed)
    places = [en for en, _ in PLACES.values()]
    memories = []
    for number in range(count):
        if number % 2:
            text = f"{rng.choice(PEOPLE_ZH)}{rng.choice(ACTIVITY_ZH)}，计划去{rng.choice(places)} #{number}"  # noqa: E501
            memories.append((text, rng.choice(["家人", "工作", "生活"])))
        else:
            text = f"{rng.choice(PEOPLE_EN)} {rng.choice(ACTIVITY_EN)} in {rng.choice(places)} #{number}"  # noqa: E501
            memories.append((text, rng.choice(["family", "work", "life"])))
    return memories


def timed(function, rounds: int = 1) -> float:  # type: ignore[no-untyped-def]
    times = []
    for _ in range(rounds):
        started = time.perf_counter()
        function()
        times.append(time.perf_counter() - started)
    return statistics.median(times) * 1000


def scaling(folder: Path, sizes: list[int]) -> None:
    for size in sizes:
        manager = SqliteMemoryManager(folder / f"synthetic-{size}.db", "bench")
        with manager.transaction() as transaction:
            for number, (text, theme) in enumerate(synthetic(size)):
                from memory.store.item import MemoryItem

                transaction.put(f"s{number}", MemoryItem.create(text, theme, "bench"))
        bm25 = timed(lambda: MechanicalRetriever(manager).index(), 3)  # noqa: B023  (reads the store too)
        table = TopicTable(manager)
        first = timed(lambda: table.resolve("person:sister"))  # noqa: B023
        manager.add("my sister adopted a puppy", "family")
        rebuild = timed(lambda: table.resolve("person:sister"))  # noqa: B023
        listing = timed(table.topics, 3)
        retrievers = Retrievers(manager)
        retrievers.retrieve("warm up", "mechanical", 10)
        named = timed(lambda: retrievers.retrieve("what's new with my sister", "mechanical", 10), 5)  # noqa: B023
        plain = timed(lambda: retrievers.mechanical.retrieve("sister puppy", 10), 5)  # noqa: B023
        topics = len(table.topics())
        print(f"{size:>6} memories, {topics} topics: BM25 build {bm25:7.1f} ms | topic table "
              f"first build {first:7.1f} ms ({first / bm25:4.1f}x BM25), after one write "
              f"{rebuild:6.1f} ms ({rebuild / bm25:4.2f}x), topics() {listing:6.1f} ms | "
              f"'what's new with my sister' {named:5.1f} ms vs BM25 query {plain:5.1f} ms "
              f"({named / max(plain, 1e-6):4.1f}x)")  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="1000,10000", help="comma-separated store sizes")
    sizes = [int(size) for size in parser.parse_args().sizes.split(",")]
    entity_quality()
    with tempfile.TemporaryDirectory() as folder:
        routing_recall(Path(folder))
        scaling(Path(folder), sizes)


if __name__ == "__main__":
    main()
