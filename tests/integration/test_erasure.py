"""Erase for good, on real files: conversations through LocalSession with the offline model,
then `erase(id)` / `erase_user()`, then a byte scan of every file the deployment wrote
(`.gz` opened, SQLite files and their WAL read as bytes)."""

from __future__ import annotations

import gzip
import json
import random
import string
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from langgraph.checkpoint.sqlite import SqliteSaver

from graph.cli.session import LocalSession
from graph.context import Context
from memory.archive import archives
from memory.errors import MemoryNotFound
from memory.integration.archive_location import archive_spec
from memory.integration.settings import get_settings, use_settings
from memory.long_term import LongTermMemory
from memory.registry import registry
from tests.integration.conftest import POSTGRES_URL, postgres_unreachable_reason

THREADS = "threads.sqlite"


def planted_word() -> str:
    """A made-up place name no other test (or user) of a shared database says."""
    return "Qu" + "".join(random.choices(string.ascii_lowercase, k=8))


def facts_of(place: str, sibling: str) -> list[str]:
    return [
        f"I live in {place}, at 18 Wenyi Road.",
        f"My sister is called {sibling}.",
        "My name is Ada.",
    ]


def files_holding(folder: Path, needles: list[str], skip: tuple[str, ...] = ()) -> list[str]:
    """The files under `folder` whose bytes hold any needle, in any case (an FTS index keeps
    lower-cased terms); `.gz` files are read decompressed, SQLite files and WALs as they are."""
    # As UTF-8, and as JSON writes it with ensure_ascii (a "\u6587" escape hides Chinese text).
    wanted = [form.lower().encode() for n in needles for form in {n, json.dumps(n)[1:-1]}]
    found = []
    for path in sorted(folder.rglob("*")):
        if not path.is_file() or path.name in skip:
            continue
        data = path.read_bytes()
        if path.suffix == ".gz":
            data = gzip.decompress(data)
        data = data.lower()
        if any(needle in data for needle in wanted):
            found.append(str(path.relative_to(folder)))
    return found


async def tell(tmp_path: Path, user: str, facts: list[str]) -> LongTermMemory:
    async with LocalSession(Context(user_id=user, model="offline/rules"), tmp_path) as session:
        for text in facts:
            await session.say(f"{user}-1", text)
        await session.wait_for_writes()
        assert session.memory is not None
        session.memory.recall_log.flush()
        if session.memory.snapshots is not None:
            session.memory.snapshots.flush()
        return session.memory


def databases(paths: list[str]) -> set[str]:
    """File names with a WAL counted as its database (a checkpoint moves rows into the file)."""
    return {path.removesuffix("-wal") for path in paths}


def memory_about(memory: LongTermMemory, word: str) -> str:
    return next(i for i, item in memory.manager.list_items().items() if word in item.description)


@pytest.fixture(params=["yaml", "sqlite"])
def deployment(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Path]:
    """A deployment whose every file lives in tmp_path (memory, archive, journal, threads),
    with snapshots on."""
    backend = {
        "yaml": f"yaml:{tmp_path / 'memory'}",
        "sqlite": f"sqlite:{tmp_path / 'memory' / 'memory.db'}",
    }[request.param]
    with use_settings(memory_backend=backend, snapshot_seconds=0.05):
        yield tmp_path
    archives.clear()


async def test_erase_leaves_the_text_in_no_file_but_the_threads(deployment: Path) -> None:
    place = planted_word()
    memory = await tell(deployment, "ada", facts_of(place, "Mei"))
    archive = archives.open(archive_spec(), "ada")
    assert archive is not None
    before = files_holding(deployment, [place, "Wenyi"])
    # Where it was said: store, archive, journal, trace, snapshot, and the thread itself.
    assert len(before) >= 5, before
    target = memory_about(memory, place)

    report = memory.erase(target, archive=archive)

    assert files_holding(deployment, [place, "Wenyi"]) == [THREADS]
    assert report.removed["archive: messages"] >= 1
    assert report.removed["journal: turns"] >= 1
    assert any("checkpoints" in note for note in report.notes)
    with pytest.raises(MemoryNotFound):
        memory.manager.get(target, include_deleted=True)
    assert not archive.search(place).hits
    assert all(place not in m["description"] for m in memory.get_related_memory_from(
        f"where do I live, {place}?", mode="mechanical"))  # fmt: skip
    # The rest of what was said stays where it was.
    assert any("Mei" in item.description for item in memory.manager.list_items().values())
    assert any("Mei" in m.content for m in archive.messages())
    assert "Mei" in " ".join(d.text for d in archive.digests())  # feature: digests
    assert [p for p in files_holding(deployment, ["Mei"]) if "backup" in p]  # snapshot kept


async def test_erase_of_a_chinese_fact_leaves_no_byte_of_it(deployment: Path) -> None:
    memory = await tell(deployment, "ada", ["我住在杭州文一路18号。", "我的妹妹是美玲。"])
    archive = archives.open(archive_spec(), "ada")
    assert archive is not None
    assert len(files_holding(deployment, ["文一路"])) >= 4
    memory.erase(memory_about(memory, "文一路"), archive=archive)
    assert files_holding(deployment, ["文一路"]) == [THREADS]
    assert any("美玲" in item.description for item in memory.manager.list_items().values())
    assert any("美玲" in m.content for m in archive.messages())


async def test_erase_after_forget_also_removes_what_forgetting_kept_for_a_restore(
    deployment: Path,
) -> None:
    from memory.archive.reconcile import reconcile

    place = planted_word()
    memory = await tell(deployment, "ada", facts_of(place, "Mei"))
    archive = archives.open(archive_spec(), "ada")
    assert archive is not None
    target = memory_about(memory, place)
    memory.manager.delete(target, "forget where I live")
    reconcile(memory.manager, archive)  # hidden, and the day's digest kept as it was
    assert target in archive.forgotten()
    assert len(files_holding(deployment, [place])) >= 4  # forgotten is not erased

    report = memory.erase(target, archive=archive)

    assert files_holding(deployment, [place, "Wenyi"]) == [THREADS]
    assert report.removed["archive: forgotten records"] == 1
    assert archive.forgotten() == {}


async def test_erase_of_an_unknown_id_says_so_and_changes_nothing(deployment: Path) -> None:
    memory = await tell(deployment, "ada", facts_of(planted_word(), "Mei"))
    items = dict(memory.manager.all_items())
    with pytest.raises(MemoryNotFound):
        memory.erase("nope1234")
    assert memory.manager.all_items() == items


async def test_erase_user_leaves_nothing_of_them_and_everything_of_the_other(
    deployment: Path,
) -> None:
    ada_place, bob_place = planted_word(), planted_word()
    ada = await tell(deployment, "ada", facts_of(ada_place, "Meiling"))
    bob = await tell(deployment, "bob", [f"I live in {bob_place}.", "My brother is called Rui."])
    ada_said = [ada_place, "Wenyi", "Meiling"]
    assert files_holding(deployment, ada_said)
    bob_files = databases(files_holding(deployment, [bob_place, "Rui"]))
    bob_items = dict(bob.manager.all_items())
    bob_archive = archives.open(archive_spec(), "bob")
    assert bob_archive is not None
    bob_messages, bob_digests = bob_archive.messages(), bob_archive.digests()

    with SqliteSaver.from_conn_string(str(deployment / THREADS)) as saver:
        report = ada.erase_user(archive=archives.open(archive_spec(), "ada"), threads=saver)

    assert files_holding(deployment, ada_said) == []
    assert report.threads_deleted == ["ada-1"]
    assert report.removed["archive: messages"] >= 3
    # Bob: the same memories, archive and digests, in the same files.
    registry.clear()
    bob_again = registry.open(get_settings().memory_backend, "bob")
    assert bob_again.manager.all_items() == bob_items
    assert bob_archive.messages() == bob_messages and bob_archive.digests() == bob_digests
    assert databases(files_holding(deployment, [bob_place, "Rui"])) == bob_files
    # Ada can start again from nothing: no snapshot brings her back.
    ada_again = registry.open(get_settings().memory_backend, "ada")
    assert ada_again.manager.all_items() == {}


@pytest.mark.postgres
async def test_erase_on_postgres_leaves_no_row_holding_the_text(tmp_path: Path) -> None:
    reason = postgres_unreachable_reason()
    if reason:
        pytest.skip(reason)
    import psycopg

    suffix = planted_word().lower()
    ada, bob = f"ada-{suffix}", f"bob-{suffix}"
    ada_place, bob_place = planted_word(), planted_word()
    with use_settings(memory_backend=f"postgres:{POSTGRES_URL}"):
        memory = await tell(tmp_path, ada, facts_of(ada_place, "Meiling"))
        other = await tell(tmp_path, bob, [f"I live in {bob_place}."])
        archive = archives.open(archive_spec(), ada)
        assert archive is not None and archive.backend == "postgres"
        assert rows_holding(psycopg, ada_place)
        report = memory.erase(memory_about(memory, ada_place), archive=archive)
        assert rows_holding(psycopg, ada_place) == []
        assert report.removed["archive: messages"] >= 1
        assert rows_holding(psycopg, "Meiling")  # the other facts stay
        assert rows_holding(psycopg, ada)
        memory.erase_user(archive=archive)
        assert rows_holding(psycopg, "Meiling") == []
        assert rows_holding(psycopg, ada) == []  # not even the user's id is left in a row
        assert [p for p in tmp_path.rglob("*") if ada in p.name] == []
        assert rows_holding(psycopg, bob_place)  # the other user is untouched
        assert other.manager.list_items()
        assert files_holding(tmp_path, [ada_place, "Meiling"], skip=(THREADS,)) == []
        other.erase_user(archive=archives.open(archive_spec(), bob))
    archives.clear()


def rows_holding(psycopg: Any, needle: str) -> list[str]:
    """`table: count` for every table of the database with a row whose text holds `needle`."""
    found = []
    with psycopg.connect(POSTGRES_URL, autocommit=True) as conn:
        tables = conn.execute(
            "SELECT table_schema, table_name FROM information_schema.tables "
            "WHERE table_type = 'BASE TABLE' AND table_schema NOT IN "
            "('pg_catalog', 'information_schema')"
        ).fetchall()
        for schema, table in tables:
            count = conn.execute(
                f'SELECT count(*) FROM "{schema}"."{table}" AS t WHERE t::text ILIKE %s',
                (f"%{needle}%",),
            ).fetchone()[0]
            if count:
                found.append(f"{table}: {count}")
    return found


async def test_make_erase_asks_first_then_erases_one_memory_then_the_user(
    deployment: Path,
) -> None:
    import os
    import subprocess
    import sys

    place = planted_word()
    memory = await tell(deployment, "ada", facts_of(place, "Meiling"))
    target = memory_about(memory, place)
    settings = get_settings()
    env = {**os.environ, "GULFSTREAM_MEMORY_BACKEND": settings.memory_backend,
           "GULFSTREAM_DATA_DIR": settings.data_dir}  # fmt: skip

    def erase(*args: str) -> subprocess.CompletedProcess[str]:
        command = [sys.executable, "-m", "memory.integration.admin.erase", "--user", "ada", *args]
        return subprocess.run(
            command, env=env, cwd=deployment, capture_output=True, text=True, timeout=120,
            stdin=subprocess.DEVNULL,
        )  # fmt: skip

    refused = erase("--id", target)
    assert refused.returncode == 1 and "--yes" in refused.stderr
    assert files_holding(deployment, [place], skip=(THREADS,))  # nothing was erased
    unknown = erase("--id", "nope1234", "--yes")
    assert unknown.returncode == 1 and "nope1234" in unknown.stderr

    one = erase("--id", target, "--yes")
    assert one.returncode == 0, one.stderr
    assert "archive: messages" in one.stdout and "checkpoints" in one.stdout, one.stdout
    assert files_holding(deployment, [place, "Wenyi"]) == [THREADS]
    assert files_holding(deployment, ["Meiling"], skip=(THREADS,))

    everything = erase("--threads", str(deployment / THREADS), "--yes")
    assert everything.returncode == 0, everything.stderr
    assert "threads deleted: ada-1" in everything.stdout
    assert files_holding(deployment, ["Meiling", place, "Wenyi"]) == []


def test_erase_and_erase_user_on_every_backend_keep_the_other_user(
    open_manager: Any, unique_user: str, tmp_path: Path
) -> None:
    """YAML, SQLite and the LangGraph stores (in memory, SQLite, PostgreSQL): erase takes one
    memory with its vector and history; erase_user takes every key of the user, none of
    another's, and a snapshot does not bring anything back."""
    from memory.retrieval.vector_store import vector_store_for
    from memory.store.snapshots import restore_if_empty

    other_user = f"{unique_user}.other"  # a "." in the id: a namespace label of its own
    manager, other = open_manager(unique_user), open_manager(other_user)
    first = manager.add("Lives in Tromso", "home")
    second = manager.add("Has a cat named Miso", "pets")
    merged = manager.add("Knows Tromso well", "home")
    manager.merge(second, first, "Has a cat named Miso", "pets", "one card")  # keeps its history
    manager.set_core_context(human="Lives in Tromso; Has a cat named Miso")
    other.add("Lives in Tromso too", "home")
    memory = LongTermMemory(manager, embeddings="off", data_dir=tmp_path / "data")
    assert "Lives in Tromso" in json.dumps(manager.get(second).to_dict())

    report = memory.erase(first)

    assert set(manager.all_items()) == {second, merged}
    history = json.dumps([manager.get(i, True).to_dict() for i in (second, merged)])
    assert "Lives in Tromso" not in history
    assert "Tromso" not in manager.get_core_context().get("human", "")
    assert report.removed[f"{manager.backend} store: memories"] == 1

    vector_store_for(manager).put([])  # the vectors' place exists for every backend
    memory.erase_user()

    fresh = open_manager(unique_user)
    assert fresh.all_items() == {} and fresh.get_core_context() == {}
    assert not restore_if_empty(fresh)
    assert [i.description for i in open_manager(other_user).list_items().values()] == [
        "Lives in Tromso too"
    ]


def test_erase_drops_consolidation_vectors_too_and_keeps_the_other_users(
    open_manager: Any, unique_user: str, tmp_path: Path
) -> None:
    """Consolidation keeps its own vectors of each description beside retrieval's: erase takes
    the erased memory's from both sets, erase_user takes every one of the user's, none of
    another's."""
    import numpy as np

    from memory.retrieval.vector_store import VECTOR_PURPOSES, StoredVector, vector_store_for

    def vector(memory_id: str) -> StoredVector:
        return StoredVector(memory_id, "m", "h", np.ones(4, dtype=np.float32))

    other_user = f"{unique_user}.other"
    manager, other = open_manager(unique_user), open_manager(other_user)
    kept, erased = manager.add("Likes jazz", "music"), manager.add("Lives in Tromso", "home")
    theirs = other.add("Lives in Tromso too", "home")
    for purpose in VECTOR_PURPOSES:
        vector_store_for(manager, purpose).put([vector(kept), vector(erased)])
        vector_store_for(other, purpose).put([vector(theirs)])
    memory = LongTermMemory(manager, embeddings="off", data_dir=tmp_path / "data")

    memory.erase(erased)
    for purpose in VECTOR_PURPOSES:
        assert {v.memory_id for v in vector_store_for(manager, purpose).load()} == {kept}

    memory.erase_user()
    for purpose in VECTOR_PURPOSES:
        assert list(vector_store_for(open_manager(unique_user), purpose).load()) == []
        assert [v.memory_id for v in vector_store_for(other, purpose).load()] == [theirs]


async def test_erase_user_leaves_no_file_folder_or_byte_carrying_the_user(
    deployment: Path,
) -> None:
    """An erase promises no trace on disk: after erase_user, the user's id is in no file or
    folder name under the data folder and in no byte of any file (databases, their WAL,
    snapshots), while the other user's files stay."""
    user = "erin" + planted_word().lower()  # a user id no other text contains
    await tell(deployment, user, facts_of(planted_word(), "Meiling"))
    await tell(deployment, "bob", ["I live in Leeds.", "My brother is called Rui."])
    erin = registry.open(get_settings().memory_backend, user)
    assert [p for p in deployment.rglob("*") if user in p.name]  # it had files of its own
    assert files_holding(deployment, [user])

    with SqliteSaver.from_conn_string(str(deployment / THREADS)) as saver:
        erin.erase_user(archive=archives.open(archive_spec(), user), threads=saver)
    registry.clear()
    archives.clear()

    named = [str(p.relative_to(deployment)) for p in deployment.rglob("*") if user in p.name]
    assert named == []
    assert files_holding(deployment, [user]) == []
    assert files_holding(deployment, ["Leeds", "Rui"])  # bob's memories and archive stay
