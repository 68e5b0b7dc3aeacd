"""Fixtures that open a real memory manager over every backend: YAML, SQLite, LangGraph stores."""

from __future__ import annotations

import os
import sqlite3
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from memory.store.backends.langgraph_store import StoreMemoryManager, namespace_label
from memory.store.backends.sqlite_db import SqliteMemoryManager
from memory.store.backends.yaml_files import YamlMemoryManager
from memory.store.manager import BaseMemoryManager
from tests.integration.archive_fixture import each_archive  # noqa: F401  # feature: archive

POSTGRES_URL = os.environ.get(
    "GULFSTREAM_TEST_POSTGRES", "postgresql://postgres@127.0.0.1:5432/test"
)
BACKENDS = [
    "yaml",
    "sqlite",
    "store-inmemory",
    "store-sqlite",
    pytest.param("store-postgres", marks=pytest.mark.postgres),
]

OpenManager = Callable[..., BaseMemoryManager]


def postgres_unreachable_reason() -> str | None:
    """None when the local PostgreSQL answers, else why not (the test is then skipped)."""
    try:
        import psycopg
    except ImportError:
        return "psycopg is not installed (pip install -e '.[postgres]')"
    try:
        with psycopg.connect(POSTGRES_URL, connect_timeout=3):
            return None
    except psycopg.OperationalError as exc:
        return f"PostgreSQL at {POSTGRES_URL} is unreachable: {exc}"


def require_postgres() -> str:
    """The test database's URL; when it does not answer, the test is skipped, or failed under
    CI (a green run must not hide that the PostgreSQL tests never ran)."""
    reason = postgres_unreachable_reason()
    if reason is not None:
        if os.environ.get("CI", "").lower() in {"true", "1"}:
            pytest.fail(f"{reason} (CI is set: the PostgreSQL tests must run)", pytrace=False)
        pytest.skip(reason)
    return POSTGRES_URL


class _Stores:
    """Opens a fresh store object over the same data each time; closes them all at the end."""

    def __init__(self, kind: str, tmp_path: Path) -> None:
        self.kind, self.tmp_path = kind, tmp_path
        self.closers: list[Callable[[], Any]] = []
        self.shared: Any = None

    def open(self) -> Any:
        if self.kind == "store-inmemory":
            from langgraph.store.memory import InMemoryStore

            # An in-memory store lives as long as its object: "reopening" shares it.
            self.shared = self.shared or InMemoryStore()
            return self.shared
        if self.kind == "store-sqlite":
            from langgraph.store.sqlite import SqliteStore

            conn = sqlite3.connect(
                self.tmp_path / "store.db", check_same_thread=False, isolation_level=None
            )
            self.closers.append(conn.close)
            store = SqliteStore(conn)
            store.setup()
            return store
        from langgraph.store.postgres import PostgresStore
        from psycopg import Connection
        from psycopg.rows import dict_row

        pg = Connection.connect(
            POSTGRES_URL, autocommit=True, prepare_threshold=0, row_factory=dict_row
        )
        self.closers.append(pg.close)
        store = PostgresStore(pg)
        store.setup()
        return store

    def close(self) -> None:
        for close in reversed(self.closers):
            close()


@pytest.fixture
def unique_user() -> str:
    """A user id no other test (or earlier run against the shared Postgres) has used."""
    return f"user-{uuid.uuid4().hex[:12]}"


@pytest.fixture(params=BACKENDS)
def backend(request: pytest.FixtureRequest) -> str:
    if request.param == "store-postgres":
        reason = postgres_unreachable_reason()
        if reason:
            pytest.skip(reason)
    return str(request.param)


@pytest.fixture(params=["yaml", "sqlite"])
def file_backend(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """A memory backend on real files in the test's folder: a YAML folder, then a SQLite file."""
    if request.param == "yaml":
        return f"yaml:{tmp_path / 'memory'}"
    return f"sqlite:{tmp_path / 'memory.sqlite'}"


@pytest.fixture
def open_manager(backend: str, tmp_path: Path) -> Iterator[OpenManager]:
    """`open_manager(user_id)` → a new manager over this test's storage; call again to reopen."""
    stores = _Stores(backend, tmp_path)
    opened: list[BaseMemoryManager] = []
    users: set[str] = set()

    def open_(user_id: str) -> BaseMemoryManager:
        manager: BaseMemoryManager
        if backend == "yaml":
            manager = YamlMemoryManager(tmp_path / "yaml", user_id)
        elif backend == "sqlite":
            manager = SqliteMemoryManager(tmp_path / "memory.db", user_id)
        else:
            manager = StoreMemoryManager(stores.open(), user_id)
            users.add(user_id)
        opened.append(manager)
        return manager

    yield open_
    for manager in opened:
        if isinstance(manager, SqliteMemoryManager):
            manager.close()
    if backend == "store-postgres" and users:
        _delete_postgres_rows(users)
    stores.close()


@pytest.fixture
def manager(open_manager: OpenManager, unique_user: str) -> BaseMemoryManager:
    """A manager for a fresh user over the parametrised backend."""
    return open_manager(unique_user)


def _delete_postgres_rows(users: set[str]) -> None:
    """Leave the shared test database as we found it."""
    import psycopg

    with psycopg.connect(POSTGRES_URL, autocommit=True) as conn:
        for user in users:
            conn.execute(
                "DELETE FROM store WHERE prefix LIKE %s", (f"memories%.{namespace_label(user)}",)
            )
