"""Broken and hand-edited stores: self_check reports, repairs what it can, and never loses bytes."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
import yaml

from memory.errors import CorruptStoreError, WritesDisabled
from memory.store.backends.langgraph_store import BACKUP_NAMESPACE, StoreMemoryManager
from memory.store.backends.sqlite_db import SqliteMemoryManager
from memory.store.backends.yaml_files import YamlMemoryManager
from memory.store.document import MemoryDocument
from memory.store.item import MemoryItem
from memory.store.repair import FALLBACK_THEME

NOT_YAML = b"items:\n  a1: {description: 'unclosed\n    theme: [x\n\t- : : :\n"


def _copies(directory: Path, marker: str) -> list[Path]:
    return sorted(p for p in directory.iterdir() if marker in p.name)


# ── YAML ────────────────────────────────────────────────────────────────


def test_invalid_yaml_fails_is_copied_aside_and_blocks_writes_until_fixed(tmp_path: Path) -> None:
    path = tmp_path / "ann.yaml"
    path.write_bytes(NOT_YAML)
    untouched = YamlMemoryManager(tmp_path, "ann")
    with pytest.raises(CorruptStoreError, match="not valid YAML"):
        untouched.add("a write before any self_check", "t")

    manager = YamlMemoryManager(tmp_path, "ann")
    report = manager.self_check()
    assert report.status == "FAIL"
    assert "not valid YAML" in report.issues[0]
    (copy,) = _copies(tmp_path, ".corrupt-")
    assert copy.read_bytes() == NOT_YAML
    assert str(copy) in report.issues[0]
    with pytest.raises(WritesDisabled, match="ann"):
        manager.add("must not be written", "t")
    assert path.read_bytes() == NOT_YAML

    path.write_text("items:\n  a1: {description: fixed by hand, theme: misc}\n", encoding="utf-8")
    assert manager.self_check().status in ("OK", "WARN")
    new_id = manager.add("written after the fix", "t")
    assert {row["id"] for row in manager.show()} == {"a1", new_id}


def test_hand_edited_fields_are_repaired_reported_and_backed_up(tmp_path: Path) -> None:
    edited = (
        "# edited in a text editor\n"
        "revision: 3\n"
        "items:\n"
        "  a1:\n"
        "    description: 喜欢猫\n"
        "    theme: 宠物\n"
        "    hit: three\n"
        "    history: []\n"
        "    latest_update_time: '2026-01-01T00:00:00+00:00'\n"
        "  b2:\n"
        "    description: no theme here\n"
        "    hit: 2\n"
        "  c3:\n"
        "    description: history is text\n"
        "    theme: misc\n"
        "    history: changed it on Monday\n"
        "applied_turns: []\n"
    )
    path = tmp_path / "ann.yaml"
    path.write_text(edited, encoding="utf-8")
    manager = YamlMemoryManager(tmp_path, "ann")
    report = manager.self_check()

    assert report.status == "WARN" and report.issues == []
    text = "\n".join(report.repaired)
    assert "'a1': hit was 'three'" in text
    assert f"'b2': theme was missing or not text; set to '{FALLBACK_THEME}'" in text
    assert "'c3': history was not a list" in text
    (backup,) = _copies(tmp_path, ".bak-")
    assert backup.read_text(encoding="utf-8") == edited
    assert str(backup) in text

    stored = yaml.safe_load(path.read_text(encoding="utf-8"))["items"]
    assert stored["a1"]["hit"] == 0 and stored["a1"]["description"] == "喜欢猫"
    assert stored["b2"]["theme"] == FALLBACK_THEME and stored["b2"]["hit"] == 2
    assert "changed it on Monday" in stored["c3"]["history"][0]["reason"]
    assert manager.self_check().status == "OK"
    manager.hit("a1")
    assert manager.get("a1").hit == 1


def test_a_hand_edit_while_the_app_runs_is_kept_aside_before_a_write_repairs_it(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    manager = YamlMemoryManager(tmp_path, "ann")
    assert manager.self_check().status == "OK"
    tea = manager.add("User likes tea", "taste")
    edited = (
        manager.path.read_text(encoding="utf-8")
        .replace("hit: 0", "hit: many")
        .replace("theme: taste\n", "theme: [taste, drinks]\n", 1)
    )
    manager.path.write_text(edited, encoding="utf-8")  # by hand, the app still running

    manager.add("User likes coffee", "taste")  # this write repairs the file

    (backup,) = _copies(tmp_path, ".bak-")
    assert backup.read_text(encoding="utf-8") == edited  # the person's bytes, exactly
    report = manager.last_report
    assert report is not None and report.status == "WARN"
    assert any(f"item {tea!r}: hit was 'many'" in line for line in report.repaired)
    assert any(str(backup) in line for line in report.repaired)
    assert "edited by hand" in caplog.text
    manager.add("User likes cocoa", "taste")  # nothing new to keep: no second copy
    assert len(_copies(tmp_path, ".bak-")) == 1
    assert len(manager.list_items()) == 3


def test_the_seeds_flat_layout_is_upgraded_with_a_backup(tmp_path: Path) -> None:
    flat = {
        "f00d": {
            "description": "likes noodles",
            "theme": "food",
            "history": [],
            "latest_update_time": "2025-05-01T10:00:00",
            "hit": 5,
        },
        "beef": {"description": "讨厌香菜", "theme": "饮食", "hit": 0},
    }
    original = yaml.safe_dump(flat, allow_unicode=True)
    (tmp_path / "ann.yaml").write_text(original, encoding="utf-8")
    manager = YamlMemoryManager(tmp_path, "ann")
    report = manager.self_check()
    assert report.status == "WARN"
    assert any("flat layout" in line for line in report.repaired)
    assert report.item_count == 2
    (backup,) = _copies(tmp_path, ".bak-")
    assert backup.read_text(encoding="utf-8") == original
    assert manager.get("f00d").hit == 5
    assert manager.get("beef").description == "讨厌香菜"
    assert "items" in yaml.safe_load((tmp_path / "ann.yaml").read_text(encoding="utf-8"))


# ── SQLite ──────────────────────────────────────────────────────────────


def _written_database(path: Path, count: int = 3) -> None:
    manager = SqliteMemoryManager(path, "ann")
    items = {f"m{i}": MemoryItem.create(f"memory {i} 第{i}条", "t") for i in range(count)}
    manager._save_all(MemoryDocument(items, [], 1))
    manager.close()


@pytest.mark.parametrize("damage", ["not-a-database", "overwritten-middle"])
def test_corrupt_sqlite_fails_untouched_and_blocks_writes_until_fixed(
    tmp_path: Path, damage: str
) -> None:
    path = tmp_path / "memory.db"
    if damage == "not-a-database":
        path.write_bytes(NOT_YAML * 20)
        with pytest.raises(CorruptStoreError, match="not a usable SQLite database"):
            SqliteMemoryManager(path, "ann").add("a write before any self_check", "t")
    else:
        _written_database(path, count=3000)
        data = bytearray(path.read_bytes())
        middle = len(data) // 2
        data[middle : middle + 8192] = b"\xab" * 8192
        path.write_bytes(bytes(data))
    original = path.read_bytes()
    manager = SqliteMemoryManager(path, "ann")
    report = manager.self_check()
    assert report.status == "FAIL"
    assert "left untouched" in report.issues[0]
    (copy,) = _copies(tmp_path, ".corrupt-")
    assert copy.read_bytes() == original
    with pytest.raises(WritesDisabled):
        manager.add("must not be written", "t")
    assert path.read_bytes() == original

    path.unlink()  # the user moves the broken file away
    assert manager.self_check().status == "OK"
    manager.add("written after the fix", "t")
    assert [row["description"] for row in manager.show()] == ["written after the fix"]


def test_hand_edited_sqlite_rows_are_repaired_reported_and_backed_up(tmp_path: Path) -> None:
    path = tmp_path / "memory.db"
    _written_database(path)
    with sqlite3.connect(path) as conn:
        conn.execute("UPDATE memory_items SET hit = 'three' WHERE id = 'm0'")
        conn.execute("UPDATE memory_items SET theme = NULL WHERE id = 'm1'")
        conn.execute("UPDATE memory_history SET entry = 'not json {' WHERE item_id = 'm2'")
    conn.close()

    manager = SqliteMemoryManager(path, "ann")
    report = manager.self_check()
    assert report.status == "WARN" and report.item_count == 3
    text = "\n".join(report.repaired)
    assert "'m0': hit was 'three'" in text
    assert "'m1': theme was missing" in text
    assert "'m2': history entries were not mappings" in text
    (backup,) = _copies(tmp_path, ".bak-")
    assert str(backup) in text
    with sqlite3.connect(backup) as kept:
        assert kept.execute("SELECT hit FROM memory_items WHERE id = 'm0'").fetchone() == ("three",)
    kept.close()

    assert manager.get("m0").hit == 0
    assert manager.get("m1").theme == FALLBACK_THEME
    assert manager.get("m2").history[0]["reason"] == "not json {"
    assert manager.self_check().status == "OK"
    manager.close()
    with sqlite3.connect(path) as conn:
        assert conn.execute("SELECT hit FROM memory_items WHERE id = 'm0'").fetchone() == (0,)
    conn.close()


# ── LangGraph store ─────────────────────────────────────────────────────


def test_hand_edited_store_values_are_repaired_with_the_originals_kept() -> None:
    from langgraph.store.memory import InMemoryStore

    store = InMemoryStore()
    bad = {"description": "likes chess", "hit": "three", "history": "was a string"}
    store.put(("memories", "ann"), "x1", bad)
    manager = StoreMemoryManager(store, "ann")
    report = manager.self_check()
    assert report.status == "WARN"
    assert any("'x1': hit was 'three'" in line for line in report.repaired)
    (kept,) = store.search((BACKUP_NAMESPACE, "ann"))
    assert kept.value == bad
    assert manager.get("x1").theme == FALLBACK_THEME
    assert manager.self_check().status == "OK"


def test_an_unreachable_store_is_a_fail_not_an_exception(tmp_path: Path) -> None:
    from langgraph.store.sqlite import SqliteStore

    conn = sqlite3.connect(tmp_path / "store.db", check_same_thread=False, isolation_level=None)
    store = SqliteStore(conn)
    store.setup()
    manager = StoreMemoryManager(store, "ann")
    manager.add("kept", "t")
    conn.close()  # the database went away under the running app
    report = manager.self_check()
    assert report.status == "FAIL"
    assert "SqliteStore is not usable" in report.issues[0]
    with pytest.raises(WritesDisabled):
        manager.add("refused", "t")


def test_sqlite_schema_is_versioned_and_migrated_forward(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from memory.store.backends import sqlite_db as sqlite_manager

    path = tmp_path / "memory.db"
    _written_database(path)
    with sqlite3.connect(path) as conn:
        assert conn.execute("PRAGMA user_version").fetchone() == (sqlite_manager.SCHEMA_VERSION,)
    conn.close()

    # A later release adds a column: its migration step runs once, on the existing data.
    step = ["ALTER TABLE memory_items ADD COLUMN pinned INTEGER DEFAULT 0"]
    monkeypatch.setattr(sqlite_manager, "SCHEMA_VERSION", sqlite_manager.SCHEMA_VERSION + 1)
    monkeypatch.setitem(sqlite_manager.MIGRATIONS, sqlite_manager.SCHEMA_VERSION, step)
    manager = SqliteMemoryManager(path, "ann")
    assert manager.self_check().status == "OK"
    assert len(manager.show()) == 3
    manager.close()
    with sqlite3.connect(path) as conn:
        assert conn.execute("PRAGMA user_version").fetchone() == (sqlite_manager.SCHEMA_VERSION,)
        assert conn.execute("SELECT count(*) FROM memory_items WHERE pinned = 0").fetchone() == (3,)
    conn.close()


def test_a_database_from_a_newer_release_is_refused_untouched(tmp_path: Path) -> None:
    path = tmp_path / "memory.db"
    _written_database(path)
    with sqlite3.connect(path) as conn:
        conn.execute("PRAGMA user_version = 99")
    conn.close()
    original = path.read_bytes()
    manager = SqliteMemoryManager(path, "ann")
    report = manager.self_check()
    assert report.status == "FAIL"
    assert "schema version 99" in report.issues[0]
    with pytest.raises(WritesDisabled):
        manager.add("refused", "t")
    assert path.read_bytes() == original
