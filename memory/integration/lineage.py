"""Lineage: the checkpoint ancestors of the current run, read from any checkpointer, cached."""

from __future__ import annotations

import asyncio
import logging
import threading
import time
from collections import OrderedDict
from collections.abc import Mapping
from typing import Any

from langchain_core.runnables import RunnableConfig

from memory.store.branch import Lineage

logger = logging.getLogger(__name__)

# Keys LangGraph puts in a node's `configurable` (langgraph._internal._constants).
CHECKPOINTER_KEY = "__pregel_checkpointer"
CHECKPOINT_MAP_KEY = "checkpoint_map"
DURABILITY_KEY = "__pregel_durability"
ROOT = ""  # the parent of a thread's first checkpoint
# With durability "async" (the default) the checkpoint a step starts from is saved in the
# background while the step runs, so a node may ask for it a few milliseconds too early: wait.
CURRENT_CHECKPOINT_WAIT_SECONDS = 5.0
ASYNC_CALL_TIMEOUT_SECONDS = 30.0
PARENT_CACHE_SIZE = 100_000
# Walking parents with get_tuple loads every checkpoint, messages included (~1.7 ms each at 100
# turns). The savers LangGraph ships keep the parent id beside the blob, so one query gives every
# (checkpoint → parent) link of a thread; checkpoint ids are ordered by time (uuid6), so `since`
# reads only those saved after the newest one known.
_LINKS_SQL = (
    "SELECT checkpoint_id, parent_checkpoint_id FROM checkpoints "
    "WHERE thread_id = {p} AND checkpoint_ns = '' AND checkpoint_id > {p}"
)


class ParentCache:
    """(thread_id, checkpoint_id) → parent checkpoint id, bounded, least recently used out.
    A parent never changes, so an entry never goes stale."""

    def __init__(self, max_entries: int = PARENT_CACHE_SIZE) -> None:
        self.max_entries = max_entries
        self._parents: OrderedDict[tuple[str, str], str] = OrderedDict()
        self._newest: dict[str, str] = {}  # thread → the newest checkpoint id read
        self._lock = threading.Lock()
        self.reads = 0  # calls to the checkpointer (tests and benchmarks read it)

    def follow(self, thread_id: str, checkpoint_id: str, chain: list[str]) -> str | None:
        """Append `checkpoint_id` and its cached ancestors to `chain`; return the first id
        whose parent is not cached, or None once the root was reached."""
        current = checkpoint_id
        with self._lock:
            while current:
                chain.append(current)
                key = (thread_id, current)
                parent = self._parents.get(key)
                if parent is None:
                    return current
                self._parents.move_to_end(key)
                current = parent
        return None

    def knows(self, thread_id: str, checkpoint_id: str) -> bool:
        """Whether the parent of this checkpoint was read (so the checkpoint is saved)."""
        with self._lock:
            return (thread_id, checkpoint_id) in self._parents

    def put_many(self, thread_id: str, links: Mapping[str, str]) -> None:
        """Remember `{checkpoint_id: parent_id}` links read in one checkpointer call."""
        with self._lock:
            self.reads += 1
            for checkpoint_id, parent_id in links.items():
                self._parents[(thread_id, checkpoint_id)] = parent_id
                self._parents.move_to_end((thread_id, checkpoint_id))
            if links:
                self._newest[thread_id] = max(self._newest.get(thread_id, ""), *links)
            while len(self._parents) > self.max_entries:
                evicted, _ = self._parents.popitem(last=False)
                self._newest.pop(evicted[0], None)  # its next read is a full one

    def newest(self, thread_id: str) -> str:
        with self._lock:
            return self._newest.get(thread_id, "")

    def clear(self) -> None:
        with self._lock:
            self._parents.clear()
            self._newest.clear()
            self.reads = 0

    def __len__(self) -> int:
        return len(self._parents)


parent_cache = ParentCache()


def current_checkpoint_id(config: RunnableConfig | None) -> str:
    """The checkpoint the current step started from ("" without a checkpointer). In
    `ltm_write` it was written by this run after the agent step, so no sibling fork has it."""
    configurable = (config or {}).get("configurable") or {}
    if configurable.get(CHECKPOINTER_KEY) is None:
        return ""  # LangGraph still numbers the steps, but nothing is saved under that id
    checkpoint_map = configurable.get(CHECKPOINT_MAP_KEY) or {}
    return str(checkpoint_map.get("", "")) if isinstance(checkpoint_map, Mapping) else ""


def current_lineage(config: RunnableConfig | None) -> Lineage | None:
    """The current run's ancestor checkpoints, or None without a checkpointer (no branches:
    nothing to filter). For sync code; async code awaits `acurrent_lineage`."""
    start = _start(config)
    return lineage_of(*start) if start is not None else None


async def acurrent_lineage(config: RunnableConfig | None) -> Lineage | None:
    """`current_lineage` from async code: the walk runs in a worker thread, and a checkpointer
    with only async methods is called on this loop."""
    start = _start(config)
    if start is None:
        return None
    return await alineage_of(*start)


async def alineage_of(
    checkpointer: Any, thread_id: str, checkpoint_id: str, may_wait: bool = False
) -> Lineage:
    loop = asyncio.get_running_loop()
    return await asyncio.to_thread(
        lineage_of, checkpointer, thread_id, checkpoint_id, may_wait, loop
    )


def lineage_of(
    checkpointer: Any,
    thread_id: str,
    checkpoint_id: str,
    may_wait: bool = False,
    loop: asyncio.AbstractEventLoop | None = None,
) -> Lineage:
    """The ancestor chain of any checkpoint of a thread (`make chat` asks for its newest).
    Sync: never call it on an event loop (`alineage_of` does that right)."""
    chain: list[str] = []
    unknown = parent_cache.follow(thread_id, checkpoint_id, chain)
    while unknown is not None:
        wait = may_wait and unknown == checkpoint_id
        deadline = time.monotonic() + CURRENT_CHECKPOINT_WAIT_SECONDS
        delay, last_try = 0.0005, False
        while (parent := _fetch_parent(checkpointer, thread_id, unknown, last_try, loop)) is None:
            if last_try:
                return _partial(thread_id, chain, unknown, checkpoint_id)
            last_try = not wait or time.monotonic() >= deadline
            time.sleep(delay if wait else 0)
            delay = min(delay * 2, 0.05)
        unknown = parent_cache.follow(thread_id, parent, chain) if parent else None
    return Lineage(thread_id, frozenset(chain))


def checkpoint_is_saved(thread_id: str, checkpoint_id: str) -> bool:
    """After a lineage walk from `checkpoint_id`: whether the checkpointer had it (a walk
    caches the parent of every checkpoint it found; an evicted entry reads as unsaved, the safe
    answer for a write's scope)."""
    return parent_cache.knows(thread_id, checkpoint_id)


def _fetch_parent(
    checkpointer: Any,
    thread_id: str,
    checkpoint_id: str,
    last_try: bool,
    loop: asyncio.AbstractEventLoop | None,
) -> str | None:
    """The parent of `checkpoint_id` (ROOT for the first), caching what was read; None when the
    checkpoint is not saved (yet). Reads only the links saved since the newest one known,
    unless that misses an older checkpoint (or this is the `last_try` before giving up)."""
    since = parent_cache.newest(thread_id)
    since = "" if last_try or checkpoint_id < since else since
    links = read_parent_links(checkpointer, thread_id, since)
    if links is not None:
        parent_cache.put_many(thread_id, links)
        return links.get(checkpoint_id)
    found = _get_tuple(checkpointer, _checkpoint_config(thread_id, checkpoint_id), loop)
    if found is None:
        return None
    parent_config = found.parent_config or {}
    parent = str((parent_config.get("configurable") or {}).get("checkpoint_id") or ROOT)
    parent_cache.put_many(thread_id, {checkpoint_id: parent})
    return parent


def _get_tuple(
    checkpointer: Any, config: RunnableConfig, loop: asyncio.AbstractEventLoop | None
) -> Any:
    """`get_tuple`; a saver with only async methods (its sync ones raise NotImplementedError)
    is asked on the caller's event loop, which waits for this thread meanwhile."""
    try:
        return checkpointer.get_tuple(config)
    except NotImplementedError:
        if loop is None:
            raise
    future = asyncio.run_coroutine_threadsafe(checkpointer.aget_tuple(config), loop)
    return future.result(ASYNC_CALL_TIMEOUT_SECONDS)


def read_parent_links(checkpointer: Any, thread_id: str, since: str = "") -> dict[str, str] | None:
    """{checkpoint_id: parent_id ("" for the first)} of the thread's root namespace (at least
    those saved after `since`), in one read; None when this checkpointer has no fast path."""
    kinds = {cls.__name__ for cls in type(checkpointer).__mro__}  # subclasses too
    if "InMemorySaver" in kinds:  # also the `langgraph dev` server's saver
        namespaces = checkpointer.storage.get(thread_id) or {}
        saved = dict(namespaces.get("") or {})  # one dict copy: atomic under the GIL
        return {checkpoint_id: str(entry[2] or "") for checkpoint_id, entry in saved.items()}
    if "SqliteSaver" in kinds:
        checkpointer.setup()
        with checkpointer.lock:
            rows = checkpointer.conn.execute(_LINKS_SQL.format(p="?"), (thread_id, since))
            return _links(rows.fetchall())
    if kinds & {"AsyncSqliteSaver", "AsyncPostgresSaver"} and _off_loop(checkpointer):
        coroutine = _async_links(checkpointer, thread_id, since)
        future = asyncio.run_coroutine_threadsafe(coroutine, checkpointer.loop)
        return future.result(ASYNC_CALL_TIMEOUT_SECONDS)
    if "PostgresSaver" in kinds:
        with checkpointer._cursor() as cursor:
            cursor.execute(_LINKS_SQL.format(p="%s"), (thread_id, since))
            return _links((row["checkpoint_id"], row["parent_checkpoint_id"]) for row in cursor)
    return None


def _off_loop(checkpointer: Any) -> bool:
    """Whether this thread may wait for the saver's own loop (it would deadlock on it)."""
    try:
        return asyncio.get_running_loop() is not checkpointer.loop
    except RuntimeError:
        return True


async def _async_links(checkpointer: Any, thread_id: str, since: str) -> dict[str, str]:
    if "AsyncSqliteSaver" in {cls.__name__ for cls in type(checkpointer).__mro__}:
        await checkpointer.setup()
        sql = _LINKS_SQL.format(p="?")
        async with checkpointer.lock, checkpointer.conn.execute(sql, (thread_id, since)) as cursor:
            return _links(await cursor.fetchall())
    async with checkpointer._cursor() as cursor:
        await cursor.execute(_LINKS_SQL.format(p="%s"), (thread_id, since))
        rows = await cursor.fetchall()
    return _links((row["checkpoint_id"], row["parent_checkpoint_id"]) for row in rows)


def _links(rows: Any) -> dict[str, str]:
    return {str(checkpoint_id): str(parent or "") for checkpoint_id, parent in rows}


def _partial(thread_id: str, chain: list[str], missing: str, current_id: str) -> Lineage:
    # The current checkpoint is not saved (durability "exit", or a very slow saver): the lineage
    # is what is known, which shows user memories and hides the branch memories of the unknown
    # part rather than risk showing a sibling's.
    logger.warning(
        "checkpoint %s of thread %s is not in the checkpointer%s; its branch memories are hidden",
        missing,
        thread_id,
        "" if missing == current_id else " (an ancestor was deleted?)",
    )
    return Lineage(thread_id, frozenset(chain))


def _start(config: RunnableConfig | None) -> tuple[Any, str, str, bool] | None:
    configurable = (config or {}).get("configurable") or {}
    checkpointer = configurable.get(CHECKPOINTER_KEY)
    thread_id = str(configurable.get("thread_id") or "")
    checkpoint_id = current_checkpoint_id(config)
    if checkpointer is None or not thread_id or not checkpoint_id:
        return None
    # With durability "exit" nothing is saved before the run ends: waiting would be in vain.
    may_wait = configurable.get(DURABILITY_KEY, "async") != "exit"
    return checkpointer, thread_id, checkpoint_id, may_wait


def _checkpoint_config(thread_id: str, checkpoint_id: str) -> RunnableConfig:
    return {
        "configurable": {
            "thread_id": thread_id,
            "checkpoint_ns": "",
            "checkpoint_id": checkpoint_id,
        }
    }
