"""A turn said in the past (an imported chat) keeps its time: in the journal's form, in the
writer's "now", and in the history entries and latest update of the memories it writes."""

from __future__ import annotations

from pathlib import Path

import pytest

from memory.prompts.writer import writer_prompts
from memory.store.backends.yaml_files import YamlMemoryManager
from memory.store.document import Change
from memory.store.item import parse_time
from memory.writer.consumer import MemoryConsumer
from memory.writer.turn import Turn
from tests.fakes import ScriptedModel

SPRING = "2025-04-12T09:30:00+02:00"
SAID = [{"role": "user", "content": "I moved to Lyon."}]


def turn_said(at: str, turn_id: str = "import:t:1") -> Turn:
    return Turn("ada", turn_id, tuple(SAID), thread_id="import-t", said_at=at)


def test_said_at_round_trips_through_the_journal_form_in_utc() -> None:
    turn = turn_said(SPRING)
    assert turn.said_at == "2025-04-12T07:30:00.000000+00:00"
    assert Turn.from_json(turn.to_json()).said_at == turn.said_at
    live = Turn.of("ada", SAID)
    assert live.said_at == ""  # a live turn: now
    # ...and its journal form is what it was before said_at, which an older writer still reads
    assert "said_at" not in live.to_dict() and Turn.from_json(live.to_json()) == live
    assert turn.provenance is not None and turn.provenance.said_at == turn.said_at
    assert "said_at" not in turn.provenance.as_dict()  # not stamped into every entry


def test_a_said_at_that_is_no_time_is_refused() -> None:
    with pytest.raises(ValueError, match="said_at"):
        turn_said("last spring")


def test_the_writer_reads_the_day_it_was_said_as_today() -> None:
    consumer = MemoryConsumer(ScriptedModel(messages=iter([])))
    line = consumer.now_line(writer_prompts("en"), turn_said(SPRING))
    assert parse_time(turn_said(SPRING).said_at).astimezone().strftime("%Y-%m-%d") in line
    assert consumer.now_of(Turn.of("ada", SAID)).year >= 2026  # a live turn: the clock


def test_history_entries_carry_the_time_it_was_said(tmp_path: Path) -> None:
    manager = YamlMemoryManager(tmp_path, "ada")
    turn = turn_said(SPRING)
    [memory_id] = manager.apply(
        [Change("add", description="Lives in Lyon", theme="home")], turn.turn_ids, turn.provenance
    ).results
    item = manager.get(memory_id)
    assert [e["time"] for e in item.history] == [turn.said_at]
    assert item.latest_update_time == turn.said_at
    assert item.history[0]["turn_id"] == turn.turn_id

    later = turn_said("2025-09-01T10:00:00Z", "import:t:2")
    update = Change("update", id=memory_id, description="Lives in Lyon, Croix-Rousse")
    manager.apply([update], later.turn_ids, later.provenance)
    assert [e["time"][:10] for e in manager.get(memory_id).history] == ["2025-04-12", "2025-09-01"]


def test_a_past_time_never_goes_before_the_memorys_last_change(tmp_path: Path) -> None:
    manager = YamlMemoryManager(tmp_path, "ada")
    [memory_id] = manager.apply(
        [Change("add", description="Lives in Lyon", theme="home")], "live-turn"
    ).results  # written today, by a chat
    today = manager.get(memory_id).latest_update_time
    old = turn_said(SPRING, "import:t:3")
    update = Change("update", id=memory_id, description="Lives in Lyon since 2025")
    manager.apply([update], old.turn_ids, old.provenance)
    item = manager.get(memory_id)
    times = [parse_time(e["time"]) for e in item.history]
    assert times == sorted(times) and times[0] < times[1]  # in order, and the update is newer
    assert item.latest_update_time > today
