"""The `memory_writer` graph: a finished turn, or a thread's batch of waiting turns, written to the
user's memory exactly once."""

from __future__ import annotations

import asyncio
import dataclasses
import logging
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from langchain_core.messages import AIMessage, AnyMessage, ToolMessage
from langgraph.config import get_config
from langgraph.graph import END, START, StateGraph
from langgraph.runtime import Runtime
from langgraph.types import RetryPolicy

from memory.integration.context import MemoryContext
from memory.integration.models.loading import check_model_allowed
from memory.integration.run_memory import (
    DEAD_WRITES_NAMESPACE,
    RunMemory,
    open_run_memory,
    writer_consumer,
)
from memory.integration.settings import custom_auth_configured
from memory.integration.writing.pending import drop_pending, due_batches, pending_turns
from memory.store.backends.langgraph_store import namespace_label
from memory.writer.consumer import ConsumeResult
from memory.writer.turn import Turn

logger = logging.getLogger(__name__)

# A model or store hiccup is retried with backoff; input that can never work is not.
WRITE_RETRY = RetryPolicy(
    initial_interval=2.0,
    backoff_factor=2.0,
    max_interval=60.0,
    max_attempts=4,
    retry_on=lambda exc: not isinstance(exc, ValueError | TypeError | PermissionError),
)


@dataclass
class WriterInput:
    """Either `turn`: one turn to write now, as `memory.writer.turn.Turn.to_dict()` gives it
    (`user_id`, `turn_id`, `messages` = `[{"role": "user" | "assistant", "content": str}]`, and
    optionally `thread_id`, `checkpoint_id`, `lineage`, `scope_policy`, `language`,
    `writer_model`, `enqueued_at`, `admission`); or `thread_id` and `turn_id`: the chat turn
    whose hand-off scheduled this run. Then the run writes the batches of the user's waiting
    turns (memory/integration/writing/pending.py) that are due, and ends at once when none is. With
    `flush` the
    batch of `thread_id` is due now (before that conversation is compacted)."""

    turn: dict[str, Any] = field(default_factory=dict)
    thread_id: str = ""
    turn_id: str = ""
    flush: bool = False


@dataclass
class WriterState(WriterInput):
    """The input plus what the writer reports back: `result`, and in `messages` the memory
    agent's steps of this run (its model's messages with their tool calls and arguments, and
    what each tool answered), so that Studio shows which tools ran, not one opaque node."""

    result: str = ""
    # Replaced by each run (no reducer): the user's writer thread never piles up old steps.
    messages: list[AnyMessage] = field(default_factory=list)


def agent_steps(result: ConsumeResult) -> list[AnyMessage]:
    """The memory agent's messages for this turn; on the json protocol (one constrained answer,
    no tool-call messages) each operation it made is shown as a tool call and its answer."""
    if result.messages:
        return list(result.messages)
    steps: list[AnyMessage] = []
    for event in result.events:
        call_id = f"{result.turn_id}#{event.step}"
        call = {"name": event.tool, "args": event.arguments, "id": call_id}
        steps.append(AIMessage("", tool_calls=[call]))
        status = "success" if event.ok else "error"
        steps.append(
            ToolMessage(event.result, tool_call_id=call_id, name=event.tool, status=status)
        )
    if result.summary:
        steps.append(AIMessage(result.summary))
    return steps


async def write_memory(state: WriterState, runtime: Runtime[MemoryContext]) -> dict[str, Any]:
    """Apply the turn (or the due batches) to the user's memory; after the last failed attempt
    each turn is recorded under ("memories_dead", <user label>) in the store, to be listed and
    sent again."""
    if not state.turn:
        return await write_pending(state, runtime)
    turn = Turn.from_dict(state.turn)  # ValueError for bad input: not retried
    config = get_config()
    # With custom auth, a client calling this graph directly writes only its own memory.
    run = await asyncio.to_thread(open_run_memory, runtime, config, user_id=turn.user_id)
    if run.user_id != turn.user_id:
        turn = dataclasses.replace(turn, user_id=run.user_id)
    turn = _with_writer_model(turn, run)
    attempt = _attempt_number(runtime)
    try:
        result = await writer_consumer().consume(turn, run.memory.write_target)
    except Exception as exc:
        if _gives_up(exc, attempt):
            await _record_dead_write(runtime.store, turn, exc, attempt)
        raise
    if runtime.store is not None:  # a turn sent again after failing is no longer dead
        await runtime.store.adelete(_dead_namespace(turn.user_id), turn.turn_id)
    summary = result.summary or "applied"
    logger.info("memory_writer turn %s for user %r: %s", turn.turn_id, turn.user_id, summary)
    return {"result": summary, "messages": agent_steps(result)}


async def write_pending(state: WriterState, runtime: Runtime[MemoryContext]) -> dict[str, Any]:
    """Write the user's waiting turns whose batch is due, one writer run per batch; a turn is
    removed from the waiting ones once applied (a crash in between is caught by its id)."""
    store = runtime.store
    run = await asyncio.to_thread(open_run_memory, runtime, get_config())
    if store is None:
        return {"result": "no store: nothing waits", "messages": []}
    manager, user = run.memory.manager, run.user_id
    waiting = await pending_turns(store, user)
    # Applied before a crash kept them waiting: the store has them, so they only leave (and
    # the trace rows staged under a batch's last id become applied).
    applied = [t for t in waiting if await asyncio.to_thread(manager.has_applied, t.turn_id)]
    for turn in applied:
        await asyncio.to_thread(run.memory.trace.mark_applied, user, turn.turn_id)
    await drop_pending(store, user, [t.turn_id for t in applied])
    waiting = [t for t in waiting if t not in applied]
    trigger = (state.thread_id, state.turn_id) if state.turn_id else None
    flush = state.thread_id if state.flush else None
    batches = due_batches(waiting, trigger, run.settings.batch_policy(), flush=flush)
    if not batches:
        return {"result": "nothing due", "messages": []}
    attempt = _attempt_number(runtime)
    steps: list[AnyMessage] = []
    for batch in batches:
        turn = _with_writer_model(Turn.merge(batch), run)
        ids = [t.turn_id for t in batch]
        try:
            result = await writer_consumer().consume(turn, run.memory.write_target)
        except Exception as exc:
            if _gives_up(exc, attempt):
                for member in batch:
                    await _record_dead_write(store, member, exc, attempt)
                await drop_pending(store, user, ids)
            raise
        await drop_pending(store, user, ids)
        steps += agent_steps(result)
        logger.info("memory_writer wrote turns %s of user %r in one run", ids, user)
    written = sum(len(batch) for batch in batches)
    return {"result": f"wrote {written} turns in {len(batches)} runs", "messages": steps}


def _with_writer_model(turn: Turn, run: RunMemory) -> Turn:
    """The turn with its writer model ("" = the run's), refused when the deployment does not
    allow it."""
    if not turn.writer_model:
        turn = dataclasses.replace(turn, writer_model=run.context.writer_model)
    check_model_allowed("writer_model", turn.writer_model, run.settings, custom_auth_configured())
    return turn


def _gives_up(exc: Exception, attempt: int) -> bool:
    """Whether this failure is the last: no retry is left, or the writer model is paused."""
    retry_on = WRITE_RETRY.retry_on
    will_retry = attempt < WRITE_RETRY.max_attempts and callable(retry_on) and retry_on(exc)
    return not will_retry or bool(getattr(exc, "dead_letter", False))


def _attempt_number(runtime: Runtime[MemoryContext]) -> int:
    """This run's attempt (1, 2, ...) from LangGraph's retry machinery: it belongs to the run,
    so a cancelled retry leaves nothing behind for a later resend of the same turn to count."""
    info = getattr(runtime, "execution_info", None)
    return int(getattr(info, "node_attempt", 1) or 1)


def _dead_namespace(user_id: str) -> tuple[str, str]:
    return (DEAD_WRITES_NAMESPACE, namespace_label(user_id))


async def _record_dead_write(store: Any, turn: Turn, exc: Exception, attempts: int) -> None:
    error = f"{type(exc).__name__}: {exc}"
    logger.error(
        "memory_writer gave up on turn %s of user %r after %d attempts: %s",
        turn.turn_id,
        turn.user_id,
        attempts,
        error,
    )
    if store is None:
        return
    record = {
        "turn_id": turn.turn_id,
        "error": error,
        "failed_at": datetime.now(UTC).isoformat(timespec="seconds"),
        "attempts": attempts,
        "input": {"turn": turn.to_dict()},
    }
    try:
        await store.aput(_dead_namespace(turn.user_id), turn.turn_id, record)
    except Exception:
        logger.exception("recording the failed turn %s of %r failed", turn.turn_id, turn.user_id)


builder = StateGraph(WriterState, input_schema=WriterInput, context_schema=MemoryContext)
builder.add_node("write_memory", write_memory, retry_policy=WRITE_RETRY)
builder.add_edge(START, "write_memory")
builder.add_edge("write_memory", END)

graph = builder.compile(name="Gulfstream memory writer")
