"""The fusion follows the embedding where BM25 has no evidence for a question (issue 46: the
fused ranking never below its own channels): a Chinese question whose BM25 best match shares
only single characters with it ("我多大了？" finds 多 in 很多), and a question about the user made
of stop words only ("Where am I from?"), which BM25 alone answers with the broad order."""

from __future__ import annotations

from pathlib import Path

import pytest

from memory import LongTermMemory
from memory.retrieval.bm25_index import Bm25Index
from memory.retrieval.embedder import OfflineEncoder
from memory.retrieval.evaluation import write_items
from memory.retrieval.fusion import FusionWeights, fuse_scores
from memory.retrieval.query import read_query
from memory.store.factory import open_memory_manager
from memory.store.item import MemoryItem

needs_model = pytest.mark.skipif(not OfflineEncoder.available(), reason="offline model missing")


def _index(texts: dict[str, str]) -> Bm25Index:
    return Bm25Index.build("r1", {key: MemoryItem.create(text, "note", "test")
                                  for key, text in texts.items()})  # fmt: skip


def test_a_single_chinese_character_is_no_word_an_english_term_is() -> None:
    index = _index({"many": "我会有很多孩子，要买更大的房子。", "age": "我今年40岁。",
                    "work": "我讨厌我的工作。", "en": "I like to go to concerts."})  # fmt: skip
    at = index.positions
    question = read_query("我多大了？").tokens
    assert not index.shares_word(question, at["many"])  # 多 and 大 alone
    assert not index.shares_word(question, at["age"])
    assert index.shares_word(read_query("我是做什么工作的？").tokens, at["work"])  # 工作
    assert index.shares_word(read_query("Where do I go to school?").tokens, at["en"])  # go


def test_without_a_word_in_common_the_embedding_leads() -> None:
    lexical = [(0, 4.0), (1, 3.0)]  # single characters in common
    semantic = [(2, 0.45), (1, 0.30), (0, 0.20)]
    assert fuse_scores(lexical, semantic, 3, lexical_word=False) == [2, 1, 0]
    # Off (BM25 weighed as before), its best stays first.
    off = FusionWeights(wordless_lexical=1.0)
    assert fuse_scores(lexical, semantic, 3, lexical_word=False, weights=off)[0] == 0
    # A word in common: BM25 counts.
    assert fuse_scores(lexical, semantic, 3, lexical_word=True)[0] == 0
    # No embedding (the channel down): BM25's order, never nothing.
    assert fuse_scores(lexical, [], 3, lexical_word=False) == [0, 1]


def _store(tmp_path: Path, texts: list[str], **kwargs: str) -> LongTermMemory:
    manager = open_memory_manager(f"sqlite:{tmp_path / 'memory.db'}", "alice")
    write_items(manager, {f"m{n}": MemoryItem.create(text, "note", "test")
                          for n, text in enumerate(texts)})  # fmt: skip
    memory = LongTermMemory(manager, data_dir=tmp_path, **kwargs)
    if not kwargs:
        assert memory.retrievers.catch_up(max_missing=len(texts), timeout=300)
    return memory


# XPersona lines (MIT) around a user's age: BM25 finds 多 and 大 in every one but the answer.
AGES = ["我今年40岁。", "我现在要买更大的房子，考虑到我会有很多孩子。", "我在曼哈顿长大。",
        "我尝试了很多种。你喜欢星球大战吗？", "我讨厌运动。我大多数日子都在用机器人工作。",
        "我的兄弟姐妹都很好。我们的家庭在不断发展壮大。"]  # fmt: skip


@needs_model
def test_how_old_am_i_finds_the_age_not_the_characters(tmp_path: Path) -> None:
    found = _store(tmp_path, AGES).get_related_memory_from("我多大了？", "mechanical", 3)
    assert "m0" in [m["id"] for m in found]


@pytest.mark.parametrize(
    ("query", "meaning_only"),
    [
        ("Where am I from?", True),  # all stop words, one fact asked
        ("What do I do?", True),
        ("Who am I?", False),  # about the user as a whole: the broad order
        ("how are you?", False),  # chit-chat, not about the user
        ("What's new?", False),
        ("Where do I live?", False),  # "live" is searched
        ("我来自哪里？", False),
    ],
)
def test_a_question_only_meaning_can_answer(query: str, meaning_only: bool) -> None:
    assert read_query(query).meaning_only is meaning_only


# Persona-Chat-like lines (CC BY 4.0): nothing shares a search word with "Where am I from?".
ORIGINS = ["I was born in Puerto Rico and grew up there.", "I love to dance on weekends.",
           "My favourite book is Dune.", "I have two cats named Salt and Pepper.",
           "Hello.", "That sounds like a lot of fun!"]  # fmt: skip


@needs_model
def test_where_am_i_from_is_answered_by_meaning(tmp_path: Path) -> None:
    found = _store(tmp_path, ORIGINS).get_related_memory_from("Where am I from?", "mechanical", 2)
    assert found[0]["id"] == "m0"


def test_without_the_embedding_it_keeps_the_broad_order(tmp_path: Path) -> None:
    memory = _store(tmp_path, ORIGINS, embeddings="off")
    assert len(memory.get_related_memory_from("Where am I from?", "mechanical", 3)) == 3


@needs_model
def test_with_the_embedding_down_it_falls_back_to_the_broad_order(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    memory = _store(tmp_path, ORIGINS)
    fused = memory.retrievers.mechanical.fused
    assert fused is not None

    def down(*args: object, **kwargs: object) -> list[tuple[int, float]]:
        raise ConnectionError("provider down")

    monkeypatch.setattr(fused.channel, "similar_scores", down)
    assert len(memory.get_related_memory_from("Where am I from?", "mechanical", 3)) == 3
