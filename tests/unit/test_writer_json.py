"""The writer's json protocol and the reading of tool calls written as text, on scripted models
that misbehave the way small local models do, over a real YAML store."""

from __future__ import annotations

import asyncio
import dataclasses
import json
import logging
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import AIMessage, BaseMessage, SystemMessage
from langchain_core.outputs import ChatResult
from pydantic import Field

from memory.long_term import LongTermMemory
from memory.store.backends.yaml_files import YamlMemoryManager
from memory.text.days import anchor_days
from memory.writer import protocols
from memory.writer.consumer import MemoryConsumer, MemoryWriteFailed
from memory.writer.json_protocol import operations_schema
from memory.writer.protocols import protocol_for
from memory.writer.text_calls import parse_text_tool_calls
from memory.writer.timeouts import Pace, pace, scaled_timeout
from memory.writer.turn import Turn
from tests.fakes import ScriptedModel


class RecordingModel(ScriptedModel):
    """A ScriptedModel that also keeps the options of each call (response_format, ...)."""

    options: list[dict[str, Any]] = Field(default_factory=list)

    def _generate(self, messages: list[BaseMessage], *args: Any, **kwargs: Any) -> ChatResult:
        self.options.append(dict(kwargs))
        return super()._generate(messages, *args, **kwargs)


class HungModel(ScriptedModel):
    """Accepts the request and never answers."""

    async def _agenerate(self, messages: list[BaseMessage], *args: Any, **kwargs: Any) -> Any:
        await asyncio.sleep(3600)


def ops(*operations: dict[str, Any]) -> str:
    return json.dumps({"operations": list(operations)}, ensure_ascii=False)


def said(user: str, text: str, turn_id: str = "t1") -> Turn:
    messages = [{"role": "user", "content": text}, {"role": "assistant", "content": "OK."}]
    return Turn(user, turn_id, tuple(messages), thread_id="s1")


@pytest.fixture
def alice(tmp_path: Path) -> YamlMemoryManager:
    return YamlMemoryManager(tmp_path / "memory", "alice")


async def write(
    manager: YamlMemoryManager, answers: list[Any], text: str, turn_id: str = "t1", **options: Any
) -> tuple[Any, RecordingModel]:
    model = RecordingModel(messages=iter(answers))
    options.setdefault("protocol", "json")
    consumer = MemoryConsumer(model, **options)
    turn = said(manager.user_id, text, turn_id)
    result = await consumer.consume(turn, LongTermMemory(manager))
    return result, model


def texts(manager: YamlMemoryManager) -> list[str]:
    fresh = YamlMemoryManager(manager.directory, manager.user_id)
    return sorted(item.description for item in fresh.list_items().values())


async def test_facts_are_stored_from_one_constrained_request(alice):
    answer = ops(
        {"op": "create", "content": "The user is called Li Wei.", "section": "identity"},
        {"op": "create", "content": "The user lives in Hangzhou.", "section": "places & paths"},
    )
    result, model = await write(alice, [answer], "My name is Li Wei and I live in Hangzhou.")
    assert result.applied
    assert texts(alice) == ["The user is called Li Wei.", "The user lives in Hangzhou."]
    assert len(model.seen) == 1  # one request, no agent loop
    sent = model.options[0]
    assert sent["temperature"] == 0
    schema = sent["response_format"]["json_schema"]["schema"]
    assert schema["properties"]["operations"]["maxItems"] >= 2
    assert isinstance(model.seen[0][0], SystemMessage) and "JSON" in model.seen[0][0].text


async def test_the_schema_allows_only_the_ids_shown(alice):
    alice.add("The user likes oolong tea.", "taste")
    alice.add("The user lives in Hangzhou.", "places & paths")
    _, model = await write(alice, [ops()], "Hello!")
    schema = model.options[0]["response_format"]["json_schema"]["schema"]
    variants = schema["properties"]["operations"]["items"]["anyOf"]
    ids = {tuple(v["properties"]["id"]["enum"]) for v in variants if "id" in v["properties"]}
    assert ids == {(1, 2)}
    assert "[1]" in model.seen[0][1].text and "oolong" in model.seen[0][1].text
    assert operations_schema([], ["identity"])["properties"]["operations"]["items"]["anyOf"][0][
        "properties"
    ]["op"]["enum"] == ["create"]  # an empty store: nothing to update or delete


async def test_a_changed_fact_is_updated_not_duplicated(alice):
    alice.add("The user lives in Hangzhou.", "places & paths")
    answer = ops({"op": "update", "id": 1, "content": "The user lives in Shanghai."})
    result, _ = await write(alice, [answer], "I moved to Shanghai last month.")
    assert result.applied and texts(alice) == ["The user lives in Shanghai."]


async def test_a_move_folded_into_the_name_memory_updates_the_home_memory(alice):
    # What the 1.5B model answered: the new home put on the name's id, the old home left.
    alice.add("The user's name is Li Wei.", "identity")
    alice.add("The user lives in Hangzhou.", "places & paths")
    moved = "The user's name is Li Wei and he moved to Shanghai last month."
    result, _ = await write(alice, [ops({"op": "update", "id": 1, "content": moved})],
                            "I moved to Shanghai last month.")  # fmt: skip
    # "last month" is kept as the month it meant when it was said (memory.writer.dating).
    kept = anchor_days(moved, datetime.now().astimezone())
    assert "last month" not in kept
    assert result.applied and texts(alice) == [kept, "The user's name is Li Wei."]


async def test_malformed_json_gets_one_repair_round(alice):
    good = ops({"op": "create", "content": "The user likes oolong tea.", "section": "taste"})
    broken = '{"operations": [{"op": "create", "content": '
    result, model = await write(alice, [broken, good], "I like oolong tea.")
    assert texts(alice) == ["The user likes oolong tea."]
    repair = model.seen[1][-1].text
    assert "not valid JSON" in repair and "operations" in repair
    assert any(not e.ok and "not valid JSON" in e.result for e in result.events)


async def test_json_in_a_code_fence_after_words_is_read(alice):
    answer = "Sure! Here it is:\n```json\n" + ops(
        {"op": "create", "content": "The user has a cat.", "section": "identity"}
    ) + "\n```"  # fmt: skip
    await write(alice, [answer], "I have a cat.")
    assert texts(alice) == ["The user has a cat."]


async def test_malformed_twice_fails_the_turn_and_stores_nothing(alice):
    with pytest.raises(MemoryWriteFailed, match="unusable answer in each"):
        await write(alice, ["I will remember that!", "<tool_call>oops"], "I like oolong tea.")
    assert texts(alice) == []
    assert not alice.has_applied("t1")  # the queue retries it: never "done"


async def test_unknown_ids_are_sent_back_and_an_id_from_another_user_changes_nothing(tmp_path):
    bob = YamlMemoryManager(tmp_path / "memory", "bob")
    bob.add("Bob likes coffee.", "taste")
    bob.add("Bob lives in Oslo.", "places & paths")
    alice = YamlMemoryManager(tmp_path / "memory", "alice")
    alice.add("The user likes oolong tea.", "taste")
    # Memory 2 exists only in Bob's store: for Alice's turn it is unknown, twice.
    wrong = ops({"op": "update", "id": 2, "content": "The user lives in Paris."})
    with pytest.raises(MemoryWriteFailed, match="no memory with id 2"):
        await write(alice, [wrong, wrong], "I live in Paris now.")
    assert texts(alice) == ["The user likes oolong tea."]
    assert texts(bob) == ["Bob likes coffee.", "Bob lives in Oslo."]
    # The repair round fixes it: the create lands, the mistake stays on record.
    fixed = ops({"op": "create", "content": "The user lives in Paris.", "section": "places"})
    result, model = await write(alice, [wrong, fixed], "I live in Paris now.", turn_id="t2")
    assert "Valid ids: 1" in model.seen[1][-1].text
    assert texts(alice) == ["The user likes oolong tea.", "The user lives in Paris."]
    assert any(not e.ok and "no memory with id 2" in e.result for e in result.events)


async def test_a_delete_without_a_forget_request_is_refused(alice):
    alice.add("The user likes oolong tea.", "taste")
    result, _ = await write(alice, [ops({"op": "delete", "id": 1})], "It is sunny today.")
    assert result.applied and texts(alice) == ["The user likes oolong tea."]
    assert any(not e.ok and "asked to forget nothing" in e.result for e in result.events)
    forget = "Please forget that I like oolong tea."
    await write(alice, [ops({"op": "delete", "id": 1})], forget, turn_id="t2")
    assert texts(alice) == []


async def test_a_turn_in_mixed_languages_is_asked_and_stored_in_the_users_language(alice):
    answer = ops({"op": "create", "content": "用户在 Google 工作。", "section": "身份"})
    _, model = await write(alice, [answer], "我在 Google 工作，做 machine learning。")
    assert "你负责维护" in model.seen[0][0].text and "身份" in model.seen[0][0].text
    assert texts(alice) == ["用户在 Google 工作。"]


async def test_small_talk_stores_nothing_and_is_a_written_turn(alice):
    result, _ = await write(alice, [ops()], "Hi! How are you?")
    assert result.applied and result.summary == "no changes" and texts(alice) == []
    assert alice.has_applied("t1")


async def test_a_secret_is_refused_by_the_same_guards(alice):
    answer = ops({"op": "create", "content": "The user's password is hunter22.", "section": "x"})
    result, _ = await write(alice, [answer], "My password is hunter22.")
    assert texts(alice) == [] and any("secret" in e.result for e in result.events)


async def test_a_hung_model_is_cut_off_and_the_turn_fails(alice):
    consumer = MemoryConsumer(HungModel(messages=iter([])), protocol="json",
                              timeout_seconds=0.4, prefill_tokens_per_second=1e9)  # fmt: skip
    with pytest.raises(MemoryWriteFailed, match="timed out"):
        await consumer.consume(said("alice", "I like tea."), LongTermMemory(alice))
    assert texts(alice) == []


async def test_a_provider_error_fails_the_turn(alice):
    with pytest.raises(MemoryWriteFailed, match="HTTP 500"):
        await write(alice, [RuntimeError("HTTP 500: peg-native format")], "I like tea.")


def test_the_timeout_leaves_a_slow_healthy_model_time_to_read_a_long_prompt():
    # 3,000 prompt tokens at 120 tokens/s (the slowest reading measured on 2 cores): 25 s.
    assert scaled_timeout(30.0, 3_000) > 30.0 + 3_000 / 120
    assert scaled_timeout(30.0, 0) == 30.0  # a tiny prompt: the base limit


# ── auto: tools first, json once the model writes calls as text ──────────────────────────


async def test_auto_moves_a_model_that_writes_calls_as_text_to_json_once(alice, caplog):
    model = RecordingModel(
        messages=iter([
            AIMessage("<tool_response>hit_memory(4)</tool_response>"),
            ops({"op": "create", "content": "The user likes oolong tea.", "section": "taste"}),
            ops({"op": "create", "content": "The user lives in Shanghai.", "section": "places"}),
        ])
    )  # fmt: skip
    consumer = MemoryConsumer(model)  # protocol auto
    memory = LongTermMemory(alice)
    with caplog.at_level(logging.WARNING):
        await consumer.consume(said("alice", "I like oolong tea.", "t1"), memory)
        await consumer.consume(said("alice", "I moved to Shanghai.", "t2"), memory)
    assert texts(alice) == ["The user likes oolong tea.", "The user lives in Shanghai."]
    assert "response_format" not in model.options[0]  # the first request had the tools
    assert all("response_format" in o for o in model.options[1:]) and len(model.seen) == 3
    moved = [r for r in caplog.records if "json protocol from now on" in r.getMessage()]
    assert len(moved) == 1 and protocol_for("auto", consumer.model_key(said("a", "x"))) == "json"


async def test_tools_protocol_runs_an_unambiguous_call_written_as_text(alice):
    written = '<tool_call>\n{"name": "create_memory", "arguments": {"content": "The user ' \
        'likes oolong tea.", "section": "taste"}}\n</tool_call>'  # fmt: skip
    result, _ = await write(alice, [AIMessage(written)], "I like oolong tea.", protocol="tools")
    assert result.applied and texts(alice) == ["The user likes oolong tea."]


async def test_tools_protocol_a_failed_call_then_no_changes_is_not_a_written_turn(alice):
    answers = [AIMessage('create_memory(content="tea")'), AIMessage("no changes")]
    with pytest.raises(MemoryWriteFailed, match="stored nothing"):
        await write(alice, answers, "I like oolong tea.", protocol="tools")
    assert not alice.has_applied("t1")


@pytest.mark.parametrize(
    ("written", "expected"),
    [
        ('{"name": "hit_memory", "arguments": {"id": "4"}}', [("hit_memory", {"id": 4})]),
        ('[{"name": "delete_memory", "arguments": {"id": 2, "reason": "asked"}}]',
         [("delete_memory", {"id": 2, "reason": "asked"})]),
        ('```json\n{"type": "function", "function": {"name": "read_memories", "arguments": '
         '"{}"}}\n```', [("read_memories", {})]),
        ('I will save it. {"name": "create_memory", "parameters": {"content": "用户喜欢乌龙茶",'
         ' "section": "品味"}}',
         [("create_memory", {"content": "用户喜欢乌龙茶", "section": "品味"})]),
    ],
)  # fmt: skip
def test_unambiguous_calls_written_as_text_are_read(written, expected):
    calls = parse_text_tool_calls(written)
    assert calls is not None and [(c.name, c.arguments) for c in calls] == expected


@pytest.mark.parametrize(
    "written",
    [
        "<tool_response>hit_memory(4)</tool_response>",  # not JSON: which argument is 4?
        '{"name": "remember_everything", "arguments": {}}',  # not a known tool
        '{"name": "hit_memory", "arguments": {"id": 1}} and also hit_memory(2)',
        '{"name": "hit_memory", "arguments": {"id": 1}} {"result": "ok"}',
        '{"name": "create_memory", "arguments": "{not json"}',
        "No changes.",
    ],
)
def test_ambiguous_text_is_not_taken_for_a_call(written):
    assert parse_text_tool_calls(written) is None


async def test_a_fact_holding_nothing_the_user_said_is_refused(alice):
    # What the 1.5B model did on "Hi there!": it stored the prompt's example.
    copied = ops({"op": "create", "content": "The user's name is Tom.", "section": "identity"})
    result, _ = await write(alice, [copied], "Hi there! How are you today?")
    assert result.applied and texts(alice) == []
    assert any(not e.ok and "nothing the user said" in e.result for e in result.events)


async def test_a_chinese_fact_is_grounded_whatever_the_pairing_of_its_characters(alice):
    # "用户叫王芳" read in pairs from its first character never pairs "王芳" as "我叫王芳" does:
    # the 1.5B model's name memory was refused as holding nothing the user said.
    named = ops({"op": "create", "content": "用户叫王芳。", "section": "身份"},
                {"op": "create", "content": "用户叫小明。", "section": "身份"})  # fmt: skip
    result, _ = await write(alice, [named], "我叫王芳，在北京做老师。")
    assert texts(alice) == ["用户叫王芳。"]  # the prompt's example name is still refused
    assert any(not e.ok and "小明" in e.result for e in result.events)


async def test_facts_from_the_assistants_reply_are_refused_and_an_answered_question_counts(alice):
    # The 1.5B chat model answered "Hi there!" with a family of its own; its writer filed it.
    invented = ops({"op": "create", "content": "The user has two sisters.", "section": "family"})
    messages = ({"role": "user", "content": "Hi there! How are you today?"},
                {"role": "assistant", "content": "Great! My two sisters visited me."})  # fmt: skip
    model = RecordingModel(messages=iter([invented]))
    turn = Turn("alice", "t1", messages, thread_id="s1")
    await MemoryConsumer(model, protocol="json").consume(turn, LongTermMemory(alice))
    assert texts(alice) == []
    # "Yes." says what the assistant's question asked: that question is the user's evidence.
    liked = ops({"op": "create", "content": "The user likes jazz.", "section": "taste"})
    context = ({"role": "assistant", "content": "Nice. Do you like jazz?"},)
    turn = Turn("alice", "t2", ({"role": "user", "content": "Yes."},), thread_id="s1",
                context=context)  # fmt: skip
    await MemoryConsumer(RecordingModel(messages=iter([liked])), protocol="json").consume(
        turn, LongTermMemory(alice)
    )
    assert texts(alice) == ["The user likes jazz."]


async def test_the_json_writer_is_shown_the_users_side_of_the_turn(alice):
    # Shown the 1.5B chat model's "I don't have any information about Li Wei", the 1.5B writer
    # answered {"operations": []} to "My name is Li Wei and I live in Hangzhou."
    messages = ({"role": "user", "content": "My name is Li Wei and I live in Hangzhou."},
                {"role": "assistant", "content": "I don't have any information about Li Wei. "
                 "Where is that?"})  # fmt: skip
    model = RecordingModel(messages=iter([ops(), ops()]))  # a fact left out is asked again
    turn = Turn("alice", "t1", messages, thread_id="s1")
    await MemoryConsumer(model, protocol="json").consume(turn, LongTermMemory(alice))
    shown = model.seen[0][1].text
    assert "My name is Li Wei" in shown and "any information" not in shown


async def test_a_new_value_of_a_one_valued_fact_replaces_the_old_one(alice):
    # The 1.5B model created the new city beside the old one instead of updating it.
    alice.add("The user lives in Hangzhou.", "places & paths")
    alice.add("The user likes oolong tea.", "taste")
    created = ops(
        {"op": "create", "content": "The user moved to Shanghai.", "section": "places"},
        {"op": "create", "content": "The user likes green tea.", "section": "taste"},
    )
    await write(alice, [created], "I moved to Shanghai, and I like green tea too.")
    assert texts(alice) == ["The user likes green tea.", "The user likes oolong tea.",
                            "The user moved to Shanghai."]  # fmt: skip


# ── auto: json up front for a model named small, or one seen writing calls as text ───────


async def test_auto_starts_a_model_named_small_on_json_without_a_failed_call(alice):
    answer = ops({"op": "create", "content": "The user likes oolong tea.", "section": "taste"})
    model = RecordingModel(messages=iter([answer]))
    turn = dataclasses.replace(said("alice", "I like oolong tea."), writer_model="openai/local")
    consumer = MemoryConsumer(model_factory=lambda name: model)  # protocol auto
    await consumer.consume(turn, LongTermMemory(alice))
    assert texts(alice) == ["The user likes oolong tea."]
    assert len(model.options) == 1 and "response_format" in model.options[0]


@pytest.mark.parametrize(
    ("name", "small"),
    [("openai/local", True), ("ollama/qwen2.5:1.5b", True), ("ollama/llama3.2:3b", True),
     ("openai/smollm2-360m-instruct", True), ("openai/gpt-4o-mini", False), ("openai/o1", False),
     ("ollama/qwen2.5:7b", False), ("anthropic/claude-3-5-sonnet-latest", False)],
)  # fmt: skip
def test_a_model_name_tells_its_size(name: str, small: bool):
    assert protocols.is_small_model(name) is small
    assert protocol_for("auto", name) == ("json" if small else "tools")
    assert protocol_for("tools", name) == "tools"  # the setting always wins


def test_a_model_moved_to_json_starts_the_next_process_on_json(tmp_path: Path):
    choices = tmp_path / "writer_protocols.json"
    protocols.remember_in(choices)
    protocols.move_to_json("openai/big-model", "wrote a tool call as text")
    assert json.loads(choices.read_text())["openai/big-model"] == "wrote a tool call as text"
    protocols.forget_protocol_choices()  # a new process: nothing in memory, the file remains
    assert protocol_for("auto", "openai/big-model") == "tools"
    protocols.remember_in(choices)
    assert protocol_for("auto", "openai/big-model") == "json"


def test_an_unreadable_choices_file_is_ignored(tmp_path: Path):
    choices = tmp_path / "writer_protocols.json"
    choices.write_text("{not json")
    protocols.remember_in(choices)
    assert protocol_for("auto", "openai/big-model") == "tools"


def test_the_limit_follows_the_measured_speed_of_a_slow_healthy_model():
    pace = Pace()
    assert pace.slowdown("openai/local") == 1.0  # nothing measured: the configured rates
    # 2,000 tokens read and 100 written take 31.7 s at the configured rates; it took 60 s.
    for _ in range(3):
        pace.record("openai/local", 60.0, 2_000, 100)
    slowdown = pace.slowdown("openai/local")
    assert slowdown > 1.5
    assert scaled_timeout(10.0, 2_000, 100, slowdown=slowdown) > 60.0 + 10.0
    pace.record("openai/fast", 0.3, 200, 20)  # too short a call to tell anything
    assert pace.slowdown("openai/fast") == 1.0
    pace.record("openai/quick", 2.0, 2_000, 100)  # faster than configured: never below them
    assert pace.slowdown("openai/quick") == 1.0


def test_a_timed_out_model_gets_twice_the_time_on_its_next_call_up_to_a_bound():
    pace = Pace()
    pace.record_timeout("openai/local")  # nothing measured before: twice the configured time
    assert pace.slowdown("openai/local") == 2.0
    pace.record_timeout("openai/local")
    assert pace.slowdown("openai/local") == 4.0
    for _ in range(10):  # a hung model: the limit stops growing, the turn is still given up on
        pace.record_timeout("openai/local")
    assert pace.slowdown("openai/local") == 1.5 * 16.0


async def test_a_writer_call_that_timed_out_lengthens_the_models_next_limit(alice):
    # Under load the first call (no speed measured yet) timed out, and every retry of the turn
    # timed out again under the same limit until it was dead-lettered: 0 of 3 facts kept.
    consumer = MemoryConsumer(HungModel(messages=iter([])), protocol="json",
                              timeout_seconds=0.4, prefill_tokens_per_second=1e9)  # fmt: skip
    key = consumer.model_key(said("alice", "x"))
    pace.clear()
    with pytest.raises(MemoryWriteFailed, match="timed out"):
        await consumer.consume(said("alice", "I like tea."), LongTermMemory(alice))
    assert pace.slowdown(key) == 2.0
    pace.clear()


def batch(user: str, *texts: str) -> Turn:
    """One writer turn holding several of the user's messages (a batch of a thread)."""
    pairs = [
        ({"role": "user", "content": t}, {"role": "assistant", "content": "OK."}) for t in texts
    ]
    messages = tuple(message for pair in pairs for message in pair)
    return Turn(user, "b1", messages, thread_id="s1")


async def test_a_fact_left_out_of_a_batch_is_asked_for_again_and_stored(alice):
    # The 1.5B model filed the English facts of issue 32's conversation and left out the one
    # Chinese message, "我最喜欢的水果是芒果。"
    first = ops({"op": "create", "content": "The user's daughter Sofia turns seven next March.",
                 "section": "people"})  # fmt: skip
    second = ops({"op": "create", "content": "用户最喜欢的水果是芒果。", "section": "taste"})
    model = RecordingModel(messages=iter([first, second]))
    turn = batch("alice", "My daughter Sofia turns seven next March.", "我最喜欢的水果是芒果。",
                 "haha ok, thanks")  # fmt: skip
    result = await MemoryConsumer(model, protocol="json").consume(turn, LongTermMemory(alice))
    assert result.applied and len(model.seen) == 2
    asked_again = model.seen[1][-1].text
    assert "我最喜欢的水果是芒果" in asked_again and "haha" not in asked_again
    assert "Sofia" not in asked_again  # what was stored is not asked for
    assert texts(alice) == [
        "The user's daughter Sofia turns seven next March.",
        "用户最喜欢的水果是芒果。",
    ]


async def test_a_batch_whose_facts_are_all_held_is_one_request(alice):
    alice.add("用户最喜欢的水果是芒果。", "taste")  # said in an earlier turn: nothing to add
    answer = ops({"op": "create", "content": "The user works as a veterinarian in Porto.",
                  "section": "identity"})  # fmt: skip
    model = RecordingModel(messages=iter([answer]))
    turn = batch("alice", "I work as a veterinarian in Porto.", "我最喜欢的水果还是芒果。",
                 "What's the weather like?", "Please forget that I like jazz.")  # fmt: skip
    result = await MemoryConsumer(model, protocol="json").consume(turn, LongTermMemory(alice))
    assert result.applied and len(model.seen) == 1


async def test_a_fact_left_out_twice_is_not_invented_and_the_rest_stands(alice):
    first = ops({"op": "create", "content": "The user works as a veterinarian.",
                 "section": "identity"})  # fmt: skip
    model = RecordingModel(messages=iter([first, ops()]))
    turn = batch("alice", "I work as a veterinarian.", "我最喜欢的水果是芒果。")
    result = await MemoryConsumer(model, protocol="json").consume(turn, LongTermMemory(alice))
    assert result.applied and len(model.seen) == 2
    assert texts(alice) == ["The user works as a veterinarian."]


async def test_a_fact_translated_twice_is_kept_in_the_users_own_words(alice):
    # Told twice that the fact was said in Chinese, the 1.5B model wrote it in English again.
    english = {"op": "create", "content": "The user's favorite fruit is mango.", "section": "taste"}
    first = ops({"op": "create", "content": "The user works as a veterinarian.",
                 "section": "identity"}, english)  # fmt: skip
    model = RecordingModel(messages=iter([first, ops(english)]))
    turn = batch("alice", "I work as a veterinarian.", "我最喜欢的水果是芒果。")
    result = await MemoryConsumer(model, protocol="json").consume(turn, LongTermMemory(alice))
    assert result.applied and len(model.seen) == 2
    assert "Chinese" in model.seen[1][-1].text
    assert texts(alice) == ["The user works as a veterinarian.", "用户说：“我最喜欢的水果是芒果。”"]
