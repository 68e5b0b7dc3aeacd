"""A reminder goes with its memory: forgetting the memory the reminder's turn wrote cancels it
(it is neither listed nor said), erasing it or the user removes it from disk, taking the
conversation off the record removes it, and turning reminders off drops every one. Real files,
the offline writer, `make chat`'s session."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import AIMessage

import graph.nodes as nodes
from graph.cli.session import LocalSession
from graph.context import Context
from memory.integration import prepare_deployment
from memory.integration.settings import use_settings
from memory.registry import registry
from tests.fakes import ScriptedModel

pytestmark = pytest.mark.slow

SET_AT = "2026-12-07T20:00:00+08:00"
DUE_AT = "2026-12-09T09:00:00+08:00"  # after "the day after tomorrow" (9:00 is its morning)


def _context(now: str = SET_AT) -> Context:
    return Context(user_id="alice", model="offline/rules", now=now, timezone="Asia/Shanghai")


@pytest.fixture
def data(tmp_path: Path) -> Iterator[Path]:
    with use_settings(
        memory_backend=f"yaml:{tmp_path / 'memory'}",
        data_dir=str(tmp_path / "data"),
        embeddings="off",
        snapshot_seconds=None,
    ):
        yield tmp_path
    registry.clear()


def _reminding(monkeypatch: pytest.MonkeyPatch, what: str, when: str) -> None:
    """The chat model calls set_reminder once, then answers."""
    call = {"name": "set_reminder", "args": {"what": what, "when": when}, "id": "c1"}
    replies = iter([AIMessage("", tool_calls=[call]), AIMessage("Set.")])
    model = ScriptedModel(messages=replies)
    monkeypatch.setattr(nodes, "load_chat_model", lambda name, **_: model)


async def _set(
    monkeypatch: pytest.MonkeyPatch, data: Path, said: str, what: str, when: str, thread: str = "t1"
) -> Any:
    """Say `said` in make chat's session; the reminder it set and the memory the writer filed."""
    _reminding(monkeypatch, what, when)
    async with LocalSession(_context(), data / "data") as session:
        await session.say(thread, said)
        await session.wait_for_writes(60)
        assert session.memory is not None
        memory = session.memory
        [reminder] = memory.reminders.pending(thread)
        filed = {
            i: item.description
            for i, item in memory.manager.all_items().items()
            if not item.deleted
        }
    return memory, reminder, filed


def _bytes_of(folder: Path, text: str) -> list[str]:
    """The files holding `text`, but the conversation's own checkpoints (an erase keeps the
    thread: `memory.erasure.CHECKPOINTS_NOTE`)."""
    needle = text.encode()
    return [
        p.name
        for p in folder.rglob("*")
        if p.is_file() and not p.name.startswith("threads.sqlite") and needle in p.read_bytes()
    ]


async def test_forgetting_the_memory_of_a_reminder_cancels_it(
    data: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    memory, reminder, filed = await _set(
        monkeypatch,
        data,
        "Remind me the day after tomorrow to renew my passport.",
        "renew my passport",
        "the day after tomorrow",
    )
    assert reminder.due_at.isoformat() == DUE_AT
    [memory_id] = [i for i, d in filed.items() if "passport" in d]
    memory.manager.delete(memory_id, "the user asked to forget it")

    assert memory.reminders.pending("t1") == []  # not listed
    assert memory.reminders.take_due(Context(user_id="alice", now=DUE_AT).moment()) == []


async def test_asking_the_chat_to_forget_it_cancels_the_reminder(
    data: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The writer dates its delete by the run's `now`, as set_reminder dates the reminder.
    memory, _, _ = await _set(
        monkeypatch,
        data,
        "Remind me the day after tomorrow to renew my passport.",
        "renew my passport",
        "the day after tomorrow",
    )
    monkeypatch.setattr(
        nodes, "load_chat_model", lambda name, **_: ScriptedModel(messages=iter([AIMessage("Ok.")]))
    )
    async with LocalSession(_context("2026-12-07T20:05:00+08:00"), data / "data") as session:
        await session.say("t1", "Please forget that I need to renew my passport.")
        await session.wait_for_writes(60)
    assert not [i for i in memory.manager.all_items().values() if not i.deleted]
    assert memory.reminders.pending() == []


async def test_a_memory_forgotten_before_the_reminder_was_set_does_not_cancel_it(
    data: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    memory, _, _ = await _set(
        monkeypatch, data, "Remind me tomorrow to call my mom.", "call my mom", "tomorrow"
    )
    old = memory.manager.add("User calls my mom every Sunday", "family")
    memory.manager.delete(old, "forgotten long ago")
    memory.reminders.take_due(Context(user_id="alice", now="2026-12-20T10:00:00+08:00").moment())
    later = memory.reminders.add("t1", "", "call my mom", _context().moment())
    assert memory.reminders.pending("t1") == [later]


async def test_erasing_the_memory_erases_its_reminder_from_disk(
    data: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    memory, _, filed = await _set(
        monkeypatch,
        data,
        "Remind me on Friday at 8 to pick up the Zanzibar tickets.",
        "pick up the Zanzibar tickets",
        "Friday at 8",
    )
    [memory_id] = [i for i, d in filed.items() if "Zanzibar" in d]
    report = memory.erase(memory_id)

    assert report.removed.get("reminders") == 1, report.removed
    assert memory.reminders.pending() == []
    assert _bytes_of(data, "Zanzibar") == []


async def test_a_reminder_of_another_memory_survives_an_erase(
    data: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    memory, reminder, _ = await _set(
        monkeypatch, data, "Remind me tomorrow to water the ferns.", "water the ferns", "tomorrow"
    )
    other = memory.manager.add("User's sister lives in Lisbon", "family")
    memory.erase(other)
    assert memory.reminders.pending("t1") == [reminder]


async def test_erasing_the_user_and_taking_a_thread_off_the_record_remove_reminders(
    data: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    memory, _, _ = await _set(
        monkeypatch,
        data,
        "Remind me tomorrow to book the Quixotic dentist.",
        "book the Quixotic dentist",
        "tomorrow",
        thread="private",
    )
    memory.reminders.add("t2", "", "feed the Xylophone cat", _context().moment())
    memory.erase_conversation("private", ["Remind me tomorrow to book the Quixotic dentist."])
    assert [r.what for r in memory.reminders.pending()] == ["feed the Xylophone cat"]
    # The whole private conversation's trace: tests/integration/test_off_the_record.py.
    assert [name for name in _bytes_of(data, "Quixotic") if name.startswith("reminders")] == []

    memory.erase_user()
    assert memory.reminders.pending() == []
    assert _bytes_of(data, "Xylophone") == []


async def test_reminders_off_drops_every_reminder_set(
    data: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    memory, _, _ = await _set(
        monkeypatch, data, "Remind me tomorrow to stretch.", "stretch", "tomorrow"
    )
    with use_settings(reminders=False):
        prepare_deployment(check_models=False)
    assert memory.reminders.pending() == []
