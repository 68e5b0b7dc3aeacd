"""Model calls and tokens by purpose (chat, retrieval, writer, summary), per run and per user."""

from __future__ import annotations

import os
import sqlite3
import threading
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from memory.item import now_iso
from memory.writer.sqlite_file import open_wal, write_transaction

PURPOSES = ("chat", "retrieval", "writer", "summary")
_SCHEMA = """
CREATE TABLE IF NOT EXISTS model_usage (
    user_id       TEXT NOT NULL,
    run_id        TEXT NOT NULL,             -- a chat turn's id, or "writer:" + a turn id
    purpose       TEXT NOT NULL,
    thread_id     TEXT,
    calls         INTEGER NOT NULL,
    input_tokens  INTEGER NOT NULL,
    output_tokens INTEGER NOT NULL,
    time          TEXT NOT NULL,
    PRIMARY KEY (user_id, run_id, purpose)
);
"""


@dataclass
class Usage:
    """Model calls and their tokens (as the provider reported them, else estimated)."""

    calls: int = 0
    input_tokens: int = 0
    output_tokens: int = 0

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            self.calls + other.calls,
            self.input_tokens + other.input_tokens,
            self.output_tokens + other.output_tokens,
        )

    def to_dict(self) -> dict[str, int]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Usage:
        names = ("calls", "input_tokens", "output_tokens")
        return cls(*(int(data.get(name) or 0) for name in names))


ByPurpose = dict[str, Usage]


def add_up(*parts: Mapping[str, Usage]) -> ByPurpose:
    """The sum, purpose by purpose."""
    total: ByPurpose = {}
    for part in parts:
        for purpose, usage in part.items():
            total[purpose] = total.get(purpose, Usage()) + usage
    return total


def as_dicts(usage: Mapping[str, Usage]) -> dict[str, dict[str, int]]:
    """`{purpose: {calls, input_tokens, output_tokens}}`, for state and JSON."""
    return {purpose: value.to_dict() for purpose, value in usage.items()}


def from_dicts(data: Mapping[str, Mapping[str, Any]] | None) -> ByPurpose:
    return {purpose: Usage.from_dict(value) for purpose, value in (data or {}).items()}


def describe(usage: Mapping[str, Usage]) -> str:
    """One line: 'chat 1 call (812 in / 40 out tokens), writer 2 calls (…)'."""
    parts = [
        f"{purpose} {u.calls} call{'s' if u.calls != 1 else ''} "
        f"({u.input_tokens} in / {u.output_tokens} out tokens)"
        for purpose in sorted(usage, key=lambda p: PURPOSES.index(p) if p in PURPOSES else 99)
        if (u := usage[purpose]).calls
    ]
    return ", ".join(parts) or "no model calls"


class UsageMeter:
    """What one run's model calls cost, by purpose; safe to record into from several threads."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._usage: ByPurpose = {}

    def record(self, purpose: str, input_tokens: int, output_tokens: int) -> None:
        if purpose not in PURPOSES:
            raise ValueError(f"purpose must be one of {', '.join(PURPOSES)}, not {purpose!r}")
        with self._lock:
            self._usage[purpose] = self._usage.get(purpose, Usage()) + Usage(
                1, max(0, int(input_tokens)), max(0, int(output_tokens))
            )

    def by_purpose(self) -> ByPurpose:
        with self._lock:
            return {purpose: Usage(**asdict(u)) for purpose, u in self._usage.items()}


class UsageLedger:
    """Every run's usage, one row per (run, purpose), in a small SQLite file (the write trace's,
    beside the journal). A run recorded again replaces its rows."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)
        self._lock = threading.Lock()
        # NORMAL: an account of calls already made, not data that must survive a power cut.
        self._connection = open_wal(self.path, _SCHEMA, synchronous="NORMAL")

    def record(
        self, user_id: str, run_id: str, usage: Mapping[str, Usage], thread_id: str = ""
    ) -> None:
        rows = [
            (user_id, run_id, purpose, thread_id or None, u.calls, u.input_tokens,
             u.output_tokens, now_iso())
            for purpose, u in usage.items()
            if u.calls
        ]  # fmt: skip
        if not rows:
            return
        with write_transaction(self._lock, self._connection) as db:
            db.executemany(
                "INSERT OR REPLACE INTO model_usage VALUES (?, ?, ?, ?, ?, ?, ?, ?)", rows
            )

    def totals(self, user_id: str) -> ByPurpose:
        """The user's usage so far, by purpose."""
        return self._sum("WHERE user_id = ?", (user_id,))

    def for_run(self, user_id: str, run_id: str) -> ByPurpose:
        return self._sum("WHERE user_id = ? AND run_id = ?", (user_id, run_id))

    def _sum(self, where: str, params: tuple[Any, ...]) -> ByPurpose:
        query = (
            "SELECT purpose, SUM(calls), SUM(input_tokens), SUM(output_tokens) FROM model_usage "
            f"{where} GROUP BY purpose"
        )
        with self._lock:
            try:
                rows = self._connection.execute(query, params).fetchall()
            except sqlite3.Error:
                return {}
        return {purpose: Usage(int(c), int(i), int(o)) for purpose, c, i, o in rows}

    def close(self) -> None:
        with self._lock:
            self._connection.close()
