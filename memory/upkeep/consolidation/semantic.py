"""Duplicates by meaning: memory vectors from the embedding model, nearest-neighbour pairs above a
measured similarity found by random-hyperplane hashing (linear, not all pairs), and the model's
yes or no on the borderline ones."""

from __future__ import annotations

import logging
from collections import defaultdict
from collections.abc import Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from memory.prompts.consolidation import DIFFERENT_FACTS, SAME_FACT_PROMPTS
from memory.text.fencing import escape_data
from memory.text.language import language_of

logger = logging.getLogger(__name__)

# Measured with bench/consolidation.py on the tuning split of the public consolidation set
# (tests/data/public_consolidation_set.json, the offline multilingual model): English duplicate
# pairs have a median cosine of 0.94, traps 0.85, and a memory's nearest unrelated neighbour 0.60
# (0.87 at the 90th percentile), so cosine alone never decides: the markers, the lexical
# check and the learned contrasts must agree too. Chinese (duplicates 0.89, traps up to 0.93)
# is read by what each side's content characters lack (memory/upkeep/consolidation/chinese.py).
SEMANTIC_SAME = {"en": 0.85}  # merged without a model from here
SEMANTIC_BORDERLINE = 0.80  # from here to SEMANTIC_SAME, a configured model decides
MAX_MODEL_CHECKS = 40  # borderline pairs a pass asks the model about, at most
# Hashing: each table files every vector under the signs of its projections on random planes;
# a bucket holding more than MAX_BUCKET vectors is split by more planes, so no bucket is compared
# all-pairs beyond that size and the work grows with the store, not with its square.
TABLES = 12
MAX_BUCKET = 48
MAX_PLANES = 24
BATCH = 256
Vectors = npt.NDArray[np.float32]


def embed(embeddings: Any, texts: Sequence[str]) -> Vectors:
    """Unit vectors of `texts` through any `TextEmbeddings` (`embed_documents`), in batches."""
    rows: list[Vectors] = []
    for start in range(0, len(texts), BATCH):
        part = embeddings.embed_documents(list(texts[start : start + BATCH]))
        rows.append(np.asarray(part, dtype=np.float32))
    if not rows:
        return np.zeros((0, 1), dtype=np.float32)
    matrix = np.vstack(rows)
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    return (matrix / np.where(norms == 0, 1.0, norms)).astype(np.float32)


def near_pairs(vectors: Vectors, threshold: float, seed: int = 0) -> dict[tuple[int, int], float]:
    """Pairs of rows (i < j) whose cosine reaches `threshold`, found in buckets of similar
    vectors instead of all pairs: a close pair shares a bucket in most of the TABLES tables.
    What this gives up: a close pair split in every table is not proposed."""
    count = len(vectors)
    found: dict[tuple[int, int], float] = {}
    if count < 2:
        return found
    rng = np.random.default_rng(seed)
    for _ in range(TABLES):
        planes = rng.standard_normal((vectors.shape[1], MAX_PLANES)).astype(np.float32)
        signs = (vectors @ planes) > 0
        pending = [(np.arange(count), 0)]
        while pending:
            rows, depth = pending.pop()
            if len(rows) <= MAX_BUCKET or depth >= MAX_PLANES:
                _compare(vectors, rows[: MAX_BUCKET * 4], threshold, found)
                continue
            side = signs[rows, depth]
            pending += [(rows[side], depth + 1), (rows[~side], depth + 1)]
    return found


def _compare(vectors: Vectors, rows: npt.NDArray[np.int64], threshold: float, found: dict) -> None:
    if len(rows) < 2:
        return
    block = vectors[rows]
    scores = block @ block.T
    first, second = np.nonzero(np.triu(scores >= threshold, 1))
    for a, b in zip(first.tolist(), second.tolist(), strict=True):
        i, j = int(rows[a]), int(rows[b])
        found[(min(i, j), max(i, j))] = float(scores[a, b])


def model_says_same(llm: Any, first: str, second: str) -> bool:
    """One model call: do two memories state the same fact? Anything but a clear yes (an error,
    a refusal, a verbose answer) is a no: keeping two memories is the safe mistake."""
    prompt = SAME_FACT_PROMPTS[language_of(first + second)].format(
        first=escape_data(first), second=escape_data(second)
    )
    try:
        answer = llm.invoke([("human", prompt)])
    except Exception:
        logger.exception("consolidation: the model could not compare two memories; kept apart")
        return False
    text = getattr(answer, "content", answer)
    if not isinstance(text, str):
        return False
    word = text.strip().strip(".。!！\"'“”").lower()
    return word in ("yes", "是", "是的")


def model_tells_apart(llm: Any, language: str) -> bool:
    """Whether the model answers "not the same" for every plainly different pair of the
    language (DIFFERENT_FACTS): a model that calls them the same would merge look-alikes, so its
    "same" is not asked for in that language (a pass then decides by meaning alone)."""
    pairs = DIFFERENT_FACTS.get(language, ())
    fit = all(not model_says_same(llm, first, second) for first, second in pairs)
    if not fit:
        logger.warning(
            "consolidation: the model called two different %s facts the same; its confirmation "
            "of near pairs is not used for %s memories",
            language,
            language,
        )
    return fit


def pairs_by_language(
    ids: Sequence[str], languages: Sequence[str], vectors: Vectors
) -> dict[tuple[str, str], float]:
    """Near pairs (ids) at SEMANTIC_BORDERLINE or closer, within one language at a time (the
    thresholds are the language's)."""
    rows_of: dict[str, list[int]] = defaultdict(list)
    for row, language in enumerate(languages):
        rows_of[language].append(row)
    pairs: dict[tuple[str, str], float] = {}
    for rows in rows_of.values():
        subset = np.asarray(rows)
        for (a, b), score in near_pairs(vectors[subset], SEMANTIC_BORDERLINE).items():
            pairs[(ids[rows[a]], ids[rows[b]])] = score
    return pairs
