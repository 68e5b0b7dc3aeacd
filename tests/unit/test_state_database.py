"""Which database holds the records beside the memories, and the portable SQL that talks to it."""

from __future__ import annotations

from pathlib import Path

import pytest

from graph.archiving import archive_spec
from graph.settings import Settings
from memory.consolidation.plan import ConsolidationPlan, PlanStep
from memory.consolidation.state import SCHEMA, DatabaseState
from memory.document import Change
from memory.state_db import SqliteState, pg_schema, pg_sql, upsert

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
    if expected is not None:
        assert archive_spec(settings) == f"postgres:{expected}"
    else:
        assert archive_spec(settings).startswith("sqlite:")


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


def test_the_consolidation_row_counts_in_sql_and_keeps_one_plan(tmp_path: Path) -> None:
    db = SqliteState(tmp_path / "state.sqlite", SCHEMA)
    ada, bob = DatabaseState(db, "ada"), DatabaseState(db, "bob")
    assert [ada.add_write() for _ in range(3)] == [1, 2, 3]
    assert bob.add_write() == 1 and ada.writes() == 3
    ada.reset()
    assert ada.writes() == 0 and bob.writes() == 1
    assert ada.load_plan() is None
    plan = ConsolidationPlan("p1", "ada", "2026-12-01T00:00:00+00:00", 3, [
        PlanStep("stale", [Change("stale", "m1", reason="consolidation")])
    ])  # fmt: skip
    ada.save_plan(plan)
    assert ada.load_plan() == plan and bob.load_plan() is None
    assert ada.writes() == 0  # saving a plan leaves the count alone
    ada.drop_plan()
    assert ada.load_plan() is None
    db.close()
