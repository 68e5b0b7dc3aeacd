"""MemoryItem on its own: creation, update, merge, history and validation (no I/O)."""

from __future__ import annotations

from dataclasses import asdict
from datetime import UTC, datetime

import pytest

from memory.store.item import MAX_DESCRIPTION_CHARS, MAX_THEME_CHARS, MemoryItem


def test_create_starts_the_history() -> None:
    item = MemoryItem.create("  喜欢爬山  ", " 爱好 ", "用户说的")
    assert (item.description, item.theme, item.hit, item.deleted) == ("喜欢爬山", "爱好", 0, False)
    assert len(item.history) == 1
    entry = item.history[0]
    assert entry["action"] == "create" and entry["reason"] == "用户说的"
    assert entry["description"] == "喜欢爬山" and entry["theme"] == "爱好"
    assert item.latest_update_time == entry["time"]


def test_update_records_what_changed_why_and_when() -> None:
    item = MemoryItem.create("likes tea", "food")
    item.update("changed taste", new_description="likes coffee")
    item.update("relabel", new_theme="drinks")
    assert (item.description, item.theme) == ("likes coffee", "drinks")
    newest, middle, oldest = item.show_description_history()
    assert oldest["action"] == "create"
    assert middle["previous_description"] == "likes tea"
    assert middle["description"] == "likes coffee"
    assert middle["reason"] == "changed taste"
    assert newest["previous_theme"] == "food" and newest["theme"] == "drinks"
    assert newest["time"] >= middle["time"] >= oldest["time"]
    assert item.latest_update_time == newest["time"]


def test_show_description_history_is_newest_first_and_a_copy() -> None:
    item = MemoryItem.create("a", "t")
    for text in ("b", "c"):
        item.update("r", new_description=text)
    history = item.show_description_history()
    assert [entry["description"] for entry in history] == ["c", "b", "a"]
    history.clear()
    assert len(item.history) == 3


def test_merge_keeps_both_histories_in_time_order() -> None:
    first = MemoryItem.create("likes tea", "food", "breakfast")
    second = MemoryItem.create("喜欢喝茶", "饮食", "说过")
    second.update("typo", new_description="很喜欢喝茶")
    second.hit = 4
    first.hit = 1
    first.merge(second, "same fact", "loves tea", "food")
    assert (first.description, first.theme, first.hit) == ("loves tea", "food", 5)
    actions = [entry["action"] for entry in first.history]
    assert actions == ["create", "create", "update", "merge"]
    assert [entry.get("via") for entry in first.history] == [None, "merge", "merge", None]
    times = [entry["time"] for entry in first.history]
    assert times == sorted(times)
    merge = first.history[-1]
    assert merge["merged_description"] == "很喜欢喝茶"
    assert merge["previous_description"] == "likes tea"
    assert second.history[0].get("via") is None  # the absorbed item itself is not changed


def test_delete_and_restore_are_recorded() -> None:
    item = MemoryItem.create("a", "t")
    item.mark_deleted("wrong")
    assert item.deleted and item.history[-1]["action"] == "delete"
    item.mark_restored("it was right")
    assert not item.deleted and item.history[-1]["action"] == "restore"
    assert item.description == "a"


@pytest.mark.parametrize(
    ("build", "field"),
    [
        (lambda: MemoryItem.create("", "t"), "description"),
        (lambda: MemoryItem.create(" \n ", "t"), "description"),
        (lambda: MemoryItem.create("x" * (MAX_DESCRIPTION_CHARS + 1), "t"), "description"),
        (lambda: MemoryItem.create(None, "t"), "description"),  # type: ignore[arg-type]
        (lambda: MemoryItem.create("x", ""), "theme"),
        (lambda: MemoryItem.create("x", "a\nb"), "theme"),
        (lambda: MemoryItem.create("x", "y" * (MAX_THEME_CHARS + 1)), "theme"),
        (lambda: MemoryItem.create("x", "t", reason=7), "reason"),  # type: ignore[arg-type]
    ],
)
def test_create_refuses_bad_fields_naming_them(build, field) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(ValueError, match=field):
        build()


def test_a_refused_update_or_merge_changes_nothing() -> None:
    item = MemoryItem.create("likes tea", "food")
    other = MemoryItem.create("likes cake", "food")
    before = item.to_dict()
    for bad, field in [
        (lambda: item.update("r"), "new_description or new_theme"),
        (lambda: item.update("r", new_description=""), "new_description"),
        (lambda: item.update("r", new_theme="x\ny"), "new_theme"),
        (lambda: item.update("r" * 2000, new_description="ok"), "reason"),
        (lambda: item.merge(other, "r", "", "food"), "merged_description"),
        (lambda: item.merge(other, "r", "ok", ""), "merged_theme"),
    ]:
        with pytest.raises(ValueError, match=field):
            bad()
        assert item.to_dict() == before


def test_limits_are_inclusive() -> None:
    item = MemoryItem.create("x" * MAX_DESCRIPTION_CHARS, "y" * MAX_THEME_CHARS)
    assert len(item.description) == MAX_DESCRIPTION_CHARS


def test_to_dict_round_trips() -> None:
    item = MemoryItem.create("中文 and English", "混合")
    item.update("r", new_description="更新后")
    assert MemoryItem(**item.to_dict()) == item


def test_to_dict_is_a_deep_copy_with_every_field() -> None:
    item = MemoryItem.create("a", "t")
    item.mark_deleted("r")
    data = item.to_dict()
    assert data == asdict(item)
    data["history"][0]["reason"] = "changed"
    assert item.history[0]["reason"] == ""


# ── times: stored in UTC, old local-offset times still sort by the instant ──


def test_new_times_are_utc_and_old_local_offset_times_sort_by_the_instant(tmp_path) -> None:
    from memory.long_term import LongTermMemory
    from memory.store.backends.yaml_files import YamlMemoryManager
    from memory.store.item import local_date, now_iso, time_sort_key
    from webapp.views import waterfall  # feature: editor

    assert now_iso().endswith("+00:00")
    # 20:00 in Shanghai is 12:00 UTC: earlier than 13:00 UTC although it sorts later as text.
    old_local, new_utc = "2026-11-29T20:00:00.000000+08:00", "2026-11-29T13:00:00.000000+00:00"
    assert old_local > new_utc and time_sort_key(old_local) < time_sort_key(new_utc)
    late_utc = datetime(2026, 11, 29, 23, 30, tzinfo=UTC)
    assert local_date(late_utc.isoformat()) == late_utc.astimezone().date().isoformat()

    manager = YamlMemoryManager(tmp_path, "u")
    older, newer = manager.add("written before the switch", "t"), manager.add("written after", "t")
    text = manager.path.read_text(encoding="utf-8")
    for memory_id, stamp in ((older, old_local), (newer, new_utc)):
        item = manager.get(memory_id)
        text = text.replace(item.latest_update_time, stamp)
    manager.path.write_text(text, encoding="utf-8")
    # The editor's waterfall lists a section newest first, by the instant.  # feature: editor
    reopened = LongTermMemory(YamlMemoryManager(tmp_path, "u"))  # feature: editor
    [group] = waterfall(reopened)["groups"]  # feature: editor
    assert [card["id"] for card in group["cards"]] == [newer, older]  # feature: editor

    a, b = MemoryItem.create("a", "t"), MemoryItem.create("b", "t")
    a.history[0]["time"], b.history[0]["time"] = new_utc, old_local
    a.merge(b, "same", "a and b", "t")
    assert [e["time"] for e in a.history[:2]] == [old_local, new_utc]  # the instant decides
