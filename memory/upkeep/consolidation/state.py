"""What consolidation keeps between runs, per user: the writes since the last pass and the plan
of an unfinished pass; files in the data folder, or a row of the deployment's PostgreSQL."""

from __future__ import annotations

import json
import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING

from memory.store.atomic_file import write_text_atomically
from memory.store.manager import file_stem
from memory.store.state_db import PostgresState, StateDatabase
from memory.upkeep.consolidation.plan import ConsolidationPlan, load_plan, parse_plan, plan_text

if TYPE_CHECKING:
    from memory.upkeep.upkept import UpkeptMemory

PLAN_FOLDER = "consolidation"
SCHEMA = """
CREATE TABLE IF NOT EXISTS {p}consolidation (
    user_id TEXT PRIMARY KEY,
    writes  INTEGER NOT NULL,   -- writer runs applied since the last pass
    plan    TEXT                -- the plan of a pass not finished yet (JSON), or NULL
);
"""
_counter_lock = threading.Lock()  # the files' count: one process reads and writes it back


class ConsolidationState:
    """One user's count of writes since the last pass, and the plan of an unfinished pass."""

    where = ""  # what a log line names

    def writes(self) -> int:
        raise NotImplementedError

    def add_write(self) -> int:
        """One more applied writer run; the count since the last pass."""
        raise NotImplementedError

    def reset(self) -> None:
        raise NotImplementedError

    def load_plan(self) -> ConsolidationPlan | None:
        """The unfinished pass's plan (None: none); ValueError when it cannot be read."""
        raise NotImplementedError

    def save_plan(self, plan: ConsolidationPlan) -> None:
        raise NotImplementedError

    def drop_plan(self) -> None:
        raise NotImplementedError

    def set_aside_plan(self) -> str:
        """Keep an unreadable plan for a look, out of the next pass's way; where it went."""
        raise NotImplementedError


class FileState(ConsolidationState):
    """`consolidation/<user>.writes.json` and `<user>.plan.json` in a data folder."""

    def __init__(self, folder: Path, user_id: str) -> None:
        self.counter = folder / PLAN_FOLDER / f"{file_stem(user_id)}.writes.json"
        self.plan = folder / PLAN_FOLDER / f"{file_stem(user_id)}.plan.json"
        self.where = str(self.plan)

    def writes(self) -> int:
        try:
            return int(json.loads(self.counter.read_text(encoding="utf-8"))["writes"])
        except (OSError, ValueError, KeyError, TypeError):
            return 0

    def add_write(self) -> int:
        with _counter_lock:
            writes = self.writes() + 1
            write_text_atomically(self.counter, json.dumps({"writes": writes}))
            return writes

    def reset(self) -> None:
        with _counter_lock:
            write_text_atomically(self.counter, json.dumps({"writes": 0}))

    def load_plan(self) -> ConsolidationPlan | None:
        return load_plan(self.plan)

    def save_plan(self, plan: ConsolidationPlan) -> None:
        write_text_atomically(self.plan, plan_text(plan))

    def drop_plan(self) -> None:
        self.plan.unlink(missing_ok=True)

    def set_aside_plan(self) -> str:
        aside = self.plan.with_name(f"{self.plan.name}.unreadable-{int(time.time())}")
        self.plan.replace(aside)
        return str(aside)


class DatabaseState(ConsolidationState):
    """The user's row of `consolidation` in the state database: the count is added to in SQL,
    so two replicas counting at once lose no write."""

    def __init__(self, db: StateDatabase, user_id: str) -> None:
        self.db, self.user_id = db, user_id
        self.where = f"the consolidation row of {user_id!r} in {db.describe()}"

    def writes(self) -> int:
        rows = self.db.query(
            "SELECT writes FROM {p}consolidation WHERE user_id = ?", (self.user_id,)
        )
        return int(rows[0][0]) if rows else 0

    def add_write(self) -> int:
        with self.db.transaction() as tx:
            row = tx.execute(
                "INSERT INTO {p}consolidation (user_id, writes) VALUES (?, 1) ON CONFLICT "
                "(user_id) DO UPDATE SET writes = {p}consolidation.writes + 1 RETURNING writes",
                (self.user_id,),
            ).fetchone()
        return int(row[0])

    def reset(self) -> None:
        with self.db.transaction() as tx:
            tx.execute("UPDATE {p}consolidation SET writes = 0 WHERE user_id = ?", (self.user_id,))

    def load_plan(self) -> ConsolidationPlan | None:
        rows = self.db.query("SELECT plan FROM {p}consolidation WHERE user_id = ?", (self.user_id,))
        return parse_plan(rows[0][0], self.where) if rows and rows[0][0] else None

    def save_plan(self, plan: ConsolidationPlan) -> None:
        with self.db.transaction() as tx:
            tx.execute(
                "INSERT INTO {p}consolidation (user_id, writes, plan) VALUES (?, 0, ?) "
                "ON CONFLICT (user_id) DO UPDATE SET plan = excluded.plan",
                (self.user_id, plan_text(plan)),
            )

    def drop_plan(self) -> None:
        with self.db.transaction() as tx:
            tx.execute("UPDATE {p}consolidation SET plan = NULL WHERE user_id = ?", (self.user_id,))

    def set_aside_plan(self) -> str:
        # A row has one plan: the unreadable one is logged by the caller and replaced.
        self.drop_plan()
        return "nowhere (dropped; the log has the error)"


def consolidation_state(memory: UpkeptMemory) -> ConsolidationState:
    """The memory's: in the deployment's PostgreSQL when it has one, else in its data folder."""
    if memory.state_dsn:
        return DatabaseState(PostgresState(memory.state_dsn, SCHEMA), memory.user_id)
    return FileState(memory.data_dir, memory.user_id)
