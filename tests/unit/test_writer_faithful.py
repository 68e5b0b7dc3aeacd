"""A memory as the user said it: the writer's check after the model refuses a number or a date
nobody said and a fact in another language than the user's, in both protocols, and the json
protocol asks again for just those facts instead of dropping them."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import AIMessage

from memory.long_term import LongTermMemory
from memory.store.backends.yaml_files import YamlMemoryManager
from memory.writer.consumer import MemoryConsumer
from memory.writer.faithful import (
    expected_languages,
    invented_details,
    invented_names,
    main_language,
    unfaithful,
)
from memory.writer.turn import Turn
from tests.fakes import ScriptedModel

THIS_YEAR = 2026


@pytest.mark.parametrize(
    ("content", "said"),
    [
        # the case seen on the local model: "seven" and "next March" became a day
        ("用户的女儿生日是2027年3月7日。", "My daughter turns seven next March."),
        ("User's daughter was born on March 7, 2019.", "My daughter turns seven next March."),
        ("User is 35 years old.", "I'm thirty-four."),  # a number changed
        ("User has 3 cats.", "I have cats."),  # a number added
        ("User moved to Lisbon in 2015.", "I moved to Lisbon seven years ago."),  # arithmetic off
        ("User's flight is at 9:30.", "My flight is in the morning."),  # a time made up
        ("用户有三个孩子。", "我有孩子。"),  # a Chinese numeral added
    ],
)
def test_a_detail_nobody_said_is_found(content: str, said: str) -> None:
    assert invented_details(content, said, THIS_YEAR)


@pytest.mark.parametrize(
    ("content", "said"),
    [
        ("User's daughter turns 7 next March.", "My daughter turns seven next March."),
        ("User's daughter turns seven in March 2027.", "My daughter turns seven next March."),
        ("User has a dentist appointment on 2026-12-04.", "I have the dentist tomorrow."),
        ("User is 34 years old.", "I'm thirty-four."),
        ("User is thirty-four.", "I'm 34."),
        ("用户今年三十四岁。", "我今年34岁。"),
        ("User started the job in 2019.", "I started there seven years ago."),
        ("User's birthday is March 7.", "My birthday is on the 7th of March."),
        ("User lives at 221B Baker Street.", "I live at 221B Baker Street."),
    ],
)
def test_what_was_said_or_worked_out_from_now_passes(content: str, said: str) -> None:
    assert invented_details(content, said, THIS_YEAR) == []


@pytest.mark.parametrize(
    ("content", "said", "invented"),
    [
        # a daughter nobody named, in English and Chinese
        ("User's daughter is named Sofia.", "My daughter turns seven next March.", ["Sofia"]),
        ("用户的女儿叫小美。", "我女儿明年三月满七岁。", ["小美"]),
        # a surname added to the name the user gave
        ("User's name is Daniela Ortiz.", "Hi, I'm Daniela.", ["Ortiz"]),
        # an employer or a city the user did not name
        ("User works as a veterinarian at Petco.", "I work as a veterinarian.", ["Petco"]),
        ("User lives in Lisbon, Portugal.", "I live in Lisbon.", ["Portugal"]),
        # a name opening the sentence, owning something
        ("Sofia's school is near the user's home.", "My daughter's school is close by.", ["Sofia"]),
    ],
)
def test_a_name_nobody_said_is_found(content: str, said: str, invented: list[str]) -> None:
    assert invented_names(content, said) == invented


@pytest.mark.parametrize(
    ("content", "said"),
    [
        ("User's name is Daniela Ortiz.", "hi, i'm daniela ortiz"),  # case aside
        ("用户叫Daniela Ortiz。", "Hi, I'm Daniela Ortiz."),
        ("用户的女儿叫小美。", "我女儿叫小美，今年六岁。"),
        ("Loves mangoes more than any other fruit.", "I love mangoes."),  # a capitalised opening
        ("User has a dentist appointment on Monday.", "I have the dentist tomorrow."),
        ("User said in Chinese that mango is their favourite fruit.", "我最喜欢的水果是芒果。"),
    ],
)
def test_names_that_were_said_pass(content: str, said: str) -> None:
    assert invented_names(content, said) == []


def test_a_name_another_memory_holds_may_be_repeated() -> None:
    fact, said = "User's daughter Sofia loves mangoes.", "She loves mangoes."
    assert unfaithful(fact, said) is not None
    assert unfaithful(fact, said, remembered="User's daughter is named Sofia.") is None


def test_a_memory_takes_the_language_of_the_message_it_came_from() -> None:
    batch = ["Hi, I'm Daniela Ortiz.", "I work as a veterinarian.", "我最喜欢的水果是芒果。"]
    assert main_language("用户叫Daniela Ortiz。") == "zh"
    assert main_language("User's favourite fruit is 芒果 (mango).") == "en"
    assert expected_languages("用户叫Daniela Ortiz。", batch, "auto") == {"en"}
    assert expected_languages("用户最喜欢的水果是芒果。", batch, "auto") == {"zh"}
    assert expected_languages("User's favourite fruit is mango.", batch, "zh") == {"zh"}
    # Sharing no word with any message, an English fact in this batch can only be a translation
    # of the Chinese one (the 1.5B model's "The user's favorite fruit is mango."): Chinese.
    assert expected_languages("The user's favorite fruit is mango.", batch, "auto") == {"zh"}
    assert expected_languages("The user has a cat.", batch[:2], "auto") == {"en"}


def ops(*operations: dict[str, Any]) -> str:
    return json.dumps({"operations": list(operations)}, ensure_ascii=False)


def turn(user: str, *said: str) -> Turn:
    messages: list[dict[str, str]] = []
    for text in said:
        messages += [{"role": "user", "content": text}, {"role": "assistant", "content": "OK."}]
    return Turn(user, "t1", tuple(messages), thread_id="s1")


@pytest.fixture
def alice(tmp_path: Path) -> YamlMemoryManager:
    return YamlMemoryManager(tmp_path, "alice")


def stored(manager: YamlMemoryManager) -> list[str]:
    fresh = YamlMemoryManager(manager.directory, manager.user_id)
    return sorted(item.description for item in fresh.list_items().values())


async def test_json_asks_again_for_an_invented_date_and_keeps_the_rest(alice) -> None:
    first = ops(
        {"op": "create", "content": "User's name is Daniela Ortiz.", "section": "identity"},
        {"op": "create", "content": "用户的女儿生日是2027年3月7日。", "section": "family"},
    )
    again = ops({"op": "create", "content": "User's daughter turns seven next March.",
                 "section": "family"})  # fmt: skip
    model = ScriptedModel(messages=iter([AIMessage(first), AIMessage(again)]))
    said = turn("alice", "I'm Daniela Ortiz.", "My daughter turns seven next March.")
    result = await MemoryConsumer(model, protocol="json").consume(said, LongTermMemory(alice))
    assert result.applied
    assert stored(alice) == ["User's daughter turns seven next March.",
                             "User's name is Daniela Ortiz."]  # fmt: skip


async def test_json_keeps_the_first_answer_when_the_resent_fact_is_still_invented(alice) -> None:
    first = ops(
        {"op": "create", "content": "User's name is Daniela Ortiz.", "section": "identity"},
        {"op": "create", "content": "User's daughter was born on 2019-03-07.", "section": "family"},
    )
    model = ScriptedModel(messages=iter([AIMessage(first), AIMessage(first)]))
    said = turn("alice", "I'm Daniela Ortiz.", "My daughter turns seven next March.")
    await MemoryConsumer(model, protocol="json").consume(said, LongTermMemory(alice))
    assert stored(alice) == ["User's name is Daniela Ortiz."]


async def test_json_rewrites_a_fact_given_in_the_wrong_language(alice) -> None:
    first = ops({"op": "create", "content": "用户叫Daniela Ortiz。", "section": "identity"})
    again = ops({"op": "create", "content": "User's name is Daniela Ortiz.", "section": "identity"})
    model = ScriptedModel(messages=iter([AIMessage(first), AIMessage(again)]))
    said = turn("alice", "Hi, I'm Daniela Ortiz.", "我最喜欢的水果是芒果。")
    await MemoryConsumer(model, protocol="json").consume(said, LongTermMemory(alice))
    assert stored(alice) == ["User's name is Daniela Ortiz."]


async def test_tools_protocol_tells_the_agent_and_it_writes_what_was_said(alice) -> None:
    def call(content: str, call_id: str) -> AIMessage:
        arguments = {"content": content, "section": "family"}
        return AIMessage("", tool_calls=[{"name": "create_memory", "args": arguments,
                                          "id": call_id}])  # fmt: skip

    answers = [
        call("User's daughter's birthday is 2027-03-07.", "c1"),
        call("User's daughter turns seven next March.", "c2"),
        AIMessage("Done."),
    ]
    model = ScriptedModel(messages=iter(answers))
    said = turn("alice", "My daughter turns seven next March.")
    result = await MemoryConsumer(model, protocol="tools").consume(said, LongTermMemory(alice))
    refused = [e for e in result.events if not e.ok]
    assert refused and "does not say (7)" in refused[0].result
    assert stored(alice) == ["User's daughter turns seven next March."]


def test_a_batch_mostly_in_english_gets_the_english_instructions() -> None:
    consumer = MemoryConsumer(ScriptedModel(messages=iter([])))
    batch = turn("alice", "Hi, I'm Daniela Ortiz.", "I work as a veterinarian.",
                 "My daughter Sofia is six.", "我最喜欢的水果是芒果。")  # fmt: skip
    assert consumer.prompts_for(batch).language == "en"
    assert consumer.prompts_for(turn("alice", "我最喜欢的水果是芒果。")).language == "zh"


async def test_json_asks_again_for_an_invented_name(alice) -> None:
    first = ops({"op": "create", "content": "User's daughter Sofia turns seven next March.",
                 "section": "family"})  # fmt: skip
    again = ops({"op": "create", "content": "User's daughter turns seven next March.",
                 "section": "family"})  # fmt: skip
    model = ScriptedModel(messages=iter([AIMessage(first), AIMessage(again)]))
    said = turn("alice", "My daughter turns seven next March.")
    await MemoryConsumer(model, protocol="json").consume(said, LongTermMemory(alice))
    assert stored(alice) == ["User's daughter turns seven next March."]
