"""LongTermMemory.self_check: the store's report and the write pipeline's, as a user sees them."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

import pytest

from memory.long_term import JOURNAL_FILE, LongTermMemory
from memory.store.backends.yaml_files import YamlMemoryManager
from memory.store.manager import BaseMemoryManager
from memory.writer.queue import RetryPolicy
from memory.writer.turn import Turn


class BrokenConsumer:
    """The memory agent with a model that is down: every turn fails the same way."""

    async def consume(self, turn: Turn, memory: LongTermMemory) -> Any:
        raise RuntimeError("the writer model is down (HTTP 503)")


TURN = [{"role": "user", "content": "I like tea"}, {"role": "assistant", "content": "Noted"}]


async def _dead_letter_one(manager: BaseMemoryManager) -> LongTermMemory:
    memory = LongTermMemory(
        manager, consumer=BrokenConsumer(), retry=RetryPolicy(max_attempts=1, initial_delay=0)
    )
    memory.start()
    await memory.send_history(TURN, turn_id="turn-1")
    await memory.stop()
    return memory


async def test_dead_letters_turn_an_ok_store_into_a_warning_with_the_error(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    manager = YamlMemoryManager(tmp_path / "memory", "alice")
    assert manager.self_check().status == "OK"
    memory = await _dead_letter_one(manager)
    assert memory.journal_path == tmp_path / "memory" / JOURNAL_FILE  # beside the store

    assert manager.self_check().status == "OK"  # the store alone knows nothing of it
    report = memory.self_check()
    assert report.status == "WARN"
    assert any("turn-1" in issue and "HTTP 503" in issue for issue in report.issues)
    assert any("retry_dead_letters" in issue for issue in report.issues)

    # A reader without a writer (the editor) sees it too, from the journal on disk.
    reader = LongTermMemory(manager)
    assert reader.self_check().status == "WARN"
    # ... and the next start logs it.
    caplog.set_level(logging.WARNING, logger="memory.long_term")
    again = LongTermMemory(manager, consumer=BrokenConsumer())
    again.start()
    await again.stop()
    assert "WARN" in caplog.text and "HTTP 503" in caplog.text

    assert memory.retry_dead_letters() == 1
    assert memory.write_status().dead == 0


async def test_a_failing_store_stays_fail(tmp_path: Path) -> None:
    manager = YamlMemoryManager(tmp_path / "memory", "alice")
    memory = await _dead_letter_one(manager)
    manager.path.write_text("items: [unclosed\n", encoding="utf-8")
    report = memory.self_check(recheck=True)
    assert report.status == "FAIL"
    assert "not valid YAML" in report.issues[0]
    assert any("HTTP 503" in issue for issue in report.issues)


def test_no_journal_yet_is_ok(tmp_path: Path) -> None:
    manager = YamlMemoryManager(tmp_path / "memory", "alice")
    assert LongTermMemory(manager).self_check().status == "OK"
    assert not (tmp_path / "memory" / "write-journal.sqlite").exists()
