"""'Delete this user's data' on a real `langgraph dev`: the signed-in user's memories, archive
and threads go (threads through the server's own API); another user's stay."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from langgraph_sdk import get_sync_client
from langgraph_sdk.errors import NotFoundError

from memory.archive import ArchivedMessage
from memory.archive.sqlite_archive import SqliteArchive
from memory.store.backends.yaml_files import YamlMemoryManager
from tests.webapp.langgraph_server import run_langgraph_dev
from tests.webapp.test_server_mount import TINY_GRAPH, as_user

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def app_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("server-erase")


@pytest.fixture(scope="module")
def server(app_dir: Path) -> Iterator[str]:
    with run_langgraph_dev(
        app_dir,
        {"tiny_graph.py": TINY_GRAPH},
        {"tiny": "./tiny_graph.py:graph"},
        GULFSTREAM_MEMORY_BACKEND=f"yaml:{app_dir / 'data'}",
    ) as base:
        yield base


def said_in(app_dir: Path, user: str, thread_id: str, text: str) -> None:
    YamlMemoryManager(app_dir / "data", user).add(f"User says: {text}", "life", "seed")
    archive = SqliteArchive(app_dir / "data" / "conversations", user)
    archive.add([ArchivedMessage(user, thread_id, "", "m1", "user", text, time.time())])
    archive.close()


def test_delete_my_data_deletes_my_threads_on_the_server_and_nobody_elses(
    server: str, app_dir: Path
) -> None:
    alice = get_sync_client(url=server, headers={"Authorization": "Bearer token-alice"})
    bob = get_sync_client(url=server, headers={"Authorization": "Bearer token-bob"})
    alice_thread, bob_thread = (
        alice.threads.create()["thread_id"],
        bob.threads.create()["thread_id"],
    )
    said_in(app_dir, "alice", alice_thread, "My locker is 4711")
    said_in(app_dir, "bob", bob_thread, "My locker is 1234")
    api = f"{server}/memories/api/erase-user"

    refused = httpx.post(api, json={"confirm": "bob"}, headers=as_user("token-alice"))
    assert refused.status_code == 400

    done = httpx.post(api, json={"confirm": "alice"}, headers=as_user("token-alice"), timeout=60)
    assert done.status_code == 200, done.text
    report = done.json()
    assert report["user_id"] == "alice" and report["threads_deleted"] == [alice_thread]
    assert report["removed"]["archive: messages"] == 1
    with pytest.raises(NotFoundError):
        alice.threads.get(alice_thread)
    assert bob.threads.get(bob_thread)["thread_id"] == bob_thread
    assert YamlMemoryManager(app_dir / "data", "alice").all_items() == {}
    assert len(YamlMemoryManager(app_dir / "data", "bob").list_items()) == 1
    assert SqliteArchive(app_dir / "data" / "conversations", "bob").count() == 1
