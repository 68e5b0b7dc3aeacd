"""The `memory_writer` graph: one finished turn in, the memory consumer applies it exactly once."""

from __future__ import annotations

import asyncio
import dataclasses
import logging
from dataclasses import dataclass, field
from typing import Any

from langgraph.config import get_config
from langgraph.graph import END, START, StateGraph
from langgraph.runtime import Runtime

from graph.context import Context
from graph.memory_access import context_of, open_manager, resolve_user_id
from graph.models import load_chat_model
from memory.branch import Lineage, Provenance, check_scope_policy

logger = logging.getLogger(__name__)


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
    from memory.writer import MemoryConsumer

    manager = await asyncio.to_thread(open_manager, context, user_id, store)
    consumer = MemoryConsumer(load_chat_model(context.writer_model), language=context.language)
    return await consumer.consume(
        session_id,
        turn_id,
        messages,
        manager,
        provenance=provenance,
        lineage=lineage,
        scope_policy=scope_policy,
    )


async def write_memory(state: WriterState, runtime: Runtime[Context]) -> dict[str, Any]:
    """Apply the turn to the user's memory."""
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
    summary = getattr(result, "summary", "") or "applied"
    logger.info("memory_writer turn %s for user %r: %s", state.turn_id, user_id, summary)
    return {"result": summary}


builder = StateGraph(WriterState, input_schema=WriterInput, context_schema=Context)
builder.add_node("write_memory", write_memory)
builder.add_edge(START, "write_memory")
builder.add_edge("write_memory", END)

graph = builder.compile(name="Gulfstream memory writer")
