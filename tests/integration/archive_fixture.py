"""The `each_archive` fixture: a new user's conversation archive on SQLite, then on PostgreSQL."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def each_archive(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Any]:
    """A new user's conversation archive on SQLite, then on the local PostgreSQL (skipped with
    the reason when none answers); the PostgreSQL rows are cleared afterwards."""
    from memory.archive.postgres_archive import PostgresArchive
    from memory.archive.sqlite_archive import SqliteArchive
    from tests.integration.conftest import POSTGRES_URL, postgres_unreachable_reason

    user = f"archive-{uuid.uuid4().hex[:8]}"
    if request.param == "sqlite":
        yield SqliteArchive(tmp_path / "conversations", user)
        return
    if reason := postgres_unreachable_reason():
        pytest.skip(reason)
    opened = PostgresArchive(POSTGRES_URL, user)
    yield opened
    opened.clear()
