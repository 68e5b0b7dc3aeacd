"""Bm25Index: an inverted index with precomputed BM25 weights, built once per store revision."""

from __future__ import annotations

import math
import time
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime

import numpy as np
import numpy.typing as npt

from memory.item import MemoryItem
from memory.retrieval.query import theme_key
from memory.tokenize import tokenize

K1 = 1.5
B = 0.75
RECENCY_HALF_LIFE_DAYS = 7.0


@dataclass(frozen=True)
class IndexedMemory:
    """What retrieval needs of one live item, copied so the index never sees later edits."""

    id: str
    description: str
    theme: str
    latest_update_time: str
    updated_at: float  # epoch seconds; 0 when the time is missing or unreadable
    hit: int

    def as_result(self) -> dict[str, str]:
        """The seed's `{id, description, theme}` shape."""
        return {"id": self.id, "description": self.description, "theme": self.theme}


@dataclass
class Bm25Index:
    """Postings per term, each posting already holding its BM25 weight.

    A query only sums the weights found in the postings of its own terms, so its cost grows with
    the number of documents containing those terms, not with the size of the store.
    """

    revision: str
    entries: list[IndexedMemory]
    postings: dict[str, tuple[npt.NDArray[np.int32], npt.NDArray[np.float32]]]
    broad_order: list[int]  # recent and frequently hit first (the seed's rule for broad queries)
    recent_order: list[int]
    hit_order: list[int]
    themes: dict[str, list[int]] = field(default_factory=dict)  # theme key → broad order
    updated_at: npt.NDArray[np.float64] = field(default_factory=lambda: np.zeros(0))

    @classmethod
    def build(cls, revision: str, items: Mapping[str, MemoryItem]) -> Bm25Index:
        """Tokenize every live item once (description and theme) and precompute the weights."""
        entries = [
            IndexedMemory(
                memory_id,
                item.description,
                item.theme,
                item.latest_update_time,
                _epoch(item.latest_update_time),
                item.hit if isinstance(item.hit, int) else 0,
            )
            for memory_id, item in items.items()
        ]
        term_docs: dict[str, list[int]] = {}
        term_freqs: dict[str, list[int]] = {}
        lengths: list[int] = []
        for position, entry in enumerate(entries):
            counts = Counter(tokenize(f"{entry.theme} {entry.description}"))
            lengths.append(sum(counts.values()))
            for term, count in counts.items():
                term_docs.setdefault(term, []).append(position)
                term_freqs.setdefault(term, []).append(count)
        total = len(entries)
        average_length = (sum(lengths) / total) if total else 1.0
        length_norm = np.asarray(
            [K1 * (1 - B + B * length / max(average_length, 1e-9)) for length in lengths],
            dtype=np.float64,
        )
        postings: dict[str, tuple[npt.NDArray[np.int32], npt.NDArray[np.float32]]] = {}
        for term, docs in term_docs.items():
            doc_array = np.asarray(docs, dtype=np.int32)
            freqs = np.asarray(term_freqs[term], dtype=np.float64)
            # Lucene's idf: never negative, so a very common term cannot push a document down.
            idf = math.log((total - len(docs) + 0.5) / (len(docs) + 0.5) + 1.0)
            weights = idf * freqs * (K1 + 1) / (freqs + length_norm[doc_array])
            postings[term] = (doc_array, weights.astype(np.float32))
        broad_order = _broad_order(entries)
        themes: dict[str, list[int]] = {}
        for position in broad_order:
            themes.setdefault(theme_key(entries[position].theme), []).append(position)
        return cls(
            revision=revision,
            entries=entries,
            postings=postings,
            broad_order=broad_order,
            recent_order=sorted(range(total), key=lambda i: -entries[i].updated_at),
            hit_order=sorted(range(total), key=lambda i: (-entries[i].hit, -entries[i].updated_at)),
            themes=themes,
            updated_at=np.asarray([entry.updated_at for entry in entries], dtype=np.float64),
        )

    def search(self, tokens: list[str], limit: int, favour_recent: bool = False) -> list[int]:
        """Positions of the best `limit` entries for these tokens, best first."""
        found = [self.postings[term] for term in dict.fromkeys(tokens) if term in self.postings]
        if not found or limit <= 0:
            return []
        docs = np.concatenate([docs for docs, _ in found])
        weights = np.concatenate([weights for _, weights in found])
        candidates, inverse = np.unique(docs, return_inverse=True)
        scores = np.bincount(inverse, weights=weights).astype(np.float64)
        if favour_recent:
            # A time cue ("上周", "lately") lifts recent items by up to 30% of the best BM25 score.
            age_days = np.maximum(time.time() - self.updated_at[candidates], 0.0) / 86400.0
            scores += 0.3 * scores.max() * np.power(0.5, age_days / RECENCY_HALF_LIFE_DAYS)
        if len(candidates) > limit:
            top = np.argpartition(-scores, limit - 1)[:limit]
        else:
            top = np.arange(len(candidates))
        # Ties go to the more recent item, then to the stable position.
        ranked = sorted(
            top.tolist(),
            key=lambda i: (-scores[i], -self.updated_at[candidates[i]], candidates[i]),
        )
        return [int(candidates[i]) for i in ranked]


def _epoch(value: str) -> float:
    try:
        return datetime.fromisoformat(value).timestamp() if value else 0.0
    except (TypeError, ValueError):
        return 0.0


def _broad_order(entries: list[IndexedMemory]) -> list[int]:
    """Recency rank and hit count, each scaled to 0..1 and added: recent *and* often used first."""
    total = len(entries)
    if total == 0:
        return []
    by_time = sorted(range(total), key=lambda i: entries[i].updated_at)
    recency = [0.0] * total
    for rank, position in enumerate(by_time):
        recency[position] = rank / max(total - 1, 1)
    max_hit = max(max(entry.hit, 0) for entry in entries)
    scale = math.log1p(max_hit) if max_hit > 0 else 1.0
    score = [recency[i] + math.log1p(max(entries[i].hit, 0)) / scale for i in range(total)]
    return sorted(range(total), key=lambda i: (-score[i], -entries[i].updated_at))
