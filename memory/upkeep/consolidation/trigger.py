"""When a consolidation pass is due: after N writer runs, near the capacity, or after an idle
spell (local mode); a hook of the local write queue that runs it on the writer's own loop."""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from memory.upkeep.consolidation.plan import ConsolidationPolicy
from memory.upkeep.consolidation.state import consolidation_state

if TYPE_CHECKING:
    from memory.long_term import LongTermMemory
    from memory.upkeep.consolidation.report import ConsolidationReport
    from memory.writer.queue import TurnConsumer
    from memory.writer.turn import Turn

logger = logging.getLogger(__name__)

NEARLY_FULL = 0.9  # share of the capacity at which a pass runs to make room


@dataclass(frozen=True)
class ConsolidationSchedule:
    """`every_writes` writer runs (0: never), `idle_seconds` without a turn after a write (0:
    never), or a store at NEARLY_FULL of `capacity` (0: no cap) make a pass due."""

    every_writes: int = 50
    idle_seconds: float = 900.0
    capacity: int = 0
    policy: ConsolidationPolicy = field(default_factory=ConsolidationPolicy)


def writes_since_pass(memory: LongTermMemory) -> int:
    """Writer runs applied since the last consolidation pass (0 when unknown)."""
    return consolidation_state(memory).writes()


def note_write(memory: LongTermMemory) -> int:
    """Count one more applied writer run; returns the count since the last pass (by every
    process of the deployment when its state is in PostgreSQL)."""
    return consolidation_state(memory).add_write()


def reset_writes(memory: LongTermMemory) -> None:
    """A pass ran (or refused): counting starts again."""
    consolidation_state(memory).reset()


def due_reason(memory: LongTermMemory, schedule: ConsolidationSchedule, writes: int) -> str:
    """Why a pass is due now ("writes", "capacity"), or "" when it is not."""
    if schedule.every_writes and writes >= schedule.every_writes:
        return "writes"
    if (
        schedule.capacity
        and writes
        and (memory.manager.live_count() >= NEARLY_FULL * schedule.capacity)
    ):
        return "capacity"
    return ""


class ConsolidationTrigger:
    """A hook the local write queue calls after each applied writer run (`after_write`): it
    counts the run and runs a pass on the writer's loop when one is due, and after
    `idle_seconds` without a turn. A pass that fails is logged: the turn it followed is written
    already."""

    def __init__(self, schedule: ConsolidationSchedule, llm: Any = None):
        self.schedule = schedule
        self.llm = llm
        self._idle: dict[str, asyncio.TimerHandle] = {}

    async def after_write(self, memory: LongTermMemory, result: Any) -> None:
        if getattr(result, "applied", True):
            writes = await asyncio.to_thread(note_write, memory)
            reason = await asyncio.to_thread(due_reason, memory, self.schedule, writes)
            if reason:
                await self.run_pass(memory, reason)
            else:
                self._arm_idle(memory)

    async def run_pass(self, memory: LongTermMemory, reason: str) -> ConsolidationReport | None:
        timer = self._idle.pop(memory.user_id, None)
        if timer is not None:
            timer.cancel()
        try:
            report = await asyncio.to_thread(
                memory.consolidate, self.llm, policy=self.schedule.policy
            )
        except Exception:
            logger.exception("consolidation of %r (%s) failed", memory.user_id, reason)
            return None
        logger.info("consolidation of %r after %s: %s", memory.user_id, reason, report.summary())
        return report

    def _arm_idle(self, memory: LongTermMemory) -> None:
        if self.schedule.idle_seconds <= 0:
            return
        previous = self._idle.pop(memory.user_id, None)
        if previous is not None:
            previous.cancel()
        loop = asyncio.get_running_loop()
        self._idle[memory.user_id] = loop.call_later(
            self.schedule.idle_seconds,
            lambda: loop.create_task(self._when_idle(memory)),
        )

    async def _when_idle(self, memory: LongTermMemory) -> None:
        self._idle.pop(memory.user_id, None)
        if await asyncio.to_thread(writes_since_pass, memory):
            await self.run_pass(memory, "idle")


class ConsolidatingConsumer(ConsolidationTrigger):
    """A TurnConsumer wrapping `inner` with the trigger, for a queue without write hooks."""

    def __init__(self, inner: TurnConsumer, schedule: ConsolidationSchedule, llm: Any = None):
        self.inner = inner  # first: `__getattr__` reads it
        super().__init__(schedule, llm)

    def __getattr__(self, name: str) -> Any:  # the writer's settings stay readable through it
        return getattr(self.inner, name)

    async def consume(self, turn: Turn, memory: LongTermMemory) -> Any:
        result = await self.inner.consume(turn, memory)
        await self.after_write(memory, result)
        return result
