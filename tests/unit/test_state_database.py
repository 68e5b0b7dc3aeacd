"""Which database holds the records beside the memories, and the portable SQL that talks to it."""

from __future__ import annotations

import pytest

from memory.integration.archive_location import archive_spec  # feature: archive
from memory.integration.settings import Settings
from memory.store.state_db import pg_schema, pg_sql, upsert

PG = "postgresql://postgres@db.internal:5432/app"


@pytest.mark.parametrize(
    ("backend", "environ", "expected"),
    [
        ("yaml:data/memory", {"DATABASE_URI": PG}, None),  # files stay beside their files
        ("sqlite:data/memory.db", {}, None),
        (f"postgres:{PG}", {}, PG),
        ("store", {"DATABASE_URI": PG}, PG),  # the platform's database
        ("store", {"POSTGRES_URI": "postgres://db/app"}, "postgres://db/app"),
        ("store", {"DATABASE_URI": ":memory:"}, None),  # `langgraph dev`'s in-process runtime
        ("store", {"DATABASE_URI": ":memory:", "POSTGRES_URI": PG}, PG),
        ("store", {}, None),
    ],
)
def test_the_shared_database_is_the_one_the_archive_uses(
    backend: str, environ: dict[str, str], expected: str | None
) -> None:
    settings = Settings.from_env({"GULFSTREAM_MEMORY_BACKEND": backend, **environ})
    assert settings.shared_database == expected
    archive = archive_spec(settings)  # feature: archive
    wanted = f"postgres:{expected}" if expected else "sqlite:"  # feature: archive
    assert archive == wanted if expected else archive.startswith(wanted)  # feature: archive


def test_statements_are_written_once_for_both_dialects() -> None:
    sql = upsert("admissions", ("user_id", "turn_id", "said"), ("user_id", "turn_id"))
    assert sql == (
        "INSERT INTO {p}admissions (user_id, turn_id, said) VALUES (?, ?, ?) "
        "ON CONFLICT (user_id, turn_id) DO UPDATE SET said = excluded.said"
    )
    assert pg_sql(sql).startswith("INSERT INTO gulfstream_admissions (")
    assert "VALUES (%s, %s, %s)" in pg_sql(sql)
    assert (
        pg_sql("SELECT 1 WHERE x LIKE 'a%' AND y = ?") == "SELECT 1 WHERE x LIKE 'a%%' AND y = %s"
    )
    assert "WITHOUT ROWID" not in pg_schema("CREATE TABLE {p}t (k TEXT PRIMARY KEY) WITHOUT ROWID;")
