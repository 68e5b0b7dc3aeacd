"""`make import-chats` as a user runs it (the CLI in its own process, a real store, the offline
model): past chats land in the archive and in memory with their dates, a new thread recalls
them, a second import changes nothing, a killed one finishes on the next run, and a bad file
is refused with nothing written."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from graph.cli.session import LocalSession
from graph.context import Context
from graph.prompting import memory_lines
from memory.integration.archive_location import existing_archive
from memory.integration.importing.formats import read_export
from memory.integration.settings import Settings, get_settings, use_settings
from memory.store.factory import open_memory_manager
from memory.store.item import local_date, now_iso, parse_time
from tests.integration.conftest import POSTGRES_URL, postgres_unreachable_reason

pytestmark = pytest.mark.slow  # deleted with the archive feature (docs/CUSTOMIZING.md)

ROOT = Path(__file__).parents[2]
DATA = ROOT / "tests" / "data"
CHATGPT, CLAUDE = DATA / "import_chatgpt.json", DATA / "import_claude.json"
JSONL = DATA / "import_chats.jsonl"


def import_chats(settings: Settings, *args: str, user: str = "ada", wait: bool = True) -> Any:
    """`python -m memory.integration.admin.import_chats` in its own process, on the test's
    deployment."""
    env = {**os.environ, "GULFSTREAM_MEMORY_BACKEND": settings.memory_backend,
           "GULFSTREAM_DATA_DIR": settings.data_dir}  # fmt: skip
    command = [sys.executable, "-m", "memory.integration.admin.import_chats", "--user", user, *args]
    Path(settings.data_dir).mkdir(parents=True, exist_ok=True)
    if not wait:
        return subprocess.Popen(command, env=env, cwd=settings.data_dir, text=True,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE)  # fmt: skip
    return subprocess.run(command, env=env, cwd=settings.data_dir, capture_output=True,
                          text=True, timeout=300)  # fmt: skip


def state(user: str = "ada") -> tuple[list[tuple[str, str, list[str]]], int]:
    """What a second import must not change: each memory (id, description, history times)
    and how many messages the archive holds."""
    manager = open_memory_manager(get_settings().memory_backend, user)
    items = sorted((memory_id, item.description, [e["time"] for e in item.history])
                   for memory_id, item in manager.all_items().items())  # fmt: skip
    archive = existing_archive(user)
    return items, archive.count() if archive is not None else 0


def without_ids(found: tuple[list[tuple[str, str, list[str]]], int]) -> Any:
    """`state` without the memory ids (two separate imports draw different random ids)."""
    items, count = found
    return sorted((description, times) for _, description, times in items), count


def test_past_chats_are_archived_and_remembered_with_their_dates(clean_process: Settings) -> None:
    bob = open_memory_manager(clean_process.memory_backend, "bob")
    bob.add("Bob lives in Oslo", "home")
    before_bob = state("bob")

    done = import_chats(clean_process, "--file", str(CHATGPT))
    assert done.returncode == 0, done.stderr
    assert "format: chatgpt" in done.stdout and "conversations: 4 imported" in done.stdout
    assert "failures: 0" in done.stdout and "memory changes: " in done.stdout
    assert "turns [" in done.stderr  # the progress line

    said = next(m for c in read_export(CHATGPT).conversations for m in c.messages
                if m.role == "user" and "softball" in m.text)  # fmt: skip
    archive = existing_archive("ada")
    assert archive is not None
    [hit, *_] = archive.search("softball").hits
    assert hit.anchor.content == said.text and hit.anchor.timestamp == said.time

    manager = open_memory_manager(clean_process.memory_backend, "ada")
    [item] = [i for i in manager.all_items().values() if "softball" in i.description]
    assert item.history[0]["time"] == said.said_at == item.latest_update_time
    assert parse_time(item.history[0]["time"]).year == 2025  # type: ignore[union-attr]
    assert state("bob") == before_bob  # another user's memory is untouched


async def test_a_new_thread_recalls_what_was_imported(clean_process: Settings) -> None:
    assert import_chats(clean_process, "--file", str(CLAUDE), "--quiet").returncode == 0
    with use_settings(write_mode="inline"):
        async with LocalSession(Context(user_id="ada", model="offline/rules"),
                                clean_process.data_dir) as session:  # fmt: skip
            reply = await session.say("a-new-thread", "Do you remember what I do? A carpenter?")
    [found] = [m for m in reply.related_memories[:5] if "carpenter" in m["description"]]
    assert "carpenter" in reply.text
    # the chat prompt dates it by the day it was said in the imported chat, not today
    said = next(m for c in read_export(CLAUDE).conversations for m in c.messages
                if m.role == "user" and "carpenter" in m.text)  # fmt: skip
    assert found["created_time"] == said.said_at
    assert f"(said {local_date(said.said_at)}" in memory_lines([found])
    assert local_date(said.said_at) != local_date(now_iso())


@pytest.mark.parametrize(
    ("export", "backend"), [(CHATGPT, "yaml"), (CLAUDE, "sqlite"), (JSONL, "yaml")]
)
def test_importing_twice_changes_nothing(
    clean_process: Settings, tmp_path: Path, export: Path, backend: str
) -> None:
    spec = f"sqlite:{tmp_path / 'memory.sqlite'}" if backend == "sqlite" else None
    settings = clean_process.with_changes(memory_backend=spec) if spec else clean_process
    with use_settings(settings):
        first = import_chats(settings, "--file", str(export), "--quiet")
        assert first.returncode == 0, first.stderr
        after_first = state()
        assert after_first[0] and after_first[1] > 90
        again = import_chats(settings, "--file", str(export), "--quiet")
        assert again.returncode == 0, again.stderr
        assert "0 written" in again.stdout and "memory changes: none" in again.stdout
        assert "(0 newly archived)" in again.stdout
        assert state() == after_first


@pytest.mark.parametrize("how", [signal.SIGKILL, signal.SIGTERM])
def test_an_interrupted_import_finishes_on_the_next_run(
    clean_process: Settings, tmp_path: Path, how: signal.Signals
) -> None:
    whole = clean_process.with_changes(memory_backend=f"yaml:{tmp_path / 'whole'}",
                                       data_dir=str(tmp_path / "whole-data"))  # fmt: skip
    with use_settings(whole):
        assert import_chats(whole, "--file", str(CHATGPT), "--quiet").returncode == 0
        expected = without_ids(state())

    running = import_chats(clean_process, "--file", str(CHATGPT), wait=False)
    assert running.stderr is not None
    seen = ""
    while "turns [" not in seen or int(seen.rsplit("] ", 1)[1].split("/")[0]) < 10:
        seen += os.read(running.stderr.fileno(), 200).decode()  # the progress line
        assert running.poll() is None, "the import ended before it could be interrupted"
    running.send_signal(how)
    out, _ = running.communicate(timeout=60)
    assert running.returncode != 0
    if how == signal.SIGTERM:  # asked to stop: it ends after the turn it was writing
        assert "stopped: interrupted after" in out
    partial = state()
    assert 0 < len(partial[0]) < len(expected[0])

    resumed = import_chats(clean_process, "--file", str(CHATGPT), "--quiet")
    assert resumed.returncode == 0, resumed.stderr
    assert "written before" in resumed.stdout and "failures: 0" in resumed.stdout
    assert without_ids(state()) == expected


def test_a_bad_file_is_refused_and_nothing_is_written(
    clean_process: Settings, tmp_path: Path
) -> None:
    broken = tmp_path / "conversations.json"
    broken.write_text(CHATGPT.read_text()[:5000])
    done = import_chats(clean_process, "--file", str(broken))
    assert done.returncode == 2 and done.stdout == ""
    assert f"{broken}: broken JSON at line" in done.stderr
    memory = Path(clean_process.memory_backend.removeprefix("yaml:"))
    assert not memory.exists() or not any(memory.iterdir())

    missing = import_chats(clean_process, "--file", str(tmp_path / "nope.json"))
    assert missing.returncode == 2 and "nope.json: cannot be read" in missing.stderr
    server_store = import_chats(clean_process, "--file", str(JSONL), "--backend", "store")
    assert server_store.returncode == 2 and "--backend postgres:" in server_store.stderr


def test_a_malformed_conversation_is_skipped_and_the_rest_imported(
    clean_process: Settings, tmp_path: Path
) -> None:
    conversations = json.loads(CHATGPT.read_text())
    conversations[0] = {**conversations[0], "title": "Broken one", "current_node": "nowhere"}
    path = tmp_path / "conversations.json"
    path.write_text(json.dumps(conversations))
    done = import_chats(clean_process, "--file", str(path), "--quiet")
    assert done.returncode == 0, done.stderr
    assert "conversations: 3 imported, 1 skipped" in done.stdout
    assert "skipped conversation #1 'Broken one': current_node 'nowhere' is not in its mapping" in (
        done.stdout
    )
    assert state()[1] == sum(len(c.messages) for c in read_export(path).conversations)


@pytest.mark.postgres
def test_a_postgres_store_imports_once_too(clean_process: Settings, unique_user: str) -> None:
    reason = postgres_unreachable_reason()
    if reason:
        pytest.skip(reason)
    settings = clean_process.with_changes(memory_backend=f"postgres:{POSTGRES_URL}")
    try:
        with use_settings(settings):
            first = import_chats(settings, "--file", str(JSONL), "--quiet", user=unique_user)
            assert first.returncode == 0, first.stderr
            after_first = state(unique_user)
            assert after_first[0] and after_first[1] > 90
            again = import_chats(settings, "--file", str(JSONL), "--quiet", user=unique_user)
            assert again.returncode == 0 and "memory changes: none" in again.stdout
            assert state(unique_user) == after_first
    finally:  # the shared database as it was: the user erased as make erase does
        env = {**os.environ, "GULFSTREAM_DATA_DIR": settings.data_dir}
        subprocess.run(
            [sys.executable, "-m", "memory.integration.admin.erase", "--user", unique_user, "--backend",  # noqa: E501
             settings.memory_backend, "--keep-threads", "--yes"],
            env=env, cwd=settings.data_dir, capture_output=True, timeout=120, check=True,
        )  # fmt: skip
