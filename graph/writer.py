"""The `memory_writer` graph: one finished turn in, the memory consumer applies it exactly once."""

from __future__ import annotations

import asyncio
import dataclasses
import logging
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from langgraph.config import get_config
from langgraph.graph import END, START, StateGraph
from langgraph.runtime import Runtime
from langgraph.types import RetryPolicy

from graph.context import Context
from graph.memory_access import DEAD_WRITES_NAMESPACE, context_of, open_manager, resolve_user_id
from graph.models import load_chat_model
from memory.branch import Lineage, Provenance, check_scope_policy
from memory.long_term import default_journal_path, write_trace_path
from memory.manager import BaseMemoryManager
from memory.store_manager import namespace_label
from memory.writer.trace import WriteTrace

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
    """One turn to write: whose, its stable id, its conversation, its messages
    (`[{"role": "user" | "assistant", "content": str}, ...]`), and where in the conversation's
    tree it was said: `provenance` (`{thread_id, checkpoint_id, turn_id}`), `lineage`
    (`{thread_id, checkpoint_ids}`, the checkpoints that turn descends from) and `scope_policy`
    (`auto`, `user` or `branch`). Without provenance and lineage every memory is the user's."""

    user_id: str = ""
    turn_id: str = ""
    session_id: str = ""
    messages: list[dict[str, str]] = field(default_factory=list)
    provenance: dict[str, str] = field(default_factory=dict)
    lineage: dict[str, Any] | None = None
    scope_policy: str = "auto"


@dataclass
class WriterState(WriterInput):
    """The input plus what the writer reports back."""

    result: str = ""


class ModelLoadingConsumer:
    """The memory consumer with the run's writer model and language, the model loaded at the
    first turn: a model that cannot be built fails that turn (retried, then dead-lettered),
    never the chat run that queued it."""

    def __init__(self, context: Context) -> None:
        self.context = context
        self._consumer: Any = None

    async def consume(self, *args: Any, **kwargs: Any) -> Any:
        if self._consumer is None:
            from memory.writer import MemoryConsumer

            # Every write mode passes the same language policy: "auto" follows the user's
            # language, "en"/"zh" pin it.
            model = load_chat_model(self.context.writer_model)
            self._consumer = MemoryConsumer(model, language=self.context.language)
        return await self._consumer.consume(*args, **kwargs)


def writer_consumer(context: Context) -> ModelLoadingConsumer:
    """The consumer every write mode (server, local, auto, inline) uses for `context`."""
    return ModelLoadingConsumer(context)


def trace_beside(manager: BaseMemoryManager) -> WriteTrace | None:
    """The write trace beside a file-backed store (where local mode and the editor keep it);
    None for the store and Postgres backends, which have no file location."""
    if getattr(manager, "directory", None) is None and getattr(manager, "path", None) is None:
        return None
    return WriteTrace(write_trace_path(Path(default_journal_path(manager))))


async def write_turn(
    context: Context,
    user_id: str,
    turn_id: str,
    session_id: str,
    messages: list[dict[str, str]],
    store: Any | None = None,
    *,
    provenance: Provenance | None = None,
    lineage: Lineage | None = None,
    scope_policy: str = "auto",
) -> Any:
    """Run the memory consumer on one turn; it applies the turn exactly once (key: turn_id).

    Opening the manager may touch the store or files, so it runs in a worker thread: sync store
    calls on the server's event loop raise, and blocking I/O there is flagged.
    """
    manager = await asyncio.to_thread(open_manager, context, user_id, store)
    trace = await asyncio.to_thread(trace_beside, manager)
    try:
        return await writer_consumer(context).consume(
            session_id,
            turn_id,
            messages,
            manager,
            trace=trace,
            provenance=provenance,
            lineage=lineage,
            scope_policy=scope_policy,
        )
    finally:
        if trace is not None:
            trace.close()


def _attempt_number(runtime: Runtime[Context]) -> int:
    """This run's attempt (1, 2, ...) from LangGraph's retry machinery: it belongs to the run,
    so a cancelled retry leaves nothing behind for a later resend of the same turn to count."""
    info = getattr(runtime, "execution_info", None)
    return int(getattr(info, "node_attempt", 1) or 1)


async def write_memory(state: WriterState, runtime: Runtime[Context]) -> dict[str, Any]:
    """Apply the turn to the user's memory; after the last failed attempt the turn is recorded
    under ("memories_dead", <user label>) in the store, to be listed and sent again."""
    if not state.turn_id or not state.messages:
        raise ValueError("memory_writer input needs a turn_id and a non-empty messages list")
    scope_policy = check_scope_policy(state.scope_policy)
    if state.lineage is not None and not isinstance(state.lineage.get("checkpoint_ids"), list):
        raise ValueError("memory_writer input lineage needs a checkpoint_ids list")
    context = context_of(runtime.context)
    if state.user_id:
        context = dataclasses.replace(context, user_id=state.user_id)
    # With custom auth, a client calling this graph directly can only write its own memory.
    user_id = resolve_user_id(get_config(), context)
    attempt = _attempt_number(runtime)
    try:
        result = await write_turn(
            context,
            user_id,
            state.turn_id,
            state.session_id or state.turn_id,
            state.messages,
            runtime.store,
            provenance=Provenance.from_dict(state.provenance) if state.provenance else None,
            lineage=Lineage.from_dict(state.lineage),
            scope_policy=scope_policy,
        )
    except Exception as exc:
        retry_on = WRITE_RETRY.retry_on
        will_retry = attempt < WRITE_RETRY.max_attempts and callable(retry_on) and retry_on(exc)
        if not will_retry:
            await _record_dead_write(runtime.store, user_id, state, context, exc, attempt)
        raise
    if runtime.store is not None:  # a turn sent again after failing is no longer dead
        dead_namespace = (DEAD_WRITES_NAMESPACE, namespace_label(user_id))
        await runtime.store.adelete(dead_namespace, state.turn_id)
    summary = getattr(result, "summary", "") or "applied"
    logger.info("memory_writer turn %s for user %r: %s", state.turn_id, user_id, summary)
    return {"result": summary}


async def _record_dead_write(
    store: Any, user_id: str, state: WriterState, context: Context, exc: Exception, attempts: int
) -> None:
    error = f"{type(exc).__name__}: {exc}"
    logger.error(
        "memory_writer gave up on turn %s of user %r after %d attempts: %s",
        state.turn_id,
        user_id,
        attempts,
        error,
    )
    if store is None:
        return
    record = {
        "turn_id": state.turn_id,
        "error": error,
        "failed_at": datetime.now(UTC).isoformat(timespec="seconds"),
        "attempts": attempts,
        "input": dataclasses.asdict(WriterInput(**_input_fields(state))),
        "context": {
            "model": context.model,
            "writer_model": context.writer_model,
            "memory_backend": context.memory_backend,
            "language": context.language,
        },
    }
    try:
        await store.aput((DEAD_WRITES_NAMESPACE, namespace_label(user_id)), state.turn_id, record)
    except Exception:
        logger.exception("recording the failed turn %s of user %r failed", state.turn_id, user_id)


def _input_fields(state: WriterState) -> dict[str, Any]:
    return {f.name: getattr(state, f.name) for f in dataclasses.fields(WriterInput)}


builder = StateGraph(WriterState, input_schema=WriterInput, context_schema=Context)
builder.add_node("write_memory", write_memory, retry_policy=WRITE_RETRY)
builder.add_edge(START, "write_memory")
builder.add_edge("write_memory", END)

graph = builder.compile(name="Gulfstream memory writer")
