"""A question about now finds the newest answer, and a memory that only asks a question does not
answer one: in an imported history (every memory months old) "where do I live now?" puts the
later home first, and "what's your favourite sport?" kept as a memory yields to the statement."""

from __future__ import annotations

from pathlib import Path

import pytest

from memory import LongTermMemory
from memory.retrieval.embedder import OfflineEncoder
from memory.retrieval.evaluation import write_items
from memory.retrieval.query import is_bare_question, read_query
from memory.store.factory import open_memory_manager
from tests.dated_memories import found, said

needs_model = pytest.mark.skipif(not OfflineEncoder.available(), reason="offline model missing")


OTHERS = {
    "dog": said("My dog loves long walks on the beach.", "01-25"),
    "job": said("I work as a nurse at the city hospital.", "01-15"),
    "film": said("I watched a movie about a famous boxer.", "02-03"),
}


@needs_model
def test_where_do_i_live_now_puts_the_later_home_first(tmp_path: Path) -> None:
    # The older statement matches the words better (shorter): without "now" it stays first.
    items = {
        "lisbon": said("I live in Lisbon.", "01-10"),
        "porto": said("Since the move in February I live in Porto with my sister.", "02-20"),
        **OTHERS,
    }
    assert found(tmp_path / "now", items, "Where do I live now?")[:2] == ["porto", "lisbon"]
    assert found(tmp_path / "plain", items, "Where do I live?")[:2] == ["lisbon", "porto"]


@needs_model
def test_a_question_about_now_in_chinese_puts_the_later_home_first(tmp_path: Path) -> None:
    items = {
        "hangzhou": said("我住在杭州。", "01-10"),
        "shanghai": said("搬家以后我和妹妹一起住在上海浦东。", "02-20"),
        "dog": said("我的狗喜欢在海边散步。", "01-25"),
        "job": said("我在医院当护士。", "01-15"),
    }
    assert found(tmp_path / "now", items, "我现在住在哪里？")[:2] == ["shanghai", "hangzhou"]
    assert found(tmp_path / "plain", items, "我住在哪里？")[:2] == ["hangzhou", "shanghai"]


@needs_model
def test_a_memory_that_only_asks_yields_to_the_one_that_answers(tmp_path: Path) -> None:
    items = {
        "asked": said("What's your favorite sport?", "03-01"),
        "answer": said("My favorite sport is soccer, I play every Sunday.", "02-01"),
        **OTHERS,
    }
    assert found(tmp_path, items, "What is my favorite sport?")[:2] == ["answer", "asked"]


@pytest.mark.parametrize(
    ("text", "bare"),
    [
        ("What's your favorite sport?", True),
        ("Kate: how was the trip to Rome?", True),
        ("你住在哪里？", True),
        ("My favorite sport is soccer.", False),
        ("I moved last week. Where do you live?", False),  # a statement, then a question back
        ("2024-05-01 User: any ideas? AI: Try the museum.", False),
        # after a reaction that says nothing about anyone, a question is still only a question
        ("So, what do you do for work?", True),
        ("That's interesting! What's your favorite type of music?", True),
        ("哈哈，你呢？", True),
        ("Just got back from the gym. What about you?", False),
        ("我住在杭州，你呢？", False),
    ],
)
def test_a_bare_question_is_one_sentence_ending_in_a_question_mark(text: str, bare: bool) -> None:
    assert is_bare_question(text) is bare


def test_now_and_currently_ask_for_the_current_value() -> None:
    for question in ("Where do I live now?", "What do I currently do for work?", "我现在住在哪里？",
                     "你目前在做什么工作？"):  # fmt: skip
        assert read_query(question).current
    assert not read_query("Where did I live in 2019?").current
    assert not read_query("Do you know my dog's name?").current
    # asking about the telling: "now" is part of what was said, not a question about today
    assert not read_query("When did I tell you that I live in Florida now?").current
    assert not read_query("我什么时候跟你说我现在住在上海？").current


def test_now_is_when_not_what_so_it_is_no_search_word() -> None:
    assert "now" not in read_query("What is my favorite book now?").tokens
    assert "现在" not in read_query("我现在住在哪里？").tokens
    assert "now" in read_query("When did I tell you that I live in Florida now?").tokens


def test_what_do_we_do_now_is_no_answer_to_my_favourite_book_now(tmp_path: Path) -> None:
    # BM25 alone (no model): "now" matched the chatter and put it above the answer
    items = {
        "chatter": said("So, what do we do now?", "03-10"),
        "book": said("My favorite book is Washington's Crossing by David McCullough.", "02-10"),
        "film": said("I watched a movie about a famous boxer.", "02-03"),
        "dog": said("My dog loves long walks on the beach.", "01-25"),
    }
    manager = open_memory_manager(f"sqlite:{tmp_path / 'memory.db'}", "alice")
    write_items(manager, items)
    memory = LongTermMemory(manager, embeddings="off")
    found = memory.get_related_memory_from("What is my favorite book now?", "mechanical", 5)
    assert found[0]["id"] == "book"
