"""The process-wide durable write queues that `write_mode=auto` uses outside a server."""

from __future__ import annotations

import asyncio
import logging
import threading
from collections.abc import Coroutine
from typing import Any

from graph.context import Context
from graph.memory_access import open_manager
from memory.branch import Lineage, Provenance
from memory.long_term import LongTermMemory
from memory.writer.queue import RetryPolicy

logger = logging.getLogger(__name__)

# A failed turn is retried with backoff, then kept in the journal as a dead letter.
AUTO_WRITE_RETRY = RetryPolicy()
# At interpreter exit, wait this long for queued turns; what is left is replayed next time.
EXIT_DRAIN_SECONDS = 60.0

_QueueKey = tuple[str, str, str, str, int]  # user, backend, writer model, language, store
_queues: dict[_QueueKey, LongTermMemory] = {}
# Queues being opened. Stored before the first await, so that concurrent first turns of one
# user share one queue: two queues would each replay the journal's pending turns.
_opening: dict[_QueueKey, asyncio.Task[LongTermMemory]] = {}
_loop: asyncio.AbstractEventLoop | None = None
_loop_lock = threading.Lock()


def _writer_loop() -> asyncio.AbstractEventLoop:
    """The queues' own event loop on a daemon thread: a queue outlives the caller's
    `asyncio.run`, and sync `graph.invoke` can hand it turns too."""
    global _loop
    with _loop_lock:
        if _loop is None:
            loop = asyncio.new_event_loop()
            threading.Thread(
                target=loop.run_forever, name="gulfstream-memory-writer", daemon=True
            ).start()
            # Before the thread pools shut down at exit (the writer needs them): threading's
            # exit hooks run before `atexit`'s, newest first.
            threading._register_atexit(_drain_at_exit)  # type: ignore[attr-defined]
            _loop = loop
        return _loop


def _on_writer_loop(work: Coroutine[Any, Any, Any]) -> Any:
    return asyncio.run_coroutine_threadsafe(work, _writer_loop())


async def _queue_for(context: Context, user_id: str, store: Any | None) -> LongTermMemory:
    """The user's queue, opened once. Runs on the writer loop only, so no lock is needed
    beyond the `_opening` task that every concurrent caller awaits."""
    key = (user_id, context.memory_backend, context.writer_model, context.language, id(store))
    memory = _queues.get(key)
    if memory is not None:
        return memory
    opening = _opening.get(key)
    if opening is None:
        opening = asyncio.ensure_future(_open_queue(key, context, user_id, store))
        _opening[key] = opening
        opening.add_done_callback(lambda _: _opening.pop(key, None))
    # shield: one caller being cancelled must not cancel the opening the others wait for.
    return await asyncio.shield(opening)


async def _open_queue(
    key: _QueueKey, context: Context, user_id: str, store: Any | None
) -> LongTermMemory:
    from graph.writer import writer_consumer

    manager = await asyncio.to_thread(open_manager, context, user_id, store)
    memory = LongTermMemory(manager, consumer=writer_consumer(context), retry=AUTO_WRITE_RETRY)
    await asyncio.to_thread(lambda: memory.write_trace)  # opens journal and trace
    replayed = memory.start()
    if replayed:
        logger.info("replaying %d queued memory turns of user %r", replayed, user_id)
    _queues[key] = memory
    return memory


async def _send(
    context: Context,
    user_id: str,
    store: Any | None,
    messages: list[dict[str, str]],
    kwargs: dict[str, Any],
) -> None:
    memory = await _queue_for(context, user_id, store)
    await memory.send_history(messages, **kwargs)


def submit_turn(
    context: Context,
    user_id: str,
    store: Any | None,
    messages: list[dict[str, str]],
    *,
    session_id: str,
    turn_id: str,
    provenance: Provenance | None,
    lineage: Lineage | None,
    scope_policy: str,
) -> Any:
    """Hand a turn to the user's durable queue; the returned future is done once the turn is in
    the journal (not yet written). Await it with `asyncio.wrap_future`, or `.result()` in sync
    code.

    The journal lives beside the store (`memory.long_term.default_journal_path`: the YAML
    folder, the SQLite file's folder, else `data/`); a turn queued before a crash or an exit is
    replayed by the next queue of that user. The writer model is loaded per queue at its first
    turn, so a model that cannot be reached makes the turn retry, then wait as a dead letter.
    """
    kwargs = {
        "session_id": session_id,
        "turn_id": turn_id,
        "provenance": provenance,
        "lineage": lineage,
        "scope_policy": scope_policy,
    }
    return _on_writer_loop(_send(context, user_id, store, messages, kwargs))


async def drain_auto_writers() -> None:
    """Write everything queued and stop the queues (a script's last step; tests). A later turn
    starts a new queue."""
    if _loop is not None:
        await asyncio.wrap_future(_on_writer_loop(_stop_all()))


def drain_auto_writers_sync(timeout_seconds: float | None = None) -> None:
    """`drain_auto_writers` for sync code; TimeoutError when writes are still running."""
    if _loop is not None:
        _on_writer_loop(_stop_all()).result(timeout_seconds)


async def _stop_all() -> None:
    while _opening:  # a queue still opening is stopped with the others
        await asyncio.gather(*_opening.values(), return_exceptions=True)
    while _queues:
        _, memory = _queues.popitem()
        await memory.stop()


def _drain_at_exit() -> None:
    if not _queues:
        return
    logger.info("writing the queued memory turns before exit (up to %g s)", EXIT_DRAIN_SECONDS)
    try:
        drain_auto_writers_sync(EXIT_DRAIN_SECONDS)
    except Exception:  # what is left stays in the journal and is replayed next time
        logger.warning("memory turns still queued at exit are kept in the journal")
