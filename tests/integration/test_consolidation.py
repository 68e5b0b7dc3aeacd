"""The consolidation pass on real YAML and SQLite stores: the planted duplicate set, history and
restore, stale and archived memories, the 25% guard and the model's rewrite."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import AIMessage

from memory import Change, LongTermMemory
from memory.retrieval.evaluation import write_items
from memory.store.factory import open_memory_manager
from memory.store.item import MemoryItem
from memory.store.manager import BaseMemoryManager
from memory.store.snapshots import read_snapshot
from memory.upkeep.consolidation import is_stale
from tests.consolidation_data import planted_set, score
from tests.fakes import ScriptedAnswers


def _open(backend: str, folder: Path) -> BaseMemoryManager:
    spec = f"yaml:{folder / 'yaml'}" if backend == "yaml" else f"sqlite:{folder / 'memory.db'}"
    return open_memory_manager(spec, "alice")


def _seed(manager: BaseMemoryManager, texts: dict[str, tuple[str, str]], days_ago: float = 0):
    moment = (datetime.now(UTC) - timedelta(days=days_ago)).isoformat()
    items = {}
    for memory_id, (text, theme) in texts.items():
        item = MemoryItem.create(text, theme, "seed")
        item.history[0]["time"] = item.latest_update_time = moment
        items[memory_id] = item
    write_items(manager, items)


@pytest.mark.parametrize("backend", ["yaml", "sqlite"])
def test_one_pass_merges_the_planted_groups_and_nothing_else(backend: str, tmp_path: Path):
    planted = planted_set()
    manager = _open(backend, tmp_path)
    _seed(manager, planted.memories)
    before = {i: list(item.history) for i, item in manager.all_items().items()}
    memory = LongTermMemory(manager, embeddings="off")

    report = memory.consolidate()

    assert not report.refused
    found = [[survivor, *absorbed] for survivor, absorbed in report.merged.items()]
    groups_found, precision, traps_merged = score(planted, found)
    assert groups_found >= 0.9 and precision >= 0.98 and traps_merged == 0
    assert report.kept == len(planted.memories) - report.removed == len(manager.list_items())
    # No history lost: every entry an item had is still on it, or on the item it merged into.
    after = manager.all_items()
    for survivor, absorbed in report.merged.items():
        history = after[survivor].history
        for memory_id in [survivor, *absorbed]:
            for entry in before[memory_id]:
                assert any(
                    e["time"] == entry["time"] and e["action"] == entry["action"] for e in history
                )
        merges = [e for e in history if e["action"] == "merge"]
        assert len(merges) == len(absorbed) and {e["reason"] for e in merges} == {"consolidation"}
        for memory_id in absorbed:
            assert after[memory_id].deleted
            assert after[memory_id].history[-1]["into"] == survivor
    # The snapshot holds the store as it was; the trace records every merge as applied.
    assert len(read_snapshot(report.snapshot).items) == len(planted.memories)
    traced = memory.trace.for_user("alice", limit=10_000)
    assert sum(1 for row in traced if row.op == "merge") == report.removed
    assert {row.result for row in traced} == {"consolidation"}
    # Everything it changed comes back with the normal restore (one batch: a YAML file is
    # rewritten once, not once per memory).
    undo = [Change("restore", i, reason="undo") for ids in report.merged.values() for i in ids]
    assert manager.apply(undo, "undo-consolidation").applied
    assert len(manager.list_items()) == len(planted.memories)
    assert manager.self_check().status == "OK"


def test_a_second_pass_finds_nothing_more_to_merge(tmp_path: Path):
    planted = planted_set(total=300, groups=40, seed=3)
    manager = _open("sqlite", tmp_path)
    _seed(manager, planted.memories)
    memory = LongTermMemory(manager, embeddings="off")
    first = memory.consolidate()
    second = memory.consolidate()
    assert first.merged and not second.merged and second.kept == first.kept


def test_the_guard_refuses_a_pass_removing_more_than_a_quarter(tmp_path: Path):
    manager = _open("sqlite", tmp_path)
    _seed(
        manager,
        {
            "a": ("User likes jazz", "Interests"),
            "b": ("User enjoys jazz", "Interests"),
            "c": ("User really loves jazz", "Interests"),
            "d": ("User's sister Anna lives in Oslo", "Family"),
        },
    )
    revision = manager.revision
    report = LongTermMemory(manager, embeddings="off").consolidate()
    assert "would remove 2 of 4 live memories" in report.refused
    assert "nothing was changed" in report.refused and report.summary().startswith(
        "consolidation refused"
    )
    assert manager.revision == revision and len(manager.list_items()) == 4
    assert report.merged == {} and report.snapshot == ""


def test_a_small_store_may_always_lose_one_duplicate(tmp_path: Path):
    manager = _open("sqlite", tmp_path)
    _seed(
        manager,
        {
            "a": ("User likes jazz", "Interests"),
            "b": ("User enjoys jazz", "Interests"),
            "d": ("User's sister Anna lives in Oslo", "Family"),
        },
    )
    report = LongTermMemory(manager, embeddings="off").consolidate()
    assert not report.refused and report.removed == 1  # a third of the store, but only one
    assert len(manager.list_items()) == 2


def _dated(manager: BaseMemoryManager, memory_id: str, text: str, written: datetime) -> None:
    item = MemoryItem.create(text, "notes", "seed")
    item.history[0]["time"] = item.latest_update_time = written.isoformat()
    write_items(manager, {memory_id: item})


@pytest.mark.uses("hotness")
@pytest.mark.parametrize("backend", ["yaml", "sqlite"])
def test_passed_plans_are_marked_stale_and_long_cold_ones_archived(backend: str, tmp_path: Path):
    manager = _open(backend, tmp_path)
    now = datetime(2026, 9, 1, 12, tzinfo=UTC)
    _dated(
        manager, "tokyo", "User's flight to Tokyo is on 3 May", datetime(2026, 4, 20, tzinfo=UTC)
    )
    _dated(manager, "beijing", "用户5月3日要去北京出差", datetime(2026, 4, 25, tzinfo=UTC))
    _dated(
        manager, "rome", "User's trip to Rome is on 20 December", datetime(2026, 8, 1, tzinfo=UTC)
    )
    _dated(
        manager,
        "dentist",
        "User has a dentist appointment on 10 January",
        datetime(2026, 1, 5, tzinfo=UTC),
    )
    _dated(manager, "jazz", "User likes jazz", datetime(2025, 1, 5, tzinfo=UTC))
    for n in range(5):
        _dated(manager, f"fact{n}", f"User's friend number {n} is kind", now)
    memory = LongTermMemory(manager, embeddings="off")

    report = memory.consolidate(now=now)

    assert sorted(report.staled) == ["beijing", "tokyo"] and report.archived == ["dentist"]
    items = manager.all_items()
    assert is_stale(items["tokyo"]) and is_stale(items["beijing"])
    assert items["tokyo"].history[-1] == {
        **items["tokyo"].history[-1],
        "action": "stale",
        "reason": "consolidation",
        "passed": "2026-05-03",
    }
    assert not is_stale(items["rome"]) and not items["jazz"].deleted  # ahead; evergreen
    assert items["dentist"].deleted and items["dentist"].history[-1]["action"] == "archived"
    found = memory.get_related_memory_from("dentist appointment", "mechanical")
    assert all(m["id"] != "dentist" for m in found)
    manager.restore("dentist", "still relevant")
    assert not manager.get("dentist").deleted
    # An edit makes a stale memory current again.
    manager.update("tokyo", "moved", new_description="User's flight to Tokyo is on 3 October")
    assert not is_stale(manager.get("tokyo"))


def test_a_model_rewrites_a_group_and_a_bad_rewrite_falls_back(tmp_path: Path):
    manager = _open("sqlite", tmp_path)
    _seed(
        manager,
        {
            "a": ("User likes jazz", "Interests"),
            "b": ("User enjoys jazz music", "Interests"),
            "c": ("User runs 5 km every morning", "Health"),
            "d": ("User runs 5 km every single morning", "Health"),
            **{f"f{n}": (f"User's colleague number {n} is kind", "Work") for n in range(6)},
        },
    )
    llm = ScriptedAnswers(
        AIMessage("The user loves listening to jazz music."),
        AIMessage("User runs 10 km every morning"),
    )
    report = LongTermMemory(manager, embeddings="off").consolidate(llm)
    assert report.merged == {"a": ["b"], "c": ["d"]} and report.rewritten == 1
    assert manager.get("a").description == "The user loves listening to jazz music."
    # The second answer changed the number: the most complete member's text is kept.
    assert manager.get("c").description == "User runs 5 km every single morning"
    merges = [call for call in llm.calls if "<memories>" in str(call)]
    assert len(merges) == 2  # one call per group (the rest summarise the changed topics)


@pytest.mark.uses("hotness")
def test_every_backend_keeps_what_a_pass_did(
    open_manager: Any, unique_user: str, tmp_path: Path
) -> None:
    manager = open_manager(unique_user)
    now = datetime(2026, 9, 1, 12, tzinfo=UTC)
    written = {
        "jazz": ("User likes jazz", datetime(2026, 8, 1, tzinfo=UTC)),
        "jazz2": ("User enjoys jazz music", datetime(2026, 8, 2, tzinfo=UTC)),
        "flight": ("User's flight to Tokyo is on 3 May", datetime(2026, 4, 20, tzinfo=UTC)),
        "dentist": (
            "User has a dentist appointment on 10 January",
            datetime(2026, 1, 5, tzinfo=UTC),
        ),
    }
    for n in range(8):
        written[f"fact{n}"] = (f"User's friend number {n} is kind", now)
    for memory_id, (text, when) in written.items():
        _dated(manager, memory_id, text, when)
    report = LongTermMemory(manager, data_dir=tmp_path / "data", embeddings="off").consolidate(
        now=now
    )
    assert report.merged == {"jazz2": ["jazz"]} and report.staled == ["flight"]
    assert report.archived == ["dentist"] and report.kept == 10

    reopened = open_manager(unique_user)  # what another process reads
    items = reopened.all_items()
    assert items["jazz"].deleted and items["jazz"].history[-1]["into"] == "jazz2"
    assert is_stale(items["flight"]) and items["flight"].history[-1]["passed"] == "2026-05-03"
    assert items["dentist"].deleted and items["dentist"].history[-1]["action"] == "archived"
    for memory_id in ("jazz", "dentist"):
        reopened.restore(memory_id, "undo")
    assert len(reopened.list_items()) == 12 and reopened.self_check().status == "OK"


def test_an_unreadable_plan_is_set_aside_and_the_pass_plans_again(tmp_path: Path) -> None:
    manager = _open("sqlite", tmp_path)
    _seed(
        manager,
        {
            "a": ("User likes jazz", "notes"),
            "b": ("User enjoys jazz", "notes"),
            **{f"f{n}": (f"User's colleague number {n} is kind", "notes") for n in range(4)},
        },
    )
    memory = LongTermMemory(manager, embeddings="off")
    plan = tmp_path / "consolidation" / "alice.plan.json"
    plan.parent.mkdir()
    plan.write_text('{"version": 1, "steps": [', encoding="utf-8")  # cut short by hand
    report = memory.consolidate()
    assert report.merged == {"b": ["a"]} and not report.resumed
    assert not plan.exists() and len(list(plan.parent.glob("alice.plan.json.unreadable-*"))) == 1


@pytest.mark.uses("topics")
def test_a_pass_refreshes_the_topic_summaries(tmp_path: Path):
    manager = _open("yaml", tmp_path)
    manager.add("User's sister Amy lives in Berlin", "family")
    manager.add("User's sister Amy lives in Berlin now", "family")
    manager.add("User's sister Amy works at a bakery", "family")
    for fact in ("User likes jazz", "User is allergic to peanuts", "User plays chess"):
        manager.add(fact, "about")  # the 25% guard: one merge of seven memories is fine
    memory = LongTermMemory(manager, embeddings="off")

    report = memory.consolidate()

    assert report.removed == 1 and report.topics_summarised >= 1
    summary = memory.topics.summary("my sister") or ""
    assert "bakery" in summary and summary.count("Berlin") == 1  # the merged pair, once
    key = memory.topics.table.resolve("sister")
    assert key in memory.topics.summaries.read(manager.user_id)  # written by the pass
