"""Whichever model wrote it, a memory keeps the day it names: a model that files the user's words
("我后天有离散数学考试") has them stored with the day resolved from when the turn was said, in the
user's zone; an imported turn from last month counts from its own day."""

from __future__ import annotations

import json
from pathlib import Path

from memory.long_term import LongTermMemory
from memory.store.backends.yaml_files import YamlMemoryManager
from memory.writer.consumer import MemoryConsumer
from memory.writer.turn import Turn
from tests.fakes import ScriptedModel


def _files_the_words(text: str) -> ScriptedModel:
    """A model that creates one memory holding the user's words as they were said."""
    create = {"op": "create", "content": text, "section": "moments"}
    return ScriptedModel(messages=iter([json.dumps({"operations": [create]}, ensure_ascii=False)]))


async def _write(tmp_path: Path, text: str, said_at: str, timezone: str) -> list[str]:
    manager = YamlMemoryManager(tmp_path / "memory", "alice")
    turn = Turn("alice", "t1", ({"role": "user", "content": text},
                                {"role": "assistant", "content": "好的"}),
                thread_id="s1", said_at=said_at, timezone=timezone)  # fmt: skip
    consumer = MemoryConsumer(_files_the_words(text), protocol="json")
    result = await consumer.consume(turn, LongTermMemory(manager, embeddings="off"))
    assert result.applied
    return [item.description for item in manager.list_items().values()]


async def test_the_words_are_kept_with_the_day_they_meant(tmp_path: Path) -> None:
    # Monday 7 December 2026, 20:00 in Shanghai.
    stored = await _write(tmp_path, "我后天有离散数学考试", "2026-12-07T12:00:00+00:00",
                          "Asia/Shanghai")  # fmt: skip
    assert stored == ["我2026年12月9日（周三）有离散数学考试"]


async def test_the_day_is_the_users_not_the_servers(tmp_path: Path) -> None:
    # 18:30 UTC on Monday is 02:30 on Tuesday in Shanghai: "tomorrow" is Wednesday.
    stored = await _write(tmp_path, "Remind me to call my mom tomorrow", "2026-12-07T18:30:00Z",
                          "Asia/Shanghai")  # fmt: skip
    assert stored == ["Remind me to call my mom on Wednesday 2026-12-09"]


async def test_an_imported_turn_counts_from_its_own_day(tmp_path: Path) -> None:
    stored = await _write(tmp_path, "I have a job interview at Acme next Friday",
                          "2026-11-02T09:00:00+00:00", "Europe/London")  # fmt: skip
    assert stored == ["I have a job interview at Acme on Friday 2026-11-13"]
