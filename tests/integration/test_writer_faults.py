"""A writer model that misbehaves: tool calls that cannot be used, a provider that never
answers. Every failed turn is retried, then dead-lettered, always logged and traced; a stalled
provider costs seconds, not minutes, and pauses (the breaker) instead of being hammered."""

from __future__ import annotations

import asyncio
import logging
import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from langchain_core.messages import AIMessage, HumanMessage

from memory.integration.models.loading import load_chat_model
from memory.integration.run_memory import writer_consumer
from memory.integration.settings import use_settings
from memory.long_term import LongTermMemory
from memory.store.backends.yaml_files import YamlMemoryManager
from memory.writer.breaker import breaker_for
from memory.writer.consumer import MemoryConsumer, MemoryWriteFailed
from memory.writer.local import local_writer
from memory.writer.queue import RetryPolicy
from memory.writer.turn import Turn
from tests.fakes import ScriptedModel

TEA = Turn.of("ada", [{"role": "user", "content": "I like green tea."}], turn_id="tea")
QUICK_RETRY = RetryPolicy(max_attempts=2, initial_delay=0.01)


def invalid_call() -> AIMessage:
    return AIMessage(
        content="",
        invalid_tool_calls=[
            {
                "name": "create_memory",
                "args": '{"content": "User likes green tea", "section": ',
                "id": "call_1",
                "error": "Expecting value: line 1 column 50",
                "type": "invalid_tool_call",
            }
        ],
    )


def create_tea() -> AIMessage:
    args = {"content": "User likes green tea", "section": "taste", "scope": "user"}
    return AIMessage(content="", tool_calls=[{"name": "create_memory", "args": args, "id": "c2"}])


def memory_with(tmp_path: Path, model: ScriptedModel, **options: object) -> LongTermMemory:
    manager = YamlMemoryManager(tmp_path / "memory", "ada")
    return LongTermMemory(manager, writer_llm=model, **options)  # type: ignore[arg-type]


async def wait_until(condition: object, seconds: float = 30.0) -> None:
    deadline = time.monotonic() + seconds
    while not condition():  # type: ignore[operator]
        assert time.monotonic() < deadline, "timed out"
        await asyncio.sleep(0.02)


async def test_an_unusable_tool_call_gets_one_repair_round(tmp_path: Path) -> None:
    model = ScriptedModel(messages=iter([invalid_call(), create_tea(), AIMessage("Saved.")]))
    memory = memory_with(tmp_path, model)
    result = await MemoryConsumer(model).consume(TEA, memory)
    assert result.applied
    assert [i.description for i in memory.manager.list_items().values()] == ["User likes green tea"]
    repair = model.seen[1][-1]
    assert isinstance(repair, HumanMessage) and "could not be used" in repair.content
    assert any(not event.ok and "not valid JSON" in event.result for event in result.events)


@pytest.mark.parametrize(
    "unusable",
    [invalid_call, lambda: AIMessage('create_memory(content="User likes green tea", section="x")')],
    ids=["invalid-json", "call-as-text"],
)
async def test_a_turn_whose_tool_calls_stay_unusable_fails_is_retried_and_dead_lettered(
    unusable: object, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    # Enough for every attempt: under `auto` a call written as text moves the model to the json
    # protocol, which asks twice too.
    answers = [unusable() for _ in range(8)]  # type: ignore[operator]
    model = ScriptedModel(messages=iter(answers))
    memory = memory_with(tmp_path, model, retry=QUICK_RETRY)
    with pytest.raises(MemoryWriteFailed, match="unusable tool call"):
        await MemoryConsumer(model).consume(TEA, memory)
    memory = memory_with(tmp_path, ScriptedModel(messages=iter(answers)), retry=QUICK_RETRY)
    with caplog.at_level(logging.WARNING):
        memory.start()
        await memory.send(TEA)
        await memory.join()
    status = memory.write_status()
    assert status.dead == 1 and "unusable" in (status.dead_letters[0].last_error or "")
    assert memory.manager.list_items() == {}  # nothing was stored, and nobody was told "done"
    failed = [e for e in memory.trace.for_turn("ada", "tea", include_staged=True)]
    assert [e.state for e in failed] == ["failed"] and "unusable" in failed[0].result
    assert any("unusable" in r.getMessage() for r in caplog.records)
    assert any("dead-lettered" in r.getMessage() for r in caplog.records)
    await memory.stop()


class SilentServer:
    """Accepts HTTP connections and never answers (a stalled provider); counts connections."""

    def __init__(self) -> None:
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(64)
        self.connections: list[socket.socket] = []
        self.base_url = f"http://127.0.0.1:{self.sock.getsockname()[1]}/v1"
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                connection, _ = self.sock.accept()
            except OSError:
                return
            self.connections.append(connection)

    def close(self) -> None:
        self.sock.close()
        for connection in self.connections:
            connection.close()


@pytest.fixture
def silent(monkeypatch: pytest.MonkeyPatch) -> Iterator[SilentServer]:
    server = SilentServer()
    monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
    yield server
    server.close()


def turn(number: int) -> Turn:
    text = f"fact number {number}"
    messages = [{"role": "user", "content": text}]
    return Turn.of("ada", messages, turn_id=f"fact-{number}", writer_model="openai/stalled")


async def test_a_stalled_provider_costs_the_timeout_per_attempt_then_the_breaker_pauses(
    silent: SilentServer, tmp_path: Path
) -> None:
    # No allowance for reading the prompt: the 0.5 s are the whole limit of each call.
    with use_settings(writer_timeout_seconds=0.5, writer_prefill_tokens_per_second=1e9):
        memory = LongTermMemory(
            YamlMemoryManager(tmp_path / "memory", "ada"),
            consumer=writer_consumer(),
            retry=RetryPolicy(max_attempts=3, initial_delay=0.05),
        )
        memory.start()
        started = time.monotonic()
        await memory.send(turn(1))
        await wait_until(lambda: memory.write_status().dead == 1)
        elapsed = time.monotonic() - started
        # Three attempts of one call each (no client retries), each waited out to its 0.5 s and
        # then cut (a call not cut would hang: no dead letter within wait_until's 30 s).
        assert len(silent.connections) == 3
        assert elapsed >= 1.5, elapsed
        # Two more failures open the breaker (5 in a row): the rest of that turn and the next
        # are dead-lettered without calling the model.
        await memory.send(turn(2))
        await memory.send(turn(3))
        await wait_until(lambda: memory.write_status().dead == 3)
        assert len(silent.connections) == 5
        errors = [e.last_error or "" for e in memory.write_status().dead_letters]
        assert "paused" in errors[-1] and "paused" in errors[-2], errors
        # After the pause one probe goes through; it fails again, so the breaker stays open.
        breaker_for("openai/stalled").pause_seconds = 0.1
        await asyncio.sleep(0.2)
        await memory.send(turn(4))
        await wait_until(lambda: memory.write_status().dead == 4)
        assert len(silent.connections) == 6
        assert breaker_for("openai/stalled").is_open
        await memory.stop(timeout=5)


async def test_stop_returns_within_its_timeout_while_a_call_hangs(
    silent: SilentServer, tmp_path: Path
) -> None:
    with use_settings(writer_timeout_seconds=60):
        memory = LongTermMemory(
            YamlMemoryManager(tmp_path / "memory", "ada"), consumer=writer_consumer()
        )
        memory.start()
        await memory.send(turn(1))
        await wait_until(lambda: len(silent.connections) == 1)
        started = time.monotonic()
        drained = await memory.stop(timeout=0.5)
        assert not drained and time.monotonic() - started < 10  # not the 60 s writer timeout
        # The turn is kept for the next start.
        assert [e.turn_id for e in memory._writer().journal.pending("ada")] == [turn(1).turn_id]


async def test_a_slow_writer_call_is_logged_while_it_waits(
    silent: SilentServer, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    model = load_chat_model("openai/stalled", timeout=1.0, max_retries=0)
    consumer = MemoryConsumer(model, timeout_seconds=5, slow_call_seconds=0.2)
    memory = LongTermMemory(YamlMemoryManager(tmp_path / "memory", "ada"), consumer=consumer)
    with caplog.at_level(logging.WARNING), pytest.raises(MemoryWriteFailed):
        await consumer.consume(turn(1), memory)
    waiting = [r for r in caplog.records if "still waiting for the writer model" in r.getMessage()]
    assert len(waiting) >= 3  # every 0.2 s while the 1 s call hung


class FlakyWriter(ScriptedModel):
    """Raises while `down` is set; else writes one memory of what the user said."""

    down: bool = True

    async def _agenerate(self, messages: list, *args: object, **kwargs: object) -> object:
        from langchain_core.outputs import ChatGeneration, ChatResult

        if self.down:
            raise ConnectionError("the provider is down")
        if any(getattr(m, "type", "") == "tool" for m in messages):
            return ChatResult(generations=[ChatGeneration(message=AIMessage("done"))])
        said = messages[-1].content.split("fact number ")[1].split("\n")[0]
        args = {"content": f"The user told fact {said}", "section": "facts", "scope": "user"}
        call = AIMessage(
            content="", tool_calls=[{"name": "create_memory", "args": args, "id": "c"}]
        )
        return ChatResult(generations=[ChatGeneration(message=call)])


async def test_turns_paused_by_the_breaker_are_written_once_the_writer_answers_again(
    tmp_path: Path,
) -> None:
    flaky = FlakyWriter(messages=iter([]))
    consumer = MemoryConsumer(model_factory=lambda name: flaky)
    memory = LongTermMemory(
        YamlMemoryManager(tmp_path / "memory", "ada"),
        consumer=consumer,
        retry=RetryPolicy(max_attempts=1),
    )
    breaker_for("flaky/model").pause_seconds = 0.2
    memory.start()
    turns = [
        Turn.of("ada", [{"role": "user", "content": f"fact number {n}"}], turn_id=f"f{n}",
                writer_model="flaky/model")
        for n in range(7)
    ]  # fmt: skip
    for turn in turns[:6]:  # five failures open the breaker; the sixth turn is paused
        await memory.send(turn)
    await memory.join()
    dead = memory.write_status().dead_letters
    assert [e.turn_id for e in dead] == [f"f{n}" for n in range(6)]
    assert "paused" in (dead[-1].last_error or "")
    flaky.down = False
    await asyncio.sleep(0.3)
    await memory.send(turns[6])  # the probe: it works, and the paused turn goes again
    await wait_until(lambda: len(memory.manager.list_items()) == 2)
    texts = sorted(i.description for i in memory.manager.list_items().values())
    assert texts == ["The user told fact 5", "The user told fact 6"]
    # Turns that failed on their own attempts stay dead letters until retried by hand.
    assert [e.turn_id for e in memory.write_status().dead_letters] == [f"f{n}" for n in range(5)]
    assert memory.retry_dead_letters() == 5
    await wait_until(lambda: len(memory.manager.list_items()) == 7)
    await memory.stop()


async def test_leaving_a_session_waits_a_bounded_time_for_a_stalled_writer(
    silent: SilentServer, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    from graph.cli.session import LocalSession
    from graph.context import Context

    context = Context(user_id="ada", model="offline/rules", writer_model="openai/stalled")
    with use_settings(writer_timeout_seconds=60), caplog.at_level(logging.WARNING):
        session = LocalSession(context, tmp_path / "chat")
        session.exit_wait_seconds = 1.0
        async with session:
            reply = await session.say("t1", "Remember that I live in Lisbon.")
            assert reply.memory_write["status"] == "journaled"
            await wait_until(lambda: len(silent.connections) == 1)
            leaving = time.monotonic()
        assert time.monotonic() - leaving < 15  # the 1 s exit wait, not the 60 s timeout
        assert session.memory is not None
        assert session.memory.write_status().pending == 1  # kept for the next start
    assert any("stay in the journal" in r.getMessage() for r in caplog.records)
    local_writer.run(session.memory.stop(timeout=0.1)).result(5)
