"""What "forget what I just said" and a thread turning private take back: the previous turn's
user message and replies, or the whole thread (by its id, whatever compaction left in the state);
and which sentences ask for either (en, zh)."""

from __future__ import annotations

import pytest
from langchain_core.messages import AIMessage, HumanMessage

from memory.integration.writing.take_back import THREAD, TURN, said_before
from memory.text.off_record import asks_off_the_record, asks_to_forget_last_turn

CONVERSATION = [
    HumanMessage("I live in Lyon.", id="h1"),
    AIMessage("Noted.", id="a1"),
    HumanMessage("My sister is Ana.", id="h2"),
    AIMessage("Nice.", id="a2"),
    HumanMessage("Forget what I just said.", id="h3"),
]


def test_forgetting_the_last_turn_names_the_previous_message_and_its_replies() -> None:
    assert said_before(CONVERSATION, TURN) == (["My sister is Ana."], ["h2", "a2"])
    assert said_before(CONVERSATION[-1:], TURN) == ([], [])  # nothing before it


def test_a_thread_turning_private_takes_back_all_of_it() -> None:
    assert said_before(CONVERSATION, THREAD) == (["I live in Lyon.", "My sister is Ana."], None)
    assert said_before(CONVERSATION[-1:], THREAD) == ([], None)  # compacted: found by its id


@pytest.mark.parametrize(
    ("text", "private", "last_turn"),
    [
        ("Please don't remember this conversation.", True, False),
        ("Let's keep this chat off the record.", True, False),
        ("这段对话别记下来。", True, False),
        ("不要记录这次对话", True, False),
        ("Forget what I just said.", False, True),
        ("忘掉我刚才说的。", False, True),
        ("当我没说", False, True),
        ("Please forget where I live.", False, False),  # a forget request: the writer's
        ("I can't remember this conversation we had last year.", False, False),
        ("Remember this conversation, it matters.", False, False),
    ],
)
def test_which_sentences_ask_for_privacy(text: str, private: bool, last_turn: bool) -> None:
    assert asks_off_the_record(text) is private
    assert asks_to_forget_last_turn(text) is last_turn
