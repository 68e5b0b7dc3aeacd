"""Duplicates by meaning: the hashed nearest-neighbour search finds the close pairs all-pairs
would, the guards hold against any cosine, and a model decides only borderline pairs (anything
but a clear yes keeps them apart)."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import numpy as np
import pytest

from memory import LongTermMemory
from memory.prompts.consolidation import DIFFERENT_FACTS
from memory.store.factory import open_memory_manager
from memory.upkeep.consolidation import semantic
from memory.upkeep.consolidation.similarity import duplicate_groups


def unit(rows: np.ndarray) -> np.ndarray:
    return (rows / np.linalg.norm(rows, axis=1, keepdims=True)).astype(np.float32)


def test_hashed_search_finds_the_close_pairs_that_all_pairs_finds() -> None:
    rng = np.random.default_rng(7)
    centres = rng.standard_normal((400, 64))
    # 400 clusters of three: members about 0.9 apart, clusters unrelated.
    rows = np.repeat(centres, 3, axis=0) + 0.25 * rng.standard_normal((1200, 64))
    vectors = unit(rows)
    scores = vectors @ vectors.T
    expected = {(i, j) for i, j in zip(*np.nonzero(np.triu(scores >= 0.85, 1)), strict=True)}
    found = semantic.near_pairs(vectors, 0.85)
    assert expected, "the clusters must hold close pairs"
    assert len(expected & set(found)) / len(expected) >= 0.95
    assert all(scores[i, j] >= 0.85 for i, j in found)  # nothing below the threshold


def test_the_search_compares_a_bounded_number_of_pairs_per_vector() -> None:
    """All-pairs would compare n²/2; the buckets keep it to a few hundred per vector."""
    compared: list[int] = []
    original = semantic._compare

    def counting(vectors, rows, threshold, found):  # type: ignore[no-untyped-def]
        compared.append(len(rows) * (len(rows) - 1) // 2)
        original(vectors, rows, threshold, found)

    vectors = unit(np.random.default_rng(1).standard_normal((6000, 32)))
    semantic._compare = counting  # type: ignore[assignment]
    try:
        semantic.near_pairs(vectors, 0.9)
    finally:
        semantic._compare = original  # type: ignore[assignment]
    assert sum(compared) < 6000 * semantic.TABLES * semantic.MAX_BUCKET
    assert sum(compared) < 6000 * 5999 // 2 / 10


class SameVector:
    """An embedding model that finds every text identical: only the guards can tell them apart."""

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        return [[1.0, 0.0, 0.0] for _ in texts]

    def embed_query(self, text: str) -> list[float]:
        return [1.0, 0.0, 0.0]


@pytest.mark.parametrize(
    ("first", "second"),
    [
        ("User likes jazz", "User dislikes jazz"),
        ("User's flight is on 3 May", "User's flight is on 5 May"),
        ("User's sister is Anna", "User's sister is Maria"),
        ("The horse is near the barn", "The horse is far from the barn"),  # a learned contrast
        ("用户喜欢爬山", "用户讨厌爬山"),
        ("湛江到广州的高铁什么时候开通", "广州到湛江的高铁什么时候开通"),  # who goes where
        ("你是医生吗", "我是医生吗"),
        ("用户住在北京", "用户以前住在北京"),  # no longer true
        ("用户打算明年结婚", "用户明年结婚了"),  # not yet done
        ("用户有两个孩子", "用户有三个孩子"),
    ],
)
def test_the_guards_keep_apart_what_the_model_finds_identical(first: str, second: str) -> None:
    texts = {"a": first, "b": second}
    vectors = semantic.embed(SameVector(), list(texts.values()))
    assert duplicate_groups(texts, vectors=vectors) == []


def test_a_chinese_memory_holding_the_others_words_merges_by_meaning() -> None:
    """An article ("一名") changes nothing, "用户" is "我" in the user's words, "他" is another."""
    texts = {"a": "用户的职业是护士", "b": "用户是一名护士", "c": "我是一名护士",
             "d": "他是一名护士", "e": "用户是医生"}  # fmt: skip
    vectors = semantic.embed(SameVector(), list(texts.values()))
    assert duplicate_groups(texts, vectors=vectors) == [["a", "b", "c"]]


def test_a_close_pair_with_no_word_in_common_is_not_merged_without_a_model() -> None:
    texts = {"a": "User plays the cello", "b": "Violoncello is their instrument"}
    vectors = semantic.embed(SameVector(), list(texts.values()))
    assert duplicate_groups(texts, vectors=vectors) == []


CONTROL_TEXTS = {text for pairs in DIFFERENT_FACTS.values() for pair in pairs for text in pair}


class Judge:
    """A chat model stand-in that answers every comparison with `answer` (or raises it); the
    pass's control pairs of plainly different facts get "no" (a model fit to judge) or, with
    `tells_apart=False`, `answer` too (a model that calls everything the same). `calls` counts
    the comparisons of memories, `control_calls` the control pairs."""

    def __init__(self, answer: object, tells_apart: bool = True) -> None:
        self.answer, self.tells_apart = answer, tells_apart
        self.calls = self.control_calls = 0

    def invoke(self, messages: list) -> object:
        prompt = messages[0][1]
        if any(f"<first>{text}</first>" in prompt for text in CONTROL_TEXTS):
            self.control_calls += 1
            if self.tells_apart:
                return type("Reply", (), {"content": "no"})()
        else:
            self.calls += 1
        if isinstance(self.answer, Exception):
            raise self.answer
        return type("Reply", (), {"content": self.answer})()


def borderline_vectors(count: int) -> np.ndarray:
    """Pairs of rows 0.82 close: above the borderline, under the English merge threshold."""
    rows = []
    for n in range(count):
        base = np.zeros(2 * count + 1)
        base[n] = 1.0
        other = base.copy()
        other[count + n] = np.sqrt(1 / 0.82**2 - 1)
        rows += [base, other]
    return unit(np.asarray(rows))


def test_a_borderline_pair_is_merged_only_when_the_model_says_yes() -> None:
    texts = {"a": "User walks the dog every morning", "b": "User takes the dog out each morning"}
    vectors = borderline_vectors(1)
    assert duplicate_groups(texts, vectors=vectors) == []  # no model: kept apart
    yes = Judge("Yes.")
    assert duplicate_groups(texts, vectors=vectors, llm=yes) == [["a", "b"]] and yes.calls == 1
    for answer in ("no", "Yes, but only partly: the first says every morning", "", None,
                   RuntimeError("HTTP 500")):  # fmt: skip
        judge = Judge(answer)
        assert duplicate_groups(texts, vectors=vectors, llm=judge) == [], answer
        assert judge.calls == 1


def test_a_model_that_calls_different_facts_the_same_is_not_asked_about_that_language() -> None:
    texts = {"a": "User walks the dog every morning", "b": "User takes the dog out each morning"}
    always_yes = Judge("Yes.", tells_apart=False)
    assert duplicate_groups(texts, vectors=borderline_vectors(1), llm=always_yes) == []
    assert always_yes.calls == 0  # asked the control pair, then nothing more in English
    assert 1 <= always_yes.control_calls <= len(DIFFERENT_FACTS["en"])
    fit = Judge("Yes.")
    assert duplicate_groups(texts, vectors=borderline_vectors(1), llm=fit) == [["a", "b"]]
    assert fit.control_calls == len(DIFFERENT_FACTS["en"])  # once per pass, not per pair


def test_the_model_is_asked_about_a_bounded_number_of_pairs() -> None:
    count = semantic.MAX_MODEL_CHECKS + 10
    texts = {}
    for n in range(count):
        texts[f"a{n}"] = f"User walks dog number {n} every morning"
        texts[f"b{n}"] = f"User takes dog number {n} out each morning"
    judge = Judge("no")
    duplicate_groups(texts, vectors=borderline_vectors(count), llm=judge)
    assert judge.calls == semantic.MAX_MODEL_CHECKS


def test_a_model_that_cannot_embed_leaves_the_pass_to_words() -> None:
    from memory.upkeep.consolidation.plan import _vectors

    class Broken:
        def embed_documents(self, texts: list[str]) -> list[list[float]]:
            raise ConnectionError("embedding endpoint down")

    assert _vectors(Broken(), {"a": "fact: User likes jazz"}) is None
    assert _vectors(None, {"a": "fact: User likes jazz"}) is None


class CountingEmbeddings:
    """A deterministic embedding model (hashed words) that records every text it embeds."""

    def __init__(self) -> None:
        self.embedded: list[str] = []

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        self.embedded += texts
        return [self.embed_query(text) for text in texts]

    def embed_query(self, text: str) -> list[float]:
        row = [0.0] * 64
        for word in text.lower().replace(":", " ").split():
            row[sum(map(ord, word)) % 64] += 1.0
        return row


def test_a_pass_embeds_only_memories_whose_vectors_are_not_kept(tmp_path: Path) -> None:
    """The pass keeps its vectors in the store's file: a memory embedded by an earlier pass (or
    by another process on the same file) is not embedded again; a new one is, alone."""
    model = CountingEmbeddings()
    manager = open_memory_manager(f"sqlite:{tmp_path / 'memory.db'}", "alice")
    manager.add("User likes jazz", "music")
    manager.add("User likes jazz music", "music")
    manager.add("User lives in Lisbon", "home")
    memory = LongTermMemory(manager, embeddings=model, data_dir=tmp_path)
    memory.get_related_memory_from("what music do I like", mode="mechanical")
    retrieval = len(model.embedded)  # retrieval's own vectors (theme and description)
    report = memory.consolidate()
    assert report.removed == 1  # the two jazz memories, found by their vectors
    assert sorted(model.embedded[retrieval:]) == sorted(
        ["User likes jazz", "User likes jazz music", "User lives in Lisbon"]
    )
    memory.consolidate()
    assert len(model.embedded) == retrieval + 3  # the second pass embedded nothing
    manager.add("User has a sister called Anna", "family")
    memory.consolidate()
    assert model.embedded[retrieval + 3 :] == ["User has a sister called Anna"]  # the new one only
    # Another process on the same file: the vectors are kept in it, nothing is embedded again.
    fresh = CountingEmbeddings()
    again = LongTermMemory(open_memory_manager(f"sqlite:{tmp_path / 'memory.db'}", "alice"),
                           embeddings=fresh, data_dir=tmp_path)  # fmt: skip
    again.consolidate()
    assert fresh.embedded == []
    # The merged memory's vector is dropped with it: the file keeps a row per live memory.
    rows = sqlite3.connect(tmp_path / "memory.db").execute(
        "SELECT COUNT(*) FROM memory_vectors WHERE user_id = 'alice#descriptions'"
    )
    assert rows.fetchone()[0] == len(manager.list_items()) == 3
