"""Consolidation's row in a state database: writes since a pass, and one plan per user."""

from __future__ import annotations

from pathlib import Path

from memory.store.document import Change
from memory.store.state_db import SqliteState
from memory.upkeep.consolidation.plan import ConsolidationPlan, PlanStep
from memory.upkeep.consolidation.state import SCHEMA, DatabaseState


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
