"""Taking back what a conversation already put in memory: when a thread turns private ("don't
remember this conversation") its earlier turns, and on "forget what I just said" the previous
turn, are erased for good from memory, the archive, its digests, the journal and the trace."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Sequence
from typing import Any

from langchain_core.messages import AnyMessage, HumanMessage

from memory.integration.conversations.archiving import run_archive  # feature: archive
from memory.integration.run_memory import RunMemory
from memory.integration.writing.pending import drop_pending, pending_turns
from memory.integration.writing.server_runs import write_mode
from memory.text.messages import text_of
from memory.writer.local import local_writer

logger = logging.getLogger(__name__)

WRITER_WAIT_SECONDS = 120.0  # for the thread's queued turns, written before they are erased
THREAD, TURN = "thread", "turn"  # what MemoryState.take_back names


def said_before(messages: Sequence[AnyMessage], what: str) -> tuple[list[str], list[str] | None]:
    """What to take back of the conversation before its latest user message: the user's words
    still in the state (the texts whose copies go too) and the message ids (None: the whole
    thread, found by its id wherever it is kept). For TURN, the previous user message and the
    replies to it ([] when there is none)."""
    starts = [i for i, m in enumerate(messages) if isinstance(m, HumanMessage)]
    if what == THREAD:  # compaction may have taken the early messages out of the state
        return [text_of(messages[i].content) for i in starts[:-1]], None
    if len(starts) < 2:
        return [], []
    turn = messages[starts[-2] : starts[-1]]
    return [text_of(turn[0].content)], [str(m.id) for m in turn if m.id]


async def take_back(run: RunMemory, store: Any, messages: Sequence[AnyMessage], what: str) -> int:
    """Erase what the conversation put in memory before this turn (`what`: THREAD or TURN);
    returns how many memories went. The thread's turns still queued are written first (on the
    server, dropped from the store instead), so that none of them comes back afterwards."""
    texts, message_ids = said_before(messages, what)
    if message_ids == []:
        return 0
    mode = write_mode(run)
    if mode == "local":
        await asyncio.wrap_future(local_writer.flush(run.memory, run.thread_id))
        drained = asyncio.wrap_future(local_writer.drain(run.memory))
        await asyncio.wait_for(drained, WRITER_WAIT_SECONDS)
    elif mode == "server" and store is not None:
        waiting = [
            turn.turn_id
            for turn in await pending_turns(store, run.user_id)
            if turn.thread_id == run.thread_id
            and (message_ids is None or any(f":{m}" in turn.turn_id for m in message_ids))
        ]
        await drop_pending(store, run.user_id, waiting)
    archive = None
    archive = await asyncio.to_thread(run_archive, run)  # feature: archive
    report = await asyncio.to_thread(
        run.memory.erase_conversation, run.thread_id, texts, message_ids=message_ids,
        archive=archive,
    )  # fmt: skip
    logger.info("thread %s: %s taken back (%d memories)", run.thread_id, what,
                len(report.memory_ids))  # fmt: skip
    return len(report.memory_ids)
