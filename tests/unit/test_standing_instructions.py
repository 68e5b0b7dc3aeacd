"""Standing instructions: which sentences are instructions for replies (en, zh), and which of
the filed ones a prompt carries (newest first, one per one-valued topic, bounded)."""

from __future__ import annotations

import pytest

from memory.retrieval.standing import MAX_INSTRUCTION_CHARS, select_instructions
from memory.store.item import MemoryItem
from memory.text.instructions import is_standing_instruction

THEME = "standing instructions"


@pytest.mark.parametrize(
    "text",
    [
        "From now on, please always answer me in short bullet points and never use emoji.",
        "以后请叫我小梅。",
        "Call me Bob.",
        "Please reply in Spanish from now on.",
        "I want you to always answer in English.",
        "以后回答都用中文。",
        "每次回答都不要超过100字。",
        "别再用表情了。",
    ],
)
def test_instructions_for_replies_are_recognised(text: str) -> None:
    assert is_standing_instruction(text)


@pytest.mark.parametrize(
    "text",
    [
        "I prefer tea.",
        "I always use emoji when I text my sister.",
        "我喜欢喝茶。",
        "我总是用中文写日记。",
        "Answer in under 100 words: what is a black hole?",
        "Can you always answer in English?",
        "My friends call me Bobby.",
        "大家都叫我小梅。",
        "你能用中文回答吗？",
    ],
)
def test_tastes_habits_and_one_off_requests_are_not(text: str) -> None:
    assert not is_standing_instruction(text)


def _item(description: str, when: str, theme: str = THEME) -> MemoryItem:
    item = MemoryItem.create(description, theme)
    item.latest_update_time = when
    return item


def test_the_newest_instruction_on_a_one_valued_topic_wins_and_others_stay() -> None:
    items = {
        "a": _item("User's instruction: call me Mei", "2026-01-01T00:00:00+00:00"),
        "b": _item(
            "User's instruction: always answer in bullet points", "2026-01-02T00:00:00+00:00"
        ),
        "c": _item("User's instruction: call me Meimei", "2026-01-03T00:00:00+00:00"),
        "d": _item("User likes tea", "2026-01-04T00:00:00+00:00", theme="taste"),
    }
    chosen = select_instructions(items, {THEME})
    assert [i["id"] for i in chosen] == ["c", "b"]


def test_a_prompt_carries_a_bounded_number_and_length_of_instructions() -> None:
    items = {
        str(n): _item(f"User's instruction: always end with the word number{n} " + "x" * 150,
                      f"2026-01-01T00:00:{n:02d}+00:00")
        for n in range(30)
    }  # fmt: skip
    chosen = select_instructions(items, {THEME})
    assert 0 < len(chosen) <= 8
    assert sum(len(i["description"]) for i in chosen) <= MAX_INSTRUCTION_CHARS
    assert chosen[0]["id"] == "29"  # the newest first
