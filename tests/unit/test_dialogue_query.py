"""The dialogue query builder: the latest message first, preceding turns weighted recent-first."""

from __future__ import annotations

import numpy as np
import pytest

from memory.retrieval.bm25_index import Bm25Index
from memory.retrieval.dialogue_query import (
    DialogueQuery,
    concatenated,
    context_weights,
    dialogue_bm25,
    dialogue_vector,
    weighted_tokens,
)
from memory.store.item import MemoryItem

EXAM_TALK = DialogueQuery(
    "that sounds hard",
    ("I went hiking on Sunday", "", "My maths exam is next week and I am nervous"),
)


def test_the_most_recent_turn_weighs_most_and_empty_turns_are_skipped() -> None:
    weights = context_weights(EXAM_TALK, decay=0.5, turns=2)
    assert weights == [("that sounds hard", 1.0),
                       ("My maths exam is next week and I am nervous", 0.5),
                       ("I went hiking on Sunday", 0.25)]  # fmt: skip


def test_no_decay_or_no_turns_reads_the_latest_message_alone() -> None:
    assert context_weights(EXAM_TALK, decay=0.0) == [("that sounds hard", 1.0)]
    assert context_weights(EXAM_TALK, decay=0.5, turns=0) == [("that sounds hard", 1.0)]
    assert context_weights(DialogueQuery("hi"), decay=0.5) == [("hi", 1.0)]


def test_a_word_of_the_latest_message_keeps_its_full_weight() -> None:
    query = DialogueQuery("考试好难", ("我下周有数学考试", "hard exam"))
    tokens = weighted_tokens(query, decay=0.5)
    assert tokens["考试"] == 1.0  # also in the older turn
    assert tokens["数学"] == 0.25
    assert tokens["exam"] == 0.5


def _index() -> Bm25Index:
    texts = {
        "exam": "User is nervous about the maths exam next week",
        "hike": "User went hiking on Sunday in the hills",
        "cake": "User thinks baking a cake is hard work",
    }
    return Bm25Index.build("t", {k: MemoryItem.create(v, "life", "test") for k, v in texts.items()})


def _ranked(index: Bm25Index, query: DialogueQuery, decay: float) -> list[str]:
    positions, scores = dialogue_bm25(index, query, decay=decay)
    return [index.entries[p].id for p in positions[np.argsort(-scores)].tolist()]


def test_bm25_with_context_finds_what_the_dialogue_is_about() -> None:
    index = _index()
    assert _ranked(index, EXAM_TALK, decay=0.0) == ["cake"]  # "hard" alone
    with_context = _ranked(index, EXAM_TALK, decay=0.5)
    assert set(with_context) == {"cake", "exam", "hike"}
    assert with_context.index("exam") < with_context.index("hike")  # recent turn counts more


def test_bm25_without_context_is_the_index_score() -> None:
    index = _index()
    positions, scores = dialogue_bm25(index, EXAM_TALK, decay=0.0)
    expected = index.scores(["that", "sounds", "hard"])
    assert {index.entries[p].id: s for p, s in zip(positions, scores, strict=True)} == expected


def _encode(texts: list[str]) -> np.ndarray:
    """Vectors by the first letter, unnormalised: enough to check the weighting."""
    return np.asarray([[3.0, 0.0] if text.startswith("t") else [0.0, 2.0] for text in texts])


def test_vector_is_the_weighted_mean_of_unit_vectors() -> None:
    query = DialogueQuery("that sounds hard", ("My maths exam",))
    assert dialogue_vector(_encode, query, decay=0.0) == pytest.approx([1.0, 0.0])
    mixed = dialogue_vector(_encode, query, decay=0.5)
    assert mixed == pytest.approx(np.array([1.0, 0.5]) / np.linalg.norm([1.0, 0.5]))


def test_concatenation_keeps_the_dialogue_order_and_skips_empty_turns() -> None:
    assert concatenated(EXAM_TALK, turns=2) == (
        "I went hiking on Sunday\nMy maths exam is next week and I am nervous\nthat sounds hard"
    )
    assert concatenated(EXAM_TALK, turns=0) == "that sounds hard"
