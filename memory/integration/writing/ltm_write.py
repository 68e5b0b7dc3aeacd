"""ltm_write, the chat graph's last node: it hands the finished turn to one of two write sinks
(a background run of `memory_writer` on the server, or this process's durable queue)."""

from __future__ import annotations

import asyncio
import contextvars
import logging
from collections.abc import Coroutine
from typing import Any

from langgraph.config import get_config
from langgraph.runtime import Runtime
from langgraph.utils.runnable import RunnableCallable

import memory.integration.writing.consolidator_graph as consolidator  # feature: consolidation
from memory.integration.context import MemoryContext
from memory.integration.conversations.archiving import archive_turn  # feature: archive
from memory.integration.lineage import acurrent_lineage, current_lineage
from memory.integration.run_memory import (
    RunMemory,
    open_run_memory,
    writer_consumer,
)
from memory.integration.state import MemoryState
from memory.integration.writing.admission import admit  # feature: admission
from memory.integration.writing.pending import PENDING_NAMESPACE, keep_pending
from memory.integration.writing.said_recently import flush_local_batches, flush_on_thread_switch
from memory.integration.writing.server_runs import (
    schedule_server_write,
    write_mode,
)
from memory.integration.writing.take_back import TURN, take_back
from memory.store.branch import Lineage
from memory.usage.counts import describe, from_dicts
from memory.writer.local import local_writer
from memory.writer.turn import Turn

logger = logging.getLogger(__name__)

# What each sink reports when it has the turn (see MemoryState.memory_write).
STATUS_OF_MODE = {"server": "scheduled", "local": "journaled", "inline": "written"}


def record_turn(run: RunMemory, turn: Turn, cost: dict[str, dict[str, int]]) -> None:
    """Keep the admission decision with the write trace (the editor's live view shows it) and
    the run's model calls in the user's ledger, and log both. Records, not the write itself: a
    failure is logged and the turn goes on."""
    usage = from_dicts(cost)
    logger.info("turn %s: model calls %s", turn.turn_id, describe(usage))
    if turn.admission is not None:
        logger.info("turn %s: %s", turn.turn_id, turn.admission.describe())
    try:
        run.memory.trace.record_admission(turn)
        run.memory.usage.record(turn.user_id, turn.turn_id, usage, turn.thread_id)
    except Exception:
        logger.exception("recording turn %s in the trace and ledger failed", turn.turn_id)


async def altm_write(state: MemoryState, runtime: Runtime[MemoryContext]) -> dict[str, Any]:
    """`ltm_write` for `graph.ainvoke` and the server."""
    config = get_config()
    try:
        run = await asyncio.to_thread(open_run_memory, runtime, config)
        lineage = await acurrent_lineage(config)
    except Exception as exc:
        return _failed(None, "", exc)
    return await hand_off(state, runtime, run, lineage)


def ltm_write_sync(state: MemoryState, runtime: Runtime[MemoryContext]) -> dict[str, Any]:
    """`ltm_write` for `graph.invoke`: the same body, run on the local writer's loop and
    waited for from this thread (the lineage is read here: a sync checkpointer has no async
    API)."""
    config = get_config()
    try:
        run = open_run_memory(runtime, config)
        lineage = current_lineage(config)
    except Exception as exc:
        return _failed(None, "", exc)
    return local_writer.run(hand_off(state, runtime, run, lineage)).result()


async def hand_off(
    state: MemoryState, runtime: Runtime[MemoryContext], run: RunMemory, lineage: Lineage | None
) -> dict[str, Any]:
    """Archive the finished turn, score it, and hand it to the deployment's sink; return
    (`inline`: once it is written). A turn the admission scorer skips goes nowhere, and a
    private conversation's turn goes nowhere at all, not even to the archive. The
    outcome is in `memory_write`; a failure is logged and never fails the chat run."""
    turn: Turn | None = None
    mode = ""
    if state.take_back:  # what the conversation already put in memory goes, for good
        try:
            await take_back(run, runtime.store, state.messages, state.take_back)
        except Exception as exc:
            return _failed(None, "", exc)
        if state.take_back == TURN:  # nor is "forget what I just said" itself kept
            return _outcome(None, "", "taken back")
    if state.private:  # off the record: the checkpoints keep it, nothing else does
        try:  # but the thread's id is noted, so that the editor and MCP can tell it apart
            await asyncio.to_thread(run.memory.manager.mark_private, run.thread_id)
        except Exception as exc:
            return _failed(None, "", exc)
        return _outcome(None, "", "private")
    try:
        # Every turn is archived, admitted or not: nothing said is lost.  # feature: archive
        await asyncio.to_thread(archive_turn, run, state.messages, lineage)  # feature: archive
        turn = run.finished_turn(state.messages, lineage)
        if turn is None:
            return _outcome(None, "", "skipped")
        turn = admit(run, turn, state.related_memories)  # feature: admission
        mode = write_mode(run)
        await asyncio.to_thread(record_turn, run, turn, state.cost)
        # Skipped or not, the user moved on: the batches of their other threads go now.
        if mode == "server":
            await flush_on_thread_switch(run, runtime.store, turn)
        elif mode == "local":
            await asyncio.to_thread(flush_local_batches, run)
        if turn.decision == "skip":
            return _outcome(turn, mode, "skipped")
        if mode == "server":
            if runtime.store is not None:
                await keep_pending(runtime.store, turn)
            pending = runtime.store is not None
            await _kept_if_unscheduled(schedule_server_write(run, turn, pending=pending), pending)
            await consolidator.schedule_pass(run)  # feature: consolidation
        elif mode == "local":
            memory = run.memory
            if memory.consumer is None:  # its first turn: the memory agent, then a pass when due
                memory.consumer = writer_consumer()
                trigger = consolidator.consolidation_trigger()  # feature: consolidation
                memory.after_write.append(trigger.hook(memory))  # feature: consolidation
            await asyncio.wrap_future(local_writer.serve(memory, memory.send(turn)))
        else:
            # A context of its own: inside this run's, the memory agent would become a subgraph
            # of the chat run (its checkpointer, and its tokens in the chat's message stream).
            consume = writer_consumer().consume(turn, run.memory.write_target)
            await asyncio.get_running_loop().create_task(consume, context=contextvars.Context())
    except Exception as exc:
        return _failed(turn, mode, exc)
    return _outcome(turn, mode, STATUS_OF_MODE[mode])


# The chat graph's last node: both invoke and ainvoke work, through one body (`hand_off`).
ltm_write = RunnableCallable(ltm_write_sync, altm_write, name="ltm_write")


async def _kept_if_unscheduled(scheduling: Coroutine[Any, Any, None], pending: bool) -> None:
    """Schedule the writer run; when that fails for a turn already waiting in the store, say so:
    the user's next writer run writes it (a thread whose run was lost is written then)."""
    try:
        await scheduling
    except Exception as exc:
        if not pending:
            raise
        raise RuntimeError(
            f"{exc} (the turn is kept in the store under {PENDING_NAMESPACE!r}: a later "
            "memory_writer run of the user writes it)"
        ) from exc


def _outcome(turn: Turn | None, mode: str, status: str, error: str = "") -> dict[str, Any]:
    turn_id = turn.turn_id if turn is not None else ""
    if turn is not None and not error:
        logger.debug("turn %s handed to the %s writer: %s", turn_id, mode, status)
    outcome: dict[str, Any] = {"turn_id": turn_id, "mode": mode, "status": status, "error": error}
    if turn is not None and turn.admission is not None:
        outcome["admission"] = turn.admission.to_dict()
    return {"memory_write": outcome}


def _failed(turn: Turn | None, mode: str, exc: Exception) -> dict[str, Any]:
    user = turn.user_id if turn is not None else "?"
    logger.error(
        "the memory write of turn %s for user %r failed (%s mode): %s",
        turn.turn_id if turn is not None else "?",
        user,
        mode or "no",
        exc,
        exc_info=exc,
    )
    return _outcome(turn, mode, "failed", f"{type(exc).__name__}: {exc}")
