"""A turn is either durably journaled or the caller learns it was not; a damaged journal is
moved aside with its WAL, what can be read is salvaged, and self-checks say FAIL until looked at."""

from __future__ import annotations

import logging
import os
import shutil
import sqlite3
import subprocess
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from graph.agent import compile_graph
from graph.context import Context
from memory.archive.sqlite_archive import SqliteArchive  # feature: archive
from memory.integration.settings import get_settings, use_settings
from memory.long_term import LongTermMemory
from memory.registry import registry
from memory.store.backends.yaml_files import YamlMemoryManager
from memory.writer.journal import TurnJournal
from memory.writer.local import local_writer
from memory.writer.turn import Turn
from tests.fakes import ScriptedModel

CONTEXT = Context(user_id="ada", model="offline/rules")


def turns(count: int, user: str = "ada", words: int = 0) -> list[Turn]:
    padding = " and more" * words
    return [
        Turn.of(user, [{"role": "user", "content": f"fact number {i}{padding}"}], turn_id=f"t{i}")
        for i in range(count)
    ]


def say(text: str) -> tuple[dict, dict]:
    return (
        {"messages": [{"role": "user", "content": text}]},
        {"configurable": {"thread_id": uuid.uuid4().hex}},
    )


@pytest.fixture
def full_disk(tmp_path: Path) -> Iterator[Path]:
    """A real 512 KB tmpfs (root can mount one here; the test is skipped where it cannot)."""
    mount = tmp_path / "small-disk"
    mount.mkdir()
    done = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=512k", "tmpfs", str(mount)], capture_output=True
    )
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {done.stderr.decode().strip()}")
    try:
        yield mount
    finally:
        subprocess.run(["umount", "-l", str(mount)], capture_output=True)


def fill(folder: Path) -> Path:
    """Fill the file system holding `folder` to the last byte."""
    filler = folder / "filler"
    descriptor = os.open(filler, os.O_WRONLY | os.O_CREAT)
    try:
        while os.write(descriptor, b"\0" * 4096):
            pass
    except OSError:  # ENOSPC: full
        pass
    finally:
        os.close(descriptor)
    return filler


def test_a_turn_that_cannot_be_journaled_is_reported_to_the_caller(
    full_disk: Path, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    # The conversation archive (SQLite files with their WAL) would share the 512 KB disk and
    # take the space the journal gets back below; it is not what this test is about.
    archive = f"sqlite:{tmp_path / 'conversations'}"
    with use_settings(memory_backend=f"yaml:{full_disk}", conversation_archive=archive):
        app = compile_graph()
        first = app.invoke(*say("My name is Ada."), context=CONTEXT)
        assert first["memory_write"]["status"] == "journaled"
        local_writer.drain().result(60)
        filler = fill(full_disk)
        with caplog.at_level(logging.ERROR):
            state = app.invoke(*say("I live in Lisbon."), context=CONTEXT)
        # The reply is there; the write is reported as not kept, with the journal's path.
        assert state["messages"][-1].content.startswith("[offline model]")
        outcome = state["memory_write"]
        assert outcome["status"] == "failed", outcome
        journal = full_disk / "write-journal.sqlite"
        assert str(journal) in outcome["error"] and "full" in outcome["error"], outcome
        assert any(str(journal) in r.getMessage() for r in caplog.records if r.levelno >= 40)
        filler.unlink()  # space again: the next turn is journaled and written
        third = app.invoke(*say("I like green tea."), context=CONTEXT)
        assert third["memory_write"]["status"] == "journaled"
        local_writer.drain().result(60)
        memory = registry.open(get_settings().memory_backend, "ada")
        texts = {i.description for i in memory.manager.list_items().values()}
        # The turn the caller was told about is not there; the others are.
        assert texts == {"User's name is Ada", "User likes green tea"}, texts


@pytest.mark.parametrize("damage", ["garbage", "truncated"])
async def test_a_damaged_journal_is_moved_aside_and_salvaged(
    damage: str, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    path = tmp_path / "write-journal.sqlite"
    journal = TurnJournal(path)
    for turn in turns(300, words=40):  # enough turns to fill many pages
        journal.append(turn)
    for turn in turns(100, words=40):
        journal.mark_done("ada", turn.turn_id)
    journal.close()
    size = path.stat().st_size
    if damage == "garbage":
        path.write_bytes(os.urandom(size))
    else:
        with open(path, "r+b") as handle:
            handle.truncate(size * 6 // 10)
    with caplog.at_level(logging.ERROR):
        reopened = TurnJournal(path)
    recovery = reopened.recovery
    assert recovery is not None
    aside = [Path(p) for p in recovery.moved_to]
    assert aside and all(p.exists() and "damaged" in p.name for p in aside)
    assert any(str(path) in r.getMessage() for r in caplog.records)
    salvaged = reopened.counts("ada")
    if damage == "garbage":
        assert recovery.salvaged == 0 and salvaged == {"pending": 0, "done": 0, "dead": 0}
    else:  # what the readable part held is back, with its state
        assert 0 < recovery.salvaged <= 300
        assert salvaged["pending"] + salvaged["done"] == recovery.salvaged
        assert salvaged["done"] > 0 and salvaged["pending"] > 0
    reopened.close()
    # The user's memory reports FAIL with the path until someone acknowledges the recovery,
    # and the queue starts and keeps taking turns meanwhile.
    memory = LongTermMemory(
        YamlMemoryManager(tmp_path / "memory", "ada"),
        writer_llm=ScriptedModel(messages=iter([])),
        journal_path=path,
    )
    report = memory.self_check()
    assert report.status == "FAIL" and any(str(path) in issue for issue in report.issues)
    memory.start()
    fresh = Turn.of("ada", [{"role": "user", "content": "hello"}])
    await memory.send(fresh)
    memory._writer().journal.acknowledge_recovery()
    assert memory.self_check().status != "FAIL"
    await memory.stop(timeout=0)
    assert TurnJournal(path).get("ada", fresh.turn_id) is not None


def test_a_damaged_wal_is_detected_instead_of_silently_dropping_turns(tmp_path: Path) -> None:
    """A crash leaves the journal with its WAL; a damaged frame in it would make SQLite drop
    every later commit without a word. The journal notices, keeps the files, and says FAIL."""
    live = tmp_path / "live.sqlite"
    journal = TurnJournal(live)
    journal._db.execute("PRAGMA wal_autocheckpoint=0")  # keep every commit in the WAL
    for turn in turns(30):
        journal.append(turn)
    crashed = tmp_path / "crashed" / "write-journal.sqlite"
    crashed.parent.mkdir()
    for suffix in ("", "-wal"):  # the files as a crash leaves them
        shutil.copyfile(f"{live}{suffix}", f"{crashed}{suffix}")
    journal.close()
    wal = Path(f"{crashed}-wal")
    data = bytearray(wal.read_bytes())
    data[len(data) // 3] ^= 0xFF  # one flipped byte, a third of the way in
    wal.write_bytes(bytes(data))
    reopened = TurnJournal(crashed)
    recovery = reopened.recovery
    assert recovery is not None and "damaged" in recovery.reason and "lost" in recovery.reason
    assert any(p.endswith("-wal") for p in recovery.moved_to)
    assert recovery.salvaged < 30  # SQLite itself reads only up to the damage...
    assert "may be lost" in recovery.describe()  # ...and the report says so
    with sqlite3.connect(recovery.moved_to[0]) as kept:  # the evidence is kept as it was
        assert kept.execute("SELECT count(*) FROM turns").fetchone()[0] == recovery.salvaged


@pytest.mark.uses("archive")
def test_a_full_disk_under_the_archive_never_fails_the_turn(
    full_disk: Path, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    with use_settings(memory_backend=f"yaml:{tmp_path / 'memory'}",
                      conversation_archive=f"sqlite:{full_disk}"):  # fmt: skip
        app = compile_graph()
        filler = fill(full_disk)
        with caplog.at_level(logging.ERROR):
            state = app.invoke(*say("My name is Ada."), context=CONTEXT)
        assert state["messages"][-1].content.startswith("[offline model]")
        assert state["memory_write"]["status"] == "journaled"  # memory is not the archive
        assert any("archiving the turn" in r.getMessage() for r in caplog.records)
        filler.unlink()
        app.invoke(*say("I live in Lisbon."), context=CONTEXT)
        archive = SqliteArchive(full_disk, "ada")
        hits = [hit for hit in archive.search("Lisbon").hits if hit.digest is None]
        assert [hit.anchor.content for hit in hits] == ["I live in Lisbon."]
