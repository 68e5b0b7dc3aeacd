"""Reminders without a server: in `make chat` the model's `set_reminder` keeps the reminder in the
data folder, and the chat shows it at the first prompt after it fell due (not before), once."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import AIMessage

import graph.cli.chat as chat_cli
import graph.nodes as nodes
from graph.cli.session import LocalSession
from graph.context import Context
from memory.integration.settings import use_settings
from memory.registry import registry
from tests.fakes import ScriptedModel

pytestmark = pytest.mark.slow

SET_AT = "2026-12-07T20:00:00+08:00"


def _context(now: str) -> Context:
    return Context(user_id="alice", model="offline/rules", now=now, timezone="Asia/Shanghai")


@pytest.fixture
def settings(tmp_path: Path) -> Iterator[Any]:
    with use_settings(memory_backend=f"yaml:{tmp_path / 'memory'}", data_dir=str(tmp_path / "data"),
                      embeddings="off", snapshot_seconds=None) as chosen:  # fmt: skip
        yield chosen
    registry.clear()


async def _prompts(monkeypatch: pytest.MonkeyPatch, capsys: Any, now: str, data: Path) -> str:
    """What `make chat` prints when started at `now` and quit at once."""
    lines = iter(["/quit"])

    async def read_line(prompt: str) -> str | None:
        print(prompt)
        return next(lines)

    monkeypatch.setattr(chat_cli, "read_line", read_line)
    capsys.readouterr()
    await chat_cli.chat(_context(now), data, "t1")
    return str(capsys.readouterr().out)


async def test_make_chat_shows_a_reminder_once_it_fell_due(
    settings: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: Any
) -> None:
    call = {"name": "set_reminder", "args": {"what": "call my mom", "when": "in 10 minutes"},
            "id": "c1"}  # fmt: skip
    model = ScriptedModel(messages=iter([AIMessage("", tool_calls=[call]), AIMessage("Set.")]))
    monkeypatch.setattr(nodes, "load_chat_model", lambda name, **_: model)
    data = tmp_path / "data"
    async with LocalSession(_context(SET_AT), data) as session:
        await session.say("t1", "Remind me to call my mom in 10 minutes")
    answered = [m for m in model.seen[-1] if m.type == "tool"]
    assert "Reminder set for Monday 2026-12-07 20:10" in str(answered[-1].content)

    early = await _prompts(monkeypatch, capsys, "2026-12-07T20:05:00+08:00", data)
    assert "⏰" not in early
    due = await _prompts(monkeypatch, capsys, "2026-12-07T20:11:00+08:00", data)
    assert due.index("⏰ Reminder: call my mom") < due.index("you>")
    again = await _prompts(monkeypatch, capsys, "2026-12-07T20:12:00+08:00", data)
    assert "⏰" not in again  # shown once
