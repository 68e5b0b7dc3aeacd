"""The `memory_consolidator` graph: one consolidation pass over the user's memory (merge
near-duplicates, mark passed plans stale, archive long-cold memories), run in the background
on the user's writer thread after every `consolidate_every_writes` writer runs or near the
capacity, and on demand."""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass, field
from typing import Any

from langgraph.config import get_config
from langgraph.graph import END, START, StateGraph
from langgraph.runtime import Runtime

from memory.integration.context import MemoryContext
from memory.integration.models.loading import check_model_allowed, load_chat_model
from memory.integration.run_memory import RunMemory, open_run_memory
from memory.integration.settings import Settings, custom_auth_configured, get_settings
from memory.integration.writing.server_runs import writer_thread_id
from memory.long_term import LongTermMemory
from memory.upkeep.consolidation import (
    ConsolidationReport,
    ConsolidationSchedule,
    ConsolidationTrigger,
)
from memory.upkeep.consolidation.trigger import due_reason, note_write

logger = logging.getLogger(__name__)

CONSOLIDATOR_GRAPH_ID = "memory_consolidator"
_triggers: dict[Settings, ConsolidationTrigger] = {}


def consolidation_schedule(settings: Settings) -> ConsolidationSchedule:
    return ConsolidationSchedule(
        every_writes=settings.consolidate_every_writes,
        idle_seconds=settings.consolidate_idle_seconds,
        capacity=settings.memory_capacity,
        policy=settings.consolidation_policy(),
    )


def consolidation_trigger() -> ConsolidationTrigger:
    """Local mode's write hook: a pass when one is due (or on idle), after a writer run. One per
    settings, so the idle timers of a user's queue are kept in one place."""
    settings = get_settings()
    trigger = _triggers.get(settings)
    if trigger is None:
        _triggers.clear()  # settings change only in tests and the demo
        trigger = _triggers[settings] = ConsolidationTrigger(consolidation_schedule(settings))
    return trigger


def describe(report: ConsolidationReport) -> str:
    """The report as a person reads it: the summary, then what merged into what."""
    lines = [report.summary()]
    for survivor, absorbed in report.merged.items():
        lines.append(f"  merged {', '.join(absorbed)} into {survivor}")
    if report.staled:
        lines.append(f"  stale (date passed): {', '.join(report.staled)}")
    if report.archived:
        lines.append(f"  archived (cold): {', '.join(report.archived)} (restore brings them back)")
    if report.snapshot:
        lines.append(f"  snapshot before the pass: {report.snapshot}")
    return "\n".join(lines)


def tidy_up(memory: LongTermMemory) -> str:
    """`/consolidate` in `make chat`: one pass with the deployment's thresholds, described."""
    return describe(memory.consolidate(policy=get_settings().consolidation_policy()))


async def schedule_pass(run: RunMemory) -> str:
    """Server mode, after a writer run was scheduled: count it, and when a pass is due (every
    `consolidate_every_writes` runs, or the store near `memory_capacity`) queue a
    `memory_consolidator` run behind it on the user's writer thread, so that the pass never
    races the user's writes. Returns why it was queued ("" when not due). A failure is
    logged: the turn itself is scheduled already."""
    from langgraph_sdk import get_client

    try:
        writes = await asyncio.to_thread(note_write, run.memory)
        schedule = consolidation_schedule(run.settings)
        reason = await asyncio.to_thread(due_reason, run.memory, schedule, writes)
        if reason:
            writer_thread = writer_thread_id(run.user_id, run.settings.writer_thread_secret)
            await get_client().runs.create(
                writer_thread,
                CONSOLIDATOR_GRAPH_ID,
                input={"reason": reason},
                context={"user_id": run.user_id},
                multitask_strategy="enqueue",
            )
            logger.info("memory_consolidator queued for %r (%s)", run.user_id, reason)
        return reason
    except Exception:
        logger.exception("scheduling a consolidation pass for %r failed", run.user_id)
        return ""


@dataclass
class ConsolidatorInput:
    """`rewrite`: let the run's writer model rewrite each merged group into one fact (one call
    per group); without it the most complete text of the group is kept (no model call).
    `reason`: what scheduled the pass ("writes", "capacity", "on demand"), for the log."""

    rewrite: bool = False
    reason: str = "on demand"


@dataclass
class ConsolidatorState(ConsolidatorInput):
    report: dict[str, Any] = field(default_factory=dict)


def consolidate(state: ConsolidatorState, runtime: Runtime[MemoryContext]) -> dict[str, Any]:
    """Run (or resume) the pass for the run's user and return its report. A sync node: the
    server runs it in a thread, so the store and file I/O never block its event loop."""
    run = open_run_memory(runtime, get_config())
    llm = None
    if state.rewrite:
        model = run.context.writer_model
        check_model_allowed("writer_model", model, run.settings, custom_auth_configured())
        llm = load_chat_model(model, timeout=run.settings.writer_timeout_seconds)
    policy = run.settings.consolidation_policy()
    report = run.memory.consolidate(llm, policy=policy)
    logger.info("memory_consolidator for %r (%s): %s", run.user_id, state.reason, report.summary())
    return {"report": report.to_dict()}


builder = StateGraph(
    ConsolidatorState, input_schema=ConsolidatorInput, context_schema=MemoryContext
)
builder.add_node("consolidate", consolidate)
builder.add_edge(START, "consolidate")
builder.add_edge("consolidate", END)

graph = builder.compile(name="Gulfstream memory consolidator")
