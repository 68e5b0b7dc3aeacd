"""Semantic channel benchmark: fused query latency against BM25 alone, the cost of one new memory,
and the memory the vectors take, at 1k, 10k and 100k memories with the offline model.

Run: `.venv/bin/python bench/semantic_latency.py` (offline; about two minutes on two cores);
`--sizes 10000` for one size. "with 3 preceding turns" is the dialogue query of
memory/retrieval/dialogue_query.py (BM25 per text, one batch embedding, the weighted mean vector)
against the same path on the latest message alone. "said in conversations" is the same store with
each memory's thread set (conversations of 20 memories, or one thread for everything, as a bot
that keeps one thread per user has): the fused ranking then also reads the memory each of its best
ones' conversation created next, against the memories alone.

The offline model embeds 5,000 distinct synthetic memories for real; larger stores reuse those
vectors (a query's cost depends on how many rows it scores, not on what they hold), handed to the
channel as kept vectors, the path a restart takes.
"""

from __future__ import annotations

import argparse
import dataclasses
import random
import sys
import time
import tracemalloc
from functools import partial
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from retrieval import InMemoryManager, percentile, synthetic_items, synthetic_queries

from memory.retrieval.bm25 import MechanicalRetriever
from memory.retrieval.bm25_index import Bm25Index
from memory.retrieval.dialogue_query import DialogueQuery, dialogue_bm25, dialogue_vector
from memory.retrieval.embedder import OfflineEncoder
from memory.retrieval.fusion import SHORTLIST, FusedRanking, dated_shortlist, fuse_scores
from memory.retrieval.query import read_query
from memory.retrieval.semantic import SemanticChannel, _hash_text, embedded_text
from memory.retrieval.vector_store import MemoryVectors, StoredVector

SIZES = (1_000, 10_000, 100_000)
DISTINCT = 5_000
QUERIES = 200


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--sizes", type=int, nargs="*", default=list(SIZES))
    sizes = parser.parse_args().sizes
    rng = random.Random(13)
    encoder = OfflineEncoder()
    started = time.perf_counter()
    encoder.encode(["warm up"])
    print(f"offline model {encoder.name}: loaded in {time.perf_counter() - started:.2f} s")
    largest = synthetic_items(max(sizes), rng)
    texts: list[str] = []
    started = time.perf_counter()
    from memory.retrieval.bm25_index import IndexedMemory

    for memory_id, item in list(largest.items())[:DISTINCT]:
        texts.append(embedded_text(IndexedMemory.of(memory_id, item)))
    distinct = encoder.encode(texts)
    per_memory = (time.perf_counter() - started) * 1000 / DISTINCT
    print(f"embedded {DISTINCT} memories in batches: {per_memory:.2f} ms per memory")

    for size in sizes:
        items = dict(list(largest.items())[:size])
        manager = InMemoryManager(items)
        kept = MemoryVectors()
        kept.put(
            StoredVector(memory_id, encoder.name,
                         _hash_text(embedded_text(IndexedMemory.of(memory_id, item))),
                         distinct[number % DISTINCT])
            for number, (memory_id, item) in enumerate(items.items())
        )  # fmt: skip
        bm25 = MechanicalRetriever(manager)
        fused = MechanicalRetriever(manager)
        channel = SemanticChannel(encoder, kept)
        fused.fused = FusedRanking(channel)
        index = bm25.index()
        fused.index()
        tracemalloc.start()
        started = time.perf_counter()
        channel.sync(index)  # loads the kept vectors into the matrix
        load_ms = (time.perf_counter() - started) * 1000
        _, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
        queries = synthetic_queries(items, QUERIES, rng)
        for query in queries[:5]:  # warm caches
            fused.retrieve(query)
        lexical, total, embed, score = [], [], [], []
        for query in queries:
            lexical.append(timed(partial(bm25.retrieve, query)))
            total.append(timed(partial(fused.retrieve, query)))
            embed.append(timed(partial(encoder.embed_query, query)))
            score.append(timed(partial(channel.similar, index, query, 50)) - embed[-1])
        live = channel.status().embedded * distinct.shape[1] * 4
        print(f"\n== {size:,} memories")
        row("BM25 alone (baseline)", lexical)
        row("fused (embed + score + fuse)", total)
        print(f"    = {p(total, 0.95) / p(lexical, 0.95):.1f}x BM25 at p95")
        dialogues = [DialogueQuery(query, tuple(rng.sample(queries, 3))) for query in queries]
        alone = [timed(partial(dialogue_fused, index, channel, d, 0.0)) for d in dialogues]
        context = [timed(partial(dialogue_fused, index, channel, d, 0.25)) for d in dialogues]
        row("dialogue query, latest alone", alone)
        row("  with 3 preceding turns", context)
        print(f"    = {p(context, 0.5) / p(alone, 0.5):.2f}x at p50, "
              f"{p(context, 0.95) / p(alone, 0.95):.2f}x at p95")  # fmt: skip
        row("  query embedding", embed)
        row("  cosine over the matrix", score)
        print(f"  vectors: {live / 2**20:.1f} MiB for {channel.status().embedded:,} rows "
              f"(matrix with spare rows {channel.nbytes / 2**20:.1f} MiB; peak while loading "
              f"{peak / 2**20:.1f} MiB); loading kept vectors {load_ms:.0f} ms")  # fmt: skip
        one_new(manager, fused, channel, rng)
        said_in_conversations(items, kept, encoder, queries, total)


def said_in_conversations(
    items: dict, kept: MemoryVectors, encoder: OfflineEncoder, queries: list[str], alone: list
) -> None:
    """The fused query when the memories carry the conversation that wrote them."""
    for label, per_thread in (("conversations of 20", 20), ("one conversation", len(items))):
        said = {memory_id: dataclasses.replace(item, origin={"thread_id": f"c{n // per_thread}"})
                for n, (memory_id, item) in enumerate(items.items())}  # fmt: skip
        manager = InMemoryManager(said)
        retriever = MechanicalRetriever(manager)
        channel = SemanticChannel(encoder, kept)
        retriever.fused = FusedRanking(channel)
        channel.sync(retriever.index())
        for query in queries[:5]:
            retriever.retrieve(query)
        times = [timed(partial(retriever.retrieve, query)) for query in queries]
        row(f"fused, {label}", times)
        print(f"    = {p(times, 0.5) / p(alone, 0.5):.2f}x the memories alone at p50, "
              f"{p(times, 0.95) / p(alone, 0.95):.2f}x at p95")  # fmt: skip
        one_new(manager, retriever, channel, random.Random(7))


def dialogue_fused(
    index: Bm25Index, channel: SemanticChannel, query: DialogueQuery, decay: float
) -> list[int]:
    """The fused ranking of a dialogue query (what FusedRanking does for one message)."""
    reading = read_query(query.latest, index.theme_keys)
    positions, scores = dialogue_bm25(index, query, reading.time_cue, decay)
    top = np.argsort(-scores)[:SHORTLIST]
    lexical = list(zip(positions[top].tolist(), scores[top].tolist(), strict=True))
    vector = dialogue_vector(channel.embeddings.embed_documents, query, decay)
    semantic = channel.similar_to_vector(index, vector, SHORTLIST)
    return fuse_scores(lexical, semantic, 10, dated=dated_shortlist(index, reading, SHORTLIST))


def one_new(manager: InMemoryManager, fused: MechanicalRetriever, channel: SemanticChannel,
            rng: random.Random) -> None:  # fmt: skip
    """The query after one memory was added: the index update plus one embedding."""
    before = channel.embedded_count
    steady = [timed(lambda: fused.retrieve("coffee piano")) for _ in range(20)]
    after = []
    for number in range(20):
        (item,) = synthetic_items(1, rng).values()
        manager.document.items[f"new{number}"] = item
        manager.document.revision += 1
        after.append(timed(lambda: fused.retrieve("coffee piano")))
    assert channel.embedded_count == before + 20
    print(f"  one new memory: the next query takes {p(after, .5):.2f} ms (p50) instead of "
          f"{p(steady, .5):.2f} ms: {p(after, .5) - p(steady, .5):.2f} ms for the BM25 update, "
          "its embedding and one row")  # fmt: skip


def row(label: str, values: list[float]) -> None:
    print(f"  {label:30s} p50 {p(values, 0.5):7.2f} ms   p95 {p(values, 0.95):7.2f} ms")


def timed(function: object) -> float:
    started = time.perf_counter()
    function()  # type: ignore[operator]
    return (time.perf_counter() - started) * 1000


def p(values: list[float], fraction: float) -> float:
    return percentile(values, fraction)


if __name__ == "__main__":
    np.random.seed(0)
    main()
