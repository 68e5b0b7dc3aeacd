"""Snapshots keep everything across backends and folders, and never overwrite a non-empty store."""

from __future__ import annotations

import gzip
import shutil
import subprocess
import sys
import time
from itertools import pairwise
from pathlib import Path

import pytest

from memory import CorruptStoreError
from memory.integration.settings import Settings
from memory.registry import registry
from memory.store.factory import open_memory_manager
from memory.store.manager import BaseMemoryManager
from memory.store.snapshots import (
    DEFAULT_DELAY_SECONDS,
    SnapshotScheduler,
    default_snapshot_path,
    import_snapshot,
    restore_if_empty,
    write_snapshot,
)

ROOT = Path(__file__).resolve().parents[2]


def _fill(manager: BaseMemoryManager) -> dict[str, str]:
    ids = {
        "city": manager.add("用户住在杭州西湖边", "地点与路径", "用户自述"),
        "job": manager.add("The user works as a nurse", "identity"),
        "gone": manager.add("The user has an exam on 2026-12-01", "to-dos"),
    }
    manager.update(ids["job"], "changed jobs", new_description="The user works as a doctor")
    manager.hit(ids["city"])
    manager.delete(ids["gone"], "exam is over")
    manager.apply([], "turn-1")
    return ids


def _state(manager: BaseMemoryManager) -> tuple[object, ...]:
    document = manager._load_all()
    return (
        {i: item.to_dict() for i, item in document.items.items()},
        document.applied_turns,
    )


@pytest.mark.parametrize("target_spec", ["yaml", "store", "sqlite"])
def test_round_trip_keeps_chinese_history_tombstones_and_turns(
    tmp_path: Path, target_spec: str
) -> None:
    source = open_memory_manager(f"yaml:{tmp_path / 'src'}", "alice")
    ids = _fill(source)
    path = write_snapshot(source, tmp_path / "backup.jsonl.gz")
    if target_spec == "sqlite":
        pytest.importorskip("memory.store.backends.sqlite_db")
    spec = {
        "yaml": f"yaml:{tmp_path / 'dst'}",
        "store": "store:memory",
        "sqlite": f"sqlite:{tmp_path / 'm.db'}",
    }
    target = open_memory_manager(spec[target_spec], "alice")

    assert import_snapshot(target, path) == 3
    assert _state(target) == _state(source)
    assert target.get(ids["city"]).description == "用户住在杭州西湖边"
    assert target.get(ids["city"]).hit == 1
    assert [e["action"] for e in target.show_description_history(ids["job"])] == [
        "update",
        "create",
    ]
    assert ids["gone"] in target.deleted_items()
    assert target.has_applied("turn-1")
    target.restore(ids["gone"], "undo")  # a restored tombstone is a live item again
    assert len(target.show()) == 3


def test_import_refuses_a_non_empty_store_and_changes_nothing(tmp_path: Path) -> None:
    source = open_memory_manager(f"yaml:{tmp_path / 'src'}", "bob")
    _fill(source)
    path = write_snapshot(source, tmp_path / "b.jsonl.gz")
    target = open_memory_manager(f"yaml:{tmp_path / 'dst'}", "bob")
    target.add("Bob likes tea", "taste")
    before = target.path.read_bytes()
    with pytest.raises(ValueError, match="not empty"):
        import_snapshot(target, path)
    assert target.path.read_bytes() == before


def test_corrupt_snapshot_is_a_clear_error(tmp_path: Path) -> None:
    manager = open_memory_manager(f"yaml:{tmp_path}", "carol")
    bad = tmp_path / "bad.jsonl.gz"
    bad.write_bytes(b"not gzip at all")
    with pytest.raises(CorruptStoreError, match="cannot be read"):
        import_snapshot(manager, bad)
    wrong = tmp_path / "wrong.jsonl.gz"
    with gzip.open(wrong, "wt") as handle:
        handle.write('{"hello": 1}\n')
    with pytest.raises(CorruptStoreError, match="header"):
        import_snapshot(manager, wrong)
    assert manager.show() == []


def test_copying_the_data_folder_elsewhere_keeps_everything(tmp_path: Path) -> None:
    data = tmp_path / "data"
    manager = open_memory_manager(f"yaml:{data}", "dave")
    _fill(manager)
    write_snapshot(manager, default_snapshot_path(manager))  # type: ignore[arg-type]
    elsewhere = tmp_path / "elsewhere" / "data"
    shutil.copytree(data, elsewhere)
    moved = open_memory_manager(f"yaml:{elsewhere}", "dave")
    assert _state(moved) == _state(manager)

    # Only the snapshot survives (the store file was lost): start restores it automatically.
    moved.path.unlink()
    assert restore_if_empty(moved) is True
    assert _state(moved) == _state(manager)
    assert restore_if_empty(moved) is False  # not empty any more: nothing happens


def _change_times(manager: BaseMemoryManager) -> list[float]:
    """When each committed write happened (monotonic), to judge a burst's gaps afterwards."""
    stamps: list[float] = []
    manager.add_change_listener(lambda: stamps.append(time.monotonic()))
    return stamps


def _burst_was_tight(stamps: list[float], delay: float) -> bool:
    """Whether every gap of the burst stayed well below the delay. On a machine so loaded that
    a gap reached it, a debounced scheduler may rightly write twice: then only >= 1 is asserted."""
    gaps = [later - earlier for earlier, later in pairwise(stamps)]
    return max(gaps, default=0.0) < 0.6 * delay


def test_scheduler_debounces_a_burst_into_one_snapshot(tmp_path: Path) -> None:
    manager = open_memory_manager(f"yaml:{tmp_path}", "erin")
    path = tmp_path / "erin.jsonl.gz"
    delay = 2.0
    scheduler = SnapshotScheduler(manager, path, delay=delay)
    stamps = _change_times(manager)
    # The burst lasts longer than the delay, but no gap reaches it: a debounced scheduler writes
    # once, after the last change; one that fires `delay` after the first change writes mid-burst.
    for n in range(12):
        manager.add(f"fact {n}", "moments")
        scheduler.changed()
        time.sleep(0.2)
    tight = _burst_was_tight(stamps, delay)
    assert stamps[-1] - stamps[0] > delay  # the burst really spans more than one delay
    if tight:
        assert scheduler.writes == 0 and not path.exists()
    deadline = time.monotonic() + 20
    while scheduler.writes == 0 and time.monotonic() < deadline:
        time.sleep(0.05)
    time.sleep(delay + 0.5)  # longer than the delay: a second, late snapshot would show up here
    assert scheduler.writes == 1 if tight else scheduler.writes >= 1
    restored = open_memory_manager(f"yaml:{tmp_path / 'r'}", "erin")
    assert import_snapshot(restored, path) == 12


def _snapshot_cli(command: str, folder: Path, path: Path) -> subprocess.CompletedProcess[str]:
    """Run `python -m memory.integration.admin.snapshot` as `make export` / `make import` do."""
    backend = ["--backend", f"yaml:{folder}", "--user", "frank", "--file", str(path)]
    return subprocess.run(
        [sys.executable, "-m", "memory.integration.admin.snapshot", command, *backend],
        capture_output=True,
        text=True,
        cwd=ROOT,
    )


def test_make_export_and_import_commands(tmp_path: Path) -> None:
    manager = open_memory_manager(f"yaml:{tmp_path / 'a'}", "frank")
    _fill(manager)
    out = tmp_path / "frank.jsonl.gz"
    exported = _snapshot_cli("export", tmp_path / "a", out)
    assert exported.returncode == 0 and "3 items" in exported.stdout
    imported = _snapshot_cli("import", tmp_path / "b", out)
    assert imported.returncode == 0 and "imported 3 items" in imported.stdout
    again = _snapshot_cli("import", tmp_path / "b", out)
    # Errors go to stderr now (before the redesign they were printed on stdout).
    assert again.returncode == 1 and "not empty" in again.stderr and again.stdout == ""
    assert _state(open_memory_manager(f"yaml:{tmp_path / 'b'}", "frank")) == _state(manager)


@pytest.mark.parametrize("kind", ["yaml", "sqlite"])
def test_the_registry_snapshots_after_writes_and_restores_an_empty_store(
    tmp_path: Path, kind: str
) -> None:
    from memory.store.branch import Provenance
    from memory.store.document import Change

    delay = 2.0  # well above the gaps of a burst of fsynced writes, even on a loaded machine
    target = {"yaml": "data", "sqlite": "data/memory.db"}[kind]
    memory = registry.open(f"{kind}:{tmp_path / 'a' / target}", "alice", snapshot_delay=delay)
    manager, scheduler = memory.manager, memory.snapshots
    assert scheduler is not None and scheduler.delay == delay
    stamps = _change_times(manager)
    ids = _fill(manager)  # a burst of six writes
    manager.apply(
        [Change("add", id="plan", description="我们先写第一章", theme="任务", scope="branch")],
        "turn-2",
        Provenance("thread-1", "ckpt-1"),
    )
    manager.set_core_context(persona="助理", human="用户住在杭州西湖边", goal="写书",
                             thread_id="thread-1")  # fmt: skip
    tight = _burst_was_tight(stamps, delay)
    deadline = time.monotonic() + 30
    while scheduler.writes == 0 and time.monotonic() < deadline:
        time.sleep(0.05)
    time.sleep(delay + 0.5)  # a second snapshot of the same burst would show up here
    assert scheduler.writes == 1 if tight else scheduler.writes >= 1  # the burst became one
    assert default_snapshot_path(manager) == tmp_path / "a" / "data" / "memory_backup" / (
        "alice.jsonl.gz"
    )

    # Copy the data folder elsewhere and lose the store itself: starting there restores it.
    shutil.copytree(tmp_path / "a", tmp_path / "b")
    for store_file in (tmp_path / "b" / "data").glob(
        "alice.yaml" if kind == "yaml" else "memory.db*"
    ):
        store_file.unlink()
    restored = registry.open(f"{kind}:{tmp_path / 'b' / target}", "alice").manager
    assert _state(restored) == _state(manager)
    assert restored.get("plan").origin["checkpoint_id"] == "ckpt-1"
    assert restored.get(ids["gone"], include_deleted=True).deleted
    assert restored.get_core_context("thread-1") == manager.get_core_context("thread-1")
    assert restored.get_core_context("thread-1")["goal"] == "写书"


def test_a_bad_snapshot_delay_is_named() -> None:
    for bad in ("soon", "-1"):
        with pytest.raises(ValueError, match="GULFSTREAM_SNAPSHOT_SECONDS"):
            Settings.from_env({"GULFSTREAM_SNAPSHOT_SECONDS": bad})
    for off in ("off", "OFF", "none", "no", "false"):
        assert Settings.from_env({"GULFSTREAM_SNAPSHOT_SECONDS": off}).snapshot_seconds is None
    assert Settings.from_env({"GULFSTREAM_SNAPSHOT_SECONDS": "0.5"}).snapshot_seconds == 0.5
    assert Settings.from_env({}).snapshot_seconds == DEFAULT_DELAY_SECONDS
