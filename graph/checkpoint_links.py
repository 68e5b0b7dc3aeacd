"""Parent links of a thread's checkpoints, read in one go from the checkpointers we know."""

from __future__ import annotations

import asyncio
from typing import Any

# Walking parents with get_tuple loads and deserialises every checkpoint, messages included
# (~1.7 ms each at 100 turns; 500 checkpoints cold). The savers LangGraph ships keep the parent id
# beside the blob, so one query (or one dict read) gives every (checkpoint → parent) link of a
# thread. Other checkpointers return None here and the lineage falls back to get_tuple.
# Checkpoint ids are uuid6, ordered by time: `since` reads only the ones saved after it (a range
# scan of the primary key).
_SQL = (
    "SELECT checkpoint_id, parent_checkpoint_id FROM checkpoints "
    "WHERE thread_id = ? AND checkpoint_ns = '' AND checkpoint_id > ?"
)


def read_parent_links(checkpointer: Any, thread_id: str, since: str = "") -> dict[str, str] | None:
    """{checkpoint_id: parent_id ("" for the first)} of the thread's root namespace (at least
    those with an id after `since`), or None when this checkpointer has no fast path. For sync
    code (sync nodes run in a thread)."""
    kind = _kind(checkpointer)
    if kind == "memory":
        return _memory_links(checkpointer, thread_id)
    if kind == "sqlite":
        checkpointer.setup()
        with checkpointer.lock:
            rows = checkpointer.conn.execute(_SQL, (thread_id, since)).fetchall()
        return _links(rows)
    if kind == "aiosqlite":
        try:
            on_its_loop = asyncio.get_running_loop() is checkpointer.loop
        except RuntimeError:
            on_its_loop = False
        if on_its_loop:  # would deadlock; the caller falls back (and gets LangGraph's error)
            return None
        future = asyncio.run_coroutine_threadsafe(
            _aiosqlite_links(checkpointer, thread_id, since), checkpointer.loop
        )
        return future.result()
    return None


async def aread_parent_links(
    checkpointer: Any, thread_id: str, since: str = ""
) -> dict[str, str] | None:
    """`read_parent_links` for async code."""
    kind = _kind(checkpointer)
    if kind == "memory":
        return _memory_links(checkpointer, thread_id)
    if kind == "aiosqlite":
        if asyncio.get_running_loop() is checkpointer.loop:
            return await _aiosqlite_links(checkpointer, thread_id, since)
        future = asyncio.run_coroutine_threadsafe(
            _aiosqlite_links(checkpointer, thread_id, since), checkpointer.loop
        )
        return await asyncio.wrap_future(future)
    if kind == "sqlite":
        return await asyncio.to_thread(read_parent_links, checkpointer, thread_id, since)
    return None


def _kind(checkpointer: Any) -> str:
    # Imported here: each saver package is optional for whoever reuses this module.
    from langgraph.checkpoint.memory import InMemorySaver

    if isinstance(checkpointer, InMemorySaver):  # also langgraph dev's subclass
        return "memory"
    try:
        from langgraph.checkpoint.sqlite import SqliteSaver
        from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver
    except ImportError:
        return ""
    if isinstance(checkpointer, SqliteSaver):
        return "sqlite"
    if isinstance(checkpointer, AsyncSqliteSaver):
        return "aiosqlite"
    return ""


def _memory_links(checkpointer: Any, thread_id: str) -> dict[str, str]:
    namespaces = checkpointer.storage.get(thread_id) or {}
    # A plain dict copy happens under the GIL in one step, so a concurrent put cannot break it.
    saved = dict(namespaces.get("") or {})
    return {checkpoint_id: str(entry[2] or "") for checkpoint_id, entry in saved.items()}


async def _aiosqlite_links(checkpointer: Any, thread_id: str, since: str) -> dict[str, str]:
    await checkpointer.setup()
    async with checkpointer.lock, checkpointer.conn.execute(_SQL, (thread_id, since)) as cursor:
        rows = await cursor.fetchall()
    return _links(rows)


def _links(rows: Any) -> dict[str, str]:
    return {str(checkpoint_id): str(parent or "") for checkpoint_id, parent in rows}
