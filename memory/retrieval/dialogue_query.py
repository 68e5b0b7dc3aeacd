"""A query from the dialogue so far: the latest message plus the turns before it, recent first."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from memory.retrieval.bm25_index import Bm25Index
from memory.text.tokenize import tokenize

# Off by default: a light context (0.1) lifted tuning recall but cost held-out recall@5 one
# question per language (docs/MEMORY.md, "Context from the preceding turns"). A weight of 0.0
# makes every function here read the latest message alone.
CONTEXT_DECAY = 0.0
CONTEXT_TURNS = 3


@dataclass(frozen=True)
class DialogueQuery:
    """The latest user message and the turns before it in the same conversation, oldest first
    (as they were said)."""

    latest: str
    preceding: tuple[str, ...] = ()


def context_weights(
    query: DialogueQuery, decay: float = CONTEXT_DECAY, turns: int = CONTEXT_TURNS
) -> list[tuple[str, float]]:
    """`(text, weight)` of the latest message (1.0) and of up to `turns` preceding turns, the
    most recent first at `decay`, the one before at `decay**2`, ... Empty turns are skipped."""
    weighted = [(query.latest, 1.0)]
    if decay <= 0 or turns <= 0:
        return weighted
    recent_first = [text for text in reversed(query.preceding) if text.strip()][:turns]
    weighted.extend((text, decay ** (age + 1)) for age, text in enumerate(recent_first))
    return weighted


def weighted_tokens(
    query: DialogueQuery, decay: float = CONTEXT_DECAY, turns: int = CONTEXT_TURNS
) -> dict[str, float]:
    """Each token of the dialogue query (the project's bilingual tokenizer) with the weight of
    the most recent text it appears in: a word of the latest message keeps 1.0 even when an
    older turn repeats it."""
    tokens: dict[str, float] = {}
    for text, weight in context_weights(query, decay, turns):
        for token in tokenize(text):
            tokens[token] = max(tokens.get(token, 0.0), weight)
    return tokens


def dialogue_bm25(
    index: Bm25Index,
    query: DialogueQuery,
    favour_recent: bool = False,
    decay: float = CONTEXT_DECAY,
    turns: int = CONTEXT_TURNS,
) -> tuple[npt.NDArray[np.int32], npt.NDArray[np.float64]]:
    """BM25 of each text of the dialogue query, summed with its weight: `(positions, scores)`
    like `Bm25Index.scored`, so a context word adds evidence but never outweighs the message."""
    weighted = context_weights(query, decay, turns)
    if len(weighted) == 1:
        return index.scored(tokenize(query.latest), favour_recent)
    totals: dict[int, float] = {}
    for text, weight in weighted:
        positions, scores = index.scored(tokenize(text), favour_recent and weight == 1.0)
        for position, score in zip(positions.tolist(), scores.tolist(), strict=True):
            totals[position] = totals.get(position, 0.0) + weight * score
    positions_out = np.fromiter(totals, dtype=np.int32, count=len(totals))
    return positions_out, np.fromiter(totals.values(), dtype=np.float64, count=len(totals))


def dialogue_vector(
    encode: Callable[[list[str]], Sequence[Sequence[float]] | npt.NDArray[np.float32]],
    query: DialogueQuery,
    decay: float = CONTEXT_DECAY,
    turns: int = CONTEXT_TURNS,
) -> npt.NDArray[np.float32]:
    """The weighted mean of the texts' unit vectors (one `encode` call for all of them), as a
    unit vector: the latest message's direction, pulled towards the recent turns. `encode` is
    a batch embedder (`TextEmbeddings.embed_documents`)."""
    weighted = context_weights(query, decay, turns)
    vectors = np.asarray(encode([text for text, _ in weighted]), dtype=np.float32)
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    vectors = (vectors / np.where(norms > 0, norms, 1.0)).astype(np.float32)
    weights = np.asarray([weight for _, weight in weighted], dtype=np.float32)
    mean = (weights[:, None] * vectors).sum(axis=0)
    norm = float(np.linalg.norm(mean))
    return mean / norm if norm > 0 else mean


def concatenated(query: DialogueQuery, turns: int = CONTEXT_TURNS) -> str:
    """The preceding turns and the message as one text, for an embedder fed a single string."""
    spoken = [text for text in query.preceding if text.strip()]
    parts: Sequence[str] = [*spoken[-turns:], query.latest] if turns > 0 else [query.latest]
    return "\n".join(parts)
