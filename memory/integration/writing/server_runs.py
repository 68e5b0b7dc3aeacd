"""The memory_writer runs of server mode: the user's writer thread, and the runs queued on it
(one per turn, or a flush of a thread's batch). Also which write mode a run is in."""

from __future__ import annotations

import hashlib
import hmac
import uuid

from memory.integration.run_memory import RunMemory, is_under_langgraph_server
from memory.writer.turn import Turn

WRITER_GRAPH_ID = "memory_writer"
# uuid5 namespace of the per-user writer threads: one writer thread per user, same id everywhere.
WRITER_THREAD_NAMESPACE = uuid.UUID("6f1c2b0e-6a4e-5d3c-9b7e-0a6f3e5d2c11")


def writer_thread_id(user_id: str, secret: str) -> str:
    """The user's background writer thread: the same in every process of a deployment, and
    unguessable without the deployment's secret, so no other user can create it first and
    block this user's writes."""
    salt = hmac.new(secret.encode(), user_id.encode(), hashlib.sha256).hexdigest() if secret else ""
    return str(uuid.uuid5(WRITER_THREAD_NAMESPACE, f"gulfstream-writer:{user_id}:{salt}"))


def write_mode(run: RunMemory) -> str:
    """The deployment's write mode; `auto` is `server` under the LangGraph server, else `local`."""
    mode = run.settings.write_mode
    if mode != "auto":
        return mode
    return "server" if is_under_langgraph_server(run.config) else "local"


async def schedule_server_write(run: RunMemory, turn: Turn, *, pending: bool = False) -> None:
    """Queue a `memory_writer` run on the user's writer thread; a thread that cannot be used
    (another user's, or gone) raises with the user and turn id.

    With `pending` the turn waits in the store (memory/integration/writing/pending.py) and the run
    is told only
    which turn scheduled it: a "batch" turn's run starts GULFSTREAM_WRITE_BATCH_SECONDS later and
    writes the thread's batch if no newer turn came meanwhile (the server's own scheduling is the
    debounce); a "write" turn's run starts after GULFSTREAM_WRITE_DELAY_SECONDS and takes its
    thread's batch along. Without a store the turn itself is the run's input."""
    from langgraph_sdk import get_client
    from langgraph_sdk.errors import ConflictError, NotFoundError

    client = get_client()  # in-process: reaches this server's API without a URL
    writer_thread = writer_thread_id(turn.user_id, run.settings.writer_thread_secret)
    try:
        await client.threads.create(
            thread_id=writer_thread,
            if_exists="do_nothing",
            metadata={"gulfstream": "memory_writer", "user_id": turn.user_id},
        )
        settings = run.settings
        waits = pending and turn.decision == "batch"
        await client.runs.create(
            writer_thread,
            WRITER_GRAPH_ID,
            input={"thread_id": turn.thread_id, "turn_id": turn.turn_id}
            if pending
            else {"turn": turn.to_dict()},
            context={"user_id": turn.user_id},
            after_seconds=settings.write_batch_seconds if waits else settings.write_delay_seconds,
            # enqueue: a turn arriving while an earlier one waits or runs is queued behind it,
            # never replaces it (the default strategy would reject or interrupt).
            multitask_strategy="enqueue",
        )
    except (ConflictError, NotFoundError) as exc:
        raise RuntimeError(
            f"writer thread {writer_thread} of user {turn.user_id!r} is not usable ({exc}); set "
            "GULFSTREAM_WRITER_THREAD_SECRET and re-stamp or delete that thread"
        ) from exc


async def schedule_flush(run: RunMemory, thread_id: str | None = None) -> None:
    """Server mode, before compaction (or once the user moved to another thread): queue a
    `memory_writer` run that writes the batch of this thread's (`thread_id`'s) turns waiting in
    the store now (`{"thread_id", "flush": true}`)."""
    from langgraph_sdk import get_client

    client = get_client()
    writer_thread = writer_thread_id(run.user_id, run.settings.writer_thread_secret)
    await client.threads.create(
        thread_id=writer_thread,
        if_exists="do_nothing",
        metadata={"gulfstream": "memory_writer", "user_id": run.user_id},
    )
    await client.runs.create(
        writer_thread,
        WRITER_GRAPH_ID,
        input={"thread_id": thread_id or run.thread_id, "flush": True},
        context={"user_id": run.user_id},
        multitask_strategy="enqueue",
    )
