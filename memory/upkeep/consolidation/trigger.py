"""When a consolidation pass is due: after N writer runs, near the capacity, or after an idle
spell (local mode); a hook of the local write queue that runs it on the writer's own loop."""

from __future__ import annotations

import asyncio
import functools
import logging
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from memory.upkeep.consolidation.plan import ConsolidationPolicy
from memory.upkeep.consolidation.run import consolidate
from memory.upkeep.consolidation.state import consolidation_state

if TYPE_CHECKING:
    from memory.upkeep.consolidation.report import ConsolidationReport
    from memory.upkeep.upkept import UpkeptMemory
    from memory.writer.target import WriteHook

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


def writes_since_pass(memory: UpkeptMemory) -> int:
    """Writer runs applied since the last consolidation pass (0 when unknown)."""
    return consolidation_state(memory).writes()


def note_write(memory: UpkeptMemory) -> int:
    """Count one more applied writer run; returns the count since the last pass (by every
    process of the deployment when its state is in PostgreSQL)."""
    return consolidation_state(memory).add_write()


def reset_writes(memory: UpkeptMemory) -> None:
    """A pass ran (or refused): counting starts again."""
    consolidation_state(memory).reset()


def due_reason(memory: UpkeptMemory, schedule: ConsolidationSchedule, writes: int) -> str:
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

    def hook(self, memory: UpkeptMemory) -> WriteHook:
        """The write hook of `memory`'s queue (its `after_write`): this trigger, for that memory."""
        return functools.partial(self.after_write, memory)

    async def after_write(self, memory: UpkeptMemory, result: Any) -> None:
        if getattr(result, "applied", True):
            writes = await asyncio.to_thread(note_write, memory)
            reason = await asyncio.to_thread(due_reason, memory, self.schedule, writes)
            if reason:
                await self.run_pass(memory, reason)
            else:
                self._arm_idle(memory)

    async def run_pass(self, memory: UpkeptMemory, reason: str) -> ConsolidationReport | None:
        timer = self._idle.pop(memory.user_id, None)
        if timer is not None:
            timer.cancel()
        try:
            report = await asyncio.to_thread(
                consolidate, memory, self.llm, policy=self.schedule.policy
            )
        except Exception:
            logger.exception("consolidation of %r (%s) failed", memory.user_id, reason)
            return None
        logger.info("consolidation of %r after %s: %s", memory.user_id, reason, report.summary())
        return report

    def _arm_idle(self, memory: UpkeptMemory) -> None:
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

    async def _when_idle(self, memory: UpkeptMemory) -> None:
        self._idle.pop(memory.user_id, None)
        if await asyncio.to_thread(writes_since_pass, memory):
            await self.run_pass(memory, "idle")
