"""ltm_write, the chat graph's last node: it hands the finished turn to the memory writer."""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import logging
import os
import threading
import uuid
from collections.abc import Coroutine
from dataclasses import dataclass
from typing import Any

from langchain_core.runnables import RunnableConfig
from langgraph.config import get_config
from langgraph.runtime import Runtime
from langgraph.utils.runnable import RunnableCallable

from graph.context import Context
from graph.lineage import (
    acurrent_lineage,
    checkpoint_is_saved,
    current_checkpoint_id,
    current_lineage,
)
from graph.memory_access import (
    context_of,
    is_under_langgraph_server,
    local_writer_for,
    resolve_user_id,
)
from graph.state import State
from memory.branch import Lineage, Provenance
from memory.writer.turns import extract_last_turn

logger = logging.getLogger(__name__)

WRITER_GRAPH_ID = "memory_writer"
# uuid5 namespace of the per-user writer threads: one writer thread per user, same id everywhere.
WRITER_THREAD_NAMESPACE = uuid.UUID("6f1c2b0e-6a4e-5d3c-9b7e-0a6f3e5d2c11")
WRITER_THREAD_SECRET_ENV = "GULFSTREAM_WRITER_THREAD_SECRET"


def writer_thread_id(user_id: str, secret: str | None = None) -> str:
    """The user's background writer thread: the same in every process of a deployment, and
    unguessable without `secret` (default: `GULFSTREAM_WRITER_THREAD_SECRET`), so that no other
    user can create it first and block this user's writes."""
    secret = os.environ.get(WRITER_THREAD_SECRET_ENV, "") if secret is None else secret
    salt = hmac.new(secret.encode(), user_id.encode(), hashlib.sha256).hexdigest() if secret else ""
    return str(uuid.uuid5(WRITER_THREAD_NAMESPACE, f"gulfstream-writer:{user_id}:{salt}"))


def resolve_write_mode(context: Context, config: RunnableConfig, user_id: str) -> str:
    """`auto` → server under LangGraph, else local when a queue is registered, else `queue`
    (this process's durable auto queue)."""
    if context.write_mode != "auto":
        return context.write_mode
    if is_under_langgraph_server(config):
        return "server"
    return "local" if local_writer_for(user_id) is not None else "queue"


@dataclass
class FinishedTurn:
    """One turn ready for the writer: whose, its stable id and where it was said."""

    user_id: str
    turn_id: str
    thread_id: str
    messages: list[dict[str, str]]
    provenance: Provenance
    lineage: Lineage | None = None
    scope_policy: str = "auto"

    def branch(self) -> dict[str, Any]:
        """The branch arguments every writer entry point takes (`send_history`, `submit_turn`,
        `write_turn`): where the turn was said and which scope its memories may have."""
        return {
            "provenance": self.provenance,
            "lineage": self.lineage,
            "scope_policy": self.scope_policy,
        }


def _finished_turn(state: State, config: RunnableConfig, context: Context) -> FinishedTurn | None:
    turn, user_message_id = extract_last_turn(list(state.messages))
    if not turn or turn[0]["role"] != "user":
        return None
    thread_id = str((config.get("configurable") or {}).get("thread_id") or "no-thread")
    checkpoint_id = current_checkpoint_id(config)
    # Stable and unique: a retried run re-sends the same id and the manager applies it once.
    # The checkpoint keeps apart two branches that answer the same user message (an edited
    # message keeps its id; a regenerated answer starts from the same message).
    turn_id = f"{thread_id}:{user_message_id or uuid.uuid4().hex}"
    turn_id += f"@{checkpoint_id}" if checkpoint_id else ""
    provenance = Provenance(thread_id=thread_id, checkpoint_id=checkpoint_id, turn_id=turn_id)
    user_id = resolve_user_id(config, context)
    return FinishedTurn(user_id, turn_id, thread_id, turn, provenance, None, context.memory_scope)


_told_unsaved_origin = False


def _settle_scope(turn: FinishedTurn, lineage: Lineage | None) -> None:
    """Record the lineage; when the turn's checkpoint is not saved (durability "exit", or a
    saver too slow to have it), write every memory of the turn with user scope: a branch
    memory is visible only to runs descending from its checkpoint, and no run ever descends
    from one that was never saved."""
    global _told_unsaved_origin
    turn.lineage = lineage
    checkpoint_id = turn.provenance.checkpoint_id
    if lineage is None or not checkpoint_id or checkpoint_is_saved(turn.thread_id, checkpoint_id):
        return
    if turn.scope_policy != "user" and not _told_unsaved_origin:
        _told_unsaved_origin = True  # once per process: every such run would say the same
        logger.warning(
            "checkpoint %s of thread %s is not saved (durability='exit'?): this turn's memories, "
            "and those of later such turns, are written with user scope, because a branch "
            "memory needs a saved checkpoint for any run to see it",
            checkpoint_id,
            turn.thread_id,
        )
    turn.scope_policy = "user"


async def altm_write(state: State, runtime: Runtime[Context]) -> dict:
    """Hand the finished turn to the memory writer and return at once (except `inline`).

    A failing writer never fails the chat run: the error is logged with the user and turn id
    (and the queue modes keep the turn to retry it)."""
    context = context_of(runtime.context)
    config = get_config()
    turn = _finished_turn(state, config, context)
    if turn is None:
        return {}
    _settle_scope(turn, await acurrent_lineage(config))
    mode = resolve_write_mode(context, config, turn.user_id)
    try:
        if mode == "server":
            await _schedule_server_write(context, turn)
        elif mode in ("local", "queue"):
            await _enqueue(context, turn, runtime.store, mode)
        else:
            await _write_inline(context, turn, runtime.store)
    except Exception:
        logger.exception(
            "memory write of turn %s for user %r failed (%s mode)", turn.turn_id, turn.user_id, mode
        )
    else:
        logger.debug("turn %s handed to the %s writer", turn.turn_id, mode)
    return {}


def ltm_write_sync(state: State, runtime: Runtime[Context]) -> dict:
    """`graph.invoke` (sync): like `altm_write`, except that `inline` and `local` write the
    turn before the run returns."""
    context = context_of(runtime.context)
    config = get_config()
    turn = _finished_turn(state, config, context)
    if turn is None:
        return {}
    _settle_scope(turn, current_lineage(config))
    mode = resolve_write_mode(context, config, turn.user_id)
    try:
        if mode == "queue":
            _submit(context, turn, runtime.store).result()
        elif mode == "server":
            _run_in_own_loop(_schedule_server_write(context, turn))
        else:  # inline, and local (whose queue runs on the caller's loop): written right here
            _run_in_own_loop(_write_inline(context, turn, runtime.store))
    except Exception:
        logger.exception(
            "memory write of turn %s for user %r failed (%s mode, sync run)",
            turn.turn_id,
            turn.user_id,
            mode,
        )
    return {}


# The chat graph's last node, with a sync and an async body: both invoke and ainvoke work.
ltm_write = RunnableCallable(ltm_write_sync, altm_write, name="ltm_write")


def _run_in_own_loop(work: Coroutine[Any, Any, Any]) -> Any:
    """Run a coroutine to its end from sync code, even when this thread already runs a loop."""
    result: list[Any] = []
    failure: list[BaseException] = []

    def run() -> None:
        try:
            result.append(asyncio.run(work))
        except BaseException as exc:  # re-raised in the caller's thread
            failure.append(exc)

    thread = threading.Thread(target=run, name="gulfstream-sync-write")
    thread.start()
    thread.join()
    if failure:
        raise failure[0]
    return result[0] if result else None


async def _enqueue(context: Context, turn: FinishedTurn, store: Any, mode: str) -> None:
    if mode == "queue":
        await asyncio.wrap_future(_submit(context, turn, store))
        return
    writer = local_writer_for(turn.user_id)
    if writer is None:
        raise RuntimeError(
            f"write_mode 'local' but no local write queue is registered for user "
            f"{turn.user_id!r}: use graph.chat / graph.demo, register one, or choose "
            "write_mode 'auto'"
        )
    await writer.send_history(
        turn.messages, session_id=turn.thread_id, turn_id=turn.turn_id, **turn.branch()
    )


def _submit(context: Context, turn: FinishedTurn, store: Any) -> Any:
    """The turn into this process's durable queue; a future done once it is journaled."""
    from graph.auto_writer import submit_turn

    return submit_turn(
        context,
        turn.user_id,
        store,
        turn.messages,
        session_id=turn.thread_id,
        turn_id=turn.turn_id,
        **turn.branch(),
    )


async def _write_inline(context: Context, turn: FinishedTurn, store: Any) -> None:
    from graph.writer import write_turn

    await write_turn(
        context,
        turn.user_id,
        turn.turn_id,
        turn.thread_id,
        turn.messages,
        store,
        **turn.branch(),
    )


async def _schedule_server_write(context: Context, turn: FinishedTurn) -> None:
    """Queue a `memory_writer` run on the user's writer thread. A thread that cannot be used
    (another user's, or gone) is logged with the user and turn id; the reply never fails."""
    from langgraph_sdk import get_client
    from langgraph_sdk.errors import ConflictError, NotFoundError

    client = get_client()  # in-process: reaches this server's API without a URL
    writer_thread = writer_thread_id(turn.user_id)
    payload: dict[str, Any] = {
        "user_id": turn.user_id,
        "turn_id": turn.turn_id,
        "session_id": turn.thread_id,
        "messages": turn.messages,
        "provenance": turn.provenance.as_dict(),
        "lineage": turn.lineage.as_dict() if turn.lineage is not None else None,
        "scope_policy": turn.scope_policy,
    }
    try:
        await client.threads.create(
            thread_id=writer_thread,
            if_exists="do_nothing",
            metadata={"gulfstream": "memory_writer", "user_id": turn.user_id},
        )
        await client.runs.create(
            writer_thread,
            WRITER_GRAPH_ID,
            input=payload,
            context={
                "user_id": turn.user_id,
                "model": context.model,
                "writer_model": context.writer_model,
                "memory_backend": context.memory_backend,
                "language": context.language,
            },
            after_seconds=context.write_delay_seconds,
            # enqueue: a turn arriving while an earlier one waits or runs is queued behind it,
            # never replaces it (the default strategy would reject or interrupt).
            multitask_strategy="enqueue",
        )
    except (ConflictError, NotFoundError) as exc:
        logger.error(
            "cannot schedule the memory write of turn %s for user %r: writer thread %s is not "
            "usable (%s); set %s and re-stamp or delete that thread",
            turn.turn_id,
            turn.user_id,
            writer_thread,
            exc,
            WRITER_THREAD_SECRET_ENV,
        )
