"""Retrieval benchmark: BM25 latency vs a naive rank_bm25 baseline, recall, and prompt size.

Run: `.venv/bin/python bench/retrieval.py` (offline; about a minute on two cores).
"""

from __future__ import annotations

import itertools
import random
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np
from rank_bm25 import BM25Okapi

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import memory.text.tokenize as tokenizer_module
from memory.retrieval import MechanicalRetriever
from memory.retrieval.evaluation import load_labelled_set, recall_at, write_items
from memory.retrieval.hybrid import HybridRetriever
from memory.retrieval.llm import entries_from_items, format_memory_lines
from memory.store.backends.yaml_files import YamlMemoryManager
from memory.store.document import MemoryDocument
from memory.store.item import MemoryItem
from memory.store.manager import BaseMemoryManager
from memory.text.tokenize import tokenize

LABELLED_SET = Path(__file__).resolve().parents[1] / "tests" / "data" / "retrieval_set.json"
SIZES = (1_000, 10_000, 100_000)
QUERIES_PER_SIZE = 200
BASELINE_QUERIES = {1_000: 20, 10_000: 10, 100_000: 3}
THEMES = ["项目", "品味", "瞬间", "健康", "工作", "学习", "project", "taste", "work", "health",
          "travel", "family", "hobby", "pet", "finance", "moment"]  # fmt: skip
_EN_WORDS = (  # noqa: SIM905 - a paragraph of words reads better than a list
    "user likes coffee tea cat dog project rust python go refactor memory editor release bug fix "
    "test deploy server database index query cache music guitar piano chess running marathon "
    "travel kyoto lisbon iceland camping lake book novel movie film science fiction family sister "
    "father mother friend dinner pizza noodles vegetarian allergy peanut milk cheese sleep "
    "headache exam course statistics japanese mandarin portuguese laptop phone battery keyboard "
    "budget saving apartment salary fund review manager team meeting weekend morning evening "
    "summer winter spring garden plant bicycle climbing yoga swimming photo camera painting"
).split()
_ZH_CHARS = (
    "塔罗牌工具项目重构代码分析性能瓶颈喜欢夏天猫咖啡美式花生过敏日语考试单词妹妹初三物流调度后端"
    "工程师京都樱花橘猫年糕湾流记忆系统存储原子写入断电文件攀岩周末线路香菜外卖失眠计算机虚拟内存"
    "组会数据库索引优化分享吉他乐队工资指数基金室友火锅电池前端路由迁移旅行健康学习家庭宠物财务"
)


class InMemoryManager(BaseMemoryManager):
    """A manager whose document is built in memory, so 100,000 items need no 100,000 writes."""

    backend = "memory"

    def __init__(self, items: dict[str, MemoryItem]) -> None:
        super().__init__("bench")
        self.document = MemoryDocument(items, [], 1)

    def _load_all(self) -> MemoryDocument:
        return self.document

    def _save_all(self, document: MemoryDocument) -> None:
        self.document = document

    @contextmanager
    def _write_lock(self) -> Iterator[None]:
        yield


def synthetic_items(count: int, rng: random.Random) -> dict[str, MemoryItem]:
    """Half English, half Chinese memories; word choice is Zipf-like, as in real text."""
    en_weights = [1 / (rank + 1) for rank in range(len(_EN_WORDS))]
    zh_words = ["".join(pair) for pair in itertools.pairwise(_ZH_CHARS)]
    zh_weights = [1 / (rank + 1) for rank in range(len(zh_words))]
    items: dict[str, MemoryItem] = {}
    base = time.time() - 400 * 86400
    for number in range(count):
        if number % 2:
            words = rng.choices(_EN_WORDS, en_weights, k=rng.randint(6, 16))
            description = "The " + " ".join(words) + f" {number}."
        else:
            description = "Miso" + "".join(rng.choices(zh_words, zh_weights, k=rng.randint(5, 14)))
        stamp = time.strftime("%Y-%m-%dT%H:%M:%S+00:00", time.gmtime(base + rng.random() * 4e7))
        item = MemoryItem(description, rng.choice(THEMES), [], stamp, rng.randint(0, 20))
        items[f"s{number}"] = item
    return items


def synthetic_queries(items: dict[str, MemoryItem], count: int, rng: random.Random) -> list[str]:
    """Two to four tokens taken from random memories (English words or Chinese word pairs)."""
    descriptions = list(items.values())
    queries = []
    for _ in range(count):
        text = rng.choice(descriptions).description
        if text.startswith("The "):
            words = text.split()[1:-1]
            queries.append(" ".join(rng.sample(words, k=min(3, len(words)))))
        else:
            start = rng.randrange(4, max(5, len(text) - 4))
            queries.append(text[start : start + rng.randint(2, 5)])
    return queries


def timed(function: Callable[[], Any]) -> float:
    started = time.perf_counter()
    function()
    return (time.perf_counter() - started) * 1000


def naive_bm25(manager: BaseMemoryManager, query: str, limit: int = 10) -> list[str]:
    """The baseline: tokenize every item and build BM25Okapi again for each query."""
    items = manager.list_items()
    ids = list(items)
    corpus = [tokenize(f"{item.theme} {item.description}") for item in items.values()]
    scores = BM25Okapi(corpus).get_scores(tokenize(query))
    return [ids[i] for i in np.argsort(-scores)[:limit]]


def percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(fraction * (len(ordered) - 1)))]


def latency_section(rng: random.Random) -> None:
    print(
        "(1) mechanical retrieve latency vs naive baseline (per query: tokenize every item,\n"
        "    build rank_bm25 BM25Okapi, score); synthetic half-Chinese half-English stores;\n"
        "    after-write = first query after one add (incremental index update + query)"
    )
    print(f"{'memories':>9} {'build ms':>9} {'median ms':>10} {'p95 ms':>8} "
          f"{'after-write ms':>15} {'naive median ms':>16} {'naive n':>8} "
          f"{'speed-up':>9}")  # fmt: skip
    for size in SIZES:
        manager = InMemoryManager(synthetic_items(size, rng))
        queries = synthetic_queries(manager.document.items, QUERIES_PER_SIZE, rng)
        retriever = MechanicalRetriever(manager)
        build_ms = timed(retriever.index)
        retriever.retrieve(queries[0])  # warm-up
        fast = [timed(partial(retriever.retrieve, q, 10)) for q in queries]
        assert retriever.builds == 1, "a query rebuilt the index"
        baseline_queries = queries[: BASELINE_QUERIES[size]]
        naive = [timed(partial(naive_bm25, manager, q)) for q in baseline_queries]
        ratio = statistics.median(naive) / statistics.median(fast)
        # The first query after a write pays for the index update (only the new item is tokenized).
        after_write = []
        for number, query in enumerate(queries[:10]):
            manager.add(f"Miso 新记忆 new memory {number} {query}", rng.choice(THEMES))
            after_write.append(timed(partial(retriever.retrieve, query, 10)))
        print(f"{size:>9,} {build_ms:>9.0f} {statistics.median(fast):>10.3f} "
              f"{percentile(fast, 0.95):>8.3f} {statistics.median(after_write):>15.1f} "
              f"{statistics.median(naive):>16.1f} {len(naive):>8} {ratio:>8.0f}x")  # fmt: skip
        if size == 10_000:
            ok_time = "met" if statistics.median(fast) <= 10 else "MISSED"
            ok_ratio = "met" if ratio >= 10 else "MISSED"
            print(f"          targets at 10,000: median <= 10 ms: {ok_time}; "
                  f">= 10x faster than naive: {ok_ratio}")  # fmt: skip
        if size == 10_000:
            hybrid_prompt_size(manager, queries[:20])
            real_backends(manager.document.items, queries)


def real_backends(items: dict[str, MemoryItem], queries: list[str]) -> None:
    """The same 10,000 memories in a real YAML file and a real SQLite database: each query also
    asks the store for its revision (a stat, or one SELECT)."""
    with tempfile.TemporaryDirectory() as directory:
        managers: list[BaseMemoryManager] = [YamlMemoryManager(directory, "bench")]
        try:
            from memory.store.backends.sqlite_db import SqliteMemoryManager

            managers.append(SqliteMemoryManager(Path(directory) / "bench.db", "bench"))
        except ImportError:
            pass
        for manager in managers:
            write_items(manager, items)
            retriever = MechanicalRetriever(manager)
            retriever.retrieve(queries[0])
            fast = [timed(partial(retriever.retrieve, q, 10)) for q in queries]
            print(f"          {manager.backend} file at 10,000: median "
                  f"{statistics.median(fast):.3f} ms, p95 {percentile(fast, 0.95):.3f} ms, "
                  f"index builds {retriever.builds}")  # fmt: skip
            close = getattr(manager, "close", None)
            if callable(close):
                close()


def hybrid_prompt_size(manager: BaseMemoryManager, queries: list[str]) -> None:
    """What hybrid mode sends to the model at 10,000 memories (counted, no model needed)."""

    class CountingModel:
        def __init__(self) -> None:
            self.sizes: list[tuple[int, int]] = []

        def invoke(self, messages: list[Any]) -> Any:
            text = messages[-1].content
            self.sizes.append((text.count("\n[") + text.startswith("["), len(text)))
            return type("Answer", (), {"content": "[]"})()

    model = CountingModel()
    hybrid = HybridRetriever(manager, model)
    for query in queries:
        hybrid.retrieve(query, 10)
    whole = len(format_memory_lines(entries_from_items(manager.list_items())))
    lines = statistics.median(size[0] for size in model.sizes)
    chars = statistics.median(size[1] for size in model.sizes)
    print(f"          hybrid at 10,000: median {lines:.0f} memories / {chars:,.0f} characters "
          f"sent to the model instead of {whole:,} ({chars / whole:.1%})")  # fmt: skip


def recall_section() -> None:
    labelled = load_labelled_set(LABELLED_SET)
    print(f"\n(2) recall on the labelled set ({len(labelled.items)} memories, "
          f"{len(labelled.queries)} queries, YAML store)")  # fmt: skip
    with tempfile.TemporaryDirectory() as directory:
        manager = YamlMemoryManager(directory, "bench")
        write_items(manager, labelled.items)
        retriever = MechanicalRetriever(manager)
        for k in (5, 10):
            mean, per_query = recall_at(retriever.retrieve, labelled.queries, k)
            by_lang = {
                lang: statistics.mean(per_query[q.id] for q in labelled.queries if q.lang == lang)
                for lang in ("zh", "en")
            }
            print(f"    mechanical recall@{k}: {mean:.3f}  (zh {by_lang['zh']:.3f}, "
                  f"en {by_lang['en']:.3f})")  # fmt: skip
        _, per_query = recall_at(retriever.retrieve, labelled.queries, 5)
        kinds = sorted({q.kind for q in labelled.queries})
        parts = []
        for kind in kinds:
            of_kind = [per_query[q.id] for q in labelled.queries if q.kind == kind]
            parts.append(f"{kind} {statistics.mean(of_kind):.2f} (n={len(of_kind)})")
        print("    mechanical recall@5 by kind: " + ", ".join(parts))
        print("    llm / hybrid: not reported — they need a real model (an oracle fake is not a "
              "measurement)")  # fmt: skip
        tokenizer_comparison(labelled)


def tokenizer_comparison(labelled: Any) -> None:
    """Recall@5 on the Chinese queries with other ways of cutting Chinese text."""
    original = tokenizer_module.chinese_tokens
    stop = tokenizer_module.CHINESE_STOP_CHARS

    def bigrams_only(run: str) -> list[str]:
        pairs = [a + b for a, b in itertools.pairwise(run) if not (a in stop and b in stop)]
        return pairs or [char for char in run if char not in stop]

    def unigrams_only(run: str) -> list[str]:
        return [char for char in run if char not in stop]

    variants: list[tuple[str, Callable[[str], list[str]]]] = [
        ("bigrams+unigrams (used)", original),
        ("bigrams only", bigrams_only),
        ("unigrams only", unigrams_only),
    ]
    try:
        import jieba

        jieba.setLogLevel(60)
        variants.append(("jieba search mode", lambda run: [
            w for w in jieba.lcut_for_search(run) if w not in stop]))  # fmt: skip
    except ImportError:
        pass
    chinese = [q for q in labelled.queries if q.lang == "zh"]
    results = []
    try:
        for name, function in variants:
            setattr(tokenizer_module, "chinese_tokens", function)  # noqa: B010 - a deliberate swap
            with tempfile.TemporaryDirectory() as directory:
                manager = YamlMemoryManager(directory, "bench")
                write_items(manager, labelled.items)
                mean, _ = recall_at(MechanicalRetriever(manager).retrieve, chinese, 5)
                results.append(f"{name} {mean:.3f}")
    finally:
        setattr(tokenizer_module, "chinese_tokens", original)  # noqa: B010
    print("    Chinese queries recall@5 by tokenizer: " + "; ".join(results))


def injection_section(rng: random.Random) -> None:
    manager = InMemoryManager(synthetic_items(1_000, rng))
    retriever = MechanicalRetriever(manager)
    whole = len(format_memory_lines(entries_from_items(manager.list_items())))
    injected = []
    for query in synthetic_queries(manager.document.items, 100, rng):
        results = retriever.retrieve(query, 10)
        items = {r["id"]: manager.document.items[r["id"]] for r in results}
        injected.append(len(format_memory_lines(entries_from_items(items))))
    mean = statistics.mean(injected)
    print("\n(3) characters injected per turn, limit=10, 1,000 memories")
    print(f"    {mean:,.0f} of {whole:,} characters = {mean / whole:.2%} of injecting the whole "
          f"store (target <= 5%: {'met' if mean / whole <= 0.05 else 'MISSED'})")  # fmt: skip


def main() -> None:
    rng = random.Random(20260711)
    latency_section(rng)
    recall_section()
    injection_section(rng)


if __name__ == "__main__":
    main()
