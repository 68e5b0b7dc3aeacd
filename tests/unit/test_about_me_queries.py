"""Questions about the user as a whole retrieve memories in mechanical mode (BM25)."""

from __future__ import annotations

from pathlib import Path

import pytest

from memory.long_term import LongTermMemory
from memory.retrieval.query import read_query
from memory.store.backends.yaml_files import YamlMemoryManager

FACTS = [
    ("User's name is Ada", "identity"),
    ("User lives in Lisbon", "identity"),
    ("User likes green tea", "taste"),
    ("用户住在上海", "身份"),
]


@pytest.mark.parametrize(
    "query",
    ["Who am I?", "Tell me about myself", "我是谁？", "关于我你知道什么", "Know me?"],
)
def test_about_me_questions_get_the_broad_order(tmp_path: Path, query: str) -> None:
    manager = YamlMemoryManager(tmp_path, "u")
    for text, theme in FACTS:
        manager.add(text, theme)
    found = LongTermMemory(manager).get_related_memory_from(query, "mechanical", limit=10)
    assert sorted(m["description"] for m in found) == sorted(text for text, _ in FACTS)


def test_a_query_of_stop_words_only_falls_back_to_the_broad_order() -> None:
    assert read_query("how are you?").broad
    assert read_query("Who am I?").broad
    assert not read_query("Where do I work?").broad  # "work" is a content word
    assert not read_query("我叫什么名字？").broad
