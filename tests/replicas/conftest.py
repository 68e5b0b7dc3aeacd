"""Two real `langgraph dev` replicas of the app on one PostgreSQL, and the stub model they share."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.e2e.server import DevServer, copy_app, stub_model_env
from tests.e2e.stub_openai import StubOpenAI
from tests.integration.conftest import require_postgres
from tests.replicas.replica import Replica
from tests.replicas.stub import replica_reply

STARTUP_SECONDS = 180  # two servers importing the app at once on two loaded cores


@pytest.fixture(scope="module")
def postgres_dsn() -> str:
    return require_postgres()


@pytest.fixture(scope="module")
def user_id() -> str:
    return f"replica-{uuid.uuid4().hex[:10]}"


@pytest.fixture(scope="module")
def replicas(
    postgres_dsn: str, user_id: str, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[Replica, Replica]]:
    """Replicas A and B: separate app copies, ports and data folders, one database; both
    serve graph runs (server write mode: each replica runs its own memory_writer) and the
    editor. Started together, stopped (or already killed) afterwards; the user's rows are
    deleted."""
    root = tmp_path_factory.mktemp("replicas")
    with StubOpenAI(script=replica_reply) as stub:
        servers = []
        for name in ("a", "b"):
            app = copy_app(root / name)
            env = {
                **stub_model_env(stub),
                "GULFSTREAM_MEMORY_BACKEND": f"postgres:{postgres_dsn}",
                "GULFSTREAM_WRITE_MODE": "server",
                "GULFSTREAM_ADMISSION": "false",  # every turn reaches the writer at once
                "GULFSTREAM_DATA_DIR": str(app / "data"),
            }
            servers.append((name, app, DevServer(app, env)))
        try:
            for name, _app, dev in servers:
                if not dev.wait_ready(STARTUP_SECONDS):
                    pytest.fail(f"replica {name} did not become ready:\n{dev.log()[-5000:]}")
            a, b = (Replica(name, dev, app / "data", user_id, stub) for name, app, dev in servers)
            yield a, b
        finally:
            for _name, _app, dev in servers:
                dev.stop()
            delete_rows(postgres_dsn, user_id)


def delete_rows(dsn: str, user_id: str) -> None:
    """Leave the shared test database as we found it: the user's memories, records and
    archive, erased as `make erase` would."""
    from memory.archive.postgres_archive import PostgresArchive
    from memory.long_term import LongTermMemory
    from memory.store.factory import open_memory_manager

    manager = open_memory_manager(f"postgres:{dsn}", user_id)
    memory = LongTermMemory(manager, embeddings="off", state_database=dsn)
    memory.erase_user(archive=PostgresArchive(dsn, user_id))


def files_in(folder: Path) -> list[str]:
    """What `find <folder> -type f` lists, relative to it."""
    if not folder.exists():
        return []
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*") if p.is_file())
