"""The memory agent's tools, run by the real create_agent over a scripted model and a YAML store."""

from __future__ import annotations

import asyncio
import itertools
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langchain_core.outputs import ChatResult

from memory.long_term import TRACE_FILE, LongTermMemory
from memory.store.backends.yaml_files import YamlMemoryManager
from memory.text.messages import extract_last_turn
from memory.writer.consumer import MemoryConsumer, MemoryWriteFailed
from memory.writer.guards import detect_forget_request, find_secret
from memory.writer.staging import ToolEvent
from memory.writer.trace import FAILED_STEP, WriteTrace
from memory.writer.turn import Turn
from tests.fakes import ScriptedModel

MONDAY_MORNING = datetime(2026, 11, 30, 9, 30, tzinfo=timezone(timedelta(hours=8)))
_ids = itertools.count()


def call(name: str, **args: Any) -> dict[str, Any]:
    return {"name": name, "args": args, "id": f"call-{next(_ids)}", "type": "tool_call"}


def step(*calls: dict[str, Any]) -> AIMessage:
    return AIMessage("", tool_calls=list(calls))


def tool_replies(model: ScriptedModel) -> list[str]:
    """What the tools answered, in order, as the model saw it on its last call."""
    return [str(m.content) for m in model.seen[-1] if isinstance(m, ToolMessage)]


def turn(text: str) -> list[dict[str, str]]:
    return [{"role": "user", "content": text}, {"role": "assistant", "content": "Noted!"}]


def a_turn(user_id: str, turn_id: str, text: str, **fields: Any) -> Turn:
    """The finished turn in which the user said `text` (and the assistant said "Noted!")."""
    return Turn(user_id, turn_id, tuple(turn(text)), **fields)


async def consume(
    manager: YamlMemoryManager,
    script: list[Any],
    text: str = "I study maths in Lyon.",
    turn_id: str = "turn-1",
    **options: Any,
) -> tuple[Any, ScriptedModel]:
    """One turn of session-1 through the memory agent, playing `script` as the model."""
    model = ScriptedModel(messages=iter(script))
    memory = LongTermMemory(manager, on_event=options.pop("on_event", None))
    consumer = MemoryConsumer(model, clock=lambda: MONDAY_MORNING, **options)
    said = a_turn(manager.user_id, turn_id, text, thread_id="session-1")
    result = await consumer.consume(said, memory)
    return result, model


@pytest.fixture
def manager(tmp_path: Path) -> YamlMemoryManager:
    return YamlMemoryManager(tmp_path / "memory", "alice")


def reopened(manager: YamlMemoryManager) -> YamlMemoryManager:
    """A fresh manager on the same file: what another process would read."""
    return YamlMemoryManager(manager.directory, manager.user_id)


async def test_cold_start_creates_memories_and_dates_are_given_with_weekday(manager):
    script = [
        step(call("read_memories")),
        step(
            call("create_memory", content="The user studies maths.", section="identity"),
            call("create_memory", content="The user lives in Lyon.", section="places & paths"),
        ),
        AIMessage("Created two memories."),
    ]
    result, model = await consume(manager, script)

    system, user = model.seen[0][0], model.seen[0][1]
    assert "The store is empty" in str(system.content)
    assert '"time-bound to-dos"' in str(system.content)  # the default sections are listed
    assert isinstance(user, HumanMessage)
    assert "Today: 2026-11-30 (Monday)" in str(user.content)  # the day, not the minute
    assert "I study maths in Lyon." in str(user.content)
    assert result.applied and result.summary == "Created two memories."
    stored = {(m["description"], m["theme"]) for m in reopened(manager).show()}
    assert stored == {
        ("The user studies maths.", "identity"),
        ("The user lives in Lyon.", "places & paths"),
    }


async def test_update_merge_and_hit_use_short_ids_mapped_to_real_ids(manager):
    first = manager.add("The user studies maths.", "identity")
    second = manager.add("The user likes Miku.", "music")
    third = manager.add("The user listens to Hatsune Miku.", "music")
    script = [
        step(call("read_memories")),
        step(
            call("update_memory", id=1, content="The user studies physics.", reason="changed"),
            call(
                "merge_memories",
                id1=2,
                id2=3,
                content="The user loves Hatsune Miku.",
                section="music",
                reason="same singer",
            ),
            call("hit_memory", id=1),
        ),
        AIMessage("done"),
    ]
    result, model = await consume(manager, script, text="I switched to physics.")

    assert "The store is empty" not in str(model.seen[0][0].content)
    listing = tool_replies(model)[0]
    assert "[1] The user studies maths." in listing and "[3] The user listens" in listing
    assert first not in listing and second not in listing  # real ids never reach the model
    assert "already marked" in tool_replies(model)[3]  # update counted as the hit
    store = reopened(manager)
    updated = store.get(first)
    assert updated.description == "The user studies physics." and updated.hit == 1
    assert updated.history[-1]["previous_description"] == "The user studies maths."
    assert store.get(second).description == "The user loves Hatsune Miku."
    absorbed = store.get(third, include_deleted=True)
    assert absorbed.deleted and absorbed.history[-1]["into"] == second
    assert [c.op for c in result.changes] == ["update", "hit", "merge"]


async def test_staged_view_shows_the_turn_and_nothing_is_written_before_commit(manager):
    original = manager.add("The user has an exam on 2026-11-20.", "time-bound to-dos")
    seen_by_others: list[list[str]] = []

    def on_event(event: ToolEvent) -> None:
        seen_by_others.append([m["description"] for m in reopened(manager).show()])

    script = [
        step(call("create_memory", content="The user plays the cello.", section="taste")),
        step(call("read_memories")),
        step(call("delete_memory", id=1, reason="the exam date has passed")),
        step(call("read_memories")),
        AIMessage("done"),
    ]
    await consume(manager, script, on_event=on_event)

    assert seen_by_others == [["The user has an exam on 2026-11-20."]] * 4
    store = reopened(manager)
    assert [m["description"] for m in store.show()] == ["The user plays the cello."]
    assert store.get(original, include_deleted=True).deleted


async def test_staged_listing_gives_new_items_the_next_short_id(manager):
    manager.add("The user studies maths.", "identity")
    script = [
        step(call("create_memory", content="The user plays the cello.", section="taste")),
        step(call("delete_memory", id=1, reason="user asked")),
        step(call("read_memories")),
        AIMessage("done"),
    ]
    _, model = await consume(manager, script, text="Forget that I study maths.")
    replies = tool_replies(model)
    assert replies[0] == "Created memory 2 in section 'taste'."
    assert "[2] The user plays the cello." in replies[2] and "[1]" not in replies[2]


async def test_bad_calls_return_errors_that_say_how_to_recover(manager):
    manager.add("The user studies maths.", "identity")
    script = [
        step(call("update_memory", id=42, content="x", reason="r")),
        step(call("create_memory", content="   ", section="identity")),
        step(call("update_memory", content="The user studies physics.")),
        step(call("create_memory", content="x" * 5000, section="identity")),
        step(call("create_memory", content="Card 4111 1111 1111 1111", section="identity")),
        step(call("merge_memories", id1=1, id2=1, content="c", section="s", reason="r")),
        step(call("hit_memory", id="3f9a1c2e")),
        step(call("create_memory", content="The user studies maths.", section="identity")),
        AIMessage("gave up"),
    ]
    events: list[ToolEvent] = []
    result, model = await consume(manager, script, on_event=events.append)

    replies = tool_replies(model)
    assert all(reply.startswith("Error") for reply in replies), replies
    assert [e.result for e in events] == replies and not any(e.ok for e in events)
    assert "Valid ids: 1" in replies[0] and "read_memories" in replies[0]
    assert "content must be a non-empty string" in replies[1]
    assert "update_memory(id, content, reason)" in replies[2] and "id" in replies[2]
    assert "limit is 2000" in replies[3]
    assert "card number" in replies[4] and "never stored" in replies[4]
    assert "two different ids" in replies[5]
    assert "read_memories" in replies[6]
    assert "already says" in replies[7]
    assert result.applied and result.changes == []
    assert [m["description"] for m in reopened(manager).show()] == ["The user studies maths."]


@pytest.mark.parametrize(
    ("text", "expected_deleted"),
    [("I moved to Paris last week.", 3), ("Please forget everything about my old job.", 4)],
)
async def test_deletions_are_limited_unless_the_user_asked_to_forget(
    manager, text, expected_deleted
):
    for index in range(5):
        manager.add(f"The user worked at company {index}.", "identity")
    script = [step(call("delete_memory", id=i, reason="obsolete")) for i in (1, 2, 3, 4)]
    _, model = await consume(manager, [*script, AIMessage("done")], text=text)

    assert len(reopened(manager).deleted_items()) == expected_deleted
    if expected_deleted == 3:
        assert "limit" in tool_replies(model)[3] and "Keep these memories" in tool_replies(model)[3]


async def test_merges_count_toward_the_removal_limit(manager):
    for index in range(6):
        manager.add(f"The user worked at company {index}.", "identity")
    merges = [
        call("merge_memories", id1=1, id2=i, content="The user worked at several companies.",
             section="identity", reason="same")
        for i in (2, 3)
    ]  # fmt: skip
    script = [step(*merges), step(call("delete_memory", id=4, reason="obsolete"))]
    script.append(step(call("delete_memory", id=5, reason="obsolete")))
    _, model = await consume(manager, [*script, AIMessage("done")], text="I moved to Paris.")
    replies = tool_replies(model)
    assert [reply.startswith("Error") for reply in replies] == [False, False, False, True]
    assert "removes 3 memories by deleting or merging" in replies[3]
    assert len(reopened(manager).list_items()) == 3  # 6 minus two absorbed and one deleted


def test_forget_requests_are_detected_in_english_and_chinese():
    for text in [
        "Forget what I said about Tom.",
        "please delete that memory",
        "忘掉我的旧地址",
        "把我前任的事忘了吧",
        "删除关于考试的记忆",
        "别记这个",
    ]:
        assert detect_forget_request(text), text
    for text in [
        "Don't forget my exam on Friday.",
        "I forgot my keys.",
        "别忘了我周五考试",
        "I love the song Remember Me.",
    ]:
        assert not detect_forget_request(text), text


def test_secrets_are_recognised():
    assert find_secret("my card is 4111-1111-1111-1111") == "a card number"
    assert find_secret("key sk-abcdefghijklmnopqrstuv") == "an API key or token"
    assert find_secret("我的密码是 hunter2") == "a password"
    assert find_secret("The user was born on 2001-04-05 and has 12345678 steps.") is None


async def test_a_turn_already_applied_is_not_run_again(manager):
    script = [
        step(call("create_memory", content="The user studies maths.", section="identity")),
        AIMessage("done"),
    ]
    first, _ = await consume(manager, script)
    again, model = await consume(manager, [RuntimeError("the model must not be called")])
    assert first.applied and not again.applied and "already applied" in again.summary
    assert model.seen == [] and len(reopened(manager).show()) == 1


class FailingModel(ScriptedModel):
    """Creates a memory, then fails: the staged create must not land."""

    def _generate(self, messages: list[BaseMessage], *args: Any, **kwargs: Any) -> ChatResult:
        if len(self.seen) >= 1:
            self.seen.append(list(messages))
            raise ConnectionError("provider unreachable")
        return super()._generate(messages, *args, **kwargs)


class SlowModel(ScriptedModel):
    async def _agenerate(self, messages: list[BaseMessage], *args: Any, **kwargs: Any) -> Any:
        await asyncio.sleep(5)
        return await super()._agenerate(messages, *args, **kwargs)


async def test_a_failed_agent_writes_nothing_and_says_why(manager):
    memory = LongTermMemory(manager)
    hi = a_turn("alice", "t", "hi", thread_id="s")
    create = step(call("create_memory", content="The user studies maths.", section="identity"))
    failing = FailingModel(messages=iter([create]))
    with pytest.raises(MemoryWriteFailed, match="provider unreachable"):
        await MemoryConsumer(failing).consume(hi, memory)
    slow = SlowModel(messages=iter([create]))
    with pytest.raises(MemoryWriteFailed, match="timed out"):
        # No allowance for reading the prompt: the 0.2 s are the whole limit.
        fast_reader = {"prefill_tokens_per_second": 1e9}
        await MemoryConsumer(slow, timeout_seconds=0.2, **fast_reader).consume(hi, memory)
    looping = ScriptedModel(messages=(step(call("read_memories")) for _ in itertools.count()))
    with pytest.raises(MemoryWriteFailed, match="within 3 steps"):
        await MemoryConsumer(looping, step_limit=3).consume(hi, memory)
    assert reopened(manager).show() == [] and not reopened(manager).has_applied("t")
    # Nothing staged or applied is traced; only the latest failure, with its error.
    rows = memory.trace.for_turn("alice", "t", include_staged=True)
    assert [(r.step, r.state, r.op) for r in rows] == [(FAILED_STEP, "failed", "failed")]
    assert "within 3 steps" in rows[0].result


async def test_applied_changes_are_traced_per_turn_and_per_user(manager):
    script = [
        step(call("read_memories"), call("update_memory", id=9, content="x", reason="r")),
        step(call("create_memory", content="The user studies maths.", section="identity")),
        AIMessage("done"),
    ]
    await consume(manager, script)
    trace = WriteTrace(manager.directory / TRACE_FILE)  # beside the store, where the editor reads
    rows = trace.for_turn("alice", "turn-1")
    assert [(r.step, r.tool, r.op, r.state) for r in rows] == [
        (0, "create_memory", "add", "applied")
    ]
    assert rows[0].arguments["content"] == "The user studies maths."
    assert rows[0].arguments["memory_id"] == next(iter(reopened(manager).list_items()))
    assert rows[0].result.startswith("Created memory 1")
    assert trace.for_user("alice") == rows and trace.for_user("bob") == []
    assert rows[0].session_id == "session-1"
    trace.close()


async def test_chinese_turns_get_the_chinese_prompt_and_sections(manager):
    script = [
        step(
            call(
                "create_memory",
                content="用户后天有离散数学考试（2026-12-02）。",
                section="时效待办",
            )
        ),
        AIMessage("完成"),
    ]
    _, model = await consume(manager, script, text="后天我要考离散数学", language="auto")
    assert "记忆库目前为空" in str(model.seen[0][0].content)
    assert '"时效待办"' in str(model.seen[0][0].content)
    assert "（星期一）" in str(model.seen[0][1].content)
    assert reopened(manager).show()[0]["theme"] == "时效待办"


def test_last_turn_is_extracted_from_langchain_messages():
    from langchain_core.messages import SystemMessage

    session = [
        SystemMessage("sys"),
        HumanMessage("hello", id="m1"),
        AIMessage("hi"),
        HumanMessage("What's the weather?", id="m2"),
        AIMessage("", tool_calls=[call("weather", city="Lyon")]),
        ToolMessage("sunny", tool_call_id="x"),
        AIMessage("Sunny in Lyon."),
    ]
    messages, message_id = extract_last_turn(session)
    assert messages == [
        {"role": "user", "content": "What's the weather?"},
        {"role": "assistant", "content": "Sunny in Lyon."},
    ]
    assert message_id == "m2"
    assert extract_last_turn([{"role": "assistant", "content": "hi"}]) == ([], None)


def test_bad_turn_input_is_refused_with_the_field_named():
    # A turn is validated when it is made, before any consumer, queue or journal sees it.
    with pytest.raises(ValueError, match=r"turn_messages\[0\]\['role'\]"):
        Turn("alice", "t", ({"role": "robot", "content": "x"},))
    with pytest.raises(ValueError, match="turn_id"):
        a_turn("alice", " ", "hi")
    with pytest.raises(ValueError, match="user_id"):
        a_turn("../bob", "t", "hi")
    with pytest.raises(ValueError, match="scope_policy"):
        a_turn("alice", "t", "hi", scope_policy="team")
    with pytest.raises(ValueError, match=r"Turn\.language"):
        a_turn("alice", "t", "hi", language="fr")
    said = a_turn("alice", "t", "hi", thread_id="s")
    assert Turn.from_json(said.to_json()) == said
    data = said.to_dict()
    with pytest.raises(ValueError, match="no field 'session_id'"):
        Turn.from_dict({**data, "session_id": "s"})
    with pytest.raises(ValueError, match="needs messages"):
        Turn.from_dict({k: v for k, v in data.items() if k != "messages"})


@pytest.mark.parametrize("backend", ["yaml", "sqlite", "store"])
async def test_the_consumer_works_over_every_backend_without_a_journal(tmp_path, backend):
    from memory.store.factory import open_memory_manager

    spec = {
        "yaml": f"yaml:{tmp_path}/m",
        "sqlite": f"sqlite:{tmp_path}/m.db",
        "store": "store:memory",  # an in-process store: this test needs no server
    }
    store_manager = open_memory_manager(spec[backend], "alice")
    store_manager.add("The user studies maths.", "identity")
    events: list[ToolEvent] = []
    script = [
        step(call("read_memories")),
        step(call("update_memory", id=1, content="The user studies physics.", reason="switched")),
        AIMessage("done"),
    ]
    model = ScriptedModel(messages=iter(script))
    memory = LongTermMemory(store_manager, data_dir=tmp_path / "data", on_event=events.append)
    result = await MemoryConsumer(model).consume(
        a_turn("alice", "turn-7", "I switched to physics."), memory
    )
    assert result.applied and store_manager.has_applied("turn-7")
    assert not memory.journal_path.exists()  # the consumer alone needs no journal
    assert [m["description"] for m in store_manager.show()] == ["The user studies physics."]
    assert [(e.tool, e.user_id, e.turn_id) for e in events] == [
        ("read_memories", "alice", "turn-7"),
        ("update_memory", "alice", "turn-7"),
    ]


def test_consume_sync_runs_without_a_loop_and_refuses_inside_one(manager):
    script = [
        step(call("create_memory", content="The user studies maths.", section="identity")),
        AIMessage("done"),
    ]
    consumer = MemoryConsumer(ScriptedModel(messages=iter(script)))
    memory = LongTermMemory(manager)
    result = consumer.consume_sync(a_turn("alice", "turn-sync", "I study maths."), memory)
    assert result.applied and reopened(manager).has_applied("turn-sync")

    async def inside_a_loop() -> None:
        with pytest.raises(RuntimeError, match="await consume"):
            consumer.consume_sync(a_turn("alice", "turn-2", "hi"), memory)

    asyncio.run(inside_a_loop())


async def test_an_id_must_be_a_real_integer_not_a_boolean_or_text(manager):
    first = manager.add("The user likes tea.", "taste")
    manager.add("The user likes jazz.", "taste")
    script = [
        step(call("delete_memory", id=True, reason="a boolean is not an id")),
        step(call("merge_memories", id1="1", id2=2, content="x", section="taste", reason="r")),
        AIMessage("done"),
    ]
    _, model = await consume(manager, script, text="Forget my tea preference.")
    replies = tool_replies(model)
    assert all(reply.startswith("Error: bad arguments") for reply in replies), replies
    assert "valid integer" in replies[0] and "valid integer" in replies[1]
    assert first in reopened(manager).list_items()  # memory 1 was not deleted
    assert len(reopened(manager).list_items()) == 2


def test_the_same_turn_gets_the_same_prompt_all_day() -> None:
    turn = Turn("alice", "t1", ({"role": "user", "content": "I study maths in Lyon."},))
    morning, evening = MONDAY_MORNING, MONDAY_MORNING + timedelta(hours=9, minutes=17)
    prompts = [
        (
            consumer := MemoryConsumer(ScriptedModel(messages=iter([])), clock=lambda at=at: at)
        ).build_user_prompt(turn, consumer.prompts_for(turn))
        for at in (morning, evening)
    ]
    assert prompts[0] == prompts[1]
    tomorrow = MemoryConsumer(ScriptedModel(messages=iter([])),
                              clock=lambda: MONDAY_MORNING + timedelta(days=1))  # fmt: skip
    assert tomorrow.build_user_prompt(turn, tomorrow.prompts_for(turn)) != prompts[0]
