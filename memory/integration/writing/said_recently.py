"""Read your writes: the user's turns that wait for the writer are read into the next turn's
prompt, in any thread, and a thread's waiting batch goes to the writer once the user moves on."""

from __future__ import annotations

import asyncio
import logging
import weakref
from collections.abc import Sequence
from typing import Any

from memory.integration.run_memory import RunMemory
from memory.integration.writing.pending import waiting_turns
from memory.integration.writing.server_runs import schedule_flush, write_mode
from memory.long_term import LongTermMemory
from memory.store.branch import Lineage
from memory.writer.local import local_writer
from memory.writer.turn import Turn
from memory.writer.waiting import WaitingIndex

logger = logging.getLogger(__name__)

# One index of waiting turns, and the newest turn of each thread already flushed, per open
# memory (a user's): kept as long as the registry keeps that memory open.
_indexes: weakref.WeakKeyDictionary[LongTermMemory, WaitingIndex] = weakref.WeakKeyDictionary()
_flushed: weakref.WeakKeyDictionary[LongTermMemory, dict[str, str]] = weakref.WeakKeyDictionary()


def said_recently(
    run: RunMemory, store: Any, query: str, lineage: Lineage | None, since: str | None = None
) -> list[dict[str, str]]:
    """What the user said, in this thread's other branches excepted, that no writer has applied
    yet and that this turn should know: the best few for `query`, as `{turn_id, thread_id, text,
    said_at}` (see `memory.writer.waiting`). It only reads: the other threads' batches go to the
    writer at the turn's hand-off (`flush_local_batches`, `flush_on_thread_switch`). Sync (store
    and journal reads block); never fails the turn.

    `since` is the store's change token when this turn's memories were read: a turn applied by
    then is read as a memory and left out here. When a write landed after it, the turns it
    applied are kept (shown twice for this turn rather than not at all)."""
    try:
        mode = write_mode(run)
        if mode == "inline":  # written before the run returns: nothing waits
            return []
        index = _indexes.setdefault(run.memory, WaitingIndex())
        if mode == "server":
            if store is None:
                return []
            turns = waiting_turns(store, run.user_id, index.turns)
        else:
            turns = run.memory.waiting_turns()
        index.update(turns)
        manager = run.memory.manager
        unchanged = since is None or manager.change_token() == since
        applied = manager.has_applied if unchanged else None
        return [
            line.as_dict() for line in index.read(query, run.thread_id, lineage, applied=applied)
        ]
    except Exception:
        logger.exception("reading the waiting turns of %r failed", run.user_id)
        return []


def flush_local_batches(run: RunMemory) -> list[str]:
    """Local mode, in the hand-off of a turn: the user spoke in this run's thread, so the batches
    of their other threads go to the queue now instead of after the quiet time (once per newest
    turn). Returns those threads. Sync: it reads the journal."""
    if not run.memory.writing:
        return []
    threads = _threads_to_flush(run.memory, run.memory.waiting_turns(), run.thread_id)
    for thread in threads:
        local_writer.flush(run.memory, thread)  # on the queue's loop; not waited for
    return threads


async def flush_on_thread_switch(run: RunMemory, store: Any, turn: Turn) -> list[str]:
    """Server mode, in the hand-off of `turn`: a `memory_writer` run with no delay for each other
    thread of the user with turns waiting, so that what was said there is written within the
    writer's own time (and before this turn, which may forget it). A failure is logged: the
    turns wait for their own runs. Returns the threads flushed."""

    if store is None:
        return []
    try:
        index = _indexes.setdefault(run.memory, WaitingIndex())
        waiting = await asyncio.to_thread(waiting_turns, store, run.user_id, index.turns)
        index.update(waiting)
        threads = _threads_to_flush(run.memory, waiting, turn.thread_id)
        for thread in threads:
            await schedule_flush(run, thread)
        if threads:
            logger.info("memory_writer flush of threads %s of %r queued", threads, run.user_id)
        return threads
    except Exception:
        logger.exception("flushing the other threads of %r failed", run.user_id)
        return []


def _threads_to_flush(memory: LongTermMemory, waiting: Sequence[Turn], thread_id: str) -> list[str]:
    newest = {turn.thread_id: turn.turn_id for turn in waiting}  # oldest first: the last wins
    flushed = _flushed.setdefault(memory, {})
    threads = [t for t, turn_id in newest.items() if t != thread_id and flushed.get(t) != turn_id]
    for thread in threads:
        flushed[thread] = newest[thread]
    return threads
