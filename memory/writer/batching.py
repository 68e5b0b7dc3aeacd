"""Batching: how an admitted "batch" turn waits for its thread's next turns, so that one writer
run files them together (`BatchPolicy`), and the holder that keeps them meanwhile."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from memory.writer.turn import Turn

MAX_BATCH_SIZE = 100


@dataclass(frozen=True)
class BatchPolicy:
    """A thread's batch is written when it holds `size` turns, when the thread has been quiet for
    `quiet_seconds`, when a turn decided "write" arrives, and before the queue stops or is
    joined (the end of a session). `size` 1 writes every turn on its own."""

    size: int = 5
    quiet_seconds: float = 30.0

    def __post_init__(self) -> None:
        if isinstance(self.size, bool) or not 1 <= self.size <= MAX_BATCH_SIZE:
            raise ValueError(f"a batch size must be 1 to {MAX_BATCH_SIZE}, not {self.size!r}")
        if not 0 <= self.quiet_seconds <= 24 * 3600:
            raise ValueError(f"quiet_seconds must be 0 to 86400, not {self.quiet_seconds!r}")


def continues(earlier: Turn, later: Turn) -> bool:
    """Whether `later` may join a batch ending with `earlier`: same user, thread, writer model,
    scope policy and language, and on the same branch (it descends from `earlier`'s
    checkpoint), so that the batch can be written from the last turn's place in the tree."""
    same = (earlier.user_id, earlier.thread_id, earlier.writer_model, earlier.scope_policy,
            earlier.language) == (later.user_id, later.thread_id, later.writer_model,
                                   later.scope_policy, later.language)  # fmt: skip
    if not same:
        return False
    if not earlier.checkpoint_id or later.lineage is None:
        return earlier.lineage is None and later.lineage is None
    return earlier.checkpoint_id in later.lineage.checkpoint_ids


def split_runs(turns: Sequence[Turn]) -> list[list[Turn]]:
    """Consecutive turns that may be merged, in order (a fork or another writer starts a run)."""
    runs: list[list[Turn]] = []
    for turn in turns:
        if runs and continues(runs[-1][-1], turn):
            runs[-1].append(turn)
        else:
            runs.append([turn])
    return runs


class BatchHolder:
    """Holds "batch" turns per thread until their batch is due; `on_due(turns)` receives a
    batch that fell due by time. Runs on one event loop (the queue's)."""

    def __init__(self, policy: Callable[[], BatchPolicy], on_due: Callable[[list[Turn]], None]):
        self.policy = policy
        self.on_due = on_due
        self._held: dict[str, list[Turn]] = {}
        self._timers: dict[str, asyncio.TimerHandle] = {}

    @property
    def held(self) -> int:
        return sum(len(turns) for turns in self._held.values())

    def add(self, turn: Turn) -> list[list[Turn]]:
        """Hold `turn`, or return the batches that are due now because of it (oldest first)."""
        thread = turn.thread_id
        held = self._held.get(thread, [])
        due: list[list[Turn]] = []
        if held and not continues(held[-1], turn):  # a fork: what waits goes first, alone
            due.append(self.take(thread))
        policy = self.policy()
        if turn.decision != "batch" or policy.size <= 1:
            due.append([*self.take(thread), turn])  # a "write" takes its thread's batch along
            return due
        held = self._held.setdefault(thread, [])
        held.append(turn)
        if len(held) >= policy.size:
            due.append(self.take(thread))
        else:
            self._arm(thread, policy.quiet_seconds)
        return due

    def take(self, thread: str) -> list[Turn]:
        """The thread's held turns (now due), no longer held."""
        timer = self._timers.pop(thread, None)
        if timer is not None:
            timer.cancel()
        return self._held.pop(thread, [])

    def take_all(self) -> list[list[Turn]]:
        return [batch for thread in list(self._held) if (batch := self.take(thread))]

    def _arm(self, thread: str, seconds: float) -> None:
        timer = self._timers.pop(thread, None)
        if timer is not None:
            timer.cancel()
        loop = asyncio.get_running_loop()
        self._timers[thread] = loop.call_later(seconds, self._quiet, thread)

    def _quiet(self, thread: str) -> None:
        self._timers.pop(thread, None)
        batch = self._held.pop(thread, [])
        if batch:
            self.on_due(batch)
